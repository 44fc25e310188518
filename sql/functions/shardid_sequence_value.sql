-- The value a sequence stores, also one set with is_called false (which
-- pg_sequence_last_value reads as NULL: then nextval takes it, which
-- costs the sequence one value and nothing else).  By OID, never by
-- name: a role may rename her sequence and put a view of hers in its
-- place between the moment a caller lists it and reads it, and a
-- superuser's SELECT from that name would run her code.  For the update
-- from 1.2 and shardid_fence_lower, both run by a superuser.

CREATE FUNCTION shardid_sequence_value(seq pg_catalog.regclass)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
	RETURN COALESCE(pg_catalog.pg_sequence_last_value(seq), pg_catalog.nextval(seq));
END
$fn$;

REVOKE ALL ON FUNCTION shardid_sequence_value(pg_catalog.regclass) FROM PUBLIC;

COMMENT ON FUNCTION shardid_sequence_value(pg_catalog.regclass) IS
'internal: the value a sequence stores, read by OID';
