CREATE FUNCTION shardid_set_epoch(epoch pg_catalog.timestamptz)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_set_epoch'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_set_epoch(pg_catalog.timestamptz) IS
'set the epoch of this database; superuser or the extension''s owner only';

REVOKE ALL ON FUNCTION shardid_set_epoch(pg_catalog.timestamptz) FROM PUBLIC;
