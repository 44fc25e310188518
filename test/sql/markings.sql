--
-- The catalog tells the truth: volatility, strictness, parallel safety,
-- return types, and no elevated rights.
--
SELECT p.oid::regprocedure AS function,
       CASE p.provolatile WHEN 'i' THEN 'IMMUTABLE' WHEN 's' THEN 'STABLE' ELSE 'VOLATILE' END AS volatility,
       CASE WHEN p.proisstrict THEN 'STRICT' ELSE 'CALLED ON NULL INPUT' END AS strict,
       CASE p.proparallel WHEN 's' THEN 'SAFE' WHEN 'r' THEN 'RESTRICTED' ELSE 'UNSAFE' END AS parallel,
       pg_get_function_result(p.oid) AS returns,
       p.prosecdef AS security_definer,
       l.lanname AS language
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'shardid'
  JOIN pg_language l ON l.oid = p.prolang
 ORDER BY p.proname, p.pronargs;

-- Everything the extension made.  (PostgreSQL 17 and later also list
-- the row types of its views and tables as members; they are left out.)
SELECT pg_describe_object(classid, objid, 0) AS object
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'shardid')
   AND deptype = 'e'
   AND classid <> 'pg_type'::regclass
 ORDER BY 1;

-- Not trusted: only a superuser may create it.
SELECT name, version, superuser, trusted, relocatable
  FROM pg_available_extension_versions WHERE name = 'shardid'
 ORDER BY string_to_array(version, '.')::int[];

-- Resetting the guard's counters is not granted to PUBLIC.
SELECT has_function_privilege('public', 'shardid_stats_reset()', 'EXECUTE') AS public_may_reset,
       has_function_privilege('public', 'shardid_next(integer, regclass)', 'EXECUTE') AS public_may_generate;

-- Setting the epoch and moving the fence are not granted to PUBLIC;
-- reading the epoch is.
SELECT has_function_privilege('public', 'shardid_epoch()', 'EXECUTE') AS public_may_read_epoch,
       has_function_privilege('public', 'shardid_set_epoch(timestamptz)', 'EXECUTE') AS public_may_set_epoch,
       has_function_privilege('public', 'shardid_fence_set(bigint)', 'EXECUTE') AS public_may_set_fence,
       has_function_privilege('public', 'shardid_fence_lower(timestamptz)', 'EXECUTE') AS public_may_lower_fence;

-- The extension's own sequences are in a schema of their own, which no
-- role but the extension's owner may use: no other can name them, nor so
-- lock them (docs/design.md, "The writers' locks").
SELECT has_schema_privilege('public', 'shardid_internal', 'USAGE') AS public_may_use_internal,
       has_schema_privilege('public', 'shardid_internal', 'CREATE') AS public_may_create_internal,
       (SELECT count(*) FROM pg_class
         WHERE relnamespace = 'shardid_internal'::regnamespace) AS relations_internal;

-- shardid_decode gives three named columns.
SELECT * FROM shardid_decode(0) WHERE false;
