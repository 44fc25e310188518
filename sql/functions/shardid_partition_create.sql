-- One partition of a parent, for [range_start, range_end): "exists" when
-- a partition with exactly its bounds is there (whatever its name),
-- "covered" when other partitions cover the range, else "created": a
-- table of its own named partition_name, in the parent's schema and
-- tablespace, filled with the default partition's rows of its range
-- (shardid_partition_move), then attached.  A partition that starts
-- before the epoch starts at ID 0.  The caller holds the parent, and its
-- default partition if it has one (shardid_partition_make).
CREATE FUNCTION shardid_partition_create(
	parent pg_catalog.regclass,
	range_start pg_catalog.timestamptz,
	range_end pg_catalog.timestamptz,
	epoch pg_catalog.timestamptz,
	partition_name pg_catalog.text,
	OUT partition pg_catalog.text,
	OUT action pg_catalog.text,
	OUT holds_from pg_catalog.timestamptz,
	OUT holds_to pg_catalog.timestamptz,
	OUT moved pg_catalog.int8)
RETURNS pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
DECLARE
	par record;
	cover record;
	lo_id pg_catalog.int8;
	hi_id pg_catalog.int8;
BEGIN
	SELECT * INTO par FROM @extschema@.shardid_partition_parent(parent);
	lo_id := @extschema@.shardid_floor(GREATEST(range_start, epoch), epoch);
	hi_id := @extschema@.shardid_floor(range_end, epoch);
	holds_from := GREATEST(range_start, epoch);
	holds_to := range_end;
	moved := 0;

	-- What covers this range already?
	SELECT pg_catalog.string_agg(pg_catalog.format('%I.%I', b.nspname, b.relname), ', ' ORDER BY b.lo) AS names,
		   pg_catalog.sum(LEAST(b.hi, hi_id::pg_catalog.numeric) - GREATEST(b.lo, lo_id::pg_catalog.numeric)) AS covered,
		   pg_catalog.bool_or(b.lo = lo_id AND b.hi = hi_id) AS same
	  INTO cover
	  FROM @extschema@.shardid_partition_ranges(parent) AS b
	 WHERE b.lo < hi_id::pg_catalog.numeric
	   AND b.hi > lo_id::pg_catalog.numeric;
	IF cover.same OR cover.covered = hi_id::pg_catalog.numeric - lo_id::pg_catalog.numeric THEN
		partition := cover.names;
		action := CASE WHEN cover.same THEN 'exists' ELSE 'covered' END;
		RETURN;
	ELSIF cover.covered IS NOT NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_object_definition',
			MESSAGE = pg_catalog.format('new partition %I.%I of table %s would overlap partition %s',
										par.nspname, partition_name, parent, cover.names),
			DETAIL = pg_catalog.format('The new partition would hold IDs from %s (%s) to %s (%s); the existing partitions cover part of that range.',
									   lo_id, holds_from, hi_id, range_end),
			HINT = 'Maintain the table with the step its partitions were made with.';
	END IF;

	-- Never adopt a table that is there already.
	IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
				 JOIN pg_catalog.pg_class AS p ON p.relnamespace = c.relnamespace
				WHERE p.oid = parent::pg_catalog.oid
				  AND c.relname = partition_name) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'duplicate_table',
			MESSAGE = pg_catalog.format('relation %I.%I already exists', par.nspname, partition_name),
			DETAIL = pg_catalog.format('It is not a partition of table %s for %s to %s.', parent, holds_from, range_end),
			HINT = 'Rename or drop it: maintenance does not adopt existing tables.';
	END IF;

	-- A table of its own, then attached: ATTACH PARTITION needs only SHARE
	-- UPDATE EXCLUSIVE on the parent, where CREATE TABLE ... PARTITION OF
	-- would take ACCESS EXCLUSIVE.
	EXECUTE pg_catalog.format(
		'CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS'
		' INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION)%s',
		par.nspname, partition_name, par.nspname, par.relname,
		CASE WHEN par.spcname IS NULL THEN '' ELSE pg_catalog.format(' TABLESPACE %I', par.spcname) END);
	-- the parent's owner owns its partitions, whichever member of that
	-- role ran the maintenance
	IF par.relowner <> (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user) THEN
		EXECUTE pg_catalog.format('ALTER TABLE %I.%I OWNER TO %I', par.nspname, partition_name,
								  pg_catalog.pg_get_userbyid(par.relowner));
	END IF;
	moved := @extschema@.shardid_partition_move(parent, partition_name, range_start, range_end, epoch);
	-- As the owner, in a security-restricted operation: attaching plans
	-- the tables' CHECK constraints and builds their indexes, the owner's
	-- code, which must not run as a more privileged caller.
	PERFORM @extschema@.shardid_as_owner(parent,
		pg_catalog.format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
						  par.nspname, par.relname, par.nspname, partition_name, lo_id, hi_id));
	partition := pg_catalog.format('%I.%I', par.nspname, partition_name);
	action := 'created';
END
$fn$;

COMMENT ON FUNCTION shardid_partition_create(pg_catalog.regclass, pg_catalog.timestamptz, pg_catalog.timestamptz,
											 pg_catalog.timestamptz, pg_catalog.text) IS
'internal: make one partition of a table for a range of time, unless partitions cover it already';
