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

--
-- Partition maintenance that can be left running: one parent per
-- transaction (shardid_partition_run), locks in one order with bounded
-- waits, rows moved out of the default partition, and a status to watch
-- (shardid_partition_status).  sql/extension/90_partitions.sql has the
-- design; shardid_partition_maintain() is unchanged but for its comment.
--

-- The runs on each parent.  Maintenance appends a row per parent and
-- run, as the role that ran it; shardid_partition_status reads the last
-- one; shardid_partition_log_purge keeps only that one.
CREATE TABLE shardid_partition_log (
	parent		pg_catalog.oid NOT NULL,
	ran_at		pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	step		pg_catalog.interval NOT NULL,
	premake		pg_catalog.int4 NOT NULL,
	retain		pg_catalog.interval,
	epoch		pg_catalog.timestamptz NOT NULL,
	result		pg_catalog.text NOT NULL
		CHECK (result OPERATOR(pg_catalog.=) ANY ('{ok,busy,failed}'::pg_catalog.text[])),
	sqlstate	pg_catalog.text,
	message		pg_catalog.text,
	made		pg_catalog.int4 NOT NULL,
	dropped		pg_catalog.int4 NOT NULL,
	moved		pg_catalog.int8 NOT NULL,
	pruned		pg_catalog.int8 NOT NULL
);

CREATE INDEX shardid_partition_log_parent ON shardid_partition_log (parent, ran_at);

COMMENT ON TABLE shardid_partition_log IS
'partition maintenance runs, a row per table and run; read the last through shardid_partition_status';

-- Any role may add the runs of tables it owns (is a member of the owning
-- role of), and read them; members of pg_monitor read all.  No role but
-- the extension's owner may change or delete a row, or lock the table
-- against others: INSERT and SELECT allow only the weak lock modes.
REVOKE ALL ON TABLE shardid_partition_log FROM PUBLIC;
GRANT SELECT, INSERT ON TABLE shardid_partition_log TO PUBLIC;
ALTER TABLE shardid_partition_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY shardid_partition_log_read ON shardid_partition_log FOR SELECT
	USING (pg_catalog.pg_has_role('pg_monitor', 'USAGE')
		   OR EXISTS (SELECT FROM pg_catalog.pg_class AS c
					   WHERE c.oid OPERATOR(pg_catalog.=) parent
						 AND pg_catalog.pg_has_role(c.relowner, 'USAGE')));
CREATE POLICY shardid_partition_log_add ON shardid_partition_log FOR INSERT
	WITH CHECK (EXISTS (SELECT FROM pg_catalog.pg_class AS c
						 WHERE c.oid OPERATOR(pg_catalog.=) parent
						   AND c.relkind OPERATOR(pg_catalog.=) 'p'
						   AND pg_catalog.pg_has_role(c.relowner, 'USAGE')));

-- Keep only the last run of each table that is still there.  SECURITY
-- DEFINER, as only the extension's owner may delete; what it deletes no
-- one reads, so any role may call it.  It never waits: a row another
-- transaction holds stays for the next purge.
CREATE FUNCTION shardid_partition_log_purge()
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	n pg_catalog.int8;
BEGIN
	DELETE FROM @extschema@.shardid_partition_log AS l
	 WHERE l.ctid OPERATOR(pg_catalog.=) ANY (ARRAY(
		SELECT o.ctid
		  FROM @extschema@.shardid_partition_log AS o
		 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
							WHERE c.oid OPERATOR(pg_catalog.=) o.parent
							  AND c.relkind OPERATOR(pg_catalog.=) 'p')
			OR EXISTS (SELECT FROM @extschema@.shardid_partition_log AS later
						WHERE later.parent OPERATOR(pg_catalog.=) o.parent
						  AND later.ran_at OPERATOR(pg_catalog.>) o.ran_at)
		   FOR UPDATE SKIP LOCKED));
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_log_purge() IS
'internal: forget all but the last partition maintenance run of each table';

-- The range partitions of a parent, with their bounds as numerics
-- (MINVALUE and MAXVALUE one past the int8 range).  The default partition
-- and partitions of other strategies are not listed.
CREATE FUNCTION shardid_partition_ranges(
	parent pg_catalog.regclass,
	OUT partition pg_catalog.oid,
	OUT nspname pg_catalog.name,
	OUT relname pg_catalog.name,
	OUT lo pg_catalog.numeric,
	OUT hi pg_catalog.numeric)
