--
-- Time partitions on shardid keys: tables partitioned BY RANGE (id) with
-- bounds at shardid_floor(); pruning by time; shardid_partition_maintain()
-- and shardid_partition_maintain_all().
--
-- Nothing printed here depends on the date the test runs: partitions made
-- by hand have fixed dates, and what the maintenance makes around now() is
-- compared with what it should be, or printed with its dates masked.
-- What the maintenance made is read from the catalogs in a later
-- statement: a statement's own catalog scans do not see the tables that a
-- function it calls creates.
--
\set ECHO none
\getenv abs_srcdir PG_ABS_SRCDIR
\set err_file :abs_srcdir '/sql/include/err.sql'
\i :err_file
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
\set SHOW_CONTEXT never

-- The maintenance runs below compare what they made in several
-- transactions with the current day: never straddle midnight UTC (this
-- file runs in well under 10 seconds).
SELECT pg_sleep(CASE WHEN extract(epoch FROM clock_timestamp())::bigint % 86400 > 86390 THEN 11 ELSE 0 END) AS wait;

-- mask(s): s with partition-name dates, timestamps and IDs masked.
CREATE FUNCTION pg_temp.mask(s text) RETURNS text LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace(regexp_replace(s,
           '_p[0-9]{6,8}(_[0-9]{2,9})?', '_pDATE', 'g'),
           '[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+\+00', 'TIME', 'g'),
           '[0-9]{12,}', 'ID', 'g')
$$;
-- explain(q): EXPLAIN (COSTS OFF) of q, partition-name dates masked.
CREATE FUNCTION pg_temp.explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    RETURN NEXT pg_temp.mask(line);
  END LOOP;
