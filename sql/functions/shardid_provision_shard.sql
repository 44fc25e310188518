-- shardid_provision_shard() trusts only objects owned by the role that
-- provisions or by a superuser: a role that pre-created shard_NNNN with a
-- matching table and a trigger of its own would otherwise get that trigger
-- run by the next INSERT of whoever provisioned.  It refuses with 42501
-- anything owned by another role and any grant that lets another role
-- attach code later (CREATE on the schema, TRIGGER on a table), and with
-- 55000 any trigger, rule, policy or inheritance child that the template
-- lacks.  The same trust applies to the template, whose defaults,
-- constraints and indexes are copied into every shard.
--
-- A named owner: run it as that role (SET ROLE owner; shardid-fleet apply
-- --owner does so), and everything it creates belongs to that role.
--
-- Names are counted in bytes: a table's sequence is <table>_id_seq while
-- that fits in max_identifier_length (63) bytes; longer table names get
-- the longest whole-character prefix that fits, "_", the first 8 hex
-- digits of md5(<table>), and "_id_seq", so two tables that share a long
-- prefix get different sequences.  Any clash left (a table named like
-- another's sequence) is refused before anything is made.
--
-- A template table that is range-partitioned on id (PARTITION BY RANGE
-- (id)) is provisioned as a partitioned parent with the same key and no
-- partitions (LIKE does not copy partitioning); partitions that are later
-- added to a shard's parent, in its schema, are accepted on a rerun.
--

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
	me pg_catalog.oid;
	trusted pg_catalog.oid[];
	maxlen pg_catalog.int4;
	ext_schema pg_catalog.text;
	target pg_catalog.text;
	tmpl_oid pg_catalog.oid;
	target_oid pg_catalog.oid;
	tbl record;
	other record;
	tables pg_catalog.text[] := '{}';
	seqs pg_catalog.text[] := '{}';
	kinds pg_catalog."char"[] := '{}';
	tmpl_oids pg_catalog.oid[] := '{}';
	target_rels pg_catalog.oid[] := '{}';
	i pg_catalog.int4;
	j pg_catalog.int4;
	prefix pg_catalog.text;
	seq_name pg_catalog.text;
	shard_rel pg_catalog.oid;
	want_cols pg_catalog.text;
	have_cols pg_catalog.text;
	want_default pg_catalog.text;
	have_default pg_catalog.text;
	res_kind pg_catalog.text[] := '{}';
	res_name pg_catalog.text[] := '{}';
	res_action pg_catalog.text[] := '{}';
	res_ord pg_catalog.int4[] := '{}';
	tmpl_prefix pg_catalog.text;
	target_prefix pg_catalog.text;
	int8_btree_ops pg_catalog.oid;
BEGIN
	IF shard IS NULL OR template_schema IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'shard and template schema must not be null';
	END IF;
	-- the default name, which also checks that the shard is in range
	target := @extschema@.shardid_shard_schema(shard);
	target := COALESCE(schema_name, target);

	-- Names are limited in bytes, not characters; a longer name would be
	-- truncated by CREATE SCHEMA and then not found again.
	maxlen := pg_catalog.current_setting('max_identifier_length')::pg_catalog.int4;
	IF pg_catalog.octet_length(target) OPERATOR(pg_catalog.>) maxlen THEN
		RAISE EXCEPTION USING
			ERRCODE = 'name_too_long',
			MESSAGE = pg_catalog.format('schema name "%s" is too long', target),
			DETAIL = pg_catalog.format('It has %s bytes; names have at most %s.',
									   pg_catalog.octet_length(target), maxlen);
	END IF;

	-- Whose objects may be taken as they are: the caller's own and
	-- superusers' (a superuser's object can do nothing the caller could not
	-- be made to do anyway).
	SELECT r.oid INTO me FROM pg_catalog.pg_roles AS r
	 WHERE r.rolname OPERATOR(pg_catalog.=) current_user;
	trusted := ARRAY(SELECT r.oid FROM pg_catalog.pg_roles AS r
					  WHERE r.rolsuper OR r.oid OPERATOR(pg_catalog.=) me);

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
	FOR other IN
		SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner
		  FROM pg_catalog.pg_namespace AS n
		 WHERE n.oid OPERATOR(pg_catalog.=) tmpl_oid
		   AND NOT n.nspowner OPERATOR(pg_catalog.=) ANY (trusted)
	LOOP
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('template schema "%s" is owned by role "%s"',
										template_schema, other.owner),
			DETAIL = pg_catalog.format('Every shard copies the template''s tables; a template must be owned by the role that provisions (%s) or by a superuser.',
									   current_user);
	END LOOP;

	-- one provisioning of a shard at a time; "SHID" in ASCII is the class
	PERFORM pg_catalog.pg_advisory_xact_lock(1397246276, shard);

	-- The template: tables and partitioned tables (not their partitions),
	-- each with a plain bigint column "id", owned by a trusted role, and
	-- partitioned, if at all, by RANGE (id).
	SELECT c.oid INTO int8_btree_ops
	  FROM pg_catalog.pg_opclass AS c
	  JOIN pg_catalog.pg_am AS a ON a.oid OPERATOR(pg_catalog.=) c.opcmethod
	 WHERE a.amname OPERATOR(pg_catalog.=) 'btree' AND c.opcdefault
	   AND c.opcintype OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype;
	-- (What a schema holds is found through pg_depend, which is indexed
	-- on the schema; pg_class is not.)
	FOR tbl IN
		SELECT c.oid, c.relname, c.relkind, c.relowner
		  FROM pg_catalog.pg_class AS c
		 WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
				SELECT d.objid FROM pg_catalog.pg_depend AS d
				 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
				   AND d.refobjid OPERATOR(pg_catalog.=) tmpl_oid
				   AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass))
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
		   AND NOT c.relispartition
		 ORDER BY c.relname
	LOOP
		IF NOT tbl.relowner OPERATOR(pg_catalog.=) ANY (trusted) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('template table "%s.%s" is owned by role "%s"',
											template_schema, tbl.relname,
											pg_catalog.pg_get_userbyid(tbl.relowner)),
				DETAIL = pg_catalog.format('Every shard copies the template''s defaults, constraints and indexes; a template must be owned by the role that provisions (%s) or by a superuser.',
										   current_user);
		END IF;
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
		IF tbl.relkind OPERATOR(pg_catalog.=) 'p' AND NOT EXISTS (
			SELECT FROM pg_catalog.pg_partitioned_table AS pt
			  JOIN pg_catalog.pg_attribute AS a
				ON a.attrelid OPERATOR(pg_catalog.=) pt.partrelid
			   AND a.attnum OPERATOR(pg_catalog.=) pt.partattrs[0]
			 WHERE pt.partrelid OPERATOR(pg_catalog.=) tbl.oid
			   AND pt.partstrat OPERATOR(pg_catalog.=) 'r'
			   AND pt.partnatts OPERATOR(pg_catalog.=) 1
			   AND a.attname OPERATOR(pg_catalog.=) 'id'
			   AND pt.partclass[0] OPERATOR(pg_catalog.=) int8_btree_ops
			   AND pt.partexprs IS NULL) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('template table "%s.%s" is partitioned by %s, not by RANGE (id)',
											template_schema, tbl.relname,
											pg_catalog.pg_get_partkeydef(tbl.oid)),
				DETAIL = 'A partitioned template table must be partitioned by RANGE (id), so that its partitions are ranges of IDs, which is to say of time.';
		END IF;

		-- its sequence's name, in bytes
		IF (pg_catalog.octet_length(tbl.relname) OPERATOR(pg_catalog.+) 7) OPERATOR(pg_catalog.<=) maxlen THEN
			seq_name := tbl.relname OPERATOR(pg_catalog.||) '_id_seq';
		ELSE
			prefix := tbl.relname;
			WHILE pg_catalog.octet_length(prefix) OPERATOR(pg_catalog.>) (maxlen OPERATOR(pg_catalog.-) 16) LOOP
				prefix := pg_catalog.left(prefix, -1);
			END LOOP;
			seq_name := prefix OPERATOR(pg_catalog.||) '_'
						OPERATOR(pg_catalog.||) pg_catalog.left(pg_catalog.md5(tbl.relname), 8)
						OPERATOR(pg_catalog.||) '_id_seq';
		END IF;
		tables := tables OPERATOR(pg_catalog.||) tbl.relname::pg_catalog.text;
		seqs := seqs OPERATOR(pg_catalog.||) seq_name;
		kinds := kinds OPERATOR(pg_catalog.||) tbl.relkind;
		tmpl_oids := tmpl_oids OPERATOR(pg_catalog.||) tbl.oid;
	END LOOP;
	IF pg_catalog.cardinality(tables) OPERATOR(pg_catalog.=) 0 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('template schema "%s" has no tables', template_schema);
	END IF;
	-- No two of the names provisioning makes may clash.
	FOR i IN 1 .. pg_catalog.cardinality(tables) LOOP
		FOR j IN 1 .. pg_catalog.cardinality(tables) LOOP
			IF seqs[i] OPERATOR(pg_catalog.=) tables[j]
			   OR (i OPERATOR(pg_catalog.<) j AND seqs[i] OPERATOR(pg_catalog.=) seqs[j]) THEN
				RAISE EXCEPTION USING
					ERRCODE = 'invalid_table_definition',
					MESSAGE = pg_catalog.format('the ID sequence of template table "%s.%s" would be named "%s", as %s "%s" is',
												template_schema, tables[i], seqs[i],
												CASE WHEN seqs[i] OPERATOR(pg_catalog.=) tables[j]
													 THEN 'template table' ELSE 'the ID sequence of template table' END,
												tables[j]),
					HINT = 'Rename one of the template tables.';
			END IF;
		END LOOP;
	END LOOP;

	tmpl_prefix := pg_catalog.quote_ident(template_schema) OPERATOR(pg_catalog.||) '.';
	target_prefix := pg_catalog.quote_ident(target) OPERATOR(pg_catalog.||) '.';

	SELECT n.oid INTO target_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname OPERATOR(pg_catalog.=) target;
	IF target_oid IS NULL THEN
		EXECUTE pg_catalog.format('CREATE SCHEMA %I', target);
		SELECT n.oid INTO target_oid
		  FROM pg_catalog.pg_namespace AS n
		 WHERE n.nspname OPERATOR(pg_catalog.=) target;
		res_kind := res_kind OPERATOR(pg_catalog.||) 'schema'::pg_catalog.text;
		res_name := res_name OPERATOR(pg_catalog.||) pg_catalog.quote_ident(target);
		res_action := res_action OPERATOR(pg_catalog.||) 'created'::pg_catalog.text;
		res_ord := res_ord OPERATOR(pg_catalog.||) 0;
	ELSE
		res_kind := res_kind OPERATOR(pg_catalog.||) 'schema'::pg_catalog.text;
		res_name := res_name OPERATOR(pg_catalog.||) pg_catalog.quote_ident(target);
		res_action := res_action OPERATOR(pg_catalog.||) 'exists'::pg_catalog.text;
		res_ord := res_ord OPERATOR(pg_catalog.||) 0;

		-- Whose is it?  An existing schema is taken as it is only when the
		-- caller or a superuser owns it and everything in it.
		target_rels := ARRAY(
			SELECT d.objid FROM pg_catalog.pg_depend AS d
			 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
			   AND d.refobjid OPERATOR(pg_catalog.=) target_oid
			   AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass);
		FOR other IN
			SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner
			  FROM pg_catalog.pg_namespace AS n
			 WHERE n.oid OPERATOR(pg_catalog.=) target_oid
			   AND NOT n.nspowner OPERATOR(pg_catalog.=) ANY (trusted)
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('schema "%s" is owned by role "%s"', target, other.owner),
				DETAIL = pg_catalog.format('Provisioning takes an existing schema as it is only when it is owned by the role that provisions (%s) or by a superuser.',
										   current_user),
				HINT = 'Drop or rename the schema, or provision as its owner.';
		END LOOP;
		FOR other IN
			SELECT c.relname, pg_catalog.pg_get_userbyid(c.relowner) AS owner
			  FROM pg_catalog.pg_class AS c
			 WHERE c.oid OPERATOR(pg_catalog.=) ANY (target_rels)
			   AND NOT c.relowner OPERATOR(pg_catalog.=) ANY (trusted)
			 ORDER BY c.relname
			 LIMIT 1
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('relation "%s.%s" is owned by role "%s"', target, other.relname, other.owner),
				DETAIL = pg_catalog.format('Provisioning takes an existing schema as it is only when everything in it is owned by the role that provisions (%s) or by a superuser.',
										   current_user),
				HINT = 'Drop or rename the schema, or provision as its owner.';
		END LOOP;

		-- It may hold only what provisioning makes: the template's tables
		-- (with their indexes, row types and extended statistics), their
		-- ID sequences, and partitions added to partitioned ones.
		FOR other IN
			SELECT c.relname, c.relkind
			  FROM pg_catalog.pg_class AS c
			 WHERE c.oid OPERATOR(pg_catalog.=) ANY (target_rels)
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
						AND NOT c.relispartition
						AND c.relname OPERATOR(pg_catalog.=) ANY (tables))
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) 'S'
						AND c.relname OPERATOR(pg_catalog.=) ANY (seqs))
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
						AND c.relispartition
						AND EXISTS (SELECT FROM pg_catalog.pg_class AS root
									 WHERE root.oid OPERATOR(pg_catalog.=) pg_catalog.pg_partition_root(c.oid)
									   AND root.relnamespace OPERATOR(pg_catalog.=) target_oid
									   AND root.relkind OPERATOR(pg_catalog.=) 'p'
									   AND root.relname OPERATOR(pg_catalog.=) ANY (tables)))
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) ANY ('{i,I}'::pg_catalog."char"[])
						AND EXISTS (SELECT FROM pg_catalog.pg_index AS x
									  JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) x.indrelid
									 WHERE x.indexrelid OPERATOR(pg_catalog.=) c.oid
									   AND t.relnamespace OPERATOR(pg_catalog.=) target_oid
									   AND t.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])))
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

		-- Anything else in it: functions, types, operators, statistics
		-- objects not of its tables, extensions...
		FOR other IN
			SELECT CASE WHEN d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
						THEN d.objid::pg_catalog.regprocedure::pg_catalog.text
						ELSE pg_catalog.pg_describe_object(d.classid, d.objid, 0) END AS what
			  FROM pg_catalog.pg_depend AS d
			 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
			   AND d.refobjid OPERATOR(pg_catalog.=) target_oid
			   AND d.classid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_class'::pg_catalog.regclass
			   AND NOT (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass
						AND EXISTS (SELECT FROM pg_catalog.pg_statistic_ext AS se
									  JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) se.stxrelid
									 WHERE se.oid OPERATOR(pg_catalog.=) d.objid
									   AND t.relnamespace OPERATOR(pg_catalog.=) target_oid
									   AND se.stxowner OPERATOR(pg_catalog.=) t.relowner))
			 ORDER BY 1
			LIMIT 1
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Object %s is not a table of template "%s" or its ID sequence.',
										   other.what, template_schema),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END LOOP;

		-- Each existing table: as the template has it, and with nothing
		-- attached that the template lacks.  (LIKE copies no triggers,
		-- rules or policies, so those of a shard table must be ones the
		-- owner added as the template has them.)
		FOR i IN 1 .. pg_catalog.cardinality(tables) LOOP
			SELECT c.oid INTO shard_rel
			  FROM pg_catalog.pg_class AS c
			 WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
			   AND c.relname OPERATOR(pg_catalog.=) tables[i];
			CONTINUE WHEN shard_rel IS NULL;

			FOR other IN
				SELECT c.relkind, c.relpersistence, t.relkind AS want_kind, t.relpersistence AS want_persistence,
					   pg_catalog.pg_get_partkeydef(c.oid) AS partkey
				  FROM pg_catalog.pg_class AS c, pg_catalog.pg_class AS t
				 WHERE c.oid OPERATOR(pg_catalog.=) shard_rel
				   AND t.oid OPERATOR(pg_catalog.=) tmpl_oids[i]
				   AND (c.relkind OPERATOR(pg_catalog.<>) t.relkind
						OR c.relpersistence OPERATOR(pg_catalog.<>) t.relpersistence
						OR pg_catalog.pg_get_partkeydef(c.oid) IS DISTINCT FROM pg_catalog.pg_get_partkeydef(t.oid))
			LOOP
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Table "%s.%s" is %s, template table "%s.%s" is %s.',
						target, tables[i],
						CASE other.relkind WHEN 'p' THEN 'partitioned by ' OPERATOR(pg_catalog.||) other.partkey
										   ELSE 'not partitioned' END
						OPERATOR(pg_catalog.||) CASE other.relpersistence WHEN 'u' THEN ' and unlogged' ELSE '' END,
						template_schema, tables[i],
						CASE other.want_kind WHEN 'p' THEN 'partitioned by RANGE (id)' ELSE 'not partitioned' END
						OPERATOR(pg_catalog.||) CASE other.want_persistence WHEN 'u' THEN ' and unlogged' ELSE '' END),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END LOOP;

			-- triggers: the template's, as it has them, and on partitions
			-- only clones of the parent's
			FOR other IN
				SELECT c.relname, s.tgname
				  FROM (SELECT shard_rel AS relid, 0 AS level
						UNION ALL
						SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
						 WHERE x.level OPERATOR(pg_catalog.>) 0) AS pt
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) pt.relid
				  JOIN pg_catalog.pg_trigger AS s ON s.tgrelid OPERATOR(pg_catalog.=) pt.relid
				 WHERE NOT s.tgisinternal
				   AND CASE WHEN pt.level OPERATOR(pg_catalog.>) 0
							THEN s.tgparentid OPERATOR(pg_catalog.=) 0
							ELSE NOT EXISTS (
								SELECT FROM pg_catalog.pg_trigger AS t
								 WHERE t.tgrelid OPERATOR(pg_catalog.=) tmpl_oids[i]
								   AND t.tgname OPERATOR(pg_catalog.=) s.tgname
								   AND t.tgfoid OPERATOR(pg_catalog.=) s.tgfoid
								   AND t.tgenabled OPERATOR(pg_catalog.=) s.tgenabled
								   AND pg_catalog.replace(pg_catalog.pg_get_triggerdef(t.oid), tmpl_prefix, target_prefix)
									   OPERATOR(pg_catalog.=) pg_catalog.pg_get_triggerdef(s.oid))
					   END
				 ORDER BY pt.level, c.relname, s.tgname
				 LIMIT 1
			LOOP
				RAISE EXCEPTION USING
					ERRCODE = 'object_not_in_prerequisite_state',
					MESSAGE = pg_catalog.format('table "%s.%s" has trigger "%s", which template table "%s.%s" lacks',
												target, other.relname, other.tgname, template_schema, tables[i]),
					DETAIL = 'A trigger runs its function in the session of whoever writes to the table.',
					HINT = 'Drop the trigger, or drop or rename the schema.';
			END LOOP;

			-- rules and row security policies: the template's, as it has them
			FOR other IN
				SELECT c.relname, 'rule' AS what, r.rulename AS objname
				  FROM (SELECT shard_rel AS relid, 0 AS level
						UNION ALL
						SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
						 WHERE x.level OPERATOR(pg_catalog.>) 0) AS pt
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) pt.relid
				  JOIN pg_catalog.pg_rewrite AS r ON r.ev_class OPERATOR(pg_catalog.=) pt.relid
				 WHERE pt.level OPERATOR(pg_catalog.>) 0
					OR NOT EXISTS (
						SELECT FROM pg_catalog.pg_rewrite AS t
						 WHERE t.ev_class OPERATOR(pg_catalog.=) tmpl_oids[i]
						   AND t.rulename OPERATOR(pg_catalog.=) r.rulename
						   AND t.ev_enabled OPERATOR(pg_catalog.=) r.ev_enabled
						   AND pg_catalog.replace(pg_catalog.pg_get_ruledef(t.oid), tmpl_prefix, target_prefix)
							   OPERATOR(pg_catalog.=) pg_catalog.pg_get_ruledef(r.oid))
				UNION ALL
				SELECT c.relname, 'policy', p.polname
				  FROM (SELECT shard_rel AS relid, 0 AS level
						UNION ALL
						SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
						 WHERE x.level OPERATOR(pg_catalog.>) 0) AS pt
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) pt.relid
				  JOIN pg_catalog.pg_policy AS p ON p.polrelid OPERATOR(pg_catalog.=) pt.relid
				 WHERE pt.level OPERATOR(pg_catalog.>) 0
					OR NOT EXISTS (
						SELECT FROM pg_catalog.pg_policy AS t
						 WHERE t.polrelid OPERATOR(pg_catalog.=) tmpl_oids[i]
						   AND t.polname OPERATOR(pg_catalog.=) p.polname
						   AND t.polcmd OPERATOR(pg_catalog.=) p.polcmd
						   AND t.polpermissive OPERATOR(pg_catalog.=) p.polpermissive
						   AND t.polroles OPERATOR(pg_catalog.=) p.polroles
						   AND pg_catalog.replace(COALESCE(pg_catalog.pg_get_expr(t.polqual, t.polrelid), ''), tmpl_prefix, target_prefix)
							   OPERATOR(pg_catalog.=) COALESCE(pg_catalog.pg_get_expr(p.polqual, p.polrelid), '')
						   AND pg_catalog.replace(COALESCE(pg_catalog.pg_get_expr(t.polwithcheck, t.polrelid), ''), tmpl_prefix, target_prefix)
							   OPERATOR(pg_catalog.=) COALESCE(pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), ''))
				UNION ALL
				-- inheritance (not partitioning) in either direction
				SELECT c.relname, 'inheritance child', k.relname
				  FROM pg_catalog.pg_inherits AS h
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) h.inhparent
				  JOIN pg_catalog.pg_class AS k ON k.oid OPERATOR(pg_catalog.=) h.inhrelid
				 WHERE h.inhparent OPERATOR(pg_catalog.=) shard_rel AND NOT k.relispartition
				UNION ALL
				SELECT c.relname, 'inheritance parent', k.relname
				  FROM pg_catalog.pg_inherits AS h
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) h.inhrelid
				  JOIN pg_catalog.pg_class AS k ON k.oid OPERATOR(pg_catalog.=) h.inhparent
				 WHERE h.inhrelid OPERATOR(pg_catalog.=) shard_rel
				LIMIT 1
			LOOP
				RAISE EXCEPTION USING
					ERRCODE = 'object_not_in_prerequisite_state',
					MESSAGE = pg_catalog.format('table "%s.%s" has %s "%s", which template table "%s.%s" lacks',
												target, other.relname, other.what, other.objname,
												template_schema, tables[i]),
					DETAIL = 'Provisioning takes an existing table as it is only when nothing the template lacks is attached to it.',
					HINT = pg_catalog.format('Drop the %s, or drop or rename the schema.', other.what);
			END LOOP;
		END LOOP;
	END IF;

	-- Create what is missing, and check what is there: each table with
	-- its sequence.  Longer names first: an index that LIKE names after a
	-- short table (posts_pkey) then cannot take the name of a longer one.
	FOR i IN
		SELECT o.n
		  FROM pg_catalog.generate_subscripts(tables, 1) AS o(n)
		 ORDER BY pg_catalog.octet_length(tables[o.n]) DESC, tables[o.n]
	LOOP
		seq_name := seqs[i];
		want_default := pg_catalog.format('%I.shardid_next(%s, %L::regclass)',
										  ext_schema, shard,
										  pg_catalog.format('%I.%I', target, seq_name));
		shard_rel := NULL;
		SELECT c.oid INTO shard_rel
		  FROM pg_catalog.pg_class AS c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
		   AND c.relname OPERATOR(pg_catalog.=) tables[i];

		IF shard_rel IS NOT NULL THEN
			-- It must match the template column for column, and number its
			-- IDs from its own sequence for this shard.
			SELECT pg_catalog.string_agg(pg_catalog.format('%I %s%s', a.attname,
								pg_catalog.format_type(a.atttypid, a.atttypmod),
								CASE WHEN a.attnotnull THEN ' not null' ELSE '' END),
								', ' ORDER BY a.attnum)
			  INTO want_cols
			  FROM pg_catalog.pg_attribute AS a
			 WHERE a.attrelid OPERATOR(pg_catalog.=) tmpl_oids[i]
			   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
			SELECT pg_catalog.string_agg(pg_catalog.format('%I %s%s', a.attname,
								pg_catalog.format_type(a.atttypid, a.atttypmod),
								CASE WHEN a.attnotnull THEN ' not null' ELSE '' END),
								', ' ORDER BY a.attnum)
			  INTO have_cols
			  FROM pg_catalog.pg_attribute AS a
			 WHERE a.attrelid OPERATOR(pg_catalog.=) shard_rel
			   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
			IF have_cols IS DISTINCT FROM want_cols THEN
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Table "%s.%s" has columns (%s), template "%s" has (%s).',
											   target, tables[i], have_cols, template_schema, want_cols),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END IF;

			SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) INTO have_default
			  FROM pg_catalog.pg_attrdef AS d
			  JOIN pg_catalog.pg_attribute AS a
				ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid
			   AND a.attnum OPERATOR(pg_catalog.=) d.adnum
			 WHERE d.adrelid OPERATOR(pg_catalog.=) shard_rel
			   AND a.attname OPERATOR(pg_catalog.=) 'id';
			IF have_default IS DISTINCT FROM want_default THEN
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Column "id" of table "%s.%s" defaults to %s, not %s.',
											   target, tables[i],
											   COALESCE(have_default, 'null'), want_default),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END IF;
			IF NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
							WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
							  AND c.relname OPERATOR(pg_catalog.=) seq_name
							  AND c.relkind OPERATOR(pg_catalog.=) 'S') THEN
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Table "%s.%s" exists without its sequence "%s".',
											   target, tables[i], seq_name),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END IF;

			res_kind := res_kind OPERATOR(pg_catalog.||) ARRAY['table', 'sequence'];
			res_name := res_name OPERATOR(pg_catalog.||) ARRAY[pg_catalog.format('%I.%I', target, tables[i]),
															   pg_catalog.format('%I.%I', target, seq_name)];
			res_action := res_action OPERATOR(pg_catalog.||) ARRAY['exists', 'exists'];
			res_ord := res_ord OPERATOR(pg_catalog.||) ARRAY[2 OPERATOR(pg_catalog.*) i, (2 OPERATOR(pg_catalog.*) i) OPERATOR(pg_catalog.+) 1];
			CONTINUE;
		END IF;

		IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
					WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
					  AND c.relname OPERATOR(pg_catalog.=) seq_name) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Sequence "%s.%s" exists without its table "%s".',
										   target, seq_name, tables[i]),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END IF;

		EXECUTE pg_catalog.format('CREATE SEQUENCE %I.%I AS pg_catalog.int8', target, seq_name);
		IF kinds[i] OPERATOR(pg_catalog.=) 'p' THEN
			-- LIKE copies no partitioning: the parent gets the template's
			-- key (checked above to be RANGE (id)) and no partitions.
			EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL) PARTITION BY RANGE (id)',
									  target, tables[i], template_schema, tables[i]);
		ELSE
			EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
									  target, tables[i], template_schema, tables[i]);
		END IF;
		EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN id SET DEFAULT %s',
								  target, tables[i], want_default);
		EXECUTE pg_catalog.format('ALTER SEQUENCE %I.%I OWNED BY %I.%I.id',
								  target, seq_name, target, tables[i]);

		res_kind := res_kind OPERATOR(pg_catalog.||) ARRAY['table', 'sequence'];
		res_name := res_name OPERATOR(pg_catalog.||) ARRAY[pg_catalog.format('%I.%I', target, tables[i]),
														   pg_catalog.format('%I.%I', target, seq_name)];
		res_action := res_action OPERATOR(pg_catalog.||) ARRAY['created', 'created'];
		res_ord := res_ord OPERATOR(pg_catalog.||) ARRAY[2 OPERATOR(pg_catalog.*) i, (2 OPERATOR(pg_catalog.*) i) OPERATOR(pg_catalog.+) 1];
	END LOOP;

	-- Grants, on what was there and on what was just made (default
	-- privileges apply to that): no other role may hold a privilege that
	-- lets it attach code to the shard later, CREATE on the schema or
	-- TRIGGER on a table.
	target_rels := ARRAY(
		SELECT d.objid FROM pg_catalog.pg_depend AS d
		 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
		   AND d.refobjid OPERATOR(pg_catalog.=) target_oid
		   AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass);
	FOR other IN
		SELECT 'schema' AS what, pg_catalog.quote_ident(n.nspname) AS objname, a.grantee, a.privilege_type
		  FROM pg_catalog.pg_namespace AS n, pg_catalog.aclexplode(n.nspacl) AS a
		 WHERE n.oid OPERATOR(pg_catalog.=) target_oid
		   AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
		   AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
		   AND NOT a.grantee OPERATOR(pg_catalog.=) ANY (trusted)
		UNION ALL
		SELECT 'table', pg_catalog.format('%I.%I', target, c.relname), a.grantee, a.privilege_type
		  FROM pg_catalog.pg_class AS c, pg_catalog.aclexplode(c.relacl) AS a
		 WHERE c.oid OPERATOR(pg_catalog.=) ANY (target_rels)
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
		   AND a.privilege_type OPERATOR(pg_catalog.=) 'TRIGGER'
		   AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
		   AND NOT a.grantee OPERATOR(pg_catalog.=) ANY (trusted)
		 ORDER BY 1 DESC, 2		-- the schema first, then tables by name
		LIMIT 1
	LOOP
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('%s %s grants %s to %s', other.what, other.objname, other.privilege_type,
										CASE other.grantee WHEN 0 THEN 'PUBLIC'
										ELSE pg_catalog.format('role "%s"', pg_catalog.pg_get_userbyid(other.grantee)) END),
			DETAIL = CASE other.privilege_type
					 WHEN 'CREATE' THEN 'A role that may create objects in a shard''s schema can put its own objects where the shard''s users look for the template''s.'
					 ELSE 'A role that may create triggers on a shard''s table can run its own code in the session of whoever writes to it.' END,
			HINT = pg_catalog.format('REVOKE %s ON %s %s FROM %s, or check the default privileges (ALTER DEFAULT PRIVILEGES).',
									 other.privilege_type, CASE other.what WHEN 'schema' THEN 'SCHEMA' ELSE 'TABLE' END,
									 other.objname,
									 CASE other.grantee WHEN 0 THEN 'PUBLIC'
									 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(other.grantee)) END);
	END LOOP;

	RETURN QUERY
		SELECT r.k, r.n, r.a
		  FROM ROWS FROM (pg_catalog.unnest(res_kind), pg_catalog.unnest(res_name),
						 pg_catalog.unnest(res_action), pg_catalog.unnest(res_ord)) AS r(k, n, a, o)
		 ORDER BY r.o;
END
$fn$;

COMMENT ON FUNCTION shardid_provision_shard(pg_catalog.int4, pg_catalog.text, pg_catalog.text) IS
'create what is missing of a logical shard: its schema (default shard_NNNN), a copy of each template table and its ID sequence; takes existing objects only from the caller or a superuser';
