--
-- Every bad input: a clear error with its SQLSTATE, and nothing spent.
--
\set ECHO none
\getenv abs_srcdir PG_ABS_SRCDIR
\set err_file :abs_srcdir '/sql/include/err.sql'
\i :err_file
\set ECHO all
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set SHOW_CONTEXT never

CREATE SEQUENCE errs_seq;
SELECT nextval('errs_seq');

-- Shards outside 0 to 8191.
SELECT err($$SELECT shardid_next(-1, 'errs_seq')$$);
SELECT err($$SELECT shardid_next(8192, 'errs_seq')$$);
SELECT err($$SELECT shardid_encode('2026-10-23+00', 9000, 0)$$);
SELECT err($$SELECT shardid_encode('2026-10-23+00', -1, 0)$$);
SELECT err($$SELECT shardid_next(8191, 'errs_seq', '2011-01-01+00') >> 23 > 0$$) AS shard_8191_works;
SELECT last_value AS errs_seq_after_ok, is_called AS errs_seq_called_after_ok FROM errs_seq \gset

-- Sequence numbers outside 0 to 1023 in shardid_encode.
SELECT err($$SELECT shardid_encode('2026-10-23+00', 1, 1024)$$);
SELECT err($$SELECT shardid_encode('2026-10-23+00', 1, -1)$$);

-- Times before the epoch or past the horizon.
SELECT err($$SELECT shardid_encode('2010-12-31 23:59:59.999+00', 1, 1)$$);
SELECT err($$SELECT shardid_encode('2045-11-03 19:53:47.776+00', 1, 1)$$);
SELECT err($$SELECT shardid_floor('2010-12-31 23:59:59.999+00')$$);
SELECT err($$SELECT shardid_floor('2045-11-03 19:53:47.776+00')$$);
SELECT err($$SELECT shardid_encode('2026-10-23+00', 1, 1, '2030-01-01+00')$$);
SELECT err($$SELECT shardid_encode('infinity', 1, 1)$$);
SELECT err($$SELECT shardid_floor('-infinity')$$);

-- Epochs that are infinite, not a whole millisecond, out of range, or (for
-- shardid_next, which reads the clock) in the future.
SELECT err($$SELECT shardid_encode('2026-10-23+00', 1, 1, 'infinity')$$);
SELECT err($$SELECT shardid_decode(1, '-infinity')$$);
SELECT err($$SELECT shardid_horizon('infinity')$$);
SELECT err($$SELECT shardid_created_at(1, 'infinity')$$);
SELECT err($$SELECT shardid_floor('2026-10-23+00', 'infinity')$$);
SELECT err($$SELECT shardid_next(1, 'errs_seq', 'infinity')$$);
SELECT err($$SELECT shardid_horizon('2011-01-01 00:00:00.0005+00')$$);
SELECT err($$SELECT shardid_horizon('294270-01-01+00')$$);
SELECT err($$SELECT shardid_horizon('294276-12-31 23:59:59.999+00')$$);
SELECT shardid_horizon('294240-01-01+00') AS far_epoch_fits;
SELECT err($$SELECT shardid_encode('294276-12-31 23:59:59.999+00', 1, 1)$$);
SELECT err($$SELECT shardid_encode('4713-01-01 BC', 1, 1)$$);
SELECT err($$SELECT shardid_next(1, 'errs_seq', 'infinity')$$);
SELECT err($$SELECT shardid_next(1, 'errs_seq', date_trunc('milliseconds', clock_timestamp() + interval '1 day'))$$)
       ~ '^22023: epoch .* is in the future' AS future_epoch_refused;

-- Negative IDs: shardid never makes one.
SELECT err($$SELECT shardid_decode(-1)$$);
SELECT err($$SELECT shardid_decode(-9223372036854775808, '2011-01-01+00')$$);
SELECT err($$SELECT shardid_shard(-1)$$);
SELECT err($$SELECT shardid_seq(-1)$$);
SELECT err($$SELECT shardid_created_at(-1)$$);
SELECT err($$SELECT shardid_to_shortcode(-1)$$);

-- A regclass that is not a sequence, or no relation at all.
CREATE TABLE errs_table (id bigint);
CREATE VIEW errs_view AS SELECT 1 AS x;
SELECT err($$SELECT shardid_next(1, 'errs_table')$$);
SELECT err($$SELECT shardid_next(1, 'errs_view')$$);
SELECT err($$SELECT shardid_next(1, 4294967295::oid::regclass)$$);
SELECT err($$SELECT shardid_next(1, 'no_such_seq')$$);

-- A sequence this session used, then dropped: still a clear error.
CREATE SEQUENCE errs_dropped;
SELECT shardid_shard(shardid_next(3, 'errs_dropped')) AS before_drop;
SELECT 'errs_dropped'::regclass::oid AS dropped_oid \gset
DROP SEQUENCE errs_dropped;
SELECT err(format('SELECT shardid_next(3, %s::oid::regclass)', :dropped_oid))
       = format('42P01: relation with OID %s does not exist', :dropped_oid) AS dropped_is_undefined;
-- and a table created in its place under the same name is no sequence
CREATE TABLE errs_dropped (id bigint);
SELECT err($$SELECT shardid_next(3, 'errs_dropped')$$);
DROP TABLE errs_dropped;

