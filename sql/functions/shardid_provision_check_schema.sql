-- An existing shard schema is taken as it is only when the caller or a
-- superuser owns it and everything in it, and it holds only what
-- provisioning makes: the template's tables (with their indexes, row
-- types and extended statistics), their ID sequences, and partitions
-- added to partitioned ones.  Refuses (42501, 42P06) anything else.
CREATE FUNCTION shardid_provision_check_schema(
	target pg_catalog.text,
	template_schema pg_catalog.text,
	tables pg_catalog.text[],
	seqs pg_catalog.text[],
	trusted pg_catalog.oid[])
RETURNS pg_catalog.void
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	target_oid pg_catalog.oid;
	target_rels pg_catalog.oid[];
	other record;
BEGIN
	SELECT n.oid INTO target_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname = target;

	-- Whose is it?  An existing schema is taken as it is only when the
	-- caller or a superuser owns it and everything in it.
	target_rels := ARRAY(
		SELECT d.objid FROM pg_catalog.pg_depend AS d
		 WHERE d.refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
		   AND d.refobjid = target_oid
		   AND d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass);
	FOR other IN
		SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner
		  FROM pg_catalog.pg_namespace AS n
		 WHERE n.oid = target_oid
		   AND NOT n.nspowner = ANY (trusted)
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
		 WHERE c.oid = ANY (target_rels)
		   AND NOT c.relowner = ANY (trusted)
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
		 WHERE c.oid = ANY (target_rels)
		   AND NOT (c.relkind = ANY ('{r,p}'::pg_catalog."char"[])
					AND NOT c.relispartition
					AND c.relname = ANY (tables))
		   AND NOT (c.relkind = 'S'
					AND c.relname = ANY (seqs))
		   AND NOT (c.relkind = ANY ('{r,p}'::pg_catalog."char"[])
					AND c.relispartition
					AND EXISTS (SELECT FROM pg_catalog.pg_class AS root
								 WHERE root.oid = pg_catalog.pg_partition_root(c.oid)
								   AND root.relnamespace = target_oid
								   AND root.relkind = 'p'
								   AND root.relname = ANY (tables)))
		   AND NOT (c.relkind = ANY ('{i,I}'::pg_catalog."char"[])
					AND EXISTS (SELECT FROM pg_catalog.pg_index AS x
								  JOIN pg_catalog.pg_class AS t ON t.oid = x.indrelid
								 WHERE x.indexrelid = c.oid
								   AND t.relnamespace = target_oid
								   AND t.relkind = ANY ('{r,p}'::pg_catalog."char"[])))
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
		SELECT CASE WHEN d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
					THEN d.objid::pg_catalog.regprocedure::pg_catalog.text
					ELSE pg_catalog.pg_describe_object(d.classid, d.objid, 0) END AS what
		  FROM pg_catalog.pg_depend AS d
		 WHERE d.refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
		   AND d.refobjid = target_oid
		   AND d.classid <> 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND NOT (d.classid = 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass
					AND EXISTS (SELECT FROM pg_catalog.pg_statistic_ext AS se
								  JOIN pg_catalog.pg_class AS t ON t.oid = se.stxrelid
								 WHERE se.oid = d.objid
								   AND t.relnamespace = target_oid
								   AND se.stxowner = t.relowner))
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
END
$fn$;

COMMENT ON FUNCTION shardid_provision_check_schema(pg_catalog.text, pg_catalog.text, pg_catalog.text[],
												   pg_catalog.text[], pg_catalog.oid[]) IS
'internal: refuse an existing shard schema that holds what provisioning did not make, or that another role owns';
