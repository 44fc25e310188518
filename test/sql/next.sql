--
-- shardid_next: IDs decode to the shard given, to a time inside the
-- statement's clock_timestamp() window, and to nextval % 1024.
--
\set ECHO none
\getenv abs_srcdir PG_ABS_SRCDIR
\set err_file :abs_srcdir '/sql/include/err.sql'
\i :err_file
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

CREATE SEQUENCE next_seq;
SELECT shardid_stats_reset();

-- One call, bracketed by the clock.
CREATE TEMP TABLE one AS
  SELECT clock_timestamp() AS before, shardid_next(1341, 'next_seq') AS id, clock_timestamp() AS after;
SELECT d.shard, d.seq,
       d.created_at >= date_trunc('milliseconds', o.before) AS not_before,
       d.created_at <= date_trunc('milliseconds', o.after) + interval '1 ms' AS not_after
  FROM one o, shardid_decode(o.id) d;
SELECT currval('next_seq') % 1024 = (SELECT shardid_seq(id) FROM one) AS seq_is_nextval_mod_1024;

-- As a column DEFAULT, many rows, values near a 1,024 boundary.
SELECT setval('next_seq', 1000);
CREATE TABLE next_posts (
  id bigint PRIMARY KEY DEFAULT shardid_next(42, 'next_seq'),
  n int,
  issued_value bigint,
  made_before timestamptz,
  made_after timestamptz
);
-- issued_value is read back from the sequence after each row: with one
-- session and no cache, it is the value this row's ID used.
CREATE FUNCTION next_posts_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.issued_value := currval('next_seq');
  NEW.made_after := clock_timestamp();
  RETURN NEW;
END $$;
CREATE TRIGGER note BEFORE INSERT ON next_posts FOR EACH ROW EXECUTE FUNCTION next_posts_note();
INSERT INTO next_posts (n, made_before)
  SELECT g, clock_timestamp() FROM generate_series(1, 5000) AS g;

SELECT count(*) AS rows,
       count(DISTINCT id) AS distinct_ids,
       bool_and(shardid_shard(id) = 42) AS all_shard_42,
       bool_and(shardid_seq(id) = issued_value % 1024) AS seq_is_value_mod_1024,
       min(issued_value) AS first_value,
       max(issued_value) AS last_value
  FROM next_posts;

-- The created_at lies in the window between the row's clock readings (the
-- guard may run one millisecond ahead of the clock, never more).
SELECT bool_and(shardid_created_at(id) >= date_trunc('milliseconds', made_before)
                AND shardid_created_at(id) <= date_trunc('milliseconds', made_after) + interval '1 ms')
       AS inside_clock_window
  FROM next_posts;

-- IDs follow the sequence: in insertion order they strictly increase.
SELECT bool_and(id > prev) AS strictly_increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY issued_value) AS prev FROM next_posts) x
 WHERE prev IS NOT NULL;

-- A millisecond never holds values from two 1,024-aligned blocks, nor
-- more than 1,024 IDs.
SELECT max(c) <= 1024 AS at_most_1024_per_ms, max(blocks) AS blocks_per_ms
  FROM (SELECT id >> 23 AS ms, count(*) AS c, count(DISTINCT issued_value / 1024) AS blocks
          FROM next_posts GROUP BY 1) x;

-- The epoch is the database's (shardid_set_epoch, default 2011-01-01):
-- shardid_next without one uses it, and the same epoch given explicitly
-- is accepted.
CREATE SEQUENCE next_epoch_seq;
SELECT shardid_epoch() AS database_epoch;
SELECT shardid_created_at(id, shardid_epoch()) >= date_trunc('milliseconds', b) AND
       shardid_created_at(id, shardid_epoch()) <= date_trunc('milliseconds', clock_timestamp()) + interval '1 ms'
       AS explicit_own_epoch
  FROM (SELECT clock_timestamp() AS b, shardid_next(3, 'next_epoch_seq', '2011-01-01+00') AS id OFFSET 0) x;

-- Any other epoch is refused, whatever the sequence: an earlier one would
-- carry the time fields, and the durable fence with them, ahead of the
-- clock; a later one would give fields the database already used.
SELECT err($$SELECT shardid_next(3, 'next_epoch_seq', '2020-01-01+00')$$) AS later_epoch;
SELECT split_part(err($$SELECT shardid_next(3, 'next_seq', '2001-01-01+00')$$), E'\n', 1) AS earlier_epoch;

-- Once the database issued IDs, a later epoch for the whole database is
-- refused too: the clock would read nine years behind its fence.
SELECT regexp_replace(split_part(err($$SELECT shardid_set_epoch('2020-01-01+00')$$), E'\n', 1),
                      '\d+ ms', 'N ms') AS later_database_epoch;
SELECT split_part(err($$SELECT shardid_set_epoch('infinity')$$), E'\n', 1) AS infinite_epoch;
SELECT shardid_epoch() AS database_epoch_unchanged;

