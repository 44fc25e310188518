--
-- The logical shard a tenant schema stands for, from its name
--
-- The inverse of shardid_shard_schema(): shard_0042 is shard 42.  For a
-- DEFAULT that takes its shard from the schema's name rather than from a
-- number repeated beside it, as docs/citus.md provisions tenant schemas:
--   id bigint DEFAULT shardid_next(shardid_schema_shard('shard_0042'),
--                                  'shard_0042.posts_id_seq')
-- Two schemas cannot have one name, so two tenants made so cannot share a
-- shard.  IMMUTABLE: with a constant it is folded when the statement is
-- planned, and costs nothing per ID.  Any other name (not shard_ and four
-- digits, or past 8191) is refused (22023), never read as some shard.
--

CREATE FUNCTION shardid_schema_shard(schema_name pg_catalog.text)
RETURNS pg_catalog.int4
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
	IF schema_name !~ '^shard_[0-9]{4}$'
		OR pg_catalog.substr(schema_name, 7)::pg_catalog.int4 > 8191 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('schema name %L does not name a logical shard', schema_name),
			DETAIL = 'A logical shard''s schema is named shard_ and its number zero-padded to four digits, shard_0000 to shard_8191, as shardid_shard_schema() makes it.',
			HINT = 'Name the tenant schema shardid_shard_schema(k), or give shardid_next the shard number itself.';
	END IF;
	RETURN pg_catalog.substr(schema_name, 7)::pg_catalog.int4;
END
$fn$;

COMMENT ON FUNCTION shardid_schema_shard(pg_catalog.text) IS
'logical shard of a schema named as shardid_shard_schema makes it: shard_0042 is 42';
