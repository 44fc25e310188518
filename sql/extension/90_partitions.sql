--
-- Time partitions
--
-- A table partitioned BY RANGE (id) on a shardid key is partitioned by
-- time: the partition for [t1, t2) holds exactly the IDs from
-- shardid_floor(t1) up to, not including, shardid_floor(t2), on every
-- shard.  shardid_partition_maintain() keeps such tables partitioned ahead
-- of the clock (never of max(id), so a table that receives no rows has no
-- gaps either), and drops whole partitions older than a retention
-- interval.  shardid_partition_maintain_all() does the same for a list of
-- tables in one transaction, such as one table in every shard's schema.
-- docs/partitions.md has the recipes and the locks taken.
--

CREATE FUNCTION shardid_partition_maintain_all(
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
	-- the step, taken apart
	step_months pg_catalog.numeric;
	step_days pg_catalog.numeric;
	step_us pg_catalog.numeric;
	step_ms pg_catalog.int8;
	suffix_format pg_catalog.text;
	-- the partitions every parent should have: [starts[i], ends[i])
	starts pg_catalog.timestamptz[] := '{}';
	ends pg_catalog.timestamptz[] := '{}';
	los pg_catalog.int8[] := '{}';
	his pg_catalog.int8[] := '{}';
	suffixes pg_catalog.text[] := '{}';
	horizon pg_catalog.timestamptz;
	t pg_catalog.timestamptz;
	k pg_catalog.int4;
	i pg_catalog.int4;
	cutoff pg_catalog.int8;
	-- one parent
	par record;
	cover record;
	gone record;
	def_name pg_catalog.text;
	new_name pg_catalog.text;
	base_name pg_catalog.text;
	space_clause pg_catalog.text;
	n_rows pg_catalog.int8;
	default_btree_int8 pg_catalog.oid;
BEGIN
	IF parents IS NULL OR step IS NULL OR premake IS NULL OR epoch IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent tables, step, premake and epoch must not be null',
			HINT = 'Pass retain as NULL to keep every partition.';
	END IF;
	IF pg_catalog.array_position(parents, NULL) IS NOT NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent table must not be null';
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

	-- The partitions wanted: the one holding now(), and premake after it.
	IF step_ms OPERATOR(pg_catalog.=) 0 THEN
		-- months since year 0, rounded down to a multiple of the step
		k := (((EXTRACT(year FROM pg_catalog.now()) OPERATOR(pg_catalog.*) 12)
			   OPERATOR(pg_catalog.+) EXTRACT(month FROM pg_catalog.now()))
			  OPERATOR(pg_catalog.-) 1)::pg_catalog.int4;
		k := k OPERATOR(pg_catalog.-) (k OPERATOR(pg_catalog.%) step_months::pg_catalog.int4);
		t := pg_catalog.make_timestamptz(k OPERATOR(pg_catalog./) 12,
										 (k OPERATOR(pg_catalog.%) 12) OPERATOR(pg_catalog.+) 1,
										 1, 0, 0, 0, 'UTC');
		suffix_format := 'YYYYMM';
	ELSE
		-- 2001-01-01 was a Monday
		t := pg_catalog.date_bin(step, pg_catalog.now(), '2001-01-01 00:00:00+00');
		suffix_format := CASE
			WHEN (step_ms OPERATOR(pg_catalog.%) 86400000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD'
			WHEN (step_ms OPERATOR(pg_catalog.%) 3600000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24'
			WHEN (step_ms OPERATOR(pg_catalog.%) 60000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24MI'
			WHEN (step_ms OPERATOR(pg_catalog.%) 1000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24MISS'
			ELSE 'YYYYMMDD_HH24MISSMS' END;
	END IF;
	FOR i IN 0 .. premake LOOP
		starts := starts OPERATOR(pg_catalog.||) t;
		suffixes := suffixes OPERATOR(pg_catalog.||) ('_p' OPERATOR(pg_catalog.||) pg_catalog.to_char(t, suffix_format));
		t := t OPERATOR(pg_catalog.+) step;
		ends := ends OPERATOR(pg_catalog.||) t;
		IF t OPERATOR(pg_catalog.>) horizon THEN
			RAISE EXCEPTION USING
				ERRCODE = 'datetime_field_overflow',
				MESSAGE = pg_catalog.format('partition bound %s is past the horizon of the epoch', t),
				DETAIL = pg_catalog.format('With the epoch %s, the last millisecond that encodes to a positive bigint is %s.',
										   epoch, horizon),
				HINT = 'Make fewer partitions ahead, or use a later epoch for new tables.';
		END IF;
		-- a partition that starts before the epoch starts at ID 0
		los := los OPERATOR(pg_catalog.||)
			   @extschema@.shardid_floor(GREATEST(starts[i OPERATOR(pg_catalog.+) 1], epoch), epoch);
		his := his OPERATOR(pg_catalog.||) @extschema@.shardid_floor(t, epoch);
	END LOOP;
	IF retain IS NOT NULL AND (pg_catalog.now() OPERATOR(pg_catalog.-) retain) OPERATOR(pg_catalog.>) epoch THEN
		cutoff := @extschema@.shardid_floor(pg_catalog.now() OPERATOR(pg_catalog.-) retain, epoch);
	END IF;

	SELECT o.oid INTO default_btree_int8
	  FROM pg_catalog.pg_opclass AS o
	  JOIN pg_catalog.pg_am AS a ON a.oid OPERATOR(pg_catalog.=) o.opcmethod
	 WHERE a.amname OPERATOR(pg_catalog.=) 'btree'
	   AND o.opcintype OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
	   AND o.opcdefault;

	-- Check every parent before changing anything.
	IF EXISTS (SELECT FROM pg_catalog.unnest(parents) AS u(rel)
				WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
								   WHERE c.oid OPERATOR(pg_catalog.=) u.rel)) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'undefined_table',
			MESSAGE = pg_catalog.format('relation with OID %s does not exist',
				(SELECT u.rel::pg_catalog.oid FROM pg_catalog.unnest(parents) AS u(rel)
				  WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
									 WHERE c.oid OPERATOR(pg_catalog.=) u.rel)
				  LIMIT 1));
	END IF;
	FOR par IN
		SELECT DISTINCT c.oid, c.oid::pg_catalog.regclass AS rel, c.relkind, c.relowner,
			   n.nspname, c.relname
		  FROM pg_catalog.unnest(parents) AS u(rel)
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		 ORDER BY n.nspname, c.relname
	LOOP
		IF par.relkind OPERATOR(pg_catalog.<>) 'p' THEN
			RAISE EXCEPTION USING
				ERRCODE = 'wrong_object_type',
				MESSAGE = pg_catalog.format('relation %s is not a partitioned table', par.rel),
				HINT = 'Create the table with PARTITION BY RANGE (id).';
		END IF;
		IF NOT pg_catalog.pg_has_role(par.relowner, 'USAGE') THEN
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('must be owner of table %s', par.rel),
				DETAIL = 'Only the owner of a partitioned table may maintain its partitions.';
		END IF;
		IF NOT EXISTS (
			SELECT FROM pg_catalog.pg_partitioned_table AS pt
			  JOIN pg_catalog.pg_attribute AS a
				ON a.attrelid OPERATOR(pg_catalog.=) pt.partrelid
			   AND a.attnum OPERATOR(pg_catalog.=) pt.partattrs[0]
			 WHERE pt.partrelid OPERATOR(pg_catalog.=) par.oid
			   AND pt.partstrat OPERATOR(pg_catalog.=) 'r'
			   AND pt.partnatts OPERATOR(pg_catalog.=) 1
			   AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
			   AND pt.partclass[0] OPERATOR(pg_catalog.=) default_btree_int8) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('table %s is not partitioned by range on one bigint column', par.rel),
				DETAIL = pg_catalog.format('Its partition key is %s.', pg_catalog.pg_get_partkeydef(par.oid)),
				HINT = 'Partition a table on shardid keys with PARTITION BY RANGE (id), where id is a bigint column.';
		END IF;
	END LOOP;

	-- Make the partitions, one parent after another, in name order so that
	-- concurrent runs lock their parents in the same order.
	FOR par IN
		SELECT DISTINCT c.oid, c.oid::pg_catalog.regclass AS rel, n.oid AS nspoid,
			   n.nspname, c.relname, s.spcname, a.attname AS keyname
		  FROM pg_catalog.unnest(parents) AS u(rel)
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		  JOIN pg_catalog.pg_partitioned_table AS pt ON pt.partrelid OPERATOR(pg_catalog.=) c.oid
		  JOIN pg_catalog.pg_attribute AS a ON a.attrelid OPERATOR(pg_catalog.=) c.oid
										  AND a.attnum OPERATOR(pg_catalog.=) pt.partattrs[0]
		  LEFT JOIN pg_catalog.pg_tablespace AS s ON s.oid OPERATOR(pg_catalog.=) c.reltablespace
		 ORDER BY n.nspname, c.relname
	LOOP
		-- Serialises maintenance runs on this table; inserts, updates and
		-- queries go on.  ATTACH PARTITION takes the same lock.
		EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN SHARE UPDATE EXCLUSIVE MODE',
								  par.nspname, par.relname);
		SELECT pg_catalog.format('%I.%I', dn.nspname, dc.relname) INTO def_name
		  FROM pg_catalog.pg_partitioned_table AS pt
		  JOIN pg_catalog.pg_class AS dc ON dc.oid OPERATOR(pg_catalog.=) pt.partdefid
		  JOIN pg_catalog.pg_namespace AS dn ON dn.oid OPERATOR(pg_catalog.=) dc.relnamespace
		 WHERE pt.partrelid OPERATOR(pg_catalog.=) par.oid;
		space_clause := CASE WHEN par.spcname IS NULL THEN ''
						ELSE pg_catalog.format(' TABLESPACE %I', par.spcname) END;
		-- Partition names are the table's name and the suffix, the table's
		-- name cut short to fit NAMEDATALEN.
		base_name := par.relname;
		WHILE (pg_catalog.octet_length(base_name) OPERATOR(pg_catalog.+)
			   pg_catalog.octet_length(suffixes[1])) OPERATOR(pg_catalog.>) 63 LOOP
			base_name := pg_catalog.left(base_name, -1);
		END LOOP;

		FOR i IN 1 .. premake OPERATOR(pg_catalog.+) 1 LOOP
			new_name := base_name OPERATOR(pg_catalog.||) suffixes[i];
			parent := par.rel;
			range_start := GREATEST(starts[i], epoch);
			range_end := ends[i];

			-- What covers this range already?
			SELECT pg_catalog.string_agg(pg_catalog.format('%I.%I', b.nspname, b.relname), ', '
										 ORDER BY b.lo) AS names,
				   pg_catalog.sum(LEAST(b.hi, his[i]::pg_catalog.numeric)
								  OPERATOR(pg_catalog.-) GREATEST(b.lo, los[i]::pg_catalog.numeric)) AS covered,
				   pg_catalog.bool_or(b.lo OPERATOR(pg_catalog.=) los[i]
									  AND b.hi OPERATOR(pg_catalog.=) his[i]) AS same
			  INTO cover
			  FROM (SELECT pn.nspname, pc.relname,
						   CASE m[1] WHEN 'MINVALUE' THEN -9223372036854775809
								ELSE pg_catalog.btrim(m[1], '''')::pg_catalog.numeric END AS lo,
						   CASE m[2] WHEN 'MAXVALUE' THEN 9223372036854775808
								ELSE pg_catalog.btrim(m[2], '''')::pg_catalog.numeric END AS hi
					  FROM pg_catalog.pg_inherits AS h
					  JOIN pg_catalog.pg_class AS pc ON pc.oid OPERATOR(pg_catalog.=) h.inhrelid
					  JOIN pg_catalog.pg_namespace AS pn ON pn.oid OPERATOR(pg_catalog.=) pc.relnamespace,
						   pg_catalog.regexp_match(pg_catalog.pg_get_expr(pc.relpartbound, pc.oid),
												   '^FOR VALUES FROM \((MINVALUE|''-?[0-9]+'')\) TO \((MAXVALUE|''-?[0-9]+'')\)$') AS m
					 WHERE h.inhparent OPERATOR(pg_catalog.=) par.oid) AS b
			 WHERE b.lo OPERATOR(pg_catalog.<) his[i]::pg_catalog.numeric
			   AND b.hi OPERATOR(pg_catalog.>) los[i]::pg_catalog.numeric;

			IF cover.same THEN
				partition := cover.names;
				action := 'exists';
				RETURN NEXT;
				CONTINUE;
			ELSIF cover.covered OPERATOR(pg_catalog.=) (his[i]::pg_catalog.numeric
														OPERATOR(pg_catalog.-) los[i]::pg_catalog.numeric) THEN
				partition := cover.names;
				action := 'covered';
				RETURN NEXT;
				CONTINUE;
			ELSIF cover.covered IS NOT NULL THEN
				RAISE EXCEPTION USING
					ERRCODE = 'invalid_object_definition',
					MESSAGE = pg_catalog.format('new partition %I.%I of table %s would overlap partition %s',
												par.nspname, new_name, par.rel, cover.names),
					DETAIL = pg_catalog.format('The new partition would hold IDs from %s (%s) to %s (%s); the existing partitions cover part of that range.',
											   los[i], range_start, his[i], range_end),
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
											   par.rel, range_start, range_end),
					HINT = 'Rename or drop it: maintenance does not adopt existing tables.';
			END IF;

			-- A table of its own, then attached: ATTACH PARTITION needs only
			-- SHARE UPDATE EXCLUSIVE on the parent, where CREATE TABLE ...
			-- PARTITION OF would take ACCESS EXCLUSIVE.
			EXECUTE pg_catalog.format(
				'CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS'
				' INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION)%s',
				par.nspname, new_name, par.nspname, par.relname, space_clause);
			BEGIN
				EXECUTE pg_catalog.format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
										  par.nspname, par.relname, par.nspname, new_name, los[i], his[i]);
			EXCEPTION WHEN check_violation THEN
				IF def_name IS NULL THEN
					RAISE;
				END IF;
				EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1 AND d.%I OPERATOR(pg_catalog.<) $2',
										  def_name, par.keyname, par.keyname)
				   INTO n_rows USING los[i], his[i];
				RAISE EXCEPTION USING
					ERRCODE = 'check_violation',
					MESSAGE = pg_catalog.format('default partition %s holds rows in the range of new partition %I.%I',
												def_name, par.nspname, new_name),
					DETAIL = pg_catalog.format('%s rows of the default partition have IDs from %s (%s) up to %s (%s). Nothing was changed.',
											   n_rows, los[i], range_start, his[i], range_end),
					HINT = 'Move those rows out of the default partition (delete them there and insert them again once the partition exists), then run the maintenance again.';
			END;
			partition := pg_catalog.format('%I.%I', par.nspname, new_name);
			action := 'created';
			RETURN NEXT;
		END LOOP;
	END LOOP;

	IF cutoff IS NULL THEN
		RETURN;
	END IF;

	-- Retention, after every parent has its new partitions: dropping a
	-- partition takes ACCESS EXCLUSIVE on its parent (and on the default
	-- partition) until the transaction ends.  A drop that times out on
	-- its lock (lock_timeout) is reported as "busy" and left for the next
	-- run; everything else done so far stands.
	FOR par IN
		SELECT DISTINCT c.oid, c.oid::pg_catalog.regclass AS rel, n.nspname, c.relname
		  FROM pg_catalog.unnest(parents) AS u(rel)
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		 ORDER BY n.nspname, c.relname
	LOOP
		FOR gone IN
			SELECT b.nspname, b.relname, b.lo, b.hi
			  FROM (SELECT pn.nspname, pc.relname,
						   CASE m[1] WHEN 'MINVALUE' THEN NULL
								ELSE pg_catalog.btrim(m[1], '''')::pg_catalog.int8 END AS lo,
						   CASE m[2] WHEN 'MAXVALUE' THEN NULL
								ELSE pg_catalog.btrim(m[2], '''')::pg_catalog.int8 END AS hi
					  FROM pg_catalog.pg_inherits AS h
					  JOIN pg_catalog.pg_class AS pc ON pc.oid OPERATOR(pg_catalog.=) h.inhrelid
					  JOIN pg_catalog.pg_namespace AS pn ON pn.oid OPERATOR(pg_catalog.=) pc.relnamespace,
						   pg_catalog.regexp_match(pg_catalog.pg_get_expr(pc.relpartbound, pc.oid),
												   '^FOR VALUES FROM \((MINVALUE|''-?[0-9]+'')\) TO \((MAXVALUE|''-?[0-9]+'')\)$') AS m
					 WHERE h.inhparent OPERATOR(pg_catalog.=) par.oid) AS b
			 WHERE b.hi OPERATOR(pg_catalog.<=) cutoff
			 ORDER BY b.hi
		LOOP
			parent := par.rel;
			partition := pg_catalog.format('%I.%I', gone.nspname, gone.relname);
			range_start := CASE WHEN gone.lo OPERATOR(pg_catalog.>=) 0
							   THEN @extschema@.shardid_created_at(gone.lo, epoch) END;
			range_end := CASE WHEN gone.hi OPERATOR(pg_catalog.>=) 0
							 THEN @extschema@.shardid_created_at(gone.hi, epoch) END;
			BEGIN
				EXECUTE pg_catalog.format('DROP TABLE %I.%I', gone.nspname, gone.relname);
				action := 'dropped';
			EXCEPTION WHEN lock_not_available THEN
				action := 'busy';
			END;
			RETURN NEXT;
		END LOOP;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_maintain_all(pg_catalog.regclass[], pg_catalog.interval, pg_catalog.int4,
												   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of tables partitioned by range on a shardid key ahead of the clock, and drop those older than retain';

CREATE FUNCTION shardid_partition_maintain(
	parent pg_catalog.regclass,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval DEFAULT NULL,
	epoch pg_catalog.timestamptz DEFAULT '2011-01-01 00:00:00+00',
	OUT partition pg_catalog.text,
	OUT action pg_catalog.text,
	OUT range_start pg_catalog.timestamptz,
	OUT range_end pg_catalog.timestamptz)
RETURNS SETOF pg_catalog.record
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT m.partition, m.action, m.range_start, m.range_end
	  FROM @extschema@.shardid_partition_maintain_all(ARRAY[parent], step, premake, retain, epoch) AS m
$fn$;

COMMENT ON FUNCTION shardid_partition_maintain(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
											   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of a table partitioned by range on a shardid key ahead of the clock, and drop those older than retain';
