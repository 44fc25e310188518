--
-- Encoding and decoding: exact published values, the horizon, epochs.
--
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- The published example: user 31341's post on 2026-10-23 09:20:00 UTC,
-- logical shard 1341, sequence value 1001.
SELECT shardid_encode('2026-10-23 09:20:00+00', 1341, 1001);
SELECT * FROM shardid_decode(4185136929178974185);
SELECT shardid_shard(4185136929178974185),
       shardid_seq(4185136929178974185),
       shardid_created_at(4185136929178974185);
-- the same by hand: time, shard and seq fields
SELECT 4185136929178974185 >> 23 AS ms_since_epoch,
       (4185136929178974185 >> 10) & 8191 AS shard,
       4185136929178974185 & 1023 AS seq;
-- the time field's 41 bits, shard's 13 and seq's 10
SELECT lpad(((4185136929178974185 >> 23)::bit(41))::text, 41, '0') AS time_bits,
       ((4185136929178974185 >> 10) & 8191)::bit(13) AS shard_bits,
       (4185136929178974185 & 1023)::bit(10) AS seq_bits;

-- Another time zone gives the same instant, so the same ID.
SELECT shardid_encode('2026-10-23 14:50:00+05:30', 1341, 1001) = 4185136929178974185 AS same_instant;

-- Sub-millisecond parts are truncated to the millisecond.
SELECT shardid_encode('2026-10-23 09:20:00.000999+00', 1341, 1001) = 4185136929178974185 AS truncated;

-- The smallest and largest fields.
SELECT shardid_encode('2011-01-01 00:00:00+00', 0, 0) AS zero,
       shardid_encode('2011-01-01 00:00:00.001+00', 0, 0) AS one_ms,
       shardid_encode('2011-01-01 00:00:00+00', 8191, 1023) AS all_low_bits;

-- The horizon: epoch + 2^40 - 1 ms.  It encodes to the largest bigint.
SELECT shardid_horizon();
SELECT shardid_horizon() = '2011-01-01 00:00:00+00'::timestamptz
         + ((2^40 - 1) || ' ms')::interval AS horizon_is_2_40_minus_1;
SELECT shardid_encode('2045-11-03 19:53:47.775+00', 8191, 1023) AS last_id,
       shardid_encode('2045-11-03 19:53:47.775+00', 8191, 1023) = 9223372036854775807 AS is_int8_max;
SELECT * FROM shardid_decode(9223372036854775807);
SELECT shardid_floor('2045-11-03 19:53:47.775+00') AS last_floor;
-- the full 41-bit range would reach 2080, but does not fit a signed bigint
SELECT '2011-01-01 00:00:00+00'::timestamptz + ((2^41 - 1) || ' ms')::interval AS full_41_bit_range_ends;

-- An explicit epoch: Twitter's, 2010-11-04 01:42:54.657 UTC.
SELECT shardid_horizon('2010-11-04 01:42:54.657+00');
SELECT shardid_encode('2026-10-23 09:20:00+00', 1341, 1001, '2010-11-04 01:42:54.657+00');
SELECT * FROM shardid_decode(shardid_encode('2026-10-23 09:20:00+00', 1341, 1001, '2010-11-04 01:42:54.657+00'),
                             '2010-11-04 01:42:54.657+00');
SELECT shardid_created_at(shardid_encode('2026-10-23 09:20:00+00', 1341, 1001, '2020-01-01+00'), '2020-01-01+00');
-- the default epoch, spelled out, gives the same as none
SELECT shardid_encode('2026-10-23 09:20:00+00', 1341, 1001, '2011-01-01 00:00:00+00') AS explicit_default_epoch;
-- an epoch before 1970 works too
SELECT * FROM shardid_decode(shardid_encode('1969-12-31 23:59:59.999+00', 7, 8, '1960-01-01+00'), '1960-01-01+00');

-- The ID on the epoch itself decodes to the epoch.
SELECT * FROM shardid_decode(0);
SELECT * FROM shardid_decode(0, '2020-02-02 02:02:02.002+00');

-- shardid_floor: the smallest ID of ts's millisecond, on any shard.
SELECT shardid_floor('2026-10-23 09:20:00+00') AS floor,
       shardid_floor('2026-10-23 09:20:00+00') = 4185136929178974185 & ~((1::bigint << 23) - 1) AS is_masked;
SELECT shardid_floor('2026-10-23 09:20:00.0009+00') = shardid_floor('2026-10-23 09:20:00+00') AS same_ms;
SELECT shardid_floor('2026-10-23 09:20:00.001+00') - shardid_floor('2026-10-23 09:20:00+00') = 1 << 23 AS next_ms;
SELECT shardid_encode('2026-10-23 09:20:00+00', 0, 0) = shardid_floor('2026-10-23 09:20:00+00') AS lowest_id_is_floor,
       shardid_encode('2026-10-23 09:19:59.999+00', 8191, 1023) < shardid_floor('2026-10-23 09:20:00+00') AS previous_ms_below;

-- Routing getters agree with the bit arithmetic on every shard.
SELECT count(*) AS shards_checked
  FROM generate_series(0, 8191) AS s
 WHERE shardid_shard(shardid_encode('2030-01-01+00', s, s % 1024)) = s
   AND shardid_seq(shardid_encode('2030-01-01+00', s, s % 1024)) = s % 1024
   AND (shardid_encode('2030-01-01+00', s, s % 1024) >> 10) & 8191 = s;

-- NULL in, NULL out.
SELECT shardid_encode(NULL, 1, 1) IS NULL AS a,
       shardid_encode(now(), NULL, 1) IS NULL AS b,
       shardid_encode(now(), 1, NULL) IS NULL AS c,
       shardid_encode(now(), 1, 1, NULL) IS NULL AS d,
       shardid_shard(NULL) IS NULL AS e,
       shardid_seq(NULL) IS NULL AS f,
       shardid_created_at(NULL) IS NULL AS g,
       shardid_created_at(1, NULL) IS NULL AS h,
       shardid_floor(NULL) IS NULL AS i,
       shardid_horizon(NULL) IS NULL AS j,
       shardid_to_shortcode(NULL) IS NULL AS k,
       shardid_from_shortcode(NULL) IS NULL AS l,
       shardid_next(NULL, NULL) IS NULL AS m;
SELECT * FROM shardid_decode(NULL);

-- Expression index and partition key: routing by shard works as IMMUTABLE.
CREATE TABLE routed (id bigint NOT NULL) PARTITION BY LIST (shardid_shard(id));
CREATE TABLE routed_1341 PARTITION OF routed FOR VALUES IN (1341);
CREATE TABLE routed_rest PARTITION OF routed DEFAULT;
INSERT INTO routed VALUES (4185136929178974185), (shardid_encode('2026-10-23 09:20:00+00', 7, 1));
SELECT tableoid::regclass AS partition, id FROM routed ORDER BY id;
CREATE INDEX ON routed_rest (shardid_created_at(id));
DROP TABLE routed;
