--
-- Provisioning logical shards: one schema per shard
--
-- Schema-per-shard provisioning for fleets of servers; see
-- tools/shardid-fleet and docs/fleet.md.
--
-- A logical shard n lives in its own schema, by default shard_NNNN with the
-- number zero-padded to four digits (shard_0000 .. shard_8191), so that
-- schema names sort in shard order.  shardid_provision_shard() copies every
-- table of a template schema into it and gives each table its own sequence,
-- with id DEFAULT shardid_next(n, '<schema>.<table>_id_seq').  Running it
-- again creates only what is missing.
--

CREATE FUNCTION shardid_shard_schema(shard pg_catalog.int4)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
	IF shard OPERATOR(pg_catalog.<) 0 OR shard OPERATOR(pg_catalog.>) 8191 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'numeric_value_out_of_range',
			MESSAGE = pg_catalog.format('shard ID %s is out of range', shard),
			DETAIL = 'Valid shard IDs are 0 to 8191.';
	END IF;
	RETURN 'shard_' OPERATOR(pg_catalog.||) pg_catalog.lpad(shard::pg_catalog.text, 4, '0');
END
$fn$;

COMMENT ON FUNCTION shardid_shard_schema(pg_catalog.int4) IS
'default schema of a logical shard: shard_ and the shard number zero-padded to four digits';
