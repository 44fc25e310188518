-- The parent's lock for retention, taken first: with partitions past the
-- retention cutoff (and not below the table's first shardid ID, which
-- are kept), ACCESS EXCLUSIVE on the parent, before its default
-- partition is touched.  'none' when no partition is due (no lock is
-- taken), 'held', or 'busy' when the wait ran out (the drops are then
-- reported "busy").  What shardid_partition_drop is told.
CREATE FUNCTION shardid_partition_drop_lock(
	parent pg_catalog.regclass,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval,
	epoch pg_catalog.timestamptz,
	lock_wait pg_catalog.interval)
RETURNS pg_catalog.text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
DECLARE
	cutoff pg_catalog.int8;
	first_id pg_catalog.int8;
BEGIN
	SELECT p.cutoff INTO cutoff FROM @extschema@.shardid_partition_plan(step, premake, retain, epoch, lock_wait) AS p;
	PERFORM FROM @extschema@.shardid_partition_parent(parent);
	IF cutoff IS NULL THEN
		RETURN 'none';
	END IF;
	-- (one that holds the first ID counts: it may go)
	first_id := @extschema@.shardid_partition_first_id(parent);
	IF NOT EXISTS (SELECT FROM @extschema@.shardid_partition_ranges(parent) AS b
					WHERE b.hi <= cutoff::pg_catalog.numeric AND b.hi > first_id::pg_catalog.numeric) THEN
		RETURN 'none';
	END IF;
	RETURN CASE WHEN @extschema@.shardid_partition_lock(parent, 'ACCESS EXCLUSIVE', lock_wait)
				THEN 'held' ELSE 'busy' END;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_drop_lock(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
												pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval) IS
'internal: lock a table for retention if any of its partitions is past it: none, held or busy';
