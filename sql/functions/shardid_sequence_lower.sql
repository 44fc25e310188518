CREATE FUNCTION shardid_sequence_lower(seq pg_catalog.regclass, target pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_sequence_lower'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_sequence_lower(pg_catalog.regclass, pg_catalog.timestamptz) IS
'the sequence''s owner or a superuser: lower the durable fence the sequence carries to target, after a clock that ran fast (refused above it); never below an ID this server issued from it since it started while the guard tracks it; returns the time field written';