RETURNS SETOF pg_catalog.record
LANGUAGE sql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT pc.oid, pn.nspname, pc.relname,
		   CASE m[1] WHEN 'MINVALUE' THEN -9223372036854775809
				ELSE pg_catalog.btrim(m[1], '''')::pg_catalog.numeric END,
		   CASE m[2] WHEN 'MAXVALUE' THEN 9223372036854775808
				ELSE pg_catalog.btrim(m[2], '''')::pg_catalog.numeric END
	  FROM pg_catalog.pg_inherits AS h
	  JOIN pg_catalog.pg_class AS pc ON pc.oid OPERATOR(pg_catalog.=) h.inhrelid
	  JOIN pg_catalog.pg_namespace AS pn ON pn.oid OPERATOR(pg_catalog.=) pc.relnamespace,
		   pg_catalog.regexp_match(pg_catalog.pg_get_expr(pc.relpartbound, pc.oid),
								   '^FOR VALUES FROM \((MINVALUE|''-?[0-9]+'')\) TO \((MAXVALUE|''-?[0-9]+'')\)$') AS m
	 WHERE h.inhparent OPERATOR(pg_catalog.=) parent
	   AND m IS NOT NULL
$fn$;

COMMENT ON FUNCTION shardid_partition_ranges(pg_catalog.regclass) IS
'internal: the range partitions of a table, with their bounds';

-- The start of the step that holds t, in UTC: steps of months from
-- January of year 0, other steps from Monday 2001-01-01.
CREATE FUNCTION shardid_partition_step_start(t pg_catalog.timestamptz, step pg_catalog.interval)
RETURNS pg_catalog.timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
	SELECT CASE WHEN s.months OPERATOR(pg_catalog.=) 0
				THEN pg_catalog.date_bin(step, t, '2001-01-01 00:00:00+00')
				ELSE pg_catalog.make_timestamptz(s.k OPERATOR(pg_catalog./) 12,
												 (s.k OPERATOR(pg_catalog.%) 12) OPERATOR(pg_catalog.+) 1,
												 1, 0, 0, 0, 'UTC') END
	  FROM (SELECT m.months,
				   m.k0 OPERATOR(pg_catalog.-) (m.k0 OPERATOR(pg_catalog.%) NULLIF(m.months, 0)) AS k
			  FROM (SELECT ((EXTRACT(year FROM step) OPERATOR(pg_catalog.*) 12)
							OPERATOR(pg_catalog.+) EXTRACT(month FROM step))::pg_catalog.int4 AS months,
						   (((EXTRACT(year FROM t) OPERATOR(pg_catalog.*) 12)
							 OPERATOR(pg_catalog.+) EXTRACT(month FROM t))
							OPERATOR(pg_catalog.-) 1)::pg_catalog.int4 AS k0) AS m) AS s
$fn$;

COMMENT ON FUNCTION shardid_partition_step_start(pg_catalog.timestamptz, pg_catalog.interval) IS
'internal: the start of the partition step that holds a time';

-- The work on one parent, in the caller's transaction: make its partitions
-- (do_make), drop those past retention (do_drop), or, with a NULL parent, only
-- check the arguments.  One row per partition looked at; a step whose
-- lock wait ran out gives one row "busy" and is undone.
CREATE FUNCTION shardid_partition_work(
	parent pg_catalog.regclass,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval,
	epoch pg_catalog.timestamptz,
	lock_wait pg_catalog.interval,
	do_make pg_catalog.bool,
	do_drop pg_catalog.bool,
	OUT partition pg_catalog.text,
	OUT action pg_catalog.text,
	OUT range_start pg_catalog.timestamptz,
	OUT range_end pg_catalog.timestamptz,
	OUT moved pg_catalog.int8)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
DECLARE
	-- the step, taken apart
	step_months pg_catalog.numeric;
	step_days pg_catalog.numeric;
	step_us pg_catalog.numeric;
	step_ms pg_catalog.int8;
	suffix_format pg_catalog.text;
	horizon pg_catalog.timestamptz;
	cutoff pg_catalog.int8;
	-- the partitions this parent should have: [starts[i], ends[i])
	starts pg_catalog.timestamptz[] := '{}';
	t pg_catalog.timestamptz;
	i pg_catalog.int4;
	-- the parent
	par record;
	def record;
	keyname pg_catalog.name;
	cols pg_catalog.text;
	default_btree_int8 pg_catalog.oid;
	space_clause pg_catalog.text;
	base_name pg_catalog.text;
	due pg_catalog.bool;
	drops_due pg_catalog.bool;
	drops_busy pg_catalog.bool;
	me pg_catalog.oid;
	n_found pg_catalog.int4 := 0;
	lock_ms pg_catalog.int8;
	-- one partition
	rng record;
	cover record;
	gone record;
	lo_id pg_catalog.int8;
	hi_id pg_catalog.int8;
	lo_min pg_catalog.int8;
	v pg_catalog.int8;
	new_name pg_catalog.text;
	n_rows pg_catalog.int8;
	-- what the make step did, returned once it has stood
	r_part pg_catalog.text[] := '{}';
	r_action pg_catalog.text[] := '{}';
	r_start pg_catalog.timestamptz[] := '{}';
	r_end pg_catalog.timestamptz[] := '{}';
	r_moved pg_catalog.int8[] := '{}';
BEGIN
	IF step IS NULL OR premake IS NULL OR epoch IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent tables, step, premake and epoch must not be null',
			HINT = 'Pass retain as NULL to keep every partition.';
	END IF;

	-- The epoch: shardid_horizon() refuses one that is infinite, not a
	-- whole millisecond or out of range.
	horizon := @extschema@.shardid_horizon(epoch);
	IF pg_catalog.now() OPERATOR(pg_catalog.<) epoch THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('epoch %s is in the future', epoch),
			DETAIL = 'Partitions are made from the current time on, and IDs count milliseconds since the epoch.';
	END IF;

	-- The step: a whole number of milliseconds that divides a day, one
	-- week, or a number of months that divides a year or is whole years.
	-- Partitions then start on the same UTC boundaries on every run.
	-- (OPERATOR() has one precedence for all operators: parenthesise.)
	step_months := (EXTRACT(year FROM step) OPERATOR(pg_catalog.*) 12)
				   OPERATOR(pg_catalog.+) EXTRACT(month FROM step);
	step_days := EXTRACT(day FROM step);
	step_us := (EXTRACT(hour FROM step) OPERATOR(pg_catalog.*) 3600000000)
			   OPERATOR(pg_catalog.+) (EXTRACT(minute FROM step) OPERATOR(pg_catalog.*) 60000000)
			   OPERATOR(pg_catalog.+) EXTRACT(microseconds FROM step);
	IF step OPERATOR(pg_catalog.<=) '0'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('partition step "%s" is not positive', step);
	END IF;
	IF step_months OPERATOR(pg_catalog.=) 0 THEN
		step_us := (step_days OPERATOR(pg_catalog.*) 86400000000) OPERATOR(pg_catalog.+) step_us;
		IF (step_us OPERATOR(pg_catalog.%) 1000) OPERATOR(pg_catalog.<>) 0 THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_parameter_value',
				MESSAGE = pg_catalog.format('partition step "%s" is not a whole number of milliseconds', step),
				DETAIL = 'Partition bounds are shardid_floor() values, which count whole milliseconds.';
		END IF;
		step_ms := (step_us OPERATOR(pg_catalog./) 1000)::pg_catalog.int8;
		IF (86400000 OPERATOR(pg_catalog.%) step_ms) OPERATOR(pg_catalog.<>) 0
		   AND step_ms OPERATOR(pg_catalog.<>) 604800000 THEN
			step_ms := NULL;
		END IF;
	ELSIF step_months OPERATOR(pg_catalog.>) 0 AND step_days OPERATOR(pg_catalog.=) 0
		  AND step_us OPERATOR(pg_catalog.=) 0
		  AND ((12 OPERATOR(pg_catalog.%) step_months) OPERATOR(pg_catalog.=) 0
			   OR (step_months OPERATOR(pg_catalog.%) 12) OPERATOR(pg_catalog.=) 0) THEN
		step_ms := 0;			-- months: no fixed length
	END IF;
	IF step_ms IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('partition step "%s" does not divide evenly into days or years', step),
			DETAIL = 'A step is a whole number of milliseconds that divides a day (such as 1 hour or 15 minutes), 1 day, 1 week, a number of months that divides a year (1, 2, 3, 4 or 6), or whole years.',
			HINT = 'Partitions start on UTC boundaries of the step: midnight for days, Monday for weeks, January for years.';
	END IF;

	IF premake OPERATOR(pg_catalog.<) 0 OR premake OPERATOR(pg_catalog.>) 1000 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'numeric_value_out_of_range',
			MESSAGE = pg_catalog.format('premake %s is out of range', premake),
			DETAIL = 'premake is the number of partitions to make after the current one, 0 to 1000.';
	END IF;
	IF retain OPERATOR(pg_catalog.<=) '0'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('retention interval "%s" is not positive', retain),
			HINT = 'Pass retain as NULL to keep every partition.';
	END IF;
	IF lock_wait OPERATOR(pg_catalog.<=) '0'::pg_catalog.interval
	   OR lock_wait OPERATOR(pg_catalog.>) '1 day'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('lock wait "%s" is out of range', lock_wait),
			DETAIL = 'lock_wait bounds each lock wait of a maintenance step: more than 0, at most 1 day.';
	END IF;

	-- The partitions wanted: the one holding now(), and premake after it.
	IF step_ms OPERATOR(pg_catalog.=) 0 THEN
		suffix_format := 'YYYYMM';
	ELSE
		suffix_format := CASE
			WHEN (step_ms OPERATOR(pg_catalog.%) 86400000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD'
			WHEN (step_ms OPERATOR(pg_catalog.%) 3600000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24'
			WHEN (step_ms OPERATOR(pg_catalog.%) 60000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24MI'
			WHEN (step_ms OPERATOR(pg_catalog.%) 1000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24MISS'
			ELSE 'YYYYMMDD_HH24MISSMS' END;
	END IF;
	t := pg_catalog.now();
	FOR i IN 0 .. premake LOOP
		t := @extschema@.shardid_partition_step_start(t, step);
		starts := starts OPERATOR(pg_catalog.||) t;
		t := t OPERATOR(pg_catalog.+) step;
		IF t OPERATOR(pg_catalog.>) horizon THEN
			RAISE EXCEPTION USING
				ERRCODE = 'datetime_field_overflow',
				MESSAGE = pg_catalog.format('partition bound %s is past the horizon of the epoch', t),
				DETAIL = pg_catalog.format('With the epoch %s, the last millisecond that encodes to a positive bigint is %s.',
										   epoch, horizon),
				HINT = 'Make fewer partitions ahead, or use a later epoch for new tables.';
		END IF;
	END LOOP;
	IF retain IS NOT NULL AND (pg_catalog.now() OPERATOR(pg_catalog.-) retain) OPERATOR(pg_catalog.>) epoch THEN
		cutoff := @extschema@.shardid_floor(pg_catalog.now() OPERATOR(pg_catalog.-) retain, epoch);
	END IF;

	IF parent IS NULL THEN
		RETURN;					-- the arguments are fine
	END IF;

	-- The parent: a table partitioned by range on one bigint column with
	-- the built-in operator class, owned by the caller.
	SELECT c.oid, c.oid::pg_catalog.regclass AS rel, c.relkind, c.relowner,
		   n.oid AS nspoid, n.nspname, c.relname, s.spcname
	  INTO par
	  FROM pg_catalog.pg_class AS c
	  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
	  LEFT JOIN pg_catalog.pg_tablespace AS s ON s.oid OPERATOR(pg_catalog.=) c.reltablespace
	 WHERE c.oid OPERATOR(pg_catalog.=) parent::pg_catalog.oid;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING
			ERRCODE = 'undefined_table',
			MESSAGE = pg_catalog.format('relation with OID %s does not exist', parent::pg_catalog.oid);
	END IF;
	IF par.relkind OPERATOR(pg_catalog.<>) 'p' THEN
		RAISE EXCEPTION USING
			ERRCODE = 'wrong_object_type',
			MESSAGE = pg_catalog.format('relation %s is not a partitioned table', par.rel),
			HINT = 'Create the table with PARTITION BY RANGE (id).';
	END IF;
	me := (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname OPERATOR(pg_catalog.=) current_user);
	IF NOT pg_catalog.pg_has_role(par.relowner, 'USAGE') THEN
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('must be owner of table %s', par.rel),
			DETAIL = 'Only the owner of a partitioned table may maintain its partitions.';
	END IF;
	SELECT o.oid INTO default_btree_int8
	  FROM pg_catalog.pg_opclass AS o
	  JOIN pg_catalog.pg_am AS a ON a.oid OPERATOR(pg_catalog.=) o.opcmethod
	 WHERE a.amname OPERATOR(pg_catalog.=) 'btree'
	   AND o.opcintype OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
	   AND o.opcdefault;
	SELECT a.attname INTO keyname
	  FROM pg_catalog.pg_partitioned_table AS pt
	  JOIN pg_catalog.pg_attribute AS a
		ON a.attrelid OPERATOR(pg_catalog.=) pt.partrelid
	   AND a.attnum OPERATOR(pg_catalog.=) pt.partattrs[0]
	 WHERE pt.partrelid OPERATOR(pg_catalog.=) par.oid
	   AND pt.partstrat OPERATOR(pg_catalog.=) 'r'
	   AND pt.partnatts OPERATOR(pg_catalog.=) 1
	   AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
	   AND pt.partclass[0] OPERATOR(pg_catalog.=) default_btree_int8;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_table_definition',
			MESSAGE = pg_catalog.format('table %s is not partitioned by range on one bigint column', par.rel),
			DETAIL = pg_catalog.format('Its partition key is %s.', pg_catalog.pg_get_partkeydef(par.oid)),
			HINT = 'Partition a table on shardid keys with PARTITION BY RANGE (id), where id is a bigint column.';
	END IF;

	-- Every lock wait from here on is bounded (the setting ends with this
	-- function: it has SET clauses of its own).
	IF lock_wait IS NOT NULL THEN
		lock_ms := GREATEST(CEIL(EXTRACT(epoch FROM lock_wait) OPERATOR(pg_catalog.*) 1000), 1)::pg_catalog.int8;
		PERFORM pg_catalog.set_config('lock_timeout', lock_ms::pg_catalog.text, true);
	END IF;

	-- The parent first.  With partitions to drop, ACCESS EXCLUSIVE at
	-- once, before the default partition is touched; if that wait runs
	-- out, the drops are "busy" and the partitions are made all the same,
	-- under SHARE UPDATE EXCLUSIVE, which serialises maintenance runs and
	-- blocks no query or insert.
	drops_due := do_drop AND cutoff IS NOT NULL
		   AND EXISTS (SELECT FROM @extschema@.shardid_partition_ranges(par.oid) AS b
						WHERE b.hi OPERATOR(pg_catalog.<=) cutoff::pg_catalog.numeric);
	IF NOT do_make AND NOT do_drop THEN
		RETURN;
	END IF;
	drops_busy := false;
	IF drops_due THEN
		BEGIN
			EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN ACCESS EXCLUSIVE MODE',
									  par.nspname, par.relname);
		EXCEPTION WHEN lock_not_available THEN
			drops_busy := true;
		END;
	END IF;
	IF do_make AND (drops_busy OR NOT drops_due) THEN
		BEGIN
			EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN SHARE UPDATE EXCLUSIVE MODE',
									  par.nspname, par.relname);
		EXCEPTION WHEN lock_not_available THEN
			partition := pg_catalog.format('%I.%I', par.nspname, par.relname);
			action := 'busy';
			moved := 0;
			RETURN NEXT;
			RETURN;
		END;
	END IF;

	SELECT dc.oid, dn.nspname, dc.relname INTO def
	  FROM pg_catalog.pg_partitioned_table AS pt
	  JOIN pg_catalog.pg_class AS dc ON dc.oid OPERATOR(pg_catalog.=) pt.partdefid
	  JOIN pg_catalog.pg_namespace AS dn ON dn.oid OPERATOR(pg_catalog.=) dc.relnamespace
	 WHERE pt.partrelid OPERATOR(pg_catalog.=) par.oid;

	IF do_make THEN
		space_clause := CASE WHEN par.spcname IS NULL THEN ''
						ELSE pg_catalog.format(' TABLESPACE %I', par.spcname) END;
		-- Partition names are the table's name and the suffix, the table's
		-- name cut short to fit NAMEDATALEN.
		base_name := par.relname;
		WHILE (pg_catalog.octet_length(base_name) OPERATOR(pg_catalog.+)
			   pg_catalog.octet_length('_p' OPERATOR(pg_catalog.||) pg_catalog.to_char(starts[1], suffix_format)))
			  OPERATOR(pg_catalog.>) 63 LOOP
			base_name := pg_catalog.left(base_name, -1);
		END LOOP;
		-- the parent's columns that can be written, for moving rows
		SELECT pg_catalog.string_agg(pg_catalog.format('%I', a.attname), ', ' ORDER BY a.attnum) INTO cols
		  FROM pg_catalog.pg_attribute AS a
		 WHERE a.attrelid OPERATOR(pg_catalog.=) par.oid
		   AND a.attnum OPERATOR(pg_catalog.>) 0
		   AND NOT a.attisdropped
		   AND a.attgenerated OPERATOR(pg_catalog.=) '';
		-- rows older than the retention cutoff are not given partitions
		lo_min := COALESCE(cutoff, 0);

		BEGIN
			-- The default partition, after the parent: when it holds rows
			-- from the cutoff on, or a wanted partition is missing (ATTACH
			-- would lock it anyway).  Nothing can reach it meanwhile.
			IF def.oid IS NOT NULL THEN
				EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1)',
										  def.nspname, def.relname, keyname)
				   INTO due USING lo_min;
				IF due OR EXISTS (
					SELECT FROM (SELECT @extschema@.shardid_floor(GREATEST(w.s, epoch), epoch)::pg_catalog.numeric AS lo,
										@extschema@.shardid_floor(w.s OPERATOR(pg_catalog.+) step, epoch)::pg_catalog.numeric AS hi
								   FROM pg_catalog.unnest(starts) AS w(s)) AS x
					 WHERE (SELECT COALESCE(pg_catalog.sum(LEAST(b.hi, x.hi) OPERATOR(pg_catalog.-) GREATEST(b.lo, x.lo)), 0)
							  FROM @extschema@.shardid_partition_ranges(par.oid) AS b
							 WHERE b.lo OPERATOR(pg_catalog.<) x.hi AND b.hi OPERATOR(pg_catalog.>) x.lo)
						   OPERATOR(pg_catalog.<) (x.hi OPERATOR(pg_catalog.-) x.lo)) THEN
					EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN ACCESS EXCLUSIVE MODE',
											  def.nspname, def.relname);
				END IF;
				-- The steps that hold its rows, from the cutoff up to the
				-- horizon, one index probe each (rows past the horizon
				-- can have no partition).
				IF due THEN
					v := lo_min;
					LOOP
						EXECUTE pg_catalog.format('SELECT pg_catalog.min(d.%I) FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1',
												  keyname, def.nspname, def.relname, keyname)
						   INTO v USING v;
						EXIT WHEN v IS NULL OR v OPERATOR(pg_catalog.<) 0;
						t := @extschema@.shardid_created_at(v, epoch);
						t := @extschema@.shardid_partition_step_start(t, step);
						EXIT WHEN (t OPERATOR(pg_catalog.+) step) OPERATOR(pg_catalog.>) horizon;
						IF pg_catalog.array_position(starts, t) IS NULL THEN
							starts := starts OPERATOR(pg_catalog.||) t;
							-- at most 100 such partitions a run (a role
							-- that may only insert could otherwise make a
							-- run make thousands, and fill the lock table);
							-- the next run makes more
							n_found := n_found OPERATOR(pg_catalog.+) 1;
							EXIT WHEN n_found OPERATOR(pg_catalog.>=) 100;
						END IF;
						v := @extschema@.shardid_floor(t OPERATOR(pg_catalog.+) step, epoch);
					END LOOP;
				END IF;
			END IF;

			FOR rng IN
				SELECT w.s AS range_start, w.s OPERATOR(pg_catalog.+) step AS range_end
				  FROM pg_catalog.unnest(starts) AS w(s)
				 ORDER BY w.s
			LOOP
				-- a partition that starts before the epoch starts at ID 0
				lo_id := @extschema@.shardid_floor(GREATEST(rng.range_start, epoch), epoch);
				hi_id := @extschema@.shardid_floor(rng.range_end, epoch);
				new_name := base_name OPERATOR(pg_catalog.||) '_p'
							OPERATOR(pg_catalog.||) pg_catalog.to_char(rng.range_start, suffix_format);

				-- What covers this range already?
				SELECT pg_catalog.string_agg(pg_catalog.format('%I.%I', b.nspname, b.relname), ', '
											 ORDER BY b.lo) AS names,
					   pg_catalog.sum(LEAST(b.hi, hi_id::pg_catalog.numeric)
									  OPERATOR(pg_catalog.-) GREATEST(b.lo, lo_id::pg_catalog.numeric)) AS covered,
					   pg_catalog.bool_or(b.lo OPERATOR(pg_catalog.=) lo_id AND b.hi OPERATOR(pg_catalog.=) hi_id) AS same
				  INTO cover
				  FROM @extschema@.shardid_partition_ranges(par.oid) AS b
				 WHERE b.lo OPERATOR(pg_catalog.<) hi_id::pg_catalog.numeric
				   AND b.hi OPERATOR(pg_catalog.>) lo_id::pg_catalog.numeric;

				IF cover.same OR cover.covered OPERATOR(pg_catalog.=)
								 (hi_id::pg_catalog.numeric OPERATOR(pg_catalog.-) lo_id::pg_catalog.numeric) THEN
					r_part := r_part OPERATOR(pg_catalog.||) cover.names;
					r_action := r_action OPERATOR(pg_catalog.||)
								CASE WHEN cover.same THEN 'exists' ELSE 'covered' END;
					r_start := r_start OPERATOR(pg_catalog.||) GREATEST(rng.range_start, epoch);
					r_end := r_end OPERATOR(pg_catalog.||) rng.range_end;
					r_moved := r_moved OPERATOR(pg_catalog.||) 0::pg_catalog.int8;
					CONTINUE;
				ELSIF cover.covered IS NOT NULL THEN
					RAISE EXCEPTION USING
						ERRCODE = 'invalid_object_definition',
						MESSAGE = pg_catalog.format('new partition %I.%I of table %s would overlap partition %s',
													par.nspname, new_name, par.rel, cover.names),
						DETAIL = pg_catalog.format('The new partition would hold IDs from %s (%s) to %s (%s); the existing partitions cover part of that range.',
												   lo_id, GREATEST(rng.range_start, epoch), hi_id, rng.range_end),
						HINT = 'Maintain the table with the step its partitions were made with.';
				END IF;

				-- Never adopt a table that is there already.
				IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
							WHERE c.relnamespace OPERATOR(pg_catalog.=) par.nspoid
							  AND c.relname OPERATOR(pg_catalog.=) new_name) THEN
					RAISE EXCEPTION USING
						ERRCODE = 'duplicate_table',
						MESSAGE = pg_catalog.format('relation %I.%I already exists', par.nspname, new_name),
						DETAIL = pg_catalog.format('It is not a partition of table %s for %s to %s.',
												   par.rel, GREATEST(rng.range_start, epoch), rng.range_end),
						HINT = 'Rename or drop it: maintenance does not adopt existing tables.';
				END IF;

				-- A table of its own, then attached: ATTACH PARTITION needs
				-- only SHARE UPDATE EXCLUSIVE on the parent, where CREATE
				-- TABLE ... PARTITION OF would take ACCESS EXCLUSIVE.
				EXECUTE pg_catalog.format(
					'CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS'
					' INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION)%s',
					par.nspname, new_name, par.nspname, par.relname, space_clause);
				-- the parent's owner owns its partitions, whichever member
				-- of that role ran the maintenance
				IF par.relowner OPERATOR(pg_catalog.<>) me THEN
					EXECUTE pg_catalog.format('ALTER TABLE %I.%I OWNER TO %I', par.nspname, new_name,
											  pg_catalog.pg_get_userbyid(par.relowner));
				END IF;

				-- Rows of this range in the default partition move into the
				-- new table, in this transaction, under the lock taken
				-- above: none can arrive meanwhile, none is lost.
				n_rows := 0;
				IF def.oid IS NOT NULL THEN
					EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1 AND d.%I OPERATOR(pg_catalog.<) $2)',
											  def.nspname, def.relname, keyname, keyname)
					   INTO due USING lo_id, hi_id;
					IF due THEN
						-- A foreign key to the parent would see the rows
						-- leave (ON DELETE CASCADE would act on it).
						IF EXISTS (SELECT FROM pg_catalog.pg_constraint AS fk
									WHERE fk.contype OPERATOR(pg_catalog.=) 'f'
									  AND (fk.confrelid OPERATOR(pg_catalog.=) par.oid
										   OR fk.confrelid OPERATOR(pg_catalog.=) def.oid)) THEN
							RAISE EXCEPTION USING
								ERRCODE = 'feature_not_supported',
								MESSAGE = pg_catalog.format('cannot move rows of default partition %I.%I: table %s is referenced by a foreign key',
															def.nspname, def.relname, par.rel),
								DETAIL = pg_catalog.format('The rows with IDs from %s (%s) up to %s (%s) would be deleted and inserted again, which the foreign key''s ON DELETE action would see.',
														   lo_id, GREATEST(rng.range_start, epoch), hi_id, rng.range_end),
								HINT = 'Move them yourself (docs/partitions.md, "Rows in the default partition"), then run the maintenance again.';
						END IF;
						-- Moving rows runs the table's triggers and CHECK
						-- constraints: only as the table's owner.
						IF par.relowner OPERATOR(pg_catalog.<>) me THEN
							RAISE EXCEPTION USING
								ERRCODE = 'insufficient_privilege',
								MESSAGE = pg_catalog.format('must be owner of table %s to move rows out of its default partition', par.rel),
								DETAIL = 'Moving rows runs the table''s triggers and constraints, which would run as the caller.',
								HINT = pg_catalog.format('Run the maintenance as role %s (SET ROLE).', par.relowner::pg_catalog.regrole);
						END IF;
						EXECUTE pg_catalog.format(
							'WITH d AS (DELETE FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1 AND d.%I OPERATOR(pg_catalog.<) $2 RETURNING %s)'
							' INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM d',
							def.nspname, def.relname, keyname, keyname, cols,
							par.nspname, new_name, cols, cols)
						USING lo_id, hi_id;
						GET DIAGNOSTICS n_rows = ROW_COUNT;
						RAISE NOTICE USING
							MESSAGE = pg_catalog.format('moved %s rows from default partition %I.%I into new partition %I.%I',
														n_rows, def.nspname, def.relname, par.nspname, new_name);
					END IF;
				END IF;

				EXECUTE pg_catalog.format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
										  par.nspname, par.relname, par.nspname, new_name, lo_id, hi_id);
				r_part := r_part OPERATOR(pg_catalog.||) pg_catalog.format('%I.%I', par.nspname, new_name);
				r_action := r_action OPERATOR(pg_catalog.||) 'created'::pg_catalog.text;
				r_start := r_start OPERATOR(pg_catalog.||) GREATEST(rng.range_start, epoch);
				r_end := r_end OPERATOR(pg_catalog.||) rng.range_end;
				r_moved := r_moved OPERATOR(pg_catalog.||) n_rows;
			END LOOP;
		EXCEPTION WHEN lock_not_available THEN
			-- undone; the next run makes them
			partition := pg_catalog.format('%I.%I', par.nspname, par.relname);
			action := 'busy';
			range_start := NULL;
			range_end := NULL;
			moved := 0;
			RETURN NEXT;
			r_part := '{}';
		END;
		FOR i IN 1 .. pg_catalog.cardinality(r_part) LOOP
			partition := r_part[i];
			action := r_action[i];
			range_start := r_start[i];
			range_end := r_end[i];
			moved := r_moved[i];
			RETURN NEXT;
		END LOOP;
	END IF;

	IF NOT do_drop OR cutoff IS NULL THEN
		RETURN;
	END IF;

	-- Retention in the default partition: its rows older than the cutoff
	-- are deleted, as they would have gone with their partition (after
	-- the parent, when partitions are to be dropped too).  As for moves:
	-- not through a foreign key, and only as the table's owner.
	IF def.oid IS NOT NULL THEN
		BEGIN
			EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.<) $1)',
									  def.nspname, def.relname, keyname)
			   INTO due USING cutoff;
			IF due THEN
				IF EXISTS (SELECT FROM pg_catalog.pg_constraint AS fk
							WHERE fk.contype OPERATOR(pg_catalog.=) 'f'
							  AND (fk.confrelid OPERATOR(pg_catalog.=) par.oid
								   OR fk.confrelid OPERATOR(pg_catalog.=) def.oid)) THEN
					RAISE EXCEPTION USING
						ERRCODE = 'feature_not_supported',
						MESSAGE = pg_catalog.format('cannot delete rows older than the retention from default partition %I.%I: table %s is referenced by a foreign key',
													def.nspname, def.relname, par.rel),
						DETAIL = pg_catalog.format('Its rows with IDs below %s (%s) are past the retention.',
												   cutoff, pg_catalog.now() OPERATOR(pg_catalog.-) retain),
						HINT = 'Delete them yourself, then run the maintenance again.';
				END IF;
				IF par.relowner OPERATOR(pg_catalog.<>) me THEN
					RAISE EXCEPTION USING
						ERRCODE = 'insufficient_privilege',
						MESSAGE = pg_catalog.format('must be owner of table %s to delete rows from its default partition', par.rel),
						DETAIL = 'Deleting rows runs the table''s triggers, which would run as the caller.',
						HINT = pg_catalog.format('Run the maintenance as role %s (SET ROLE).', par.relowner::pg_catalog.regrole);
				END IF;
				EXECUTE pg_catalog.format('DELETE FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.<) $1',
										  def.nspname, def.relname, keyname)
				   USING cutoff;
				GET DIAGNOSTICS n_rows = ROW_COUNT;
				partition := pg_catalog.format('%I.%I', def.nspname, def.relname);
				action := 'pruned';
				range_start := NULL;
				range_end := pg_catalog.now() OPERATOR(pg_catalog.-) retain;
				moved := n_rows;
				RETURN NEXT;
			END IF;
		EXCEPTION WHEN lock_not_available THEN
			partition := pg_catalog.format('%I.%I', def.nspname, def.relname);
			action := 'busy';
			range_start := NULL;
			range_end := NULL;
			moved := 0;
			RETURN NEXT;
			RETURN;
		END;
	END IF;

	-- (partitions that came due since the parent was locked wait for the
	-- next run: dropping them now would lock the parent after the default)
	IF NOT drops_due THEN
		RETURN;
	END IF;

	-- Retention: the parent is held ACCESS EXCLUSIVE already (taken first,
	-- above), or could not be, and every drop is "busy"; DROP TABLE locks
	-- the default partition after it.  A drop whose lock wait runs out is
	-- "busy", and the rest wait for the next run.
	FOR gone IN
		SELECT b.nspname, b.relname, b.lo, b.hi
		  FROM @extschema@.shardid_partition_ranges(par.oid) AS b
		 WHERE b.hi OPERATOR(pg_catalog.<=) cutoff::pg_catalog.numeric
		 ORDER BY b.hi
	LOOP
		partition := pg_catalog.format('%I.%I', gone.nspname, gone.relname);
		range_start := CASE WHEN gone.lo OPERATOR(pg_catalog.>=) 0
						   THEN @extschema@.shardid_created_at(gone.lo::pg_catalog.int8, epoch) END;
		range_end := CASE WHEN gone.hi OPERATOR(pg_catalog.>=) 0
						 THEN @extschema@.shardid_created_at(gone.hi::pg_catalog.int8, epoch) END;
		moved := 0;
		IF drops_busy THEN
			action := 'busy';
			RETURN NEXT;
			CONTINUE;
		END IF;
		BEGIN
			EXECUTE pg_catalog.format('DROP TABLE %I.%I', gone.nspname, gone.relname);
			action := 'dropped';
		EXCEPTION WHEN lock_not_available THEN
			action := 'busy';
			RETURN NEXT;
			EXIT;
		END;
		RETURN NEXT;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_work(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
										   pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval,
										   pg_catalog.bool, pg_catalog.bool) IS