END $$;
-- bounds(t): t's partitions with their bounds, as numbers.
CREATE FUNCTION pg_temp.bounds(t regclass)
RETURNS TABLE (part regclass, lo numeric, hi numeric) LANGUAGE sql AS $$
  SELECT c.oid::regclass,
         CASE m[1] WHEN 'MINVALUE' THEN NULL ELSE btrim(m[1], '''')::numeric END,
         CASE m[2] WHEN 'MAXVALUE' THEN NULL ELSE btrim(m[2], '''')::numeric END
    FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid,
         regexp_match(pg_get_expr(c.relpartbound, c.oid),
                      '^FOR VALUES FROM \((MINVALUE|''-?[0-9]+'')\) TO \((MAXVALUE|''-?[0-9]+'')\)$') AS m
   WHERE h.inhparent = t AND m IS NOT NULL
   ORDER BY 2 NULLS FIRST
$$;

--
-- 1. Declarative partitioning in plain SQL: one partition per day.
--
CREATE SEQUENCE events_seq;
CREATE TABLE events (
  id bigint NOT NULL DEFAULT shardid_next(7, 'events_seq'),
  body text
) PARTITION BY RANGE (id);
CREATE TABLE events_p20261129 PARTITION OF events
  FOR VALUES FROM (shardid_floor('2026-11-29+00')) TO (shardid_floor('2026-11-30+00'));
CREATE TABLE events_p20261130 PARTITION OF events
  FOR VALUES FROM (shardid_floor('2026-11-30+00')) TO (shardid_floor('2026-12-01+00'));
CREATE TABLE events_p20261201 PARTITION OF events
  FOR VALUES FROM (shardid_floor('2026-12-01+00')) TO (shardid_floor('2026-12-02+00'));
CREATE TABLE events_default PARTITION OF events DEFAULT;

-- The bounds are exactly shardid_floor of midnight.
SELECT part, lo, hi,
       lo = shardid_floor(substring(part::text, 9)::date::timestamptz) AS lo_is_floor,
       hi = shardid_floor(substring(part::text, 9)::date::timestamptz + interval '1 day') AS hi_is_floor
  FROM pg_temp.bounds('events');

-- An ID lands in the partition of its millisecond: the first and the last
-- millisecond of a day, on the lowest and the highest shard and sequence.
INSERT INTO events (id, body) VALUES
  (shardid_encode('2026-11-29 23:59:59.999+00', 8191, 1023), 'last of 11-29'),
  (shardid_encode('2026-11-30 00:00:00+00', 0, 0), 'first of 11-30'),
  (shardid_encode('2026-11-30 00:00:00+00', 8191, 1023), 'first ms of 11-30, top shard'),
  (shardid_encode('2026-11-30 23:59:59.999+00', 0, 0), 'last ms of 11-30, shard 0'),
  (shardid_encode('2026-11-30 23:59:59.999+00', 8191, 1023), 'last of 11-30'),
  (shardid_encode('2026-12-01 00:00:00+00', 0, 0), 'first of 12-01'),
  (shardid_encode('2026-12-01 23:59:59.999+00', 8191, 1023), 'last of 12-01'),
  (shardid_encode('2026-12-02 00:00:00+00', 0, 0), 'first of 12-02: no partition');
SELECT tableoid::regclass AS partition, shardid_created_at(id), body,
       to_char(shardid_created_at(id), 'YYYYMMDD') = substring(tableoid::regclass::text, 9) AS right_day
  FROM events ORDER BY id;

-- Pruning at plan time: a constant time.
SELECT * FROM pg_temp.explain($$SELECT * FROM events WHERE id >= shardid_floor('2026-11-30 12:00+00')$$);
SELECT * FROM pg_temp.explain($$SELECT * FROM events
  WHERE id >= shardid_floor('2026-11-30+00') AND id < shardid_floor('2026-12-01+00')$$);
SELECT count(*) FROM events
 WHERE id >= shardid_floor('2026-11-30+00') AND id < shardid_floor('2026-12-01+00');

--
-- 2. shardid_partition_maintain: partitions ahead of the clock.
--
CREATE SEQUENCE feed_seq;
CREATE TABLE feed (
  id bigint PRIMARY KEY DEFAULT shardid_next(3, 'feed_seq'),
  user_id bigint NOT NULL,
  body text CHECK (body <> '')
) PARTITION BY RANGE (id);
CREATE TABLE feed_default PARTITION OF feed DEFAULT;
-- partitions of long ago, made by hand
CREATE TABLE feed_p20200101 PARTITION OF feed
  FOR VALUES FROM (shardid_floor('2020-01-01+00')) TO (shardid_floor('2020-01-02+00'));
CREATE TABLE feed_p20200102 PARTITION OF feed
  FOR VALUES FROM (shardid_floor('2020-01-02+00')) TO (shardid_floor('2020-01-03+00'));
CREATE TABLE feed_p20200103 PARTITION OF feed
  FOR VALUES FROM (shardid_floor('2020-01-03+00')) TO (shardid_floor('2020-01-04+00'));
INSERT INTO feed (id, user_id, body)
  VALUES (shardid_encode('2020-01-02 12:00+00', 3, 1), 1, 'old');

-- Today's partition and two after it.
CREATE TEMP TABLE made AS
  SELECT * FROM shardid_partition_maintain('feed', '1 day', 2);
SELECT count(*) AS rows,
       bool_and(action = 'created') AS all_created,
       bool_and(range_end - range_start = interval '1 day') AS one_day_each,
       min(range_start) = date_trunc('day', now()) AS starts_today,
       max(range_end) = date_trunc('day', now()) + interval '3 days' AS ends_in_3_days,
       bool_and(partition = 'public.feed_p' || to_char(range_start, 'YYYYMMDD')) AS named_by_day
  FROM made;
-- their bounds are shardid_floor of their start and end
SELECT count(*) AS partitions,
       bool_and(b.lo = shardid_floor(m.range_start) AND b.hi = shardid_floor(m.range_end)) AS bounds_are_floors
  FROM made m JOIN pg_temp.bounds('feed') b ON b.part = m.partition::regclass;
-- they look like the parent: columns, defaults, NOT NULL, CHECK, primary key
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid) AS default
  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attrelid = (SELECT min(partition)::regclass FROM made) AND a.attnum > 0
 ORDER BY a.attnum;
-- (NOT NULL is attnotnull above; PostgreSQL 18 also lists it here, as 'n')
SELECT pg_temp.mask(conname) AS conname, contype, pg_get_constraintdef(oid)
  FROM pg_constraint WHERE conrelid = (SELECT min(partition)::regclass FROM made)
   AND contype <> 'n'
 ORDER BY conname;

-- A new row lands in today's partition, not the default.
INSERT INTO feed (user_id, body) VALUES (1, 'now');
SELECT tableoid::regclass = (SELECT min(partition)::regclass FROM made) AS in_todays_partition
  FROM feed WHERE body = 'now';

-- Running it again makes nothing; a larger premake makes only the new one.
SELECT action, count(*) FROM shardid_partition_maintain('feed', '1 day', 2) GROUP BY action;
SELECT action, count(*),
       max(range_start) = date_trunc('day', now()) + interval '3 days' AS newest_in_3_days
  FROM shardid_partition_maintain('feed', '1 day', 3) GROUP BY action ORDER BY action;

