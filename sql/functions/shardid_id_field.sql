-- The ID's layout for the extension's own SQL, named once here as
-- src/layout.h names it for C: the time field (milliseconds since the
-- epoch) is the ID's bits from 23 up, above 13 bits of shard and 10 of
-- sequence.  An ID's time field, and the smallest ID of a time field.

CREATE FUNCTION shardid_id_field(id pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT id >> 23
$fn$;

CREATE FUNCTION shardid_field_floor(field pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT field << 23
$fn$;

COMMENT ON FUNCTION shardid_id_field(pg_catalog.int8) IS
'internal: the time field of an ID, milliseconds since the epoch: id >> 23';

COMMENT ON FUNCTION shardid_field_floor(pg_catalog.int8) IS
'internal: the smallest ID of a time field, any shard: field << 23';
