-- No role but the caller and superusers may hold a privilege on a shard
-- that lets it attach code later: CREATE on the schema, TRIGGER on a
-- table.  Checked on what was there and on what was just made (default
-- privileges apply to that); refused with 42501.
CREATE FUNCTION shardid_provision_check_grants(
	target pg_catalog.text,
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
	target_rels := ARRAY(
		SELECT d.objid FROM pg_catalog.pg_depend AS d
		 WHERE d.refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
		   AND d.refobjid = target_oid
		   AND d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass);
	FOR other IN
		SELECT 'schema' AS what, pg_catalog.quote_ident(n.nspname) AS objname, a.grantee, a.privilege_type
		  FROM pg_catalog.pg_namespace AS n, pg_catalog.aclexplode(n.nspacl) AS a
		 WHERE n.oid = target_oid
		   AND a.privilege_type = 'CREATE'
		   AND a.grantee <> n.nspowner
		   AND NOT a.grantee = ANY (trusted)
		UNION ALL
		SELECT 'table', pg_catalog.format('%I.%I', target, c.relname), a.grantee, a.privilege_type
		  FROM pg_catalog.pg_class AS c, pg_catalog.aclexplode(c.relacl) AS a
		 WHERE c.oid = ANY (target_rels)
		   AND c.relkind = ANY ('{r,p}'::pg_catalog."char"[])
		   AND a.privilege_type = 'TRIGGER'
		   AND a.grantee <> c.relowner
		   AND NOT a.grantee = ANY (trusted)
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
END
$fn$;

COMMENT ON FUNCTION shardid_provision_check_grants(pg_catalog.text, pg_catalog.oid[]) IS
'internal: refuse a shard schema or table that grants another role a privilege to attach code to it';
