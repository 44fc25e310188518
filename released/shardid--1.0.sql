/* shardid--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION shardid" to load this file. \quit

--
-- Generating
--

CREATE FUNCTION shardid_next(shard pg_catalog.int4, seq pg_catalog.regclass)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_next'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE FUNCTION shardid_next(shard pg_catalog.int4, seq pg_catalog.regclass,
                             epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_next'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_next(pg_catalog.int4, pg_catalog.regclass) IS
'new ID for a logical shard from the clock and nextval(seq) mod 1024, never repeated; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_next(pg_catalog.int4, pg_catalog.regclass, pg_catalog.timestamptz) IS
'new ID for a logical shard from the clock and nextval(seq) mod 1024, never repeated';

--
-- Encoding and decoding
--

CREATE FUNCTION shardid_encode(created_at pg_catalog.timestamptz,
                               shard pg_catalog.int4, seq pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_encode(created_at pg_catalog.timestamptz,
                               shard pg_catalog.int4, seq pg_catalog.int4,
                               epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_encode(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4) IS
'ID from its parts (seq 0 to 1023); epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_encode(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4, pg_catalog.timestamptz) IS
'ID from its parts (seq 0 to 1023)';

CREATE FUNCTION shardid_decode(id pg_catalog.int8,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_decode(id pg_catalog.int8, epoch pg_catalog.timestamptz,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_decode(pg_catalog.int8) IS
'creation time, shard and seq of an ID; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_decode(pg_catalog.int8, pg_catalog.timestamptz) IS
'creation time, shard and seq of an ID';

CREATE FUNCTION shardid_shard(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'shardid_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_shard(pg_catalog.int8) IS
'logical shard of an ID: (id >> 10) & 8191';

CREATE FUNCTION shardid_seq(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'shardid_seq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_seq(pg_catalog.int8) IS
'sequence field of an ID: id & 1023';

CREATE FUNCTION shardid_created_at(id pg_catalog.int8)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_created_at'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_created_at(id pg_catalog.int8, epoch pg_catalog.timestamptz)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_created_at'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_created_at(pg_catalog.int8) IS
'millisecond an ID was made in; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_created_at(pg_catalog.int8, pg_catalog.timestamptz) IS
'millisecond an ID was made in';

CREATE FUNCTION shardid_floor(ts pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_floor'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_floor(ts pg_catalog.timestamptz, epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_floor'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_floor(pg_catalog.timestamptz) IS
'smallest ID any shard can issue in the millisecond of ts; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_floor(pg_catalog.timestamptz, pg_catalog.timestamptz) IS
'smallest ID any shard can issue in the millisecond of ts';

CREATE FUNCTION shardid_horizon()
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_horizon'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_horizon(epoch pg_catalog.timestamptz)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_horizon'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_horizon() IS
'last millisecond that encodes to a positive bigint with the epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_horizon(pg_catalog.timestamptz) IS
'last millisecond that encodes to a positive bigint with this epoch';

CREATE FUNCTION shardid_to_shortcode(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_to_shortcode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_to_shortcode(pg_catalog.int8) IS
'ID in Instagram''s URL form: base 64, alphabet A-Z a-z 0-9 - _';

CREATE FUNCTION shardid_from_shortcode(code pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_from_shortcode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_from_shortcode(pg_catalog.text) IS
'ID from Instagram''s URL form';

--
-- Statistics of the guard
--

CREATE FUNCTION shardid_stats(OUT datid pg_catalog.oid,
                              OUT seqid pg_catalog.oid,
                              OUT ids_issued pg_catalog.int8,
                              OUT exhausted_waits pg_catalog.int8,
                              OUT clock_waits pg_catalog.int8,
                              OUT clock_refusals pg_catalog.int8,
                              OUT last_ms pg_catalog.timestamptz)
RETURNS SETOF pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats() IS
'per-sequence counters of shardid_next in every database';

CREATE VIEW shardid_stats AS
  SELECT s.datid,
         d.datname,
         s.seqid,
         CASE WHEN s.datid OPERATOR(pg_catalog.=) d.oid
                   AND d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
              THEN s.seqid::pg_catalog.regclass END AS sequence,
         s.ids_issued,
         s.exhausted_waits,
         s.clock_waits,
         s.clock_refusals,
         s.last_ms
    FROM @extschema@.shardid_stats() AS s
    LEFT JOIN pg_catalog.pg_database AS d
           ON d.oid OPERATOR(pg_catalog.=) s.datid;

COMMENT ON VIEW shardid_stats IS
'per-sequence counters of shardid_next; "sequence" is filled in for the current database';

GRANT SELECT ON shardid_stats TO PUBLIC;

CREATE FUNCTION shardid_stats_info(OUT entries pg_catalog.int4,
                                   OUT max_sequences pg_catalog.int4,
                                   OUT evictions pg_catalog.int8,
                                   OUT floor_ms pg_catalog.timestamptz,
                                   OUT stats_reset pg_catalog.timestamptz)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_stats_info'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_info() IS
'size of the guard''s table, its evictions and the last counter reset';

CREATE FUNCTION shardid_stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_stats_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_reset() IS
'zero the counters of shardid_stats (the milliseconds issued are kept)';

REVOKE ALL ON FUNCTION shardid_stats_reset() FROM PUBLIC;

--
-- Provisioning logical shards: one schema per shard
--
-- (Appended section: schema-per-shard provisioning for fleets of servers;
-- see tools/shardid-fleet and the README's "Fleets" section.)
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

CREATE FUNCTION shardid_provision_shard(shard pg_catalog.int4,
                                        template_schema pg_catalog.text,
                                        schema_name pg_catalog.text DEFAULT NULL,
                                        OUT kind pg_catalog.text,
                                        OUT name pg_catalog.text,
                                        OUT action pg_catalog.text)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	ext_schema pg_catalog.text;
	target pg_catalog.text;
	tmpl_oid pg_catalog.oid;
	target_oid pg_catalog.oid;
	tbl record;
	other record;
	seq_name pg_catalog.text;
	want_cols pg_catalog.text;
	have_cols pg_catalog.text;
	want_default pg_catalog.text;
	have_default pg_catalog.text;
	ntables pg_catalog.int4 := 0;
BEGIN
	IF shard IS NULL OR template_schema IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'shard and template schema must not be null';
	END IF;
	-- the default name, which also checks that the shard is in range
	target := @extschema@.shardid_shard_schema(shard);
	target := COALESCE(schema_name, target);

	SELECT n.nspname INTO ext_schema
	  FROM pg_catalog.pg_extension AS e
	  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
	 WHERE e.extname OPERATOR(pg_catalog.=) 'shardid';

	SELECT n.oid INTO tmpl_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname OPERATOR(pg_catalog.=) template_schema;
	IF tmpl_oid IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_schema_name',
			MESSAGE = pg_catalog.format('template schema "%s" does not exist', template_schema),
			HINT = 'Create the template''s tables in a schema of their own and pass its name.';
	END IF;
	IF target OPERATOR(pg_catalog.=) template_schema THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('schema "%s" is the template schema', target),
			DETAIL = 'A logical shard needs a schema of its own.';
	END IF;

	-- one provisioning of a shard at a time; "SHID" in ASCII is the class
	PERFORM pg_catalog.pg_advisory_xact_lock(1397246276, shard);

	-- The template: ordinary tables, each with a plain bigint column "id".
	FOR tbl IN
		SELECT c.oid, c.relname
		  FROM pg_catalog.pg_class AS c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) tmpl_oid
		   AND c.relkind OPERATOR(pg_catalog.=) 'r'
		 ORDER BY c.relname
	LOOP
		ntables := ntables OPERATOR(pg_catalog.+) 1;
		IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
						WHERE a.attrelid OPERATOR(pg_catalog.=) tbl.oid
						  AND a.attname OPERATOR(pg_catalog.=) 'id'
						  AND NOT a.attisdropped
						  AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('template table "%s.%s" has no bigint column "id"',
											template_schema, tbl.relname),
				DETAIL = 'Every table of a template gets its IDs from shardid_next() in column "id".';
		END IF;
		IF EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
					WHERE a.attrelid OPERATOR(pg_catalog.=) tbl.oid
					  AND a.attname OPERATOR(pg_catalog.=) 'id'
					  AND (a.attidentity OPERATOR(pg_catalog.<>) '' OR a.attgenerated OPERATOR(pg_catalog.<>) '')) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('column "id" of template table "%s.%s" is an identity or generated column',
											template_schema, tbl.relname),
				HINT = 'Declare "id" as a plain bigint column; provisioning gives it its default.';
		END IF;
	END LOOP;
	IF ntables OPERATOR(pg_catalog.=) 0 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('template schema "%s" has no tables', template_schema);
	END IF;

	-- The shard's schema, if it exists, may hold only what provisioning
	-- makes: template tables (with their indexes and row types) and their
	-- sequences.
	SELECT n.oid INTO target_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname OPERATOR(pg_catalog.=) target;
	IF target_oid IS NULL THEN
		EXECUTE pg_catalog.format('CREATE SCHEMA %I', target);
		kind := 'schema'; name := pg_catalog.quote_ident(target); action := 'created';
		RETURN NEXT;
	ELSE
		kind := 'schema'; name := pg_catalog.quote_ident(target); action := 'exists';
		RETURN NEXT;

		FOR other IN
			SELECT c.relname, c.relkind
			  FROM pg_catalog.pg_class AS c
			 WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) 'r'
						AND c.relname IN (SELECT t.relname FROM pg_catalog.pg_class AS t
										   WHERE t.relnamespace OPERATOR(pg_catalog.=) tmpl_oid
											 AND t.relkind OPERATOR(pg_catalog.=) 'r'))
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) 'S'
						AND c.relname IN (SELECT pg_catalog.left(t.relname, 56) OPERATOR(pg_catalog.||) '_id_seq'
											FROM pg_catalog.pg_class AS t
										   WHERE t.relnamespace OPERATOR(pg_catalog.=) tmpl_oid
											 AND t.relkind OPERATOR(pg_catalog.=) 'r'))
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) 'i'
						AND EXISTS (SELECT FROM pg_catalog.pg_index AS i
									  JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) i.indrelid
									 WHERE i.indexrelid OPERATOR(pg_catalog.=) c.oid
									   AND t.relnamespace OPERATOR(pg_catalog.=) target_oid
									   AND t.relkind OPERATOR(pg_catalog.=) 'r'))
			 ORDER BY c.relname
			 LIMIT 1
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Relation "%s.%s" is not a table of template "%s" or its ID sequence.',
										   target, other.relname, template_schema),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END LOOP;

		FOR other IN
			SELECT p.oid::pg_catalog.regprocedure::pg_catalog.text AS what
			  FROM pg_catalog.pg_proc AS p
			 WHERE p.pronamespace OPERATOR(pg_catalog.=) target_oid
			UNION ALL
			SELECT t.typname::pg_catalog.text
			  FROM pg_catalog.pg_type AS t
			 WHERE t.typnamespace OPERATOR(pg_catalog.=) target_oid
			   AND t.typrelid OPERATOR(pg_catalog.=) 0
			   AND NOT EXISTS (SELECT FROM pg_catalog.pg_type AS e
								WHERE e.oid OPERATOR(pg_catalog.=) t.typelem
								  AND e.typrelid OPERATOR(pg_catalog.<>) 0)
			LIMIT 1
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Object %s is not a table of template "%s" or its ID sequence.',
										   other.what, template_schema),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END LOOP;
	END IF;

	FOR tbl IN
		SELECT c.oid, c.relname
		  FROM pg_catalog.pg_class AS c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) tmpl_oid
		   AND c.relkind OPERATOR(pg_catalog.=) 'r'
		 ORDER BY c.relname
	LOOP
		seq_name := pg_catalog.left(tbl.relname, 56) OPERATOR(pg_catalog.||) '_id_seq';
		want_default := pg_catalog.format('%I.shardid_next(%s, %L::regclass)',
										  ext_schema, shard,
										  pg_catalog.format('%I.%I', target, seq_name));

		IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
					WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
					  AND c.relname OPERATOR(pg_catalog.=) tbl.relname) THEN
			-- It must match the template column for column, and number its
			-- IDs from its own sequence for this shard.
			SELECT pg_catalog.string_agg(pg_catalog.format('%I %s%s', a.attname,
								pg_catalog.format_type(a.atttypid, a.atttypmod),
								CASE WHEN a.attnotnull THEN ' not null' ELSE '' END),
								', ' ORDER BY a.attnum)
			  INTO want_cols
			  FROM pg_catalog.pg_attribute AS a
			 WHERE a.attrelid OPERATOR(pg_catalog.=) tbl.oid
			   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
			SELECT pg_catalog.string_agg(pg_catalog.format('%I %s%s', a.attname,
								pg_catalog.format_type(a.atttypid, a.atttypmod),
								CASE WHEN a.attnotnull THEN ' not null' ELSE '' END),
								', ' ORDER BY a.attnum)
			  INTO have_cols
			  FROM pg_catalog.pg_attribute AS a
			 WHERE a.attrelid OPERATOR(pg_catalog.=)
				   pg_catalog.format('%I.%I', target, tbl.relname)::pg_catalog.regclass
			   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
			IF have_cols IS DISTINCT FROM want_cols THEN
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Table "%s.%s" has columns (%s), template "%s" has (%s).',
											   target, tbl.relname, have_cols, template_schema, want_cols),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END IF;

			SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) INTO have_default
			  FROM pg_catalog.pg_attrdef AS d
			  JOIN pg_catalog.pg_attribute AS a
				ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid
			   AND a.attnum OPERATOR(pg_catalog.=) d.adnum
			 WHERE d.adrelid OPERATOR(pg_catalog.=)
				   pg_catalog.format('%I.%I', target, tbl.relname)::pg_catalog.regclass
			   AND a.attname OPERATOR(pg_catalog.=) 'id';
			IF have_default IS DISTINCT FROM want_default THEN
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Column "id" of table "%s.%s" defaults to %s, not %s.',
											   target, tbl.relname,
											   COALESCE(have_default, 'null'), want_default),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END IF;

			kind := 'table'; name := pg_catalog.format('%I.%I', target, tbl.relname); action := 'exists';
			RETURN NEXT;
			kind := 'sequence'; name := pg_catalog.format('%I.%I', target, seq_name); action := 'exists';
			RETURN NEXT;
			CONTINUE;
		END IF;

		IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
					WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
					  AND c.relname OPERATOR(pg_catalog.=) seq_name) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Sequence "%s.%s" exists without its table "%s".',
										   target, seq_name, tbl.relname),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END IF;

		EXECUTE pg_catalog.format('CREATE SEQUENCE %I.%I AS pg_catalog.int8', target, seq_name);
		EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
								  target, tbl.relname, template_schema, tbl.relname);
		EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN id SET DEFAULT %s',
								  target, tbl.relname, want_default);
		EXECUTE pg_catalog.format('ALTER SEQUENCE %I.%I OWNED BY %I.%I.id',
								  target, seq_name, target, tbl.relname);

		kind := 'table'; name := pg_catalog.format('%I.%I', target, tbl.relname); action := 'created';
		RETURN NEXT;
		kind := 'sequence'; name := pg_catalog.format('%I.%I', target, seq_name); action := 'created';
		RETURN NEXT;
	END LOOP;
	RETURN;
END
$fn$;

COMMENT ON FUNCTION shardid_provision_shard(pg_catalog.int4, pg_catalog.text, pg_catalog.text) IS
'create what is missing of a logical shard: its schema (default shard_NNNN), a copy of each template table and its ID sequence';

--
-- End of the provisioning section
--
