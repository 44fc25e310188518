CREATE FUNCTION shardid_private_bigint(public_id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_private_bigint'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_private_bigint(pg_catalog.int8, pg_catalog.int4) IS
'inverse of shardid_public_bigint under the given key version';