'internal: the partition maintenance of one table, in the caller''s transaction';

CREATE OR REPLACE FUNCTION shardid_partition_maintain_all(
	parents pg_catalog.regclass[],
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval DEFAULT NULL,
	epoch pg_catalog.timestamptz DEFAULT '2011-01-01 00:00:00+00',
	OUT parent pg_catalog.regclass,
	OUT partition pg_catalog.text,
	OUT action pg_catalog.text,
	OUT range_start pg_catalog.timestamptz,
	OUT range_end pg_catalog.timestamptz)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
DECLARE
	lock_wait pg_catalog.interval;
	par record;
	w record;
	n_made pg_catalog.int4;
	n_dropped pg_catalog.int4;
	n_moved pg_catalog.int8;
	n_pruned pg_catalog.int8;
	n_busy pg_catalog.int4;
BEGIN
	IF parents IS NULL OR pg_catalog.array_position(parents, NULL) IS NOT NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent table must not be null';
	END IF;
	-- the session's lock_timeout, else one second
	lock_wait := CASE pg_catalog.current_setting('lock_timeout')
				 WHEN '0' THEN '1 s'::pg_catalog.interval
				 ELSE pg_catalog.current_setting('lock_timeout')::pg_catalog.interval END;
	-- the arguments, before any parent
	PERFORM FROM @extschema@.shardid_partition_work(NULL, step, premake, retain, epoch, lock_wait,
													   false, false);

	-- One parent after another, in name order, so that concurrent runs
	-- lock their parents in the same order.
	FOR par IN
		SELECT DISTINCT u.rel::pg_catalog.oid AS oid, n.nspname, c.relname
		  FROM pg_catalog.unnest(parents) AS u(rel)
		  LEFT JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
		  LEFT JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		 ORDER BY n.nspname, c.relname, 1
	LOOP
		parent := par.oid::pg_catalog.regclass;
		n_made := 0;
		n_dropped := 0;
		n_moved := 0;
		n_pruned := 0;
		n_busy := 0;
		FOR w IN
			SELECT * FROM @extschema@.shardid_partition_work(parent, step, premake, retain, epoch,
															 lock_wait, true, true)
		LOOP
			partition := w.partition;
			action := w.action;
			range_start := w.range_start;
			range_end := w.range_end;
			n_made := n_made OPERATOR(pg_catalog.+) (w.action OPERATOR(pg_catalog.=) 'created')::pg_catalog.int4;
			n_dropped := n_dropped OPERATOR(pg_catalog.+) (w.action OPERATOR(pg_catalog.=) 'dropped')::pg_catalog.int4;
			n_busy := n_busy OPERATOR(pg_catalog.+) (w.action OPERATOR(pg_catalog.=) 'busy')::pg_catalog.int4;
			IF w.action OPERATOR(pg_catalog.=) 'pruned' THEN
				n_pruned := n_pruned OPERATOR(pg_catalog.+) w.moved;
			ELSE
				n_moved := n_moved OPERATOR(pg_catalog.+) w.moved;
			END IF;
			RETURN NEXT;
		END LOOP;
		-- the run, as the caller (who may own the table through a role
		-- without inheriting: then it is not recorded)
		BEGIN
			INSERT INTO @extschema@.shardid_partition_log
				   (parent, step, premake, retain, epoch, result, sqlstate, message, made, dropped, moved, pruned)
			VALUES (par.oid, step, premake, retain, epoch,
					CASE WHEN n_busy OPERATOR(pg_catalog.>) 0 THEN 'busy' ELSE 'ok' END,
					CASE WHEN n_busy OPERATOR(pg_catalog.>) 0 THEN '55P03' END, NULL,
					n_made, n_dropped, n_moved, n_pruned);
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;
		END;
	END LOOP;
	PERFORM @extschema@.shardid_partition_log_purge();
