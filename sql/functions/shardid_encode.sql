--
-- Encoding and decoding
--

CREATE FUNCTION shardid_encode(created_at pg_catalog.timestamptz,
                               shard pg_catalog.int4, seq pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_encode(created_at pg_catalog.timestamptz,
                               shard pg_catalog.int4, seq pg_catalog.int4,
                               epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_encode(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4) IS
'ID from its parts (seq 0 to 1023); epoch 2011-01-01 UTC';

COMMENT ON FUNCTION shardid_encode(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4, pg_catalog.timestamptz) IS
'ID from its parts (seq 0 to 1023)';
