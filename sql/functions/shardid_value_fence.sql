-- The fence a sequence's value carries, named once here as src/fence.h
-- names it for C: the time field at or before which the sequence issued
-- every ID, (value >> 10) - 1; the guard writes the fence f as the value
-- (f + 1) << 10, the first of the block of 1,024 values after f, so that
-- nextval() mod 1024 stays the ID's ten sequence bits.  A value below
-- 1,024 carries no fence (-1).

CREATE FUNCTION shardid_value_fence(value pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT (value >> 10) - 1
$fn$;

CREATE FUNCTION shardid_fence_value(fence pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT (fence + 1) << 10
$fn$;

COMMENT ON FUNCTION shardid_value_fence(pg_catalog.int8) IS
'internal: the fence a sequence''s value carries, a time field: (value >> 10) - 1';

COMMENT ON FUNCTION shardid_fence_value(pg_catalog.int8) IS
'internal: the sequence value that carries a fence, the first after it: (fence + 1) << 10';
