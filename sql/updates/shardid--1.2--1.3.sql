/* shardid--1.2--1.3.sql: the hand-written part of the update from 1.2 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.3'" to load this file. \quit

--
-- The Makefile makes the update script from this file: the line
-- "--@ sources" below becomes sql/probe.sql, then every function,
-- procedure and view of sql/ as CREATE OR REPLACE, so that each object's
-- text is kept once, in its own file.  What CREATE OR REPLACE cannot do
-- is written here by hand: new sequences and tables before the line,
-- drops of objects that went or whose signature or columns changed
-- before it too, and the data steps after it.  test/t/080_upgrade.pl
-- proves that an updated database equals a fresh one.
--

-- shardid_partition_work, the maintenance of one table switched by
-- flags, is split by action into shardid_partition_plan, _parent, _lock,
-- _drop_lock, _make, _create, _move and _drop (made below).
DROP FUNCTION shardid_partition_work(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
									 pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval,
									 pg_catalog.bool, pg_catalog.bool);

-- shardid_adopt says what it leaves behind (first_id, old_keys), and
-- shardid_partition_status what retention kept (kept_below): new result
-- columns, so the function (and the view over it) are made again.
DROP FUNCTION shardid_adopt(pg_catalog.regclass, pg_catalog.int4, pg_catalog.name);
DROP VIEW shardid_partition_status;
DROP FUNCTION shardid_partition_status();

-- Retention keeps the keys below a table's first shardid ID; a run that
-- did records that ID.
ALTER TABLE shardid_partition_log ADD COLUMN kept_below pg_catalog.int8;

-- The log refuses what no run could write (sql/tables says what), where
-- 1.2 took any row for the caller's own table: an epoch of 'infinity'
-- there made shardid_partition_status fail for every reader.  Rows that
-- a 1.2 database holds and no run wrote are deleted: each is tried
-- against the new checks (an UPDATE that changes nothing checks them, as
-- NOT VALID constraints are checked on new row versions), and goes if
-- it fails them.
ALTER TABLE shardid_partition_log
	ADD CONSTRAINT shardid_partition_log_ran_at CHECK (pg_catalog.isfinite(ran_at)) NOT VALID,
	ADD CONSTRAINT shardid_partition_log_epoch
		CHECK (pg_catalog.isfinite(epoch)
			   AND pg_catalog.date_trunc('milliseconds', epoch OPERATOR(pg_catalog.-) '2000-01-01 00:00:00+00'::pg_catalog.timestamptz)
				   OPERATOR(pg_catalog.=) (epoch OPERATOR(pg_catalog.-) '2000-01-01 00:00:00+00'::pg_catalog.timestamptz)
			   AND epoch OPERATOR(pg_catalog.<=) '294242-02-28 04:06:12.224+00'::pg_catalog.timestamptz
			   AND epoch OPERATOR(pg_catalog.<=) ran_at
			   AND (ran_at OPERATOR(pg_catalog.-) epoch) OPERATOR(pg_catalog.<) '1099511627775 milliseconds'::pg_catalog.interval) NOT VALID,
	ADD CONSTRAINT shardid_partition_log_step CHECK (step OPERATOR(pg_catalog.>) '0'::pg_catalog.interval) NOT VALID,
	ADD CONSTRAINT shardid_partition_log_premake
		CHECK (premake OPERATOR(pg_catalog.>=) 0 AND premake OPERATOR(pg_catalog.<=) 1000) NOT VALID,
	ADD CONSTRAINT shardid_partition_log_retain CHECK (retain OPERATOR(pg_catalog.>) '0'::pg_catalog.interval) NOT VALID,
	ADD CONSTRAINT shardid_partition_log_counts
		CHECK (made OPERATOR(pg_catalog.>=) 0 AND dropped OPERATOR(pg_catalog.>=) 0 AND moved OPERATOR(pg_catalog.>=) 0
			   AND pruned OPERATOR(pg_catalog.>=) 0 AND kept_below OPERATOR(pg_catalog.>=) 0) NOT VALID,
	ADD CONSTRAINT shardid_partition_log_sqlstate
		CHECK (sqlstate OPERATOR(pg_catalog.~) '^[0-9A-Z]{5}$'
			   AND (result OPERATOR(pg_catalog.=) 'ok') OPERATOR(pg_catalog.<>) (sqlstate IS NOT NULL)) NOT VALID;
DO $forged$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT l.ctid FROM @extschema@.shardid_partition_log AS l LOOP
		BEGIN
			UPDATE @extschema@.shardid_partition_log AS l SET parent = l.parent
			 WHERE l.ctid OPERATOR(pg_catalog.=) r.ctid;
		EXCEPTION WHEN check_violation THEN
			DELETE FROM @extschema@.shardid_partition_log AS l WHERE l.ctid OPERATOR(pg_catalog.=) r.ctid;
		END;
	END LOOP;
END
$forged$;
ALTER TABLE shardid_partition_log
	VALIDATE CONSTRAINT shardid_partition_log_ran_at,
	VALIDATE CONSTRAINT shardid_partition_log_epoch,
	VALIDATE CONSTRAINT shardid_partition_log_step,
	VALIDATE CONSTRAINT shardid_partition_log_premake,
	VALIDATE CONSTRAINT shardid_partition_log_retain,
	VALIDATE CONSTRAINT shardid_partition_log_counts,
	VALIDATE CONSTRAINT shardid_partition_log_sqlstate;

--@ sources
