-- The checks of shardid_partition_log (shardid_partition_log.sql says
-- what they refuse), run by a fresh install and by the update from 1.2
-- (sql/updates/shardid--1.2--1.3.sql includes this file).  A 1.2
-- database may hold rows that no run wrote: each row is tried against
-- the new checks (an UPDATE that changes nothing checks them, as NOT
-- VALID constraints are checked on new row versions), and goes if it
-- fails them; then they are validated.  A fresh install's log is empty.
ALTER TABLE shardid_partition_log
	ADD CONSTRAINT shardid_partition_log_ran_at CHECK (pg_catalog.isfinite(ran_at)) NOT VALID,
	ADD CONSTRAINT shardid_partition_log_epoch
		CHECK (pg_catalog.isfinite(epoch)
			   AND pg_catalog.date_trunc('milliseconds', epoch OPERATOR(pg_catalog.-) '2000-01-01 00:00:00+00'::pg_catalog.timestamptz)
				   OPERATOR(pg_catalog.=) (epoch OPERATOR(pg_catalog.-) '2000-01-01 00:00:00+00'::pg_catalog.timestamptz)
			   AND epoch OPERATOR(pg_catalog.<=) '294242-02-28 04:06:12.224+00'::pg_catalog.timestamptz
			   AND pg_catalog.isfinite(ran_at)
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