END
$fn$;

COMMENT ON FUNCTION shardid_partition_maintain_all(pg_catalog.regclass[], pg_catalog.interval, pg_catalog.int4,
												   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of tables partitioned by range on a shardid key ahead of the clock, move rows out of their default partitions, and drop partitions older than retain, in one transaction';

COMMENT ON FUNCTION shardid_partition_maintain(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
											   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of a table partitioned by range on a shardid key ahead of the clock, move rows out of its default partition, and drop partitions older than retain';

-- The maintenance to leave running: each parent in transactions of its
-- own (make, then drop), so that a run holds one parent's locks at a time
-- and one parent's failure stays with it.  A procedure with no SET clause
-- (one could not commit): it sets search_path itself in each transaction.
CREATE PROCEDURE shardid_partition_run(
	parents pg_catalog.regclass[],
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval DEFAULT NULL,
	epoch pg_catalog.timestamptz DEFAULT NULL,
	lock_wait pg_catalog.interval DEFAULT '1 s')
LANGUAGE plpgsql SECURITY INVOKER
AS $pr$
DECLARE
	oids pg_catalog.oid[];
	names pg_catalog.text[];
	i pg_catalog.int4;
	w record;
	result pg_catalog.text;
	state pg_catalog.text;
	msg pg_catalog.text;
	n_made pg_catalog.int4;
	n_dropped pg_catalog.int4;
	n_moved pg_catalog.int8;
	n_pruned pg_catalog.int8;
	n_failed pg_catalog.int4 := 0;
	n_busy pg_catalog.int4 := 0;
	first_state pg_catalog.text;
	report pg_catalog.text := '';
BEGIN
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
	IF parents IS NULL OR pg_catalog.array_position(parents, NULL) IS NOT NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent table must not be null';
	END IF;
	IF lock_wait IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'lock_wait must not be null',
			HINT = 'lock_wait bounds each lock wait of a maintenance step, such as ''1 s''.';
	END IF;
	epoch := COALESCE(epoch, @extschema@.shardid_epoch());
	-- the arguments, before any parent
	PERFORM FROM @extschema@.shardid_partition_work(NULL, step, premake, retain, epoch, lock_wait,
													   false, false);
	SELECT pg_catalog.array_agg(p.oid ORDER BY p.nspname, p.relname, p.oid),
		   pg_catalog.array_agg(CASE WHEN p.relname IS NULL THEN p.oid::pg_catalog.text
									 ELSE pg_catalog.format('%I.%I', p.nspname, p.relname) END
								ORDER BY p.nspname, p.relname, p.oid)
	  INTO oids, names
	  FROM (SELECT DISTINCT u.rel::pg_catalog.oid AS oid, n.nspname, c.relname
			  FROM pg_catalog.unnest(parents) AS u(rel)
			  LEFT JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
			  LEFT JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace) AS p;
	PERFORM @extschema@.shardid_partition_log_purge();
	COMMIT;

	FOR i IN 1 .. COALESCE(pg_catalog.cardinality(oids), 0) LOOP
		PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
		result := 'ok';
		state := NULL;
		msg := NULL;
		n_made := 0;
		n_dropped := 0;
		n_moved := 0;
		n_pruned := 0;

		-- make: its own transaction
		BEGIN
			FOR w IN
				SELECT * FROM @extschema@.shardid_partition_work(oids[i]::pg_catalog.regclass, step, premake,
																 retain, epoch, lock_wait, true, false)
			LOOP
				IF w.action OPERATOR(pg_catalog.=) 'created' THEN
					n_made := n_made OPERATOR(pg_catalog.+) 1;
					n_moved := n_moved OPERATOR(pg_catalog.+) w.moved;
				ELSIF w.action OPERATOR(pg_catalog.=) 'busy' THEN
					result := 'busy';
				END IF;
			END LOOP;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
			result := 'failed';
			n_made := 0;
			n_moved := 0;
		END;
		COMMIT;
		PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

		-- drop: its own transaction, with the record of the run
		IF state IS NULL OR state OPERATOR(pg_catalog.<>) '42P01' THEN
			BEGIN
				FOR w IN
					SELECT * FROM @extschema@.shardid_partition_work(oids[i]::pg_catalog.regclass, step, premake,
																	 retain, epoch, lock_wait, false, true)
				LOOP
					IF w.action OPERATOR(pg_catalog.=) 'dropped' THEN
						n_dropped := n_dropped OPERATOR(pg_catalog.+) 1;
					ELSIF w.action OPERATOR(pg_catalog.=) 'pruned' THEN
						n_pruned := n_pruned OPERATOR(pg_catalog.+) w.moved;
					ELSIF w.action OPERATOR(pg_catalog.=) 'busy' AND result OPERATOR(pg_catalog.=) 'ok' THEN
						result := 'busy';
					END IF;
				END LOOP;
			EXCEPTION WHEN OTHERS THEN
				n_dropped := 0;
				n_pruned := 0;
				IF result OPERATOR(pg_catalog.<>) 'failed' THEN
					GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
					result := 'failed';
				END IF;
			END;
		END IF;
		IF result OPERATOR(pg_catalog.=) 'busy' THEN
			state := '55P03';
			msg := 'a lock wait ran out (lock_wait); the next run tries again';
		END IF;
		BEGIN
			INSERT INTO @extschema@.shardid_partition_log
				   (parent, step, premake, retain, epoch, result, sqlstate, message, made, dropped, moved, pruned)
			VALUES (oids[i], step, premake, retain, epoch, result, state, msg, n_made, n_dropped, n_moved,
					n_pruned);
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;				-- not recorded: the table is gone, or not the caller's
		END;
		COMMIT;

		IF result OPERATOR(pg_catalog.=) 'failed' THEN
			n_failed := n_failed OPERATOR(pg_catalog.+) 1;
			first_state := COALESCE(first_state, state);
			report := report OPERATOR(pg_catalog.||) pg_catalog.format('%s%s: %s: %s',
				CASE WHEN report OPERATOR(pg_catalog.=) '' THEN '' ELSE E'\n' END, names[i], state, msg);
			RAISE WARNING USING
				MESSAGE = pg_catalog.format('partition maintenance of table %s failed: %s: %s', names[i], state, msg),
				HINT = 'The other tables go on; see shardid_partition_status.';
		ELSIF result OPERATOR(pg_catalog.=) 'busy' THEN
			n_busy := n_busy OPERATOR(pg_catalog.+) 1;
			report := report OPERATOR(pg_catalog.||) pg_catalog.format('%s%s: busy',
				CASE WHEN report OPERATOR(pg_catalog.=) '' THEN '' ELSE E'\n' END, names[i]);
			RAISE WARNING USING
				MESSAGE = pg_catalog.format('partition maintenance of table %s is busy: a lock wait ran out after %s', names[i], lock_wait),
				HINT = 'The next run tries again.';
		END IF;
	END LOOP;

	-- so that cron and pg_cron show it
	IF n_failed OPERATOR(pg_catalog.>) 0 THEN
		RAISE EXCEPTION USING
			ERRCODE = first_state,
			MESSAGE = pg_catalog.format('partition maintenance failed for %s of %s tables', n_failed,
										pg_catalog.cardinality(oids)),
			DETAIL = report,
			HINT = 'Every other table was maintained, and committed; see shardid_partition_status.';
	ELSIF n_busy OPERATOR(pg_catalog.>) 0 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'lock_not_available',
			MESSAGE = pg_catalog.format('partition maintenance left %s of %s tables busy', n_busy,
										pg_catalog.cardinality(oids)),
			DETAIL = report,
			HINT = 'Every other table was maintained, and committed; the next run tries the busy ones again.';
	END IF;
END
$pr$;

COMMENT ON PROCEDURE shardid_partition_run(pg_catalog.regclass[], pg_catalog.interval, pg_catalog.int4,
										   pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval) IS
'maintain the partitions of tables partitioned by range on a shardid key, each table in transactions of its own; fails at the end if any table failed or was busy';

-- The partitioned tables named table_name in every shard's schema
-- (shard_0000 to shard_8191), for a CALL, whose arguments cannot be
-- subqueries.  Only tables that the current role owns, in schemas it
-- owns: a table another role put in such a schema is never maintained
-- by mistake, with its triggers running as the caller.
CREATE FUNCTION shardid_shard_tables(table_name pg_catalog.name)
RETURNS pg_catalog.regclass[]
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT COALESCE(pg_catalog.array_agg(c.oid::pg_catalog.regclass ORDER BY n.nspname), '{}')
	  FROM pg_catalog.pg_class AS c
	  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
	 WHERE c.relname OPERATOR(pg_catalog.=) table_name
	   AND c.relkind OPERATOR(pg_catalog.=) 'p'
	   AND n.nspname OPERATOR(pg_catalog.~) '^shard_[0-9]{4}$'
	   AND c.relowner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname OPERATOR(pg_catalog.=) current_user)
	   AND n.nspowner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname OPERATOR(pg_catalog.=) current_user)
