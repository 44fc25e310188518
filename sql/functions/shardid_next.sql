--
-- Generating
--

CREATE FUNCTION shardid_next(shard pg_catalog.int4, seq pg_catalog.regclass)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_next'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE FUNCTION shardid_next(shard pg_catalog.int4, seq pg_catalog.regclass,
                             epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_next'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_next(pg_catalog.int4, pg_catalog.regclass) IS
'new ID for a logical shard from the clock and nextval(seq) mod 1024, never repeated; under the database''s epoch, shardid_epoch()';

COMMENT ON FUNCTION shardid_next(pg_catalog.int4, pg_catalog.regclass, pg_catalog.timestamptz) IS
'new ID for a logical shard from the clock and nextval(seq) mod 1024, never repeated; epoch must be the database''s, shardid_epoch()';