-- Pruning at executor startup: now() is known only when the query runs,
-- so the plan keeps every partition and the executor removes the old ones.
SELECT * FROM pg_temp.explain($$SELECT * FROM feed WHERE id >= shardid_floor(now() - interval '1 day')$$);
SELECT count(*) AS rows_since_yesterday FROM feed WHERE id >= shardid_floor(now() - interval '1 day');

-- The locks: creating partitions takes SHARE UPDATE EXCLUSIVE on the
-- parent, which lets inserts and queries go on; retention's DROP takes
-- ACCESS EXCLUSIVE on the parent and the default partition until commit.
BEGIN;
SELECT count(*) FROM shardid_partition_maintain('feed', '1 day', 4);
SELECT relation::regclass, mode FROM pg_locks
 WHERE locktype = 'relation' AND pid = pg_backend_pid()
   AND relation IN ('feed'::regclass, 'feed_default'::regclass) ORDER BY 1, 2;
ROLLBACK;
BEGIN;
SELECT partition, action, range_start, range_end
  FROM shardid_partition_maintain('feed', '1 day', 3, '30 days') WHERE action <> 'exists';
SELECT relation::regclass, mode FROM pg_locks
 WHERE locktype = 'relation' AND pid = pg_backend_pid()
   AND relation IN ('feed'::regclass, 'feed_default'::regclass) ORDER BY 1, 2;
ROLLBACK;

-- Retention: the partitions of 2020 are older than 30 days; their rows go
-- with them, and nothing else changes.
SELECT partition, action, range_start, range_end
  FROM shardid_partition_maintain('feed', '1 day', 3, '30 days') WHERE action <> 'exists';
SELECT pg_temp.mask(part::text) AS part, count(*) FROM pg_temp.bounds('feed') GROUP BY 1 ORDER BY 1;
SELECT body, pg_temp.mask(tableoid::regclass::text) AS partition FROM feed ORDER BY id;
-- and a retention shorter than the step never drops the current partition
SELECT action, count(*) FROM shardid_partition_maintain('feed', '1 day', 3, '1 ms') GROUP BY action;

--
-- 3. Other steps: names and alignment in UTC.
--
CREATE TABLE hourly (id bigint) PARTITION BY RANGE (id);
SELECT count(*) AS made,
       bool_and(partition = 'public.hourly_p' || to_char(range_start, 'YYYYMMDD_HH24')) AS named,
       bool_and(date_trunc('hour', range_start) = range_start) AS on_the_hour,
       min(range_start) = date_trunc('hour', now()) AS first_holds_now
  FROM shardid_partition_maintain('hourly', '1 hour', 5);
CREATE TABLE quarter (id bigint) PARTITION BY RANGE (id);
SELECT count(*) AS made,
       bool_and(partition = 'public.quarter_p' || to_char(range_start, 'YYYYMMDD_HH24MI')) AS named,
       bool_and(extract(minute FROM range_start)::int % 15 = 0 AND extract(second FROM range_start) = 0) AS aligned,
       min(range_start) <= now() AND now() < min(range_end) AS first_holds_now
  FROM shardid_partition_maintain('quarter', '15 minutes', 3);
CREATE TABLE weekly (id bigint) PARTITION BY RANGE (id);
SELECT count(*) AS made,
       bool_and(partition = 'public.weekly_p' || to_char(range_start, 'YYYYMMDD')) AS named,
       bool_and(extract(isodow FROM range_start) = 1 AND date_trunc('day', range_start) = range_start) AS mondays,
       min(range_start) = date_trunc('week', now()) AS first_holds_now
  FROM shardid_partition_maintain('weekly', '1 week', 1);
CREATE TABLE monthly (id bigint) PARTITION BY RANGE (id);
SELECT count(*) AS made,
       bool_and(partition = 'public.monthly_p' || to_char(range_start, 'YYYYMM')) AS named,
       bool_and(range_end = range_start + interval '1 month') AS one_month_each,
       min(range_start) = date_trunc('month', now()) AS first_holds_now
  FROM shardid_partition_maintain('monthly', '1 month', 2);
CREATE TABLE quarterly (id bigint) PARTITION BY RANGE (id);
SELECT count(*) AS made,
       bool_and(extract(month FROM range_start)::int IN (1, 4, 7, 10)) AS calendar_quarters,
       bool_and(range_end = range_start + interval '3 months') AS three_months_each
  FROM shardid_partition_maintain('quarterly', '3 months', 1);
