CREATE FUNCTION shardid_horizon()
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_horizon'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_horizon(epoch pg_catalog.timestamptz)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_horizon'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_horizon() IS
'last millisecond that encodes to a positive bigint with the epoch 2011-01-01 UTC';

COMMENT ON FUNCTION shardid_horizon(pg_catalog.timestamptz) IS
'last millisecond that encodes to a positive bigint with this epoch';
