CREATE FUNCTION shardid_public_keys()
RETURNS TABLE (key_version pg_catalog.int4, fingerprint pg_catalog.text, newest pg_catalog.bool)
AS 'MODULE_PATHNAME', 'shardid_public_keys'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public_keys() IS
'the configured public ID key versions, each with a fingerprint of its key (never the key)';
