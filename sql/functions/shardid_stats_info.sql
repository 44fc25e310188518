CREATE FUNCTION shardid_stats_info(OUT entries pg_catalog.int4,
                                   OUT max_sequences pg_catalog.int4,
                                   OUT evictions pg_catalog.int8,
                                   OUT floor_ms pg_catalog.timestamptz,
                                   OUT stats_reset pg_catalog.timestamptz,
                                   OUT evicted_exhausted_waits pg_catalog.int8,
                                   OUT evicted_clock_waits pg_catalog.int8,
                                   OUT evicted_clock_refusals pg_catalog.int8,
                                   OUT evicted_fence_waits pg_catalog.int8)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_stats_info'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_info() IS
'size of the guard''s table, its evictions, what the evicted entries had counted, and the last counter reset';
