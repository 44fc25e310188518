-- Make the partitions of a parent: the one that holds now() and premake
-- after it, and one for each step of time in which the default partition
-- holds IDs, from the retention cutoff and from the table's first
-- shardid ID on, whose rows move into it.  The
-- caller holds the parent (shardid_partition_lock), so that nothing is
-- attached or detached meanwhile.  One row per partition looked at,
-- returned once all of them stand; a lock wait that runs out undoes them
-- all and gives one row "busy" (the next run makes them).
CREATE FUNCTION shardid_partition_make(
	parent pg_catalog.regclass,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval,
	epoch pg_catalog.timestamptz,
	lock_wait pg_catalog.interval,
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
	pl record;
	par record;
	-- the partitions to look at: [starts[i], starts[i] + step)
	starts pg_catalog.timestamptz[];
	base_name pg_catalog.text;
	due pg_catalog.bool;
	lo_min pg_catalog.int8;
	v pg_catalog.int8;
	t pg_catalog.timestamptz;
	n_found pg_catalog.int4 := 0;
	rng record;
	made record;
	-- what was made, returned once it has stood
	r_part pg_catalog.text[] := '{}';
	r_action pg_catalog.text[] := '{}';
	r_start pg_catalog.timestamptz[] := '{}';
	r_end pg_catalog.timestamptz[] := '{}';
	r_moved pg_catalog.int8[] := '{}';
BEGIN
	SELECT * INTO pl FROM @extschema@.shardid_partition_plan(step, premake, retain, epoch, lock_wait);
	SELECT * INTO par FROM @extschema@.shardid_partition_parent(parent);
	PERFORM @extschema@.shardid_partition_lock_timeout(lock_wait);

	-- Partition names are the table's name and the suffix, the table's
	-- name cut short to fit NAMEDATALEN.
	base_name := par.relname;
	WHILE pg_catalog.octet_length(base_name)
		  + pg_catalog.octet_length('_p' || pg_catalog.to_char(pl.starts[1], pl.suffix_format)) > 63 LOOP
		base_name := pg_catalog.left(base_name, -1);
	END LOOP;
	-- rows older than the retention cutoff are not given partitions, nor
	-- are keys below the table's first shardid ID, which are not IDs and
	-- hold no time
	lo_min := GREATEST(COALESCE(pl.cutoff, 0), @extschema@.shardid_partition_first_id(parent));
	starts := pl.starts;

	BEGIN
		-- The default partition, after the parent: when it holds rows
		-- from the cutoff on, or a wanted partition is missing (ATTACH
		-- would lock it anyway).  Nothing can reach it meanwhile.  It is
		-- read as its owner, in a security-restricted operation
		-- (shardid_rows_exist, shardid_rows_min), never as the caller.
		IF par.def_oid IS NOT NULL THEN
			due := @extschema@.shardid_rows_exist(par.def_oid::pg_catalog.regclass, par.keyname, lo_min, NULL::pg_catalog.int8);
			IF due OR EXISTS (
				SELECT FROM (SELECT @extschema@.shardid_floor(GREATEST(w.s, epoch), epoch)::pg_catalog.numeric AS lo,
									@extschema@.shardid_floor(w.s + step, epoch)::pg_catalog.numeric AS hi
							   FROM pg_catalog.unnest(starts) AS w(s)) AS x
				 WHERE (SELECT COALESCE(pg_catalog.sum(LEAST(b.hi, x.hi) - GREATEST(b.lo, x.lo)), 0)
						  FROM @extschema@.shardid_partition_ranges(parent) AS b
						 WHERE b.lo < x.hi AND b.hi > x.lo) < x.hi - x.lo) THEN
				EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN ACCESS EXCLUSIVE MODE',
										  par.def_nspname, par.def_relname);
			END IF;
			-- The steps that hold its rows, from the cutoff up to the
			-- horizon, one index probe each (rows past the horizon can
			-- have no partition).
			IF due THEN
				v := lo_min;
				LOOP
					v := @extschema@.shardid_rows_min(par.def_oid::pg_catalog.regclass, par.keyname, v);
					EXIT WHEN v IS NULL OR v < 0;
					t := @extschema@.shardid_partition_step_start(@extschema@.shardid_created_at(v, epoch), step);
					EXIT WHEN t + step > pl.horizon;
					IF pg_catalog.array_position(starts, t) IS NULL THEN
						starts := starts || t;
						-- at most 100 such partitions a run (a role that
						-- may only insert could otherwise make a run make
						-- thousands, and fill the lock table); the next
						-- run makes more
						n_found := n_found + 1;
						EXIT WHEN n_found >= 100;
					END IF;
					v := @extschema@.shardid_floor(t + step, epoch);
				END LOOP;
			END IF;
		END IF;

		FOR rng IN
			SELECT w.s AS range_start, w.s + step AS range_end
			  FROM pg_catalog.unnest(starts) AS w(s)
			 ORDER BY w.s
		LOOP
			SELECT * INTO made
			  FROM @extschema@.shardid_partition_create(
					   parent, rng.range_start, rng.range_end, epoch,
					   base_name || '_p' || pg_catalog.to_char(rng.range_start, pl.suffix_format));
			r_part := r_part || made.partition;
			r_action := r_action || made.action;
			r_start := r_start || made.holds_from;
			r_end := r_end || made.holds_to;
			r_moved := r_moved || made.moved;
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
END
$fn$;

COMMENT ON FUNCTION shardid_partition_make(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
										   pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval) IS
'internal: make the partitions a table wants now, moving rows out of its default partition, in the caller''s transaction';
