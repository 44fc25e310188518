-- Lowering the fence lets IDs after target be issued again, so it refuses
-- to go below any ID this database holds: every column of a table (not of
-- a partition: its parent's max() covers it) whose default calls
-- shardid_next.  IDs that have left the database it cannot see.
CREATE FUNCTION shardid_fence_lower(target pg_catalog.timestamptz)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	target_field pg_catalog.int8;
	col record;
	max_id pg_catalog.int8;
	top_id pg_catalog.int8;
	top record;
	lowered pg_catalog.int8;
	msg pg_catalog.text;
BEGIN
	IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r
			 WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = 'permission denied for function shardid_fence_lower',
			HINT = 'Only a superuser may lower the durable fence: below it, IDs can be issued again.';
	END IF;

	-- the time field of target; shardid_floor refuses a time out of range
	target_field := @extschema@.shardid_floor(target, @extschema@.shardid_epoch())
		OPERATOR(pg_catalog.>>) 23;

	FOR col IN
		SELECT ns.nspname, c.relname, a.attname
		  FROM pg_catalog.pg_depend AS d
		  JOIN pg_catalog.pg_attrdef AS ad ON ad.oid OPERATOR(pg_catalog.=) d.objid
		  JOIN pg_catalog.pg_attribute AS a
			ON a.attrelid OPERATOR(pg_catalog.=) ad.adrelid
		   AND a.attnum OPERATOR(pg_catalog.=) ad.adnum
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) ad.adrelid
		  JOIN pg_catalog.pg_namespace AS ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
		 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
		   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
		   AND d.refobjid IN (SELECT p.oid
								FROM pg_catalog.pg_proc AS p
								JOIN pg_catalog.pg_extension AS e
								  ON e.extnamespace OPERATOR(pg_catalog.=) p.pronamespace
							   WHERE e.extname OPERATOR(pg_catalog.=) 'shardid'
								 AND p.proname OPERATOR(pg_catalog.=) 'shardid_next')
		   AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::pg_catalog."char"[])
		   AND NOT c.relispartition
		   -- other sessions' temporary tables (orphans of a crash too) cannot be read
		   AND NOT pg_catalog.pg_is_other_temp_schema(c.relnamespace)
		   AND NOT a.attisdropped
		 GROUP BY ns.nspname, c.relname, a.attname
		 ORDER BY ns.nspname, c.relname, a.attname
	LOOP
		EXECUTE pg_catalog.format('SELECT pg_catalog.max(%I) FROM %I.%I',
								  col.attname, col.nspname, col.relname)
		   INTO max_id;
		IF max_id IS NOT NULL AND (top_id IS NULL OR max_id OPERATOR(pg_catalog.>) top_id) THEN
			top_id := max_id;
			top := col;
		END IF;
	END LOOP;

	IF target_field OPERATOR(pg_catalog.<) (top_id OPERATOR(pg_catalog.>>) 23) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'object_not_in_prerequisite_state',
			MESSAGE = pg_catalog.format('fence cannot be lowered to %s', target),
			DETAIL = pg_catalog.format('Column %I of table %I.%I holds an ID made at %s.',
									   top.attname, top.nspname, top.relname,
									   @extschema@.shardid_created_at(top_id, @extschema@.shardid_epoch())),
			HINT = 'Choose a time at or after that ID.';
	END IF;

	-- never below an ID this server issued since it started, either
	lowered := @extschema@.shardid_fence_set(target_field);
	msg := pg_catalog.format('durable fence of database "%s" lowered to time field %s (%s)',
							 pg_catalog.current_database(), lowered,
							 @extschema@.shardid_created_at(lowered OPERATOR(pg_catalog.<<) 23,
															@extschema@.shardid_epoch()));
	RAISE LOG '%', msg;
	RAISE NOTICE '%', msg;
	RETURN lowered;
END
$fn$;

COMMENT ON FUNCTION shardid_fence_lower(pg_catalog.timestamptz) IS
'superuser only: lower the durable fence of this database to target, refusing to go below any ID in its columns that default to shardid_next; IDs that have left the database it cannot know';

REVOKE ALL ON FUNCTION shardid_fence_lower(pg_catalog.timestamptz) FROM PUBLIC;
