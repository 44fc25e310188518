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
