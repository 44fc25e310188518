-- Whether a table itself (ONLY) has a row with lo <= col < hi (a null
-- bound is none), read as the table's owner in a security-restricted
-- operation (src/owner.c): the caller needs SELECT on it, and no row
-- security that applies to the caller only.
CREATE FUNCTION shardid_rows_exist(
	rel pg_catalog.regclass,
	col pg_catalog.name,
	lo pg_catalog.int8,
	hi pg_catalog.int8)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'shardid_rows_exist'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_rows_exist(pg_catalog.regclass, pg_catalog.name, pg_catalog.int8, pg_catalog.int8) IS
'internal: whether a table itself has a row with lo <= col < hi, read as its owner in a security-restricted operation';
