-- The start of a maintenance run (shardid_partition_maintain_all,
-- shardid_partition_run): its arguments checked before any parent
-- (shardid_partition_plan; lock_wait must be given), and its parents,
-- none of them NULL, each once, in the order every run locks them (by
-- schema and name, then OID: concurrent runs then lock their parents in
-- the same order), each with its name for the messages (its OID once it
-- is gone).
CREATE FUNCTION shardid_partition_parents(
	parents pg_catalog.regclass[],
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval,
	epoch pg_catalog.timestamptz,
	lock_wait pg_catalog.interval,
	OUT parent pg_catalog.oid,
	OUT name pg_catalog.text)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
BEGIN
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
	PERFORM FROM @extschema@.shardid_partition_plan(step, premake, retain, epoch, lock_wait);
	RETURN QUERY
		SELECT p.oid,
			   CASE WHEN p.relname IS NULL THEN p.oid::pg_catalog.text
					ELSE pg_catalog.format('%I.%I', p.nspname, p.relname) END
		  FROM (SELECT DISTINCT u.rel::pg_catalog.oid AS oid, n.nspname, c.relname
				  FROM pg_catalog.unnest(parents) AS u(rel)
				  LEFT JOIN pg_catalog.pg_class AS c ON c.oid = u.rel
				  LEFT JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace) AS p
		 ORDER BY p.nspname, p.relname, p.oid;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_parents(pg_catalog.regclass[], pg_catalog.interval, pg_catalog.int4,
											  pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval) IS
'internal: check the arguments of a partition maintenance run, and list its tables in the order it locks them';
