--
-- No role's code runs with a more privileged role's rights (issue 31).
--
-- A plain role owns a partitioned table whose default partition has an
-- index WHERE regress_msch.imm(): an IMMUTABLE function that calls a
-- VOLATILE one, which planning any query over the table runs (through
-- eval_const_expressions).  The VOLATILE one counts its runs in two
-- sequences (nextval is not undone by a rollback): as_her when it runs as
-- its owner without a superuser's rights and without the public ID keys
-- in reach, as_other otherwise.  A superuser and a pg_monitor reader then
-- read every view of the extension, and the superuser runs the partition
-- maintenance and shardid_adopt over the role's tables: as_her grows (the
-- code was reached, as its owner), as_other is never called.
--
\set ECHO none
\getenv abs_srcdir PG_ABS_SRCDIR
\set err_file :abs_srcdir '/sql/include/err.sql'
\i :err_file
\set ECHO all
SET timezone = 'UTC';
\set SHOW_CONTEXT never

-- The maintenance runs below count the partitions they make around the
-- current day: never straddle midnight UTC (this file runs in seconds).
SELECT pg_sleep(CASE WHEN extract(epoch FROM clock_timestamp())::bigint % 86400 > 86390 THEN 11 ELSE 0 END) AS wait;

CREATE ROLE regress_mallory LOGIN;
CREATE ROLE regress_mon LOGIN IN ROLE pg_monitor;
GRANT CREATE ON DATABASE :"DBNAME" TO regress_mallory;

SET ROLE regress_mallory;
CREATE SCHEMA regress_msch;
CREATE SEQUENCE regress_msch.as_her;
CREATE SEQUENCE regress_msch.as_other;
GRANT USAGE ON SCHEMA regress_msch TO PUBLIC;
GRANT USAGE, UPDATE ON SEQUENCE regress_msch.as_her, regress_msch.as_other TO PUBLIC;
CREATE FUNCTION regress_msch.vol() RETURNS bool LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	k text;
BEGIN
	BEGIN
		k := current_setting('shardid.public_id_keys', true);
	EXCEPTION WHEN OTHERS THEN
		k := NULL;
	END;
	IF current_user <> 'regress_mallory' OR k IS NOT NULL
	   OR EXISTS (SELECT FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user AND r.rolsuper) THEN
		PERFORM nextval('regress_msch.as_other');
	ELSE
		PERFORM nextval('regress_msch.as_her');
	END IF;
	RETURN true;