$fn$;

COMMENT ON FUNCTION shardid_shard_tables(pg_catalog.name) IS
'the partitioned tables of that name that the current role owns in the shard schemas it owns, for shardid_partition_run';

-- One row per table that maintenance ran on and the caller may see.
CREATE FUNCTION shardid_partition_status(
	OUT parent pg_catalog.regclass,
	OUT step pg_catalog.interval,
	OUT premake pg_catalog.int4,
	OUT retain pg_catalog.interval,
	OUT partitions pg_catalog.int4,
	OUT covered_until pg_catalog.timestamptz,
	OUT ahead pg_catalog.interval,
	OUT oldest_start pg_catalog.timestamptz,
	OUT default_partition pg_catalog.regclass,
	OUT default_rows pg_catalog.int8,
	OUT last_run pg_catalog.timestamptz,
	OUT last_result pg_catalog.text,
	OUT last_sqlstate pg_catalog.text,
	OUT last_message pg_catalog.text,
	OUT made pg_catalog.int4,
	OUT dropped pg_catalog.int4,
	OUT moved pg_catalog.int8,
	OUT pruned pg_catalog.int8)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	l record;
	now_id pg_catalog.numeric;
	los pg_catalog.numeric[];
	his pg_catalog.numeric[];
	i pg_catalog.int4;