CREATE TABLE yearly (id bigint) PARTITION BY RANGE (id);
SELECT count(*) AS made,
       bool_and(partition = 'public.yearly_p' || to_char(range_start, 'YYYY') || '01') AS named,
       min(range_start) = date_trunc('year', now()) AS first_holds_now
  FROM shardid_partition_maintain('yearly', '1 year', 0);
-- A whole number of milliseconds that divides a day: 1.5 seconds.
CREATE TABLE fast (id bigint) PARTITION BY RANGE (id);
CREATE TEMP TABLE made_fast AS SELECT * FROM shardid_partition_maintain('fast', '1.5 seconds', 2);
SELECT count(*) AS made,
       bool_and(partition = 'public.fast_p' || to_char(range_start, 'YYYYMMDD_HH24MISSMS')) AS named,
       bool_and(b.hi - b.lo = 1500::numeric * 8388608) AS ids_per_partition
  FROM made_fast m JOIN pg_temp.bounds('fast') b ON b.part = m.partition::regclass;
-- An hourly step on a daily table: the hours are covered already.
SELECT pg_temp.mask(partition) AS partition, action, count(*)
  FROM shardid_partition_maintain('feed', '1 hour', 2) GROUP BY 1, 2;

-- Another epoch: the bounds are shardid_floor in that epoch.
CREATE TABLE twitter (id bigint) PARTITION BY RANGE (id);
CREATE TEMP TABLE made_twitter AS
  SELECT * FROM shardid_partition_maintain('twitter', '1 day', 1, NULL, '2010-11-04 01:42:54.657+00');
SELECT count(*) AS made,
       bool_and(b.lo = shardid_floor(m.range_start, '2010-11-04 01:42:54.657+00')
                AND b.hi = shardid_floor(m.range_end, '2010-11-04 01:42:54.657+00')) AS floors_in_epoch,
       bool_and(b.lo <> shardid_floor(m.range_start)) AS not_the_default_epoch
  FROM made_twitter m JOIN pg_temp.bounds('twitter') b ON b.part = m.partition::regclass;
-- An epoch inside today's partition: that partition starts at ID 0.
CREATE TABLE fresh (id bigint) PARTITION BY RANGE (id);
BEGIN;
CREATE TEMP TABLE made_fresh AS
  SELECT * FROM shardid_partition_maintain('fresh', '1 day', 1, NULL, date_trunc('ms', now() - interval '1 ms'));
SELECT count(*) AS made,
       bool_and(b.lo = 0) FILTER (WHERE m.range_start < date_trunc('day', now()) + interval '1 day') AS first_starts_at_0,
       min(m.range_start) = date_trunc('ms', now() - interval '1 ms') AS starts_at_epoch
  FROM made_fresh m JOIN pg_temp.bounds('fresh') b ON b.part = m.partition::regclass;
COMMIT;

-- A long table name is cut to fit 63 bytes.
CREATE TABLE a_table_with_a_rather_long_name_that_goes_on_and_on_and_on_xyz (id bigint)
  PARTITION BY RANGE (id);
CREATE TEMP TABLE made_long AS
  SELECT * FROM shardid_partition_maintain('a_table_with_a_rather_long_name_that_goes_on_and_on_and_on_xyz', '1 hour', 0);
SELECT octet_length(c.relname) AS name_bytes, pg_temp.mask(c.relname) AS name
  FROM made_long m JOIN pg_class c ON c.oid = m.partition::regclass;

