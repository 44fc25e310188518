CREATE FUNCTION shardid_shard(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'shardid_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_shard(pg_catalog.int8) IS
'logical shard of an ID: (id >> 10) & 8191';
