CREATE FUNCTION shardid_seq(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'shardid_seq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_seq(pg_catalog.int8) IS
'sequence field of an ID: id & 1023';
