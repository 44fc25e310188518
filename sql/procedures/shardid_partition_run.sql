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
	drop_lock pg_catalog.text;
	made_acts pg_catalog.text[];
	made_moves pg_catalog.int8[];
	drop_acts pg_catalog.text[];
	drop_moves pg_catalog.int8[];
	result pg_catalog.text;
	state pg_catalog.text;
	msg pg_catalog.text;
	n_failed pg_catalog.int4 := 0;
	n_busy pg_catalog.int4 := 0;
	first_state pg_catalog.text;
	report pg_catalog.text := '';
BEGIN
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
	epoch := COALESCE(epoch, @extschema@.shardid_epoch());
	SELECT pg_catalog.array_agg(p.parent ORDER BY p.n), pg_catalog.array_agg(p.name ORDER BY p.n)
	  INTO oids, names
	  FROM @extschema@.shardid_partition_parents(parents, step, premake, retain, epoch, lock_wait)
		   WITH ORDINALITY AS p(parent, name, n);
	PERFORM @extschema@.shardid_partition_log_purge();
	COMMIT;

	FOR i IN 1 .. COALESCE(pg_catalog.cardinality(oids), 0) LOOP
		PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
		state := NULL;
		msg := NULL;
		made_acts := '{}';
		made_moves := '{}';
		drop_acts := '{}';
		drop_moves := '{}';

		-- make: its own transaction, under SHARE UPDATE EXCLUSIVE on the
		-- parent
		BEGIN
			IF @extschema@.shardid_partition_lock(oids[i]::pg_catalog.regclass, 'SHARE UPDATE EXCLUSIVE',
												   lock_wait) THEN
				SELECT COALESCE(pg_catalog.array_agg(w.action), '{}'), COALESCE(pg_catalog.array_agg(w.moved), '{}')
				  INTO made_acts, made_moves
				  FROM @extschema@.shardid_partition_make(oids[i]::pg_catalog.regclass, step, premake,
														  retain, epoch, lock_wait) AS w;
			ELSE
				made_acts := '{busy}';
				made_moves := '{0}';
			END IF;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
			made_acts := '{}';
			made_moves := '{}';
		END;
		COMMIT;
		PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

		-- drop: its own transaction, with the record of the run; ACCESS
		-- EXCLUSIVE on the parent first, if any partition is due
		IF state IS NULL OR state OPERATOR(pg_catalog.<>) '42P01' THEN
			BEGIN
				drop_lock := @extschema@.shardid_partition_drop_lock(oids[i]::pg_catalog.regclass, step, premake,
																	  retain, epoch, lock_wait);
				SELECT COALESCE(pg_catalog.array_agg(w.action), '{}'), COALESCE(pg_catalog.array_agg(w.moved), '{}')
				  INTO drop_acts, drop_moves
				  FROM @extschema@.shardid_partition_drop(oids[i]::pg_catalog.regclass, step, premake,
														  retain, epoch, lock_wait, drop_lock) AS w;
			EXCEPTION WHEN OTHERS THEN
				drop_acts := '{}';
				drop_moves := '{}';
				IF state IS NULL THEN
					GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
				END IF;
			END;
		END IF;
		-- not recorded if the table is gone, or not the caller's
		result := @extschema@.shardid_partition_record(oids[i], step, premake, retain, epoch,
													   made_acts OPERATOR(pg_catalog.||) drop_acts,
													   made_moves OPERATOR(pg_catalog.||) drop_moves, state, msg,
													   'a lock wait ran out (lock_wait); the next run tries again');
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
