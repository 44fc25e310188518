--
-- Opaque public IDs: the ID encrypted under a key of
-- shardid.public_id_keys (Speck64/128 with cycle walking), as 12
-- characters.  STABLE, not IMMUTABLE: the keys are a setting.
--

CREATE FUNCTION shardid_public(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public(pg_catalog.int8) IS
'opaque public ID of an ID under the newest key of shardid.public_id_keys: 12 characters that hide its time, shard and volume';

CREATE FUNCTION shardid_public(id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public(pg_catalog.int8, pg_catalog.int4) IS
'opaque public ID of an ID under the given configured key version';

CREATE FUNCTION shardid_private(public_id pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_private'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_private(pg_catalog.text) IS
'ID of a public ID, under the key version it names';

CREATE FUNCTION shardid_public_bigint(id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_public_bigint'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public_bigint(pg_catalog.int8, pg_catalog.int4) IS
'the keyed permutation of 0 to 2^63-1 behind public IDs, under the given key version';

CREATE FUNCTION shardid_private_bigint(public_id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_private_bigint'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_private_bigint(pg_catalog.int8, pg_catalog.int4) IS
'inverse of shardid_public_bigint under the given key version';

CREATE FUNCTION shardid_public_keys()
RETURNS TABLE (key_version pg_catalog.int4, fingerprint pg_catalog.text, newest pg_catalog.bool)
AS 'MODULE_PATHNAME', 'shardid_public_keys'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public_keys() IS
'the configured public ID key versions, each with a fingerprint of its key (never the key)';
