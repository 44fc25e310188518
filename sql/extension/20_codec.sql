--
-- Encoding and decoding
--

CREATE FUNCTION shardid_encode(created_at pg_catalog.timestamptz,
                               shard pg_catalog.int4, seq pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_encode(created_at pg_catalog.timestamptz,
                               shard pg_catalog.int4, seq pg_catalog.int4,
                               epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_encode(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4) IS
'ID from its parts (seq 0 to 1023); epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_encode(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4, pg_catalog.timestamptz) IS
'ID from its parts (seq 0 to 1023)';

CREATE FUNCTION shardid_decode(id pg_catalog.int8,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_decode(id pg_catalog.int8, epoch pg_catalog.timestamptz,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_decode(pg_catalog.int8) IS
'creation time, shard and seq of an ID; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_decode(pg_catalog.int8, pg_catalog.timestamptz) IS
'creation time, shard and seq of an ID';

CREATE FUNCTION shardid_shard(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'shardid_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_shard(pg_catalog.int8) IS
'logical shard of an ID: (id >> 10) & 8191';

CREATE FUNCTION shardid_seq(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'shardid_seq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_seq(pg_catalog.int8) IS
'sequence field of an ID: id & 1023';

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
