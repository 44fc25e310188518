/* shardid--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.2'" to load this file. \quit

--
-- The epoch of each database, kept with its data
--

CREATE SEQUENCE shardid_epoch AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_epoch IS
'epoch of this database in Unix milliseconds, set by shardid_set_epoch; never set (-1) means the default, 2011-01-01 00:00:00 UTC';

REVOKE ALL ON SEQUENCE shardid_epoch FROM PUBLIC;

-- pg_dump carries the epoch with the data
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_epoch'::pg_catalog.regclass, '');

-- The first function of 1.2's library: a server still running an older
-- library (installed, but not restarted since) says so here.
DO $probe$
BEGIN
	CREATE FUNCTION @extschema@.shardid_epoch()
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME', 'shardid_epoch'
	LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
EXCEPTION WHEN undefined_function THEN
	RAISE EXCEPTION USING
		ERRCODE = 'object_not_in_prerequisite_state',
		MESSAGE = 'the shardid library this server loaded is older than version 1.2',
		DETAIL = SQLERRM,
		HINT = 'Restart the server, so that it loads the shardid library that was installed, then run this again.';
END
$probe$;

COMMENT ON FUNCTION shardid_epoch() IS
'epoch of this database: the one shardid_set_epoch set, else 2011-01-01 00:00:00 UTC';

CREATE FUNCTION shardid_set_epoch(epoch pg_catalog.timestamptz)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_set_epoch'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_set_epoch(pg_catalog.timestamptz) IS
'set the epoch of this database; superuser or the extension''s owner only';

REVOKE ALL ON FUNCTION shardid_set_epoch(pg_catalog.timestamptz) FROM PUBLIC;

--
-- The durable fence: the lead it was written with, and lowering it
--

CREATE SEQUENCE shardid_fence_lead AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_fence_lead IS
'how far ahead of the IDs the durable fence may be, in ms: shardid.fence_lead plus a quarter, as in force when the fence was last written, so that a start judges the fence by the lead it was written with';

REVOKE ALL ON SEQUENCE shardid_fence_lead FROM PUBLIC;

-- pg_dump carries the lead with the fence
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_fence_lead'::pg_catalog.regclass, '');

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

--
-- What evicted entries had counted: waits after more sequences or
-- databases than shared memory holds are seen
--

DROP FUNCTION shardid_stats_info();

CREATE FUNCTION shardid_stats_info(OUT entries pg_catalog.int4,
                                   OUT max_sequences pg_catalog.int4,
                                   OUT evictions pg_catalog.int8,
                                   OUT floor_ms pg_catalog.timestamptz,
                                   OUT stats_reset pg_catalog.timestamptz,
                                   OUT evicted_exhausted_waits pg_catalog.int8,
                                   OUT evicted_clock_waits pg_catalog.int8,
                                   OUT evicted_clock_refusals pg_catalog.int8,
                                   OUT evicted_fence_waits pg_catalog.int8)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_stats_info'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_info() IS
'size of the guard''s table, its evictions, what the evicted entries had counted, and the last counter reset';

-- the fence is read again, with its lead
SELECT @extschema@.shardid_fence_reload();
