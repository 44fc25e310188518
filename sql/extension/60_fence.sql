--
-- The durable fence
--
-- Each database keeps, in the sequence shardid_fence, a time field at or
-- before which it issues no ID again.  The guard writes it ahead of the IDs
-- it issues (setval, then a WAL flush), so that WAL, base backups, pg_dump
-- and pg_upgrade carry it wherever the data goes; after any start,
-- promotion or restore, every sequence starts at it.  Only the extension's
-- owner may read or write it: shardid_next switches to the owner for that.
-- shardid_fence_lead keeps the lead the fence was written with, and
-- shardid_fence_lower, for a superuser, takes the fence back down.
--

CREATE SEQUENCE shardid_fence AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_fence IS
'durable fence of shardid_next in this database: a time field at or before which no ID is issued again';

REVOKE ALL ON SEQUENCE shardid_fence FROM PUBLIC;

-- pg_dump carries the fence with the data
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_fence'::pg_catalog.regclass, '');

CREATE SEQUENCE shardid_fence_lead AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_fence_lead IS
'how far ahead of the IDs the durable fence may be, in ms: shardid.fence_lead plus a quarter, as in force when the fence was last written, so that a start judges the fence by the lead it was written with';

REVOKE ALL ON SEQUENCE shardid_fence_lead FROM PUBLIC;

-- pg_dump carries the lead with the fence
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_fence_lead'::pg_catalog.regclass, '');

CREATE FUNCTION shardid_fence_reload()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_fence_reload'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_fence_reload() IS
'make the next shardid_next in this database read its durable fence again';

REVOKE ALL ON FUNCTION shardid_fence_reload() FROM PUBLIC;

-- IDs this server issued here before the fence existed get one now
SELECT @extschema@.shardid_fence_reload();

CREATE FUNCTION shardid_fence_status(OUT datid pg_catalog.oid,
                                     OUT state pg_catalog.text,
                                     OUT fence pg_catalog.int8,
                                     OUT fence_time pg_catalog.timestamptz,
                                     OUT start pg_catalog.int8,
                                     OUT sequences pg_catalog.int4,
                                     OUT writes pg_catalog.int8,
                                     OUT write_waits pg_catalog.int8)
RETURNS SETOF pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_fence_status'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_fence_status() IS
'the durable fence of each database as this server knows it';

CREATE VIEW shardid_fence_status AS
  SELECT f.datid,
         d.datname,
         f.state,
         f.fence,
         f.fence_time,
         f.start,
         f.sequences,
         f.writes,
         f.write_waits
    FROM @extschema@.shardid_fence_status() AS f
    LEFT JOIN pg_catalog.pg_database AS d
           ON d.oid OPERATOR(pg_catalog.=) f.datid;

COMMENT ON VIEW shardid_fence_status IS
'the durable fence of each database as this server knows it; without pg_read_all_stats, the current database only';

GRANT SELECT ON shardid_fence_status TO PUBLIC;

CREATE FUNCTION shardid_fence_set(field pg_catalog.int8)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_fence_set'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_fence_set(pg_catalog.int8) IS
'internal, called by shardid_fence_lower: write the durable fence of this database down to a time field, or to the last field this server issued there if later, reset shared memory to it, and return the field written';

REVOKE ALL ON FUNCTION shardid_fence_set(pg_catalog.int8) FROM PUBLIC;

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
