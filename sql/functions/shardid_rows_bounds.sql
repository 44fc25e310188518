-- The least and greatest col, as bigint, of a table and the tables that
-- inherit from it, read as the table's owner in a security-restricted
-- operation (src/owner.c): the caller needs SELECT on it, and no row
-- security that applies to the caller only.
CREATE FUNCTION shardid_rows_bounds(
	rel pg_catalog.regclass,
	col pg_catalog.name,
	OUT lo pg_catalog.int8,
	OUT hi pg_catalog.int8)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_rows_bounds'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_rows_bounds(pg_catalog.regclass, pg_catalog.name) IS
'internal: the least and greatest value of a column of a table, read as its owner in a security-restricted operation';
