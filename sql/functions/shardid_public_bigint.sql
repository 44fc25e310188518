CREATE FUNCTION shardid_public_bigint(id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_public_bigint'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public_bigint(pg_catalog.int8, pg_catalog.int4) IS
'the keyed permutation of 0 to 2^63-1 behind public IDs, under the given key version';
