CREATE FUNCTION shardid_private(public_id pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_private'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_private(pg_catalog.text) IS
'ID of a public ID, under the key version it names';
