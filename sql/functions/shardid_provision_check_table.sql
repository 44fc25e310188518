-- An existing table of a shard schema is taken as it is only when it is
-- of the template table's kind (partitioned by the same key, logged or
-- not), and nothing is attached to it that the template lacks: no other
-- trigger, rule or row security policy (LIKE copies none of them, so
-- those of a shard table must be ones its owner added as the template
-- has them), no trigger of a partition's own, and no inheritance.
-- Refuses (42P06, 55000) anything else.
CREATE FUNCTION shardid_provision_check_table(
	target pg_catalog.text,
	table_name pg_catalog.text,
	template_schema pg_catalog.text,
	template_table pg_catalog.oid)
RETURNS pg_catalog.void
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	target_oid pg_catalog.oid;
	shard_rel pg_catalog.oid;
	tmpl_prefix pg_catalog.text;
	target_prefix pg_catalog.text;
	other record;
BEGIN
	SELECT n.oid INTO target_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname = target;
	-- names in the template's definitions, as they read in the shard's
	tmpl_prefix := pg_catalog.quote_ident(template_schema) || '.';
	target_prefix := pg_catalog.quote_ident(target) || '.';
	SELECT c.oid INTO shard_rel
	  FROM pg_catalog.pg_class AS c
	 WHERE c.relnamespace = target_oid
	   AND c.relname = table_name;
	IF shard_rel IS NULL THEN
		RETURN;
	END IF;

	FOR other IN
		SELECT c.relkind, c.relpersistence, t.relkind AS want_kind, t.relpersistence AS want_persistence,
			   pg_catalog.pg_get_partkeydef(c.oid) AS partkey
		  FROM pg_catalog.pg_class AS c, pg_catalog.pg_class AS t
		 WHERE c.oid = shard_rel
		   AND t.oid = template_table
		   AND (c.relkind <> t.relkind
				OR c.relpersistence <> t.relpersistence
				OR pg_catalog.pg_get_partkeydef(c.oid) IS DISTINCT FROM pg_catalog.pg_get_partkeydef(t.oid))
	LOOP
		RAISE EXCEPTION USING
			ERRCODE = 'duplicate_schema',
			MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
			DETAIL = pg_catalog.format('Table "%s.%s" is %s, template table "%s.%s" is %s.',
				target, table_name,
				CASE other.relkind WHEN 'p' THEN 'partitioned by ' || other.partkey
								   ELSE 'not partitioned' END
				|| CASE other.relpersistence WHEN 'u' THEN ' and unlogged' ELSE '' END,
				template_schema, table_name,
				CASE other.want_kind WHEN 'p' THEN 'partitioned by RANGE (id)' ELSE 'not partitioned' END
				|| CASE other.want_persistence WHEN 'u' THEN ' and unlogged' ELSE '' END),
			HINT = 'Drop or rename the schema, or provision the shard into another schema.';
	END LOOP;

	-- triggers: the template's, as it has them, and on partitions
	-- only clones of the parent's
	FOR other IN
		SELECT c.relname, s.tgname
		  FROM (SELECT shard_rel AS relid, 0 AS level
				UNION ALL
				SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
				 WHERE x.level > 0) AS pt
		  JOIN pg_catalog.pg_class AS c ON c.oid = pt.relid
		  JOIN pg_catalog.pg_trigger AS s ON s.tgrelid = pt.relid
		 WHERE NOT s.tgisinternal
		   AND CASE WHEN pt.level > 0
					THEN s.tgparentid = 0
					ELSE NOT EXISTS (
						SELECT FROM pg_catalog.pg_trigger AS t
						 WHERE t.tgrelid = template_table
						   AND t.tgname = s.tgname
						   AND t.tgfoid = s.tgfoid
						   AND t.tgenabled = s.tgenabled
						   AND pg_catalog.replace(pg_catalog.pg_get_triggerdef(t.oid), tmpl_prefix, target_prefix)
							   = pg_catalog.pg_get_triggerdef(s.oid))
			   END
		 ORDER BY pt.level, c.relname, s.tgname
		 LIMIT 1
	LOOP
		RAISE EXCEPTION USING
			ERRCODE = 'object_not_in_prerequisite_state',
			MESSAGE = pg_catalog.format('table "%s.%s" has trigger "%s", which template table "%s.%s" lacks',
										target, other.relname, other.tgname, template_schema, table_name),
			DETAIL = 'A trigger runs its function in the session of whoever writes to the table.',
			HINT = 'Drop the trigger, or drop or rename the schema.';
	END LOOP;

	-- rules and row security policies: the template's, as it has them
	FOR other IN
		SELECT c.relname, 'rule' AS what, r.rulename AS objname
		  FROM (SELECT shard_rel AS relid, 0 AS level
				UNION ALL
				SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
				 WHERE x.level > 0) AS pt
		  JOIN pg_catalog.pg_class AS c ON c.oid = pt.relid
		  JOIN pg_catalog.pg_rewrite AS r ON r.ev_class = pt.relid
		 WHERE pt.level > 0
			OR NOT EXISTS (
				SELECT FROM pg_catalog.pg_rewrite AS t
				 WHERE t.ev_class = template_table
				   AND t.rulename = r.rulename
				   AND t.ev_enabled = r.ev_enabled
				   AND pg_catalog.replace(pg_catalog.pg_get_ruledef(t.oid), tmpl_prefix, target_prefix)
					   = pg_catalog.pg_get_ruledef(r.oid))
		UNION ALL
		SELECT c.relname, 'policy', p.polname
		  FROM (SELECT shard_rel AS relid, 0 AS level
				UNION ALL
				SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
				 WHERE x.level > 0) AS pt
		  JOIN pg_catalog.pg_class AS c ON c.oid = pt.relid
		  JOIN pg_catalog.pg_policy AS p ON p.polrelid = pt.relid
		 WHERE pt.level > 0
			OR NOT EXISTS (
				SELECT FROM pg_catalog.pg_policy AS t
				 WHERE t.polrelid = template_table
				   AND t.polname = p.polname
				   AND t.polcmd = p.polcmd
				   AND t.polpermissive = p.polpermissive
				   AND t.polroles = p.polroles
				   AND pg_catalog.replace(COALESCE(pg_catalog.pg_get_expr(t.polqual, t.polrelid), ''), tmpl_prefix, target_prefix)
					   = COALESCE(pg_catalog.pg_get_expr(p.polqual, p.polrelid), '')
				   AND pg_catalog.replace(COALESCE(pg_catalog.pg_get_expr(t.polwithcheck, t.polrelid), ''), tmpl_prefix, target_prefix)
					   = COALESCE(pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), ''))
		UNION ALL
		-- inheritance (not partitioning) in either direction
		SELECT c.relname, 'inheritance child', k.relname
		  FROM pg_catalog.pg_inherits AS h
		  JOIN pg_catalog.pg_class AS c ON c.oid = h.inhparent
		  JOIN pg_catalog.pg_class AS k ON k.oid = h.inhrelid
		 WHERE h.inhparent = shard_rel AND NOT k.relispartition
		UNION ALL
		SELECT c.relname, 'inheritance parent', k.relname
		  FROM pg_catalog.pg_inherits AS h
		  JOIN pg_catalog.pg_class AS c ON c.oid = h.inhrelid
		  JOIN pg_catalog.pg_class AS k ON k.oid = h.inhparent
		 WHERE h.inhrelid = shard_rel
		LIMIT 1
	LOOP
		RAISE EXCEPTION USING
			ERRCODE = 'object_not_in_prerequisite_state',
			MESSAGE = pg_catalog.format('table "%s.%s" has %s "%s", which template table "%s.%s" lacks',
										target, other.relname, other.what, other.objname,
										template_schema, table_name),
			DETAIL = 'Provisioning takes an existing table as it is only when nothing the template lacks is attached to it.',
			HINT = pg_catalog.format('Drop the %s, or drop or rename the schema.', other.what);
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_provision_check_table(pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.oid) IS
'internal: refuse an existing table of a shard schema that differs from its template table or has anything attached that the template lacks';