BEGIN
	FOR l IN
		SELECT g.*, c.oid::pg_catalog.regclass AS rel, pt.partdefid
		  FROM (SELECT DISTINCT ON (o.parent) o.*
				  FROM @extschema@.shardid_partition_log AS o
				 ORDER BY o.parent, o.ran_at DESC) AS g
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) g.parent
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		  JOIN pg_catalog.pg_partitioned_table AS pt ON pt.partrelid OPERATOR(pg_catalog.=) c.oid
		 ORDER BY n.nspname, c.relname
	LOOP
		parent := l.rel;
		step := l.step;
		premake := l.premake;
		retain := l.retain;
		SELECT pg_catalog.count(*), pg_catalog.array_agg(b.lo ORDER BY b.lo),
			   pg_catalog.array_agg(b.hi ORDER BY b.lo)
		  INTO partitions, los, his
		  FROM @extschema@.shardid_partition_ranges(l.parent) AS b;
		oldest_start := CASE WHEN los IS NULL THEN NULL
							 WHEN los[1] OPERATOR(pg_catalog.<) 0 THEN '-infinity'
							 ELSE @extschema@.shardid_created_at(los[1]::pg_catalog.int8, l.epoch) END;
		-- the run of partitions, each starting where the one before ends,
		-- from the one that holds now()
		covered_until := NULL;
		ahead := NULL;
		IF los IS NOT NULL
		   AND pg_catalog.now() OPERATOR(pg_catalog.<) @extschema@.shardid_horizon(l.epoch) THEN
			now_id := @extschema@.shardid_floor(pg_catalog.now(), l.epoch)::pg_catalog.numeric;
			i := 1;
			WHILE i OPERATOR(pg_catalog.<=) partitions AND his[i] OPERATOR(pg_catalog.<=) now_id LOOP
				i := i OPERATOR(pg_catalog.+) 1;
			END LOOP;
			IF i OPERATOR(pg_catalog.<=) partitions AND los[i] OPERATOR(pg_catalog.<=) now_id THEN
				WHILE i OPERATOR(pg_catalog.<) partitions
					  AND los[i OPERATOR(pg_catalog.+) 1] OPERATOR(pg_catalog.=) his[i] LOOP
					i := i OPERATOR(pg_catalog.+) 1;
				END LOOP;
				covered_until := CASE WHEN his[i] OPERATOR(pg_catalog.>) 9223372036854775807 THEN 'infinity'
									  ELSE @extschema@.shardid_created_at(his[i]::pg_catalog.int8, l.epoch) END;
				ahead := covered_until OPERATOR(pg_catalog.-) pg_catalog.now();
			END IF;
		END IF;
		-- The default partition's rows, if the caller may read it.  Each
		-- count runs in a subtransaction that is then rolled back on
		-- purpose, so that its lock goes with it: over thousands of tables
		-- the status would otherwise hold a lock per table and fill the
		-- lock table.
		-- Only where counting runs no other role's code: the caller acts as
		-- the table's owner, or the default partition has no row security
		-- (whose policies would run as the caller).  A wait for its lock
		-- is bounded: NULL after a second.
		default_partition := NULLIF(l.partdefid, 0)::pg_catalog.regclass;
		default_rows := NULL;
		IF default_partition IS NOT NULL
		   AND pg_catalog.has_table_privilege(default_partition, 'SELECT')
		   AND EXISTS (SELECT FROM pg_catalog.pg_class AS d
						WHERE d.oid OPERATOR(pg_catalog.=) l.partdefid
						  AND (pg_catalog.pg_has_role(d.relowner, 'USAGE') OR NOT d.relrowsecurity)) THEN
			BEGIN
				PERFORM pg_catalog.set_config('lock_timeout', '1000', true);
				EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM ONLY %s', default_partition)
				   INTO default_rows;
				RAISE EXCEPTION USING ERRCODE = 'SD001';
			EXCEPTION
				WHEN SQLSTATE 'SD001' THEN
					NULL;		-- default_rows is kept: variables are not rolled back
				WHEN lock_not_available THEN
					default_rows := NULL;
			END;
		END IF;
		last_run := l.ran_at;
		last_result := l.result;
		last_sqlstate := l.sqlstate;
		last_message := l.message;
		made := l.made;
		dropped := l.dropped;
		moved := l.moved;
		pruned := l.pruned;
		RETURN NEXT;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_status() IS
