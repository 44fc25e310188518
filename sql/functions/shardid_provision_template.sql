-- The template's tables, checked: tables and partitioned tables (not
-- their partitions) of the schema, each with a plain bigint column "id",
-- owned by a trusted role (the caller or a superuser), partitioned, if at
-- all, by RANGE (id), and with ID sequence names that clash with no other
-- name provisioning makes.  In name order, each with the name of its
-- sequence in the shard's schema and its kind.
CREATE FUNCTION shardid_provision_template(
	template_schema pg_catalog.text,
	trusted pg_catalog.oid[],
	OUT tables pg_catalog.text[],
	OUT seqs pg_catalog.text[],
	OUT kinds pg_catalog."char"[],
	OUT templates pg_catalog.oid[])
RETURNS pg_catalog.record
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	maxlen pg_catalog.int4;
	tmpl_oid pg_catalog.oid;
	int8_btree_ops pg_catalog.oid;
	tbl record;
	prefix pg_catalog.text;
	seq_name pg_catalog.text;
BEGIN
	maxlen := pg_catalog.current_setting('max_identifier_length')::pg_catalog.int4;
	SELECT n.oid INTO tmpl_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname = template_schema;
	tables := '{}';
	seqs := '{}';
	kinds := '{}';
	templates := '{}';
	SELECT c.oid INTO int8_btree_ops
	  FROM pg_catalog.pg_opclass AS c
	  JOIN pg_catalog.pg_am AS a ON a.oid = c.opcmethod
	 WHERE a.amname = 'btree' AND c.opcdefault
	   AND c.opcintype = 'pg_catalog.int8'::pg_catalog.regtype;
	-- (What a schema holds is found through pg_depend, which is indexed
	-- on the schema; pg_class is not.)
	FOR tbl IN
		SELECT c.oid, c.relname, c.relkind, c.relowner
		  FROM pg_catalog.pg_class AS c
		 WHERE c.oid = ANY (ARRAY(
				SELECT d.objid FROM pg_catalog.pg_depend AS d
				 WHERE d.refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
				   AND d.refobjid = tmpl_oid
				   AND d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass))
		   AND c.relkind = ANY ('{r,p}'::pg_catalog."char"[])
		   AND NOT c.relispartition
		 ORDER BY c.relname
	LOOP
		IF NOT tbl.relowner = ANY (trusted) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('template table "%s.%s" is owned by role "%s"',
											template_schema, tbl.relname,
											pg_catalog.pg_get_userbyid(tbl.relowner)),
				DETAIL = pg_catalog.format('Every shard copies the template''s defaults, constraints and indexes; a template must be owned by the role that provisions (%s) or by a superuser.',
										   current_user);
		END IF;
		IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
						WHERE a.attrelid = tbl.oid
						  AND a.attname = 'id'
						  AND NOT a.attisdropped
						  AND a.atttypid = 'pg_catalog.int8'::pg_catalog.regtype) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('template table "%s.%s" has no bigint column "id"',
											template_schema, tbl.relname),
				DETAIL = 'Every table of a template gets its IDs from shardid_next() in column "id".';
		END IF;
		IF EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
					WHERE a.attrelid = tbl.oid
					  AND a.attname = 'id'
					  AND (a.attidentity <> '' OR a.attgenerated <> '')) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('column "id" of template table "%s.%s" is an identity or generated column',
											template_schema, tbl.relname),
				HINT = 'Declare "id" as a plain bigint column; provisioning gives it its default.';
		END IF;
		IF tbl.relkind = 'p' AND NOT EXISTS (
			SELECT FROM pg_catalog.pg_partitioned_table AS pt
			  JOIN pg_catalog.pg_attribute AS a
				ON a.attrelid = pt.partrelid
			   AND a.attnum = pt.partattrs[0]
			 WHERE pt.partrelid = tbl.oid
			   AND pt.partstrat = 'r'
			   AND pt.partnatts = 1
			   AND a.attname = 'id'
			   AND pt.partclass[0] = int8_btree_ops
			   AND pt.partexprs IS NULL) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('template table "%s.%s" is partitioned by %s, not by RANGE (id)',
											template_schema, tbl.relname,
											pg_catalog.pg_get_partkeydef(tbl.oid)),
				DETAIL = 'A partitioned template table must be partitioned by RANGE (id), so that its partitions are ranges of IDs, which is to say of time.';
		END IF;

		-- its sequence's name, in bytes
		IF (pg_catalog.octet_length(tbl.relname) + 7) <= maxlen THEN
			seq_name := tbl.relname || '_id_seq';
		ELSE
			prefix := tbl.relname;
			WHILE pg_catalog.octet_length(prefix) > (maxlen - 16) LOOP
				prefix := pg_catalog.left(prefix, -1);
			END LOOP;
			seq_name := prefix || '_' || pg_catalog.left(pg_catalog.md5(tbl.relname), 8) || '_id_seq';
		END IF;
		tables := tables || tbl.relname::pg_catalog.text;
		seqs := seqs || seq_name;
		kinds := kinds || tbl.relkind;
		templates := templates || tbl.oid;
	END LOOP;
	IF pg_catalog.cardinality(tables) = 0 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('template schema "%s" has no tables', template_schema);
	END IF;
	-- No two of the names provisioning makes may clash.
	FOR i IN 1 .. pg_catalog.cardinality(tables) LOOP
		FOR j IN 1 .. pg_catalog.cardinality(tables) LOOP
			IF seqs[i] = tables[j]
			   OR (i < j AND seqs[i] = seqs[j]) THEN
				RAISE EXCEPTION USING
					ERRCODE = 'invalid_table_definition',
					MESSAGE = pg_catalog.format('the ID sequence of template table "%s.%s" would be named "%s", as %s "%s" is',
												template_schema, tables[i], seqs[i],
												CASE WHEN seqs[i] = tables[j]
													 THEN 'template table' ELSE 'the ID sequence of template table' END,
												tables[j]),
					HINT = 'Rename one of the template tables.';
			END IF;
		END LOOP;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_provision_template(pg_catalog.text, pg_catalog.oid[]) IS
'internal: the tables of a template schema that provisioning copies, checked, and the names of their ID sequences';
