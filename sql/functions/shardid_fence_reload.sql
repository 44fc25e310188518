CREATE FUNCTION shardid_fence_reload()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_fence_reload'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_fence_reload() IS
'make the next shardid_next in this database read its durable fence again';

REVOKE ALL ON FUNCTION shardid_fence_reload() FROM PUBLIC;
