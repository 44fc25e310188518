-- One table of a shard and its ID sequence: made from the template table
-- when missing ("created"), or checked when there ("exists"): column for
-- column as the template has them, its IDs from its own sequence for this
-- shard.  A partitioned template table gives a partitioned parent with
-- the same key and no partitions.
CREATE FUNCTION shardid_provision_table(
	shard pg_catalog.int4,
	target pg_catalog.text,
	table_name pg_catalog.text,
	seq_name pg_catalog.text,
	kind pg_catalog."char",
	template_schema pg_catalog.text,
	template_table pg_catalog.oid)
RETURNS pg_catalog.text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	ext_schema pg_catalog.text;
	target_oid pg_catalog.oid;
	shard_rel pg_catalog.oid;
	want_cols pg_catalog.text;
	have_cols pg_catalog.text;
	want_default pg_catalog.text;
	have_default pg_catalog.text;
BEGIN
	SELECT n.nspname INTO ext_schema
	  FROM pg_catalog.pg_extension AS e
	  JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace
	 WHERE e.extname = 'shardid';
	SELECT n.oid INTO target_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname = target;
	want_default := pg_catalog.format('%I.shardid_next(%s, %L::regclass)',
									  ext_schema, shard, pg_catalog.format('%I.%I', target, seq_name));
	SELECT c.oid INTO shard_rel
	  FROM pg_catalog.pg_class AS c
	 WHERE c.relnamespace = target_oid
	   AND c.relname = table_name;

	IF shard_rel IS NOT NULL THEN
		-- It must match the template column for column, and number its
		-- IDs from its own sequence for this shard.
		SELECT pg_catalog.string_agg(pg_catalog.format('%I %s%s', a.attname,
							pg_catalog.format_type(a.atttypid, a.atttypmod),
							CASE WHEN a.attnotnull THEN ' not null' ELSE '' END),
							', ' ORDER BY a.attnum)
		  INTO want_cols
		  FROM pg_catalog.pg_attribute AS a
		 WHERE a.attrelid = template_table
		   AND a.attnum > 0 AND NOT a.attisdropped;
		SELECT pg_catalog.string_agg(pg_catalog.format('%I %s%s', a.attname,
							pg_catalog.format_type(a.atttypid, a.atttypmod),
							CASE WHEN a.attnotnull THEN ' not null' ELSE '' END),
							', ' ORDER BY a.attnum)
		  INTO have_cols
		  FROM pg_catalog.pg_attribute AS a
		 WHERE a.attrelid = shard_rel
		   AND a.attnum > 0 AND NOT a.attisdropped;
		IF have_cols IS DISTINCT FROM want_cols THEN
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Table "%s.%s" has columns (%s), template "%s" has (%s).',
										   target, table_name, have_cols, template_schema, want_cols),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END IF;

		SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) INTO have_default
		  FROM pg_catalog.pg_attrdef AS d
		  JOIN pg_catalog.pg_attribute AS a
			ON a.attrelid = d.adrelid
		   AND a.attnum = d.adnum
		 WHERE d.adrelid = shard_rel
		   AND a.attname = 'id';
		IF have_default IS DISTINCT FROM want_default THEN
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Column "id" of table "%s.%s" defaults to %s, not %s.',
										   target, table_name,
										   COALESCE(have_default, 'null'), want_default),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END IF;
		IF NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
						WHERE c.relnamespace = target_oid
						  AND c.relname = seq_name
						  AND c.relkind = 'S') THEN
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Table "%s.%s" exists without its sequence "%s".',
										   target, table_name, seq_name),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END IF;

		RETURN 'exists';
	END IF;

	IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
				WHERE c.relnamespace = target_oid
				  AND c.relname = seq_name) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'duplicate_schema',
			MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
			DETAIL = pg_catalog.format('Sequence "%s.%s" exists without its table "%s".',
									   target, seq_name, table_name),
			HINT = 'Drop or rename the schema, or provision the shard into another schema.';
	END IF;

	EXECUTE pg_catalog.format('CREATE SEQUENCE %I.%I AS pg_catalog.int8', target, seq_name);
	IF kind = 'p' THEN
		-- LIKE copies no partitioning: the parent gets the template's
		-- key (checked above to be RANGE (id)) and no partitions.
		EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL) PARTITION BY RANGE (id)',
								  target, table_name, template_schema, table_name);
	ELSE
		EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
								  target, table_name, template_schema, table_name);
	END IF;
	EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN id SET DEFAULT %s',
							  target, table_name, want_default);
	EXECUTE pg_catalog.format('ALTER SEQUENCE %I.%I OWNED BY %I.%I.id',
							  target, seq_name, target, table_name);

	RETURN 'created';
END
$fn$;

COMMENT ON FUNCTION shardid_provision_table(pg_catalog.int4, pg_catalog.text, pg_catalog.text, pg_catalog.text,
											pg_catalog."char", pg_catalog.text, pg_catalog.oid) IS
'internal: make a table of a shard and its ID sequence from its template table, or check the one that is there';
