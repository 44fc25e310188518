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