-- Under its own epoch, next_seq goes on.
SELECT shardid_next(3, 'next_seq') > max(id) AS own_epoch_goes_on FROM next_posts;

-- Each sequence carries its IDs' durable fence in its value, so it must
-- go up, by 1 to 1024 a call, and reach 2^50: a descending sequence, an
-- integer one, one with a low MAXVALUE are refused at their first call,
-- saying why, and issue nothing.
CREATE SEQUENCE next_down INCREMENT BY -1 MINVALUE -10000 MAXVALUE 0 START 0;
SELECT err($$SELECT shardid_next(9, 'next_down')$$) AS descending;
CREATE SEQUENCE next_int AS integer;
SELECT err($$SELECT shardid_next(9, 'next_int')$$) AS integer_sequence;
CREATE SEQUENCE next_low MAXVALUE 1000000000;
SELECT err($$SELECT shardid_next(9, 'next_low')$$) AS low_maxvalue;
SELECT count(*) AS issued_by_refused FROM shardid_stats
 WHERE sequence IN ('next_down'::regclass, 'next_int'::regclass, 'next_low'::regclass)
   AND ids_issued > 0;
-- Made right, it goes on.
ALTER SEQUENCE next_int AS bigint NO MAXVALUE;
SELECT shardid_seq(shardid_next(9, 'next_int')) = currval('next_int') % 1024 AS integer_made_bigint;

-- A sequence with the range Citus gives a worker's copy of a sequence,
-- (g << 48) + 1 to ((g + 1) << 48) + 1, is refused as a Citus worker's
-- (0A000), Citus or not: no hint to change its range, and no slot, so
-- nothing counted against the clock (docs/citus.md).
CREATE SEQUENCE next_citus1 MINVALUE 281474976710657 MAXVALUE 562949953421313;
SELECT err($$SELECT shardid_next(9, 'next_citus1')$$) AS citus_group_1;
CREATE SEQUENCE next_citus2 MINVALUE 562949953421313 MAXVALUE 844424930131969;
SELECT err($$SELECT shardid_next(9, 'next_citus2')$$) AS citus_group_2;
SELECT count(*) AS citus_range_slots FROM shardid_stats
 WHERE sequence IN ('next_citus1'::regclass, 'next_citus2'::regclass);
-- A pg_catalog.pg_dist_local_group that is not Citus's (no member of
-- extension citus) is not taken for one: its group 5 refuses nothing.
SET allow_system_table_mods = on;
CREATE TABLE pg_catalog.pg_dist_local_group (groupid int4);
INSERT INTO pg_catalog.pg_dist_local_group VALUES (5);
RESET allow_system_table_mods;
CREATE SEQUENCE next_not_citus;
SELECT shardid_shard(shardid_next(9, 'next_not_citus')) AS not_citus_group;
SET allow_system_table_mods = on;
DROP TABLE pg_catalog.pg_dist_local_group;
RESET allow_system_table_mods;

-- Schema-qualified and quoted sequence names.
CREATE SCHEMA "Shard 7";
CREATE SEQUENCE "Shard 7"."Post IDs";
SELECT shardid_shard(shardid_next(7, '"Shard 7"."Post IDs"')) AS quoted_name;

-- The published scheme beside shardid on a sequence whose values all share
-- their low ten bits (INCREMENT BY 1024): every value needs a millisecond
-- of its own.  The published expression puts many in one millisecond and
-- repeats itself; shardid gives each its own millisecond.
CREATE SEQUENCE next_stride INCREMENT BY 1024;
CREATE TEMP TABLE naive AS
  SELECT ((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1293840000000) << 23)
         | (5 << 10) | (nextval('next_stride') % 1024) AS id
    FROM generate_series(1, 200);
SELECT count(*) AS naive_ids, count(DISTINCT id) < count(*) AS naive_repeats
  FROM naive;
CREATE TEMP TABLE guarded AS
  SELECT shardid_next(5, 'next_stride') AS id FROM generate_series(1, 200);
SELECT count(*) AS shardid_ids, count(DISTINCT id) AS distinct_ids,
       count(DISTINCT id >> 23) AS milliseconds
  FROM guarded;

-- The guard counts what it issued.
SELECT sequence, ids_issued, clock_refusals
  FROM shardid_stats
 WHERE sequence IN ('next_seq'::regclass, 'next_down'::regclass, '"Shard 7"."Post IDs"'::regclass)
 ORDER BY sequence::text;
SELECT entries >= 3 AS tracked, max_sequences FROM shardid_stats_info();
SELECT shardid_stats_reset();
SELECT sum(ids_issued) AS after_reset FROM shardid_stats WHERE sequence = 'next_seq'::regclass;
SELECT last_ms IS NOT NULL AS reset_keeps_last_ms FROM shardid_stats WHERE sequence = 'next_seq'::regclass;

DROP TABLE next_posts;
DROP FUNCTION next_posts_note();
DROP SCHEMA "Shard 7" CASCADE;
DROP SEQUENCE next_seq, next_epoch_seq, next_down, next_int, next_low, next_stride;
