--
-- Properties over many random parts: round trips and time order.
--
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SELECT setseed(0.4242);

-- 100,000 random (time, shard, seq) triples between the epoch and the
-- horizon, whole milliseconds.
CREATE TEMP TABLE triples AS
  SELECT '2011-01-01 00:00:00+00'::timestamptz
           + (floor(random() * (2^40))::bigint || ' ms')::interval AS t,
         floor(random() * 8192)::int AS shard,
         floor(random() * 1024)::int AS seq
    FROM generate_series(1, 100000);
-- and the edges
INSERT INTO triples VALUES
  ('2011-01-01 00:00:00+00', 0, 0),
  ('2011-01-01 00:00:00+00', 8191, 1023),
  ('2045-11-03 19:53:47.775+00', 0, 0),
  ('2045-11-03 19:53:47.775+00', 8191, 1023);

-- decode(encode(x)) = x
SELECT count(*) AS triples,
       count(*) FILTER (WHERE (d.created_at, d.shard, d.seq) = (x.t, x.shard, x.seq)) AS round_trips
  FROM triples x, shardid_decode(shardid_encode(x.t, x.shard, x.seq)) d;

-- every ID is positive, and the getters agree with decode
SELECT bool_and(id >= 0) AS all_positive,
       bool_and(shardid_created_at(id) = t AND shardid_shard(id) = shard AND shardid_seq(id) = seq) AS getters_agree,
       bool_and(shardid_floor(t) <= id AND id - shardid_floor(t) < (1 << 23)) AS within_floor
  FROM (SELECT *, shardid_encode(t, shard, seq) AS id FROM triples) x;

-- ID order equals time order whenever the times differ
SELECT count(*) AS pairs_out_of_order
  FROM (SELECT t, shardid_encode(t, shard, seq) AS id,
               lead(t) OVER w AS next_t,
               lead(shardid_encode(t, shard, seq)) OVER w AS next_id
          FROM triples WINDOW w AS (ORDER BY t, shard, seq)) x
 WHERE next_t > t AND NOT next_id > id;
SELECT count(*) AS random_pairs_disagreeing
  FROM (SELECT a.t AS ta, b.t AS tb,
               shardid_encode(a.t, a.shard, a.seq) AS ia, shardid_encode(b.t, b.shard, b.seq) AS ib
          FROM (SELECT *, row_number() OVER () AS r FROM triples) a
          JOIN (SELECT *, row_number() OVER () AS r FROM triples) b ON b.r = a.r + 1) x
 WHERE ta <> tb AND (ta < tb) <> (ia < ib);

-- with an explicit epoch too
SELECT count(*) FILTER (WHERE (d.created_at, d.shard, d.seq) = (x.t + interval '5 years', x.shard, x.seq)) AS round_trips_other_epoch
  FROM triples x,
       shardid_decode(shardid_encode(x.t + interval '5 years', x.shard, x.seq, '2016-01-01+00'), '2016-01-01+00') d;

-- shortcodes round trip for all of them
SELECT count(*) FILTER (WHERE shardid_from_shortcode(shardid_to_shortcode(shardid_encode(t, shard, seq)))
                              = shardid_encode(t, shard, seq)) AS shortcodes_round_trip
  FROM triples;

-- 10,000 random bigints decode and re-encode to themselves
SELECT count(*) FILTER (WHERE shardid_encode(d.created_at, d.shard, d.seq) = v) AS ids_round_trip
  FROM (SELECT floor(random() * 9223372036854775807)::bigint AS v FROM generate_series(1, 10000)) r,
       shardid_decode(r.v) d;
