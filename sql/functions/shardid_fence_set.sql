CREATE FUNCTION shardid_fence_set(field pg_catalog.int8)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_fence_set'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_fence_set(pg_catalog.int8) IS
'internal, called by shardid_fence_lower: write the durable fence of this database down to a time field (refused above it), or to the last field this server issued there if later, reset shared memory to it, and return the field written';

REVOKE ALL ON FUNCTION shardid_fence_set(pg_catalog.int8) FROM PUBLIC;
