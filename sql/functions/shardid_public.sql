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
