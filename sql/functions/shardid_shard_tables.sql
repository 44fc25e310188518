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
