-- The least col at or above lo (null: any) of a table itself (ONLY), or
-- null, read as the table's owner in a security-restricted operation
-- (src/owner.c): the caller needs SELECT on it, and no row security that
-- applies to the caller only.
CREATE FUNCTION shardid_rows_min(
	rel pg_catalog.regclass,
	col pg_catalog.name,
	lo pg_catalog.int8)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_rows_min'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_rows_min(pg_catalog.regclass, pg_catalog.name, pg_catalog.int8) IS
'internal: the least value of a column at or above lo in a table itself, read as its owner in a security-restricted operation';
