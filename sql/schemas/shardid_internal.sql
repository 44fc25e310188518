--
-- The schema of the extension's own sequences
--
-- shardid keeps the database's fence, its lead and the epoch in sequences
-- of its own (sql/sequences/), and keeps them here, in a schema that no
-- role but the extension's owner may use, not in the extension's schema
-- (often public, where every role may look names up).  A few commands
-- lock the relation they name before they check that the caller may use
-- it (CREATE RULE, CREATE TRIGGER, PARTITION OF, ATTACH PARTITION, a
-- foreign key's REFERENCES), and every fence writer of the database waits
-- behind a lock queued there; name lookup checks USAGE on the schema
-- first, before any lock (docs/design.md, "The writers' locks").  Its name
-- is fixed: the library finds the sequences in it, whatever schema the
-- extension is in.  A schema of that name made by anyone else stops
-- CREATE EXTENSION and the update, rather than being used.
--
DO $schema$
BEGIN
	CREATE SCHEMA shardid_internal;
EXCEPTION WHEN duplicate_schema THEN
	RAISE EXCEPTION USING
		ERRCODE = 'duplicate_schema',
		MESSAGE = 'schema "shardid_internal" already exists',
		DETAIL = 'Extension shardid keeps its own sequences in a schema of that name, which it makes, and which no role but the extension''s owner may use.',
		HINT = 'Rename or drop the schema "shardid_internal", then run this again.';
END
$schema$;

COMMENT ON SCHEMA shardid_internal IS
'sequences of extension shardid (the durable fence of this database, its lead, the epoch); no role but the extension''s owner may use it';

-- No role but the owner: also none that default privileges granted it to.
DO $usage$
DECLARE
	role_name pg_catalog.text;
BEGIN
	FOR role_name IN
		SELECT DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) '0'::pg_catalog.oid THEN 'PUBLIC'
							 ELSE a.grantee::pg_catalog.regrole::pg_catalog.text END
		  FROM pg_catalog.pg_namespace AS n,
			   pg_catalog.aclexplode(n.nspacl) AS a
		 WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid_internal'
		   AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA shardid_internal FROM %s', role_name);
	END LOOP;
END
$usage$;
