CREATE FUNCTION shardid_created_at(id pg_catalog.int8)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_created_at'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_created_at(id pg_catalog.int8, epoch pg_catalog.timestamptz)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_created_at'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_created_at(pg_catalog.int8) IS
'millisecond an ID was made in; epoch 2011-01-01 UTC';

COMMENT ON FUNCTION shardid_created_at(pg_catalog.int8, pg_catalog.timestamptz) IS
'millisecond an ID was made in';