END $$;
CREATE FUNCTION regress_msch.imm() RETURNS bool LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	RETURN regress_msch.vol();
END $$;
CREATE TABLE regress_msch.pv (id bigint NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE regress_msch.pv_default PARTITION OF regress_msch.pv DEFAULT;
CREATE INDEX ON regress_msch.pv_default (id) WHERE regress_msch.imm();
ALTER TABLE regress_msch.pv_default ADD CHECK (regress_msch.imm());
INSERT INTO regress_msch.pv VALUES (1), (2);
GRANT SELECT ON regress_msch.pv, regress_msch.pv_default TO PUBLIC;
-- her own maintenance run writes the log row the status view reads
CALL shardid_partition_run(ARRAY['regress_msch.pv'::regclass], '1 day', 1);
-- a plain table for shardid_adopt, the same index on it
CREATE TABLE regress_msch.ad (id bigserial PRIMARY KEY);
CREATE INDEX ON regress_msch.ad (id) WHERE regress_msch.imm();
INSERT INTO regress_msch.ad DEFAULT VALUES;
RESET ROLE;

-- runs(): what her code did since the last call
CREATE FUNCTION pg_temp.runs(OUT as_her_grew bool, OUT as_other_called bool) LANGUAGE plpgsql AS $$
DECLARE
	her bigint;
BEGIN
	SELECT last_value INTO her FROM regress_msch.as_her;
	as_her_grew := her > COALESCE(current_setting('regress.her', true), '0')::bigint;
	PERFORM set_config('regress.her', her::text, false);
	SELECT is_called INTO as_other_called FROM regress_msch.as_other;
END $$;
SELECT * FROM pg_temp.runs();

-- a superuser reads every view
SELECT parent, partitions > 0 AS partitioned, default_partition, default_rows, last_result
  FROM shardid_partition_status WHERE parent = 'regress_msch.pv'::regclass;
SELECT count(*) >= 0 AS read FROM shardid_fence_status;
SELECT count(*) >= 0 AS read FROM shardid_stats;
SELECT * FROM pg_temp.runs();

-- a pg_monitor reader reads every view
SET ROLE regress_mon;
SELECT parent, partitions > 0 AS partitioned, default_partition, default_rows, last_result
  FROM shardid_partition_status WHERE parent = 'regress_msch.pv'::regclass;
SELECT count(*) >= 0 AS read FROM shardid_fence_status;
SELECT count(*) >= 0 AS read FROM shardid_stats;
RESET ROLE;
SELECT * FROM pg_temp.runs();

-- overloads that a role with CREATE in the extension's schema (for
-- public, the database's owner) makes, a better match than the
-- extension's own for a call with an oid or a bare NULL: the maintenance
-- names its calls' types exactly, so that none of them is picked
GRANT CREATE ON SCHEMA public TO regress_mallory;
SET ROLE regress_mallory;
CREATE FUNCTION public.shardid_rows_exist(oid, name, int8, int8) RETURNS bool
	LANGUAGE sql AS $$ SELECT NOT regress_msch.vol() $$;
CREATE FUNCTION public.shardid_rows_exist(regclass, name, text, int8) RETURNS bool
	LANGUAGE sql AS $$ SELECT NOT regress_msch.vol() $$;
CREATE FUNCTION public.shardid_rows_exist(regclass, name, int8, text) RETURNS bool
	LANGUAGE sql AS $$ SELECT NOT regress_msch.vol() $$;
CREATE FUNCTION public.shardid_rows_min(oid, name, int8) RETURNS int8
	LANGUAGE sql AS $$ SELECT CASE WHEN regress_msch.vol() THEN NULL::int8 END $$;
RESET ROLE;
-- as a new session would: her own run above resolved the calls already
DISCARD PLANS;

-- a superuser's maintenance of her table: the default partition is read,
-- and the new partitions attached (which plans the default's CHECK
-- constraint), as her; the partition past the retention is dropped
CALL shardid_partition_run(ARRAY['regress_msch.pv'::regclass], '1 day', 3, '30 days');
SELECT made, dropped, last_result FROM shardid_partition_status WHERE parent = 'regress_msch.pv'::regclass;
SELECT * FROM pg_temp.runs();

DROP FUNCTION public.shardid_rows_exist(oid, name, int8, int8),
	public.shardid_rows_exist(regclass, name, text, int8),
	public.shardid_rows_exist(regclass, name, int8, text),
	public.shardid_rows_min(oid, name, int8);
REVOKE CREATE ON SCHEMA public FROM regress_mallory;

-- a superuser's shardid_adopt of her table: min() and max() as her
SELECT action FROM shardid_adopt('regress_msch.ad', 7);
SELECT * FROM pg_temp.runs();

-- the owner-switched reads check the caller's rights before anything is
-- planned, and bad input is an SQLSTATE
SET ROLE regress_mallory;
CREATE TABLE regress_msch.secret (id bigint);
CREATE TABLE regress_msch.rls (id bigint);
ALTER TABLE regress_msch.rls ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON regress_msch.rls TO PUBLIC;
RESET ROLE;
SET ROLE regress_mon;
SELECT err($$SELECT shardid_rows_count('regress_msch.secret')$$);
SELECT err($$SELECT shardid_rows_exist('regress_msch.secret', 'id', NULL, NULL)$$);
SELECT err($$SELECT shardid_rows_min('regress_msch.secret', 'id', 0)$$);
SELECT err($$SELECT * FROM shardid_rows_bounds('regress_msch.secret', 'id')$$);
SELECT err($$SELECT shardid_rows_count('regress_msch.rls')$$);
SELECT err($$SELECT shardid_as_owner('regress_msch.secret', 'SELECT 1')$$);
SELECT err($$SELECT shardid_rows_exist(NULL, 'id', NULL, NULL)$$);
SELECT err($$SELECT shardid_rows_exist('regress_msch.pv_default', NULL, NULL, NULL)$$);
SELECT err($$SELECT shardid_rows_count('pg_catalog.pg_class')$$) ~ '^42501' AS refused;
SELECT err($$SELECT shardid_rows_count('pg_catalog.pg_roles')$$);
SELECT shardid_rows_count('regress_msch.pv_default') AS rows_as_owner;
RESET ROLE;
SELECT * FROM pg_temp.runs();

-- a column of another type than bigint never passes through as one
-- (numeric's min is a pointer: its address must not come back)
SET ROLE regress_mallory;
CREATE TABLE regress_msch.num (id numeric);
INSERT INTO regress_msch.num VALUES (1.5), (2);
SELECT err($$SELECT shardid_rows_min('regress_msch.num', 'id', 0)$$);
SELECT shardid_rows_exist('regress_msch.num', 'id', 1, 2) AS num_exists;
SELECT * FROM shardid_rows_bounds('regress_msch.num', 'id');
RESET ROLE;

-- The trap works: the same count run as the superuser herself, as
-- shardid_partition_status did up to 1.3, calls as_other.
SELECT count(*) FROM ONLY regress_msch.pv_default;
SELECT * FROM pg_temp.runs();

-- Every function of the extension that reads or writes a user's table.
-- A query over a table found by name, built with format(), runs as the
-- caller: it is allowed only where the caller has been checked to be the
-- table's owner first (the moves and deletes of partition maintenance,
-- whose triggers must run as the owner).  Everything else reads through
-- the owner-switched functions of src/owner.c.  A new function that
-- queries a table must be added here, with its reason.
SELECT p.oid::regprocedure AS function
  FROM pg_proc AS p
  JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
   AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  JOIN pg_extension AS e ON e.oid = d.refobjid AND e.extname = 'shardid'
 WHERE p.prolang <> (SELECT oid FROM pg_language WHERE lanname = 'c')
   AND p.prosrc ~ 'format\(\s*''\s*(WITH|SELECT|TABLE|DELETE|INSERT|UPDATE|MERGE|COPY)\M'
   AND p.proname NOT IN ('shardid_partition_move', 'shardid_partition_drop')
 ORDER BY 1::text;
-- the two allowed: each refuses any role but the table's owner before its
-- DELETE
SELECT p.proname,
	   strpos(p.prosrc, 'must be owner of table') BETWEEN 1 AND strpos(p.prosrc, 'DELETE FROM ONLY')
		AS owner_checked_first
  FROM pg_proc AS p
 WHERE p.proname IN ('shardid_partition_move', 'shardid_partition_drop')
 ORDER BY 1;
-- the functions that read through src/owner.c
SELECT p.oid::regprocedure AS function
  FROM pg_proc AS p
  JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
   AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  JOIN pg_extension AS e ON e.oid = d.refobjid AND e.extname = 'shardid'
 WHERE p.prosrc ~ 'shardid_(rows_[a-z]+|as_owner)\('
 ORDER BY 1::text;
-- every C function: each new one is looked at (those that read a user's
-- table: src/owner.c's, and the fence's sequence I/O, as the owner)
SELECT p.proname, p.prosrc
  FROM pg_proc AS p
  JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
   AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  JOIN pg_extension AS e ON e.oid = d.refobjid AND e.extname = 'shardid'
 WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
 ORDER BY 1, 2;
-- the views call only functions
SELECT c.relname,
	   (SELECT array_agg(DISTINCT dc.relname ORDER BY dc.relname)
		  FROM pg_depend AS v JOIN pg_rewrite AS r ON r.oid = v.objid
		  JOIN pg_class AS dc ON dc.oid = v.refobjid
		 WHERE v.classid = 'pg_rewrite'::regclass AND r.ev_class = c.oid
		   AND v.refclassid = 'pg_class'::regclass AND dc.oid <> c.oid) AS reads_tables
  FROM pg_class AS c
  JOIN pg_depend AS d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
   AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
 WHERE c.relkind = 'v'
 ORDER BY 1;

DROP SCHEMA regress_msch CASCADE;
DELETE FROM shardid_partition_log WHERE parent NOT IN (SELECT oid FROM pg_class);
REVOKE CREATE ON DATABASE :"DBNAME" FROM regress_mallory;
DROP ROLE regress_mallory;
DROP ROLE regress_mon;
