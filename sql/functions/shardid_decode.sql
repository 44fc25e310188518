CREATE FUNCTION shardid_decode(id pg_catalog.int8,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_decode(id pg_catalog.int8, epoch pg_catalog.timestamptz,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_decode(pg_catalog.int8) IS
'creation time, shard and seq of an ID; epoch 2011-01-01 UTC';

COMMENT ON FUNCTION shardid_decode(pg_catalog.int8, pg_catalog.timestamptz) IS
'creation time, shard and seq of an ID';
