-- The rows of a table itself (ONLY), counted as the table's owner in a
-- security-restricted operation (src/owner.c): the caller needs SELECT on
-- it, and no row security that applies to the caller only.
CREATE FUNCTION shardid_rows_count(rel pg_catalog.regclass)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_rows_count'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_rows_count(pg_catalog.regclass) IS
'internal: the rows of a table itself, counted as its owner in a security-restricted operation';
