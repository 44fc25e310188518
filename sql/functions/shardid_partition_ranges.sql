-- The range partitions of a parent, with their bounds as numerics
-- (MINVALUE and MAXVALUE one past the int8 range).  The default partition
-- and partitions of other strategies are not listed.  The bounds are
-- deparsed without the partition (pg_get_expr with relation 0: a bound
-- holds constants only), so that no partition is opened or locked: a
-- role's lock on its partition never holds up a reader.
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
	  JOIN pg_catalog.pg_class AS pc ON pc.oid = h.inhrelid
	  JOIN pg_catalog.pg_namespace AS pn ON pn.oid = pc.relnamespace,
		   pg_catalog.regexp_match(pg_catalog.pg_get_expr(pc.relpartbound, 0),
								   '^FOR VALUES FROM \((MINVALUE|''-?[0-9]+'')\) TO \((MAXVALUE|''-?[0-9]+'')\)$') AS m
	 WHERE h.inhparent = parent
	   AND m IS NOT NULL
$fn$;

COMMENT ON FUNCTION shardid_partition_ranges(pg_catalog.regclass) IS
'internal: the range partitions of a table, with their bounds';
