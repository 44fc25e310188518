CREATE FUNCTION shardid_epoch()
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_epoch'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION shardid_epoch() IS
'epoch of this database: the one shardid_set_epoch set, else 2011-01-01 00:00:00 UTC';