--
-- 4. Schema per shard: one call for every shard's table.
--
CREATE SCHEMA shard_0001;
CREATE SCHEMA shard_0002;
CREATE SCHEMA shard_0003;
CREATE TABLE shard_0001.posts (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE shard_0002.posts (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE shard_0003.posts (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE shard_0003.posts_p20200101 PARTITION OF shard_0003.posts
  FOR VALUES FROM (shardid_floor('2020-01-01+00')) TO (shardid_floor('2020-01-02+00'));
SELECT parent, action, count(*)
  FROM shardid_partition_maintain_all(
         ARRAY(SELECT c.oid::regclass FROM pg_class c
                WHERE c.relname = 'posts' AND c.relkind = 'p'
                  AND c.relnamespace::regnamespace::text ~ '^shard_[0-9]{4}$'),
         '1 day', 2, '1 year')
 GROUP BY parent, action ORDER BY parent, action;
SELECT n.nspname, count(*) AS partitions,
       bool_and(c.relname ~ '^posts_p[0-9]{8}$') AS named
  FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname LIKE 'shard\_%' AND c.relkind = 'r' GROUP BY 1 ORDER BY 1;
-- the same parents twice, in any order: each is maintained once
SELECT parent, action, count(*)
  FROM shardid_partition_maintain_all('{shard_0002.posts,shard_0001.posts,shard_0002.posts}', '1 day', 2)
 GROUP BY parent, action ORDER BY parent, action;
SELECT count(*) AS nothing FROM shardid_partition_maintain_all('{}', '1 day', 2);

--
-- 5. Rows in the default partition: in the range of a new partition, of a
-- day past premake, and of a day long past but within retain, each get
-- their partition and move there, in the same transaction; a row older
-- than retain is deleted, as its partition would have been dropped.
--
CREATE TABLE busy (id bigint, note text) PARTITION BY RANGE (id);
CREATE TABLE busy_default PARTITION OF busy DEFAULT;
INSERT INTO busy VALUES
	(shardid_encode(date_trunc('day', now(), 'UTC') + interval '2 days 3 hours', 5, 5), 'in premake'),
	(shardid_encode(date_trunc('day', now(), 'UTC') + interval '9 days', 5, 5), 'after premake'),
	(shardid_encode(date_trunc('day', now(), 'UTC') - interval '3 days', 5, 5), 'past'),
	(shardid_encode(date_trunc('day', now(), 'UTC') - interval '60 days', 5, 5), 'older than retain');
SET client_min_messages = warning;	-- the NOTICEs name dated partitions
SELECT action, count(*) FROM shardid_partition_maintain('busy', '1 day', 3, '30 days') GROUP BY action;
RESET client_min_messages;
SELECT note,
	   tableoid::regclass::text = CASE note WHEN 'older than retain' THEN 'busy_default'
			ELSE 'busy_p' || to_char(shardid_created_at(id) AT TIME ZONE 'UTC', 'YYYYMMDD') END AS where_it_belongs
  FROM busy ORDER BY id;
SELECT partitions, default_partition, default_rows, last_result, made, dropped, moved, pruned
  FROM shardid_partition_status WHERE parent = 'busy'::regclass;
-- the status counts the default partition's rows without keeping a lock
BEGIN;
SELECT default_rows FROM shardid_partition_status WHERE parent = 'busy'::regclass;
SELECT count(*) AS locks_kept FROM pg_locks
 WHERE relation = 'busy_default'::regclass AND pid = pg_backend_pid();
COMMIT;
-- a foreign key to the parent would see rows leave: refused, nothing moved
CREATE TABLE busy_ref (busy_id bigint PRIMARY KEY) PARTITION BY RANGE (busy_id);
CREATE TABLE busy_ref_default PARTITION OF busy_ref DEFAULT;
CREATE TABLE busy_child (ref bigint REFERENCES busy_ref ON DELETE CASCADE);
INSERT INTO busy_ref VALUES (shardid_encode(date_trunc('day', now(), 'UTC') + interval '1 day', 5, 5));
INSERT INTO busy_child SELECT busy_id FROM busy_ref;
SELECT pg_temp.mask(err($$SELECT * FROM shardid_partition_maintain('busy_ref', '1 day', 1)$$));
SELECT (SELECT count(*) FROM busy_ref_default) AS in_default, (SELECT count(*) FROM busy_child) AS children;
DROP TABLE busy_child, busy_ref;

--
-- 6. Refusals, each with its SQLSTATE.
--
-- not a partitioned table
CREATE TABLE plain (id bigint);
CREATE VIEW plain_view AS SELECT 1 AS id;
SELECT err($$SELECT shardid_partition_maintain('plain', '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('plain_view', '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('events_p20261130', '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain_all(ARRAY['feed'::regclass, 0::regclass], '1 day', 1)$$);
-- partitioned, but not by range on one bigint column
CREATE TABLE by_list (id bigint) PARTITION BY LIST (id);
CREATE TABLE by_hash (id bigint) PARTITION BY HASH (id);
CREATE TABLE by_two (id bigint, k bigint) PARTITION BY RANGE (id, k);
CREATE TABLE by_int (id int) PARTITION BY RANGE (id);
CREATE TABLE by_numeric (id numeric) PARTITION BY RANGE (id);
CREATE TABLE by_expression (id bigint) PARTITION BY RANGE ((id + 0));
SELECT err($$SELECT shardid_partition_maintain('by_list', '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('by_hash', '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('by_two', '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('by_int', '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('by_numeric', '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('by_expression', '1 day', 1)$$);
-- one bad parent in a list: nothing is made for the good ones either
CREATE TABLE good (id bigint) PARTITION BY RANGE (id);
SELECT err($$SELECT shardid_partition_maintain_all('{good,by_list}', '1 day', 1)$$);
SELECT count(*) AS partitions_of_good FROM pg_inherits WHERE inhparent = 'good'::regclass;
-- steps
SELECT err($$SELECT shardid_partition_maintain('good', '0', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '-1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 day -25 hours', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1.5 ms', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 hour 1 us', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '7 hours', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '2 days', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '5 months', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 month 1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 year 1 month', 1)$$);
-- premake, retain, epoch, nulls
SELECT err($$SELECT shardid_partition_maintain('good', '1 day', -1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 day', 1001)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 day', 1, '0')$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 day', 1, '-3 days')$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 day', 1, NULL, '2020-01-01 00:00:00.0005+00')$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 day', 1, NULL, 'infinity')$$);
SELECT pg_temp.mask(err($$SELECT shardid_partition_maintain('good', '1 day', 1, NULL, date_trunc('day', now()) + interval '2 days')$$));
SELECT err($$SELECT shardid_partition_maintain(NULL, '1 day', 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', NULL, 1)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 day', NULL)$$);
SELECT err($$SELECT shardid_partition_maintain('good', '1 day', 1, NULL, NULL)$$);
SELECT err($$SELECT shardid_partition_maintain_all(NULL, '1 day', 1)$$);
-- past the horizon: an epoch whose horizon is 3 days from now
SELECT pg_temp.mask(err(format('SELECT shardid_partition_maintain(%L, %L, %s, NULL, %L)',
         'good', '1 day', 5,
         date_trunc('day', now()) + interval '3 days' - (2^40 || ' ms')::interval)));
-- but 2 days ahead are within it
SELECT count(*) AS made
  FROM shardid_partition_maintain('good', '1 day', 1, NULL,
         date_trunc('day', now()) + interval '3 days' - (2^40 || ' ms')::interval);
DROP TABLE good;
-- a partition that would overlap one made by hand
CREATE TABLE overlapped (id bigint) PARTITION BY RANGE (id);
DO $$
BEGIN
  EXECUTE format('CREATE TABLE overlapped_half PARTITION OF overlapped FOR VALUES FROM (%s) TO (%s)',
                 shardid_floor(date_trunc('day', now()) + interval '1 day'),
                 shardid_floor(date_trunc('day', now()) + interval '1 day 12 hours'));
END $$;
SELECT pg_temp.mask(err($$SELECT shardid_partition_maintain('overlapped', '1 day', 2)$$));
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'overlapped'::regclass;
-- a table with the name of a new partition that is not that partition
CREATE TABLE named (id bigint) PARTITION BY RANGE (id);
DO $$
BEGIN
  EXECUTE format('CREATE TABLE %I (id bigint)', 'named_p' || to_char(now() + interval '1 day', 'YYYYMMDD'));
END $$;
SELECT pg_temp.mask(err($$SELECT shardid_partition_maintain('named', '1 day', 1)$$));
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'named'::regclass;
-- a table the caller does not own
CREATE ROLE regress_shardid_part_owner;
CREATE ROLE regress_shardid_part_other;
GRANT CREATE ON SCHEMA public TO regress_shardid_part_owner;
SET ROLE regress_shardid_part_owner;
CREATE TABLE owned (id bigint) PARTITION BY RANGE (id);
SELECT count(*) AS made_by_owner FROM shardid_partition_maintain('owned', '1 day', 1);
RESET ROLE;
GRANT ALL ON owned TO regress_shardid_part_other;
SET ROLE regress_shardid_part_other;
SELECT err($$SELECT shardid_partition_maintain('owned', '1 day', 2)$$);
SELECT err($$SELECT shardid_partition_maintain_all('{owned}', '1 day', 0, '1 day')$$);
RESET ROLE;
-- a member of the owning role may
GRANT regress_shardid_part_owner TO regress_shardid_part_other;
SET ROLE regress_shardid_part_other;
SELECT action, count(*) FROM shardid_partition_maintain('owned', '1 day', 2) GROUP BY action ORDER BY action;
RESET ROLE;
-- and what a member makes belongs to the owning role
SELECT DISTINCT c.relowner::regrole AS partitions_owned_by FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'owned'::regclass;
DROP TABLE owned;
REVOKE CREATE ON SCHEMA public FROM regress_shardid_part_owner;
DROP ROLE regress_shardid_part_other;
DROP ROLE regress_shardid_part_owner;

--
-- 7. shardid_partition_run: each table in transactions of its own.  One
-- that fails is reported in the status with its SQLSTATE; the others get
-- their partitions; the call ends in an error carrying the failure.
--
CREATE SCHEMA run_a;
CREATE SCHEMA run_b;
CREATE SCHEMA run_c;
CREATE TABLE run_a.t (id bigint PRIMARY KEY, note text) PARTITION BY RANGE (id);
CREATE TABLE run_b.t (id bigint PRIMARY KEY, note text) PARTITION BY RANGE (id);
CREATE TABLE run_c.t (id bigint PRIMARY KEY, note text) PARTITION BY RANGE (id);
CREATE TABLE run_c.t_default PARTITION OF run_c.t DEFAULT;
INSERT INTO run_c.t VALUES (shardid_encode(now() + interval '5 days', 1, 1), 'stray');
-- run_b's next partition would have the name of a table that is there
DO $$
BEGIN
  EXECUTE format('CREATE TABLE run_b.%I (id bigint)', 't_p' || to_char(now() AT TIME ZONE 'UTC' + interval '1 day', 'YYYYMMDD'));
END $$;
\set VERBOSITY sqlstate
SET client_min_messages = error;	-- the WARNING names a dated partition
CALL shardid_partition_run('{run_c.t,run_b.t,run_a.t}', '1 day', 2);
RESET client_min_messages;
\set VERBOSITY default
SELECT parent, partitions, default_rows, last_result, last_sqlstate,
	   pg_temp.mask(last_message) AS last_message, made, dropped, moved,
	   covered_until = date_trunc('day', now(), 'UTC') + interval '3 days' AS covered_3_days,
	   ahead = covered_until - now() AS ahead_right,
	   oldest_start = date_trunc('day', now(), 'UTC') AS oldest_today
  FROM shardid_partition_status WHERE parent::text LIKE 'run\__.t' ORDER BY parent::text;
-- the stray row's day has its partition, and the row is there
SELECT tableoid::regclass::text = 'run_c.t_p' || to_char(shardid_created_at(id) AT TIME ZONE 'UTC', 'YYYYMMDD') AS moved
  FROM run_c.t;
-- once the name is free, the next run makes run_b's partitions too
DO $$
BEGIN
  EXECUTE format('DROP TABLE run_b.%I', 't_p' || to_char(now() AT TIME ZONE 'UTC' + interval '1 day', 'YYYYMMDD'));
END $$;
CALL shardid_partition_run('{run_c.t,run_b.t,run_a.t}', '1 day', 2);
SELECT parent, partitions, last_result, last_sqlstate, made FROM shardid_partition_status
 WHERE parent::text LIKE 'run\__.t' ORDER BY parent::text;
-- every shard's table of a name, for CALL (whose arguments cannot be
-- subqueries): only the caller's own tables in its own shard schemas
CREATE SCHEMA shard_0101;
CREATE SCHEMA shard_0102;
CREATE TABLE shard_0101.chirps (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE shard_0102.chirps (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE shard_0102.chirps_plain (id bigint);
CREATE ROLE regress_shardid_part_squatter;
CREATE SCHEMA shard_0103 AUTHORIZATION regress_shardid_part_squatter;
SET ROLE regress_shardid_part_squatter;
CREATE TABLE shard_0103.chirps (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
SELECT shardid_shard_tables('chirps') AS squatter_sees;
RESET ROLE;
GRANT USAGE, CREATE ON SCHEMA shard_0102 TO regress_shardid_part_squatter;
SET ROLE regress_shardid_part_squatter;
CREATE TABLE shard_0102.pecks (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
RESET ROLE;
SELECT shardid_shard_tables('chirps'), shardid_shard_tables('pecks') AS not_ours,
	   shardid_shard_tables('chirps_plain') AS not_partitioned;
CALL shardid_partition_run(shardid_shard_tables('chirps'), '1 day', 1);
SELECT parent, partitions, last_result FROM shardid_partition_status
 WHERE parent::text LIKE 'shard\_01%' ORDER BY parent::text;
-- a role whose name needs quoting
CREATE ROLE "Regress_Shardid_Mixed";
CREATE SCHEMA shard_0104 AUTHORIZATION "Regress_Shardid_Mixed";
SET ROLE "Regress_Shardid_Mixed";
CREATE TABLE shard_0104.chirps (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
SELECT shardid_shard_tables('chirps') AS mixed_sees;
RESET ROLE;
DROP SCHEMA shard_0101, shard_0102, shard_0103, shard_0104 CASCADE;
DROP ROLE regress_shardid_part_squatter;
DROP ROLE "Regress_Shardid_Mixed";
-- the status never runs another role's code: a default partition with a
-- row security policy of its owner's is not counted for a pg_monitor
-- member who does not own it
CREATE ROLE regress_shardid_part_evil;
CREATE ROLE regress_shardid_part_mon IN ROLE pg_monitor;
GRANT CREATE ON SCHEMA public TO regress_shardid_part_evil;
SET ROLE regress_shardid_part_evil;
CREATE FUNCTION evil_spy() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'evil_spy runs as %', current_user; RETURN true; END $$;
CREATE TABLE evil (id bigint) PARTITION BY RANGE (id);
CREATE TABLE evil_default PARTITION OF evil DEFAULT;
ALTER TABLE evil_default ENABLE ROW LEVEL SECURITY;
CREATE POLICY spy ON evil_default USING (evil_spy());
GRANT SELECT ON evil_default TO PUBLIC;
INSERT INTO evil VALUES (9223372036854775807);	-- past the horizon: stays
SELECT count(*) AS made FROM shardid_partition_maintain('evil', '1 day', 0);
SELECT count(*) AS evil_sees FROM evil_default;
RESET ROLE;
SET ROLE regress_shardid_part_mon;
SELECT parent, default_partition, default_rows FROM shardid_partition_status WHERE parent = 'evil'::regclass;
RESET ROLE;
DROP TABLE evil;
DROP FUNCTION evil_spy();
REVOKE CREATE ON SCHEMA public FROM regress_shardid_part_evil;
DROP ROLE regress_shardid_part_evil;
DROP ROLE regress_shardid_part_mon;
-- a procedure that commits: not inside a transaction block
BEGIN;
CALL shardid_partition_run('{run_a.t}', '1 day', 2);
ROLLBACK;
-- arguments are checked before any table
CALL shardid_partition_run('{run_a.t}', '25 hours', 2);
CALL shardid_partition_run('{run_a.t}', '1 day', 2, lock_wait => '0 s');
CALL shardid_partition_run(NULL, '1 day', 2);
-- a table that is gone fails on its own (42P01); the others are maintained
\set VERBOSITY sqlstate
SET client_min_messages = error;
CALL shardid_partition_run(ARRAY[0, 'run_a.t'::regclass::oid]::regclass[], '1 day', 3);
RESET client_min_messages;
\set VERBOSITY default
SELECT parent, partitions, last_result, made FROM shardid_partition_status WHERE parent = 'run_a.t'::regclass;
-- a role that owns none of them: each fails with 42501, and nothing is
-- recorded for it; it sees no other role's runs, and cannot write them
CREATE ROLE regress_shardid_part_stranger;
GRANT USAGE ON SCHEMA run_a TO regress_shardid_part_stranger;
SET ROLE regress_shardid_part_stranger;
\set VERBOSITY sqlstate
CALL shardid_partition_run('{run_a.t}', '1 day', 2);
\set VERBOSITY default
SELECT count(*) AS runs_seen FROM shardid_partition_status;
SELECT err($$INSERT INTO shardid_partition_log (parent, step, premake, epoch, result, sqlstate, message, made, dropped, moved)
			 VALUES ('run_a.t'::regclass, '1 day', 2, '2011-01-01+00', 'failed', 'XX000', 'forged', 0, 0, 0)$$);
SELECT err($$UPDATE shardid_partition_log SET result = 'failed'$$);
SELECT err($$DELETE FROM shardid_partition_log$$);
SELECT err($$LOCK TABLE shardid_partition_log IN ACCESS EXCLUSIVE MODE$$);
RESET ROLE;
SELECT last_result, last_message FROM shardid_partition_status WHERE parent = 'run_a.t'::regclass;
DROP SCHEMA run_a, run_b, run_c CASCADE;
DROP ROLE regress_shardid_part_stranger;
-- only the last run of each table is kept, and the runs of tables that
-- are gone are forgotten, at the next run
CALL shardid_partition_run('{}', '1 day', 2);
SELECT count(*) AS runs_of_gone_tables FROM shardid_partition_log l
 WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = l.parent);
SELECT count(*) = count(DISTINCT parent) AS one_run_each FROM shardid_partition_log;

-- The functions' markings.
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict, p.prosecdef, p.proconfig
  FROM pg_proc p WHERE p.proname LIKE 'shardid\_partition\_%' ORDER BY 1::text;
