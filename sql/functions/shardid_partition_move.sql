-- Move the rows of [range_start, range_end) out of a parent's default
-- partition into partition_name, a table of the parent's schema that is
-- not attached yet, in one statement, under the caller's lock on the
-- default partition: none can arrive meanwhile, none is lost.  Refused
-- when a foreign key references the table (its ON DELETE action would
-- see the rows leave) or the caller is not the table's owner (the move
-- runs the table's triggers and CHECK constraints).  The rows moved.
CREATE FUNCTION shardid_partition_move(
	parent pg_catalog.regclass,
	partition_name pg_catalog.text,
	range_start pg_catalog.timestamptz,
	range_end pg_catalog.timestamptz,
	epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
DECLARE
	par record;
	cols pg_catalog.text;
	lo_id pg_catalog.int8;
	hi_id pg_catalog.int8;
	due pg_catalog.bool;
	n_rows pg_catalog.int8;
BEGIN
	SELECT * INTO par FROM @extschema@.shardid_partition_parent(parent);
	IF par.def_oid IS NULL THEN
		RETURN 0;
	END IF;
	lo_id := @extschema@.shardid_floor(GREATEST(range_start, epoch), epoch);
	hi_id := @extschema@.shardid_floor(range_end, epoch);
	-- read as the owner, in a security-restricted operation
	due := @extschema@.shardid_rows_exist(par.def_oid::pg_catalog.regclass, par.keyname, lo_id, hi_id);
	IF NOT due THEN
		RETURN 0;
	END IF;

	IF EXISTS (SELECT FROM pg_catalog.pg_constraint AS fk
				WHERE fk.contype = 'f'
				  AND (fk.confrelid = parent::pg_catalog.oid OR fk.confrelid = par.def_oid)) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'feature_not_supported',
			MESSAGE = pg_catalog.format('cannot move rows of default partition %I.%I: table %s is referenced by a foreign key',
										par.def_nspname, par.def_relname, parent),
			DETAIL = pg_catalog.format('The rows with IDs from %s (%s) up to %s (%s) would be deleted and inserted again, which the foreign key''s ON DELETE action would see.',
									   lo_id, GREATEST(range_start, epoch), hi_id, range_end),
			HINT = 'Move them yourself (docs/partitions.md, "Rows in the default partition"), then run the maintenance again.';
	END IF;
	IF par.relowner <> (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('must be owner of table %s to move rows out of its default partition', parent),
			DETAIL = 'Moving rows runs the table''s triggers and constraints, which would run as the caller.',
			HINT = pg_catalog.format('Run the maintenance as role %s (SET ROLE).', par.relowner::pg_catalog.regrole);
	END IF;

	-- the parent's columns that can be written
	SELECT pg_catalog.string_agg(pg_catalog.format('%I', a.attname), ', ' ORDER BY a.attnum) INTO cols
	  FROM pg_catalog.pg_attribute AS a
	 WHERE a.attrelid = parent::pg_catalog.oid
	   AND a.attnum > 0
	   AND NOT a.attisdropped
	   AND a.attgenerated = '';
	EXECUTE pg_catalog.format(
		'WITH d AS (DELETE FROM ONLY %I.%I AS d WHERE d.%I >= $1 AND d.%I < $2 RETURNING %s)'
		' INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM d',
		par.def_nspname, par.def_relname, par.keyname, par.keyname, cols,
		par.nspname, partition_name, cols, cols)
	USING lo_id, hi_id;
	GET DIAGNOSTICS n_rows = ROW_COUNT;
	RAISE NOTICE USING
		MESSAGE = pg_catalog.format('moved %s rows from default partition %I.%I into new partition %I.%I',
									n_rows, par.def_nspname, par.def_relname, par.nspname, partition_name);
	RETURN n_rows;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_move(pg_catalog.regclass, pg_catalog.text, pg_catalog.timestamptz,
										   pg_catalog.timestamptz, pg_catalog.timestamptz) IS
'internal: move the rows of a range of time out of a table''s default partition into a new partition';
