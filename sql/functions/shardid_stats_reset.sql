CREATE FUNCTION shardid_stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_stats_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_reset() IS
'zero the counters of shardid_stats (the milliseconds issued are kept)';

REVOKE ALL ON FUNCTION shardid_stats_reset() FROM PUBLIC;
