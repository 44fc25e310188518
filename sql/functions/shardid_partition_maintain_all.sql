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
