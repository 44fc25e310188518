-- Run one statement that partition maintenance made (its ATTACH
-- PARTITION) as the owner of a table, in a security-restricted operation
-- (src/owner.c), so that what the statement evaluates of the table's
-- (its CHECK constraints, its indexes' expressions) runs with the owner's
-- rights, never the caller's.  Only for a caller with the owner's
-- privileges: it can only lessen the rights the statement runs with.
CREATE FUNCTION shardid_as_owner(rel pg_catalog.regclass, statement pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_as_owner'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_as_owner(pg_catalog.regclass, pg_catalog.text) IS
'internal: run one statement of partition maintenance as the owner of a table, in a security-restricted operation';
