CREATE FUNCTION shardid_floor(ts pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_floor'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_floor(ts pg_catalog.timestamptz, epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_floor'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_floor(pg_catalog.timestamptz) IS
'smallest ID any shard can issue in the millisecond of ts; epoch 2011-01-01 UTC';

COMMENT ON FUNCTION shardid_floor(pg_catalog.timestamptz, pg_catalog.timestamptz) IS
'smallest ID any shard can issue in the millisecond of ts';