'the partition maintenance of each table it ran on: how far ahead the partitions go, the rows in the default partition, and the last run';

CREATE VIEW shardid_partition_status AS
	SELECT * FROM @extschema@.shardid_partition_status();

COMMENT ON VIEW shardid_partition_status IS
'the partition maintenance of each table it ran on: how far ahead the partitions go, the rows in the default partition, and the last run';

GRANT SELECT ON shardid_partition_status TO PUBLIC;

-- the fence is read again, with its lead
SELECT @extschema@.shardid_fence_reload();

--
-- Opaque public IDs: the ID encrypted under a key of
-- shardid.public_id_keys (Speck64/128 with cycle walking), as 12
-- characters.  STABLE, not IMMUTABLE: the keys are a setting.
--

CREATE FUNCTION shardid_public(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public(pg_catalog.int8) IS
'opaque public ID of an ID under the newest key of shardid.public_id_keys: 12 characters that hide its time, shard and volume';

CREATE FUNCTION shardid_public(id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public(pg_catalog.int8, pg_catalog.int4) IS
'opaque public ID of an ID under the given configured key version';

CREATE FUNCTION shardid_private(public_id pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_private'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_private(pg_catalog.text) IS
'ID of a public ID, under the key version it names';

CREATE FUNCTION shardid_public_bigint(id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_public_bigint'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public_bigint(pg_catalog.int8, pg_catalog.int4) IS
'the keyed permutation of 0 to 2^63-1 behind public IDs, under the given key version';

CREATE FUNCTION shardid_private_bigint(public_id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_private_bigint'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_private_bigint(pg_catalog.int8, pg_catalog.int4) IS
'inverse of shardid_public_bigint under the given key version';

CREATE FUNCTION shardid_public_keys()
RETURNS TABLE (key_version pg_catalog.int4, fingerprint pg_catalog.text, newest pg_catalog.bool)
AS 'MODULE_PATHNAME', 'shardid_public_keys'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public_keys() IS
'the configured public ID key versions, each with a fingerprint of its key (never the key)';