-- None of the refusals above spent a sequence value: the sequence stands
-- where the one call that issued an ID (shard 8191) left it.
SELECT last_value = :errs_seq_after_ok AND is_called = :'errs_seq_called_after_ok' AS no_value_spent
  FROM errs_seq;

-- A failing DEFAULT writes nothing.
CREATE TABLE errs_posts (id bigint PRIMARY KEY DEFAULT shardid_next(1, 'errs_seq'), shard int);
INSERT INTO errs_posts (shard) VALUES (1);
ALTER TABLE errs_posts ALTER id SET DEFAULT shardid_next(9000, 'errs_seq');
SELECT err($$INSERT INTO errs_posts (shard) VALUES (2), (3)$$);
SELECT shard FROM errs_posts;
DROP TABLE errs_posts;

-- The session that used a sequence in this transaction drops it, or rolls
-- back to a savepoint from before it existed: 42P01, as for any missing
-- sequence, never XX000 (the check made once per transaction is
-- forgotten when the sequence goes).
BEGIN;
CREATE SEQUENCE errs_gone;
SELECT shardid_next(8, 'errs_gone') > 0 AS made;
SELECT 'errs_gone'::regclass::oid AS gone_oid \gset
DROP SEQUENCE errs_gone;
SELECT regexp_replace(err(format('SELECT shardid_next(8, %s)', :gone_oid)), 'OID \d+', 'OID N') AS dropped_here;
ROLLBACK;
BEGIN;
SAVEPOINT before_create;
CREATE SEQUENCE errs_gone;
SELECT shardid_next(8, 'errs_gone') > 0 AS made;
SELECT 'errs_gone'::regclass::oid AS gone_oid \gset
ROLLBACK TO SAVEPOINT before_create;
SELECT regexp_replace(err(format('SELECT shardid_next(8, %s)', :gone_oid)), 'OID \d+', 'OID N') AS rolled_back;
ROLLBACK;

-- Privileges: the caller needs USAGE or UPDATE on the sequence, exactly as
-- for nextval, checked with the caller's own rights.
CREATE ROLE regress_shardid_nobody;
CREATE ROLE regress_shardid_reader;
CREATE ROLE regress_shardid_user;
CREATE ROLE regress_shardid_updater;
GRANT SELECT ON errs_seq TO regress_shardid_reader;
GRANT USAGE ON errs_seq TO regress_shardid_user;
GRANT UPDATE ON errs_seq TO regress_shardid_updater;
SET ROLE regress_shardid_nobody;
SELECT err($$SELECT shardid_next(1, 'errs_seq')$$);
SELECT err($$SELECT nextval('errs_seq')$$);
RESET ROLE;
SET ROLE regress_shardid_reader;
SELECT err($$SELECT shardid_next(1, 'errs_seq')$$);
RESET ROLE;
SET ROLE regress_shardid_user;
SELECT shardid_shard(shardid_next(77, 'errs_seq')) AS with_usage;
RESET ROLE;
SET ROLE regress_shardid_updater;
SELECT shardid_shard(shardid_next(78, 'errs_seq')) AS with_update;
-- resetting the guard's counters is for superusers unless granted
SELECT err($$SELECT shardid_stats_reset()$$);
RESET ROLE;
-- the pure functions need no privilege
SET ROLE regress_shardid_nobody;
SELECT shardid_shard(4185136929178974185) AS pure_needs_nothing;
-- What the guard did is shown as pg_stat_statements shows it: a role sees
-- the sequences it may SELECT from, in the current database only, unless
-- it has the privileges of pg_read_all_stats.
SELECT count(*) AS nobody_sees FROM shardid_stats;
SELECT datname = current_database() AS nobody_sees_own_fence_only FROM shardid_fence_status;
RESET ROLE;
SET ROLE regress_shardid_reader;
SELECT sequence, ids_issued > 0 AS issued FROM shardid_stats;
SELECT datname = current_database() AS own_fence_only FROM shardid_fence_status;
RESET ROLE;
SET ROLE regress_shardid_user;
SELECT count(*) AS usage_is_not_select FROM shardid_stats;
RESET ROLE;
SELECT count(*) AS superuser_rows FROM shardid_stats \gset
GRANT pg_read_all_stats TO regress_shardid_nobody;
SET ROLE regress_shardid_nobody;
SELECT count(*) = :superuser_rows AND count(*) > 1 AS read_all_stats_sees_all
  FROM shardid_stats;
RESET ROLE;
REVOKE pg_read_all_stats FROM regress_shardid_nobody;
-- Rights come from the caller even inside a SECURITY INVOKER function owned
-- by a privileged role.
CREATE FUNCTION errs_make() RETURNS bigint LANGUAGE sql
  AS $$ SELECT shardid_next(5, 'errs_seq') $$;
SET ROLE regress_shardid_nobody;
SELECT err($$SELECT errs_make()$$);
RESET ROLE;

DROP FUNCTION errs_make();
REVOKE ALL ON errs_seq FROM regress_shardid_reader, regress_shardid_user, regress_shardid_updater;
DROP ROLE regress_shardid_nobody, regress_shardid_reader, regress_shardid_user, regress_shardid_updater;
DROP VIEW errs_view;
DROP TABLE errs_table;
DROP SEQUENCE errs_seq;
