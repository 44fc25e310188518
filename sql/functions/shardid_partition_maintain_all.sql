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
	drop_lock pg_catalog.text;
	w record;
	acts pg_catalog.text[];
	moves pg_catalog.int8[];
BEGIN
	-- the session's lock_timeout, else one second
	lock_wait := CASE pg_catalog.current_setting('lock_timeout')
				 WHEN '0' THEN '1 s'::pg_catalog.interval
				 ELSE pg_catalog.current_setting('lock_timeout')::pg_catalog.interval END;

	-- One parent after another, in the order every run locks them.
	FOR par IN
		SELECT * FROM @extschema@.shardid_partition_parents(parents, step, premake, retain, epoch, lock_wait)
	LOOP
		parent := par.parent::pg_catalog.regclass;
		acts := '{}';
		moves := '{}';
		-- The parent first.  With partitions to drop, ACCESS EXCLUSIVE at
		-- once, before the default partition is touched; if that wait
		-- runs out, the drops are "busy" and the partitions are made all
		-- the same, under SHARE UPDATE EXCLUSIVE.
		drop_lock := @extschema@.shardid_partition_drop_lock(parent, step, premake, retain, epoch, lock_wait);
		IF drop_lock = 'held'
		   OR @extschema@.shardid_partition_lock(parent, 'SHARE UPDATE EXCLUSIVE', lock_wait) THEN
			FOR w IN SELECT * FROM @extschema@.shardid_partition_make(parent, step, premake, retain, epoch, lock_wait) LOOP
				SELECT w.partition, w.action, w.range_start, w.range_end INTO partition, action, range_start, range_end;
				RETURN NEXT;
				acts := acts || w.action;
				moves := moves || w.moved;
			END LOOP;
			FOR w IN SELECT * FROM @extschema@.shardid_partition_drop(parent, step, premake, retain, epoch, lock_wait,
																	   drop_lock) LOOP
				SELECT w.partition, w.action, w.range_start, w.range_end INTO partition, action, range_start, range_end;
				RETURN NEXT;
				acts := acts || w.action;
				moves := moves || w.moved;
			END LOOP;
		ELSE
			partition := par.name;
			action := 'busy';
			range_start := NULL;
			range_end := NULL;
			RETURN NEXT;
			acts := ARRAY['busy'];
			moves := ARRAY[0::pg_catalog.int8];
		END IF;
		PERFORM @extschema@.shardid_partition_record(par.parent, step, premake, retain, epoch, acts, moves,
													 NULL, NULL, NULL);
	END LOOP;
	PERFORM @extschema@.shardid_partition_log_purge();
END
$fn$;

COMMENT ON FUNCTION shardid_partition_maintain_all(pg_catalog.regclass[], pg_catalog.interval, pg_catalog.int4,
												   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of tables partitioned by range on a shardid key ahead of the clock, move rows out of their default partitions, and drop partitions older than retain, in one transaction';
