--
-- shardid_provision_shard: one schema per logical shard, made from a
-- template; running it again creates only what is missing; bad shards and
-- schemas that hold something else are clear errors.
--
\set ECHO none
\getenv abs_srcdir PG_ABS_SRCDIR
\set err_file :abs_srcdir '/sql/include/err.sql'
\i :err_file
\set ECHO all
SET timezone = 'UTC';
\set SHOW_CONTEXT never

-- What a schema holds: relations with their kind, and id defaults.
CREATE FUNCTION pg_temp.prov_contents(s text)
RETURNS TABLE (relname name, relkind "char", id_default text)
LANGUAGE sql AS $$
  SELECT c.relname, c.relkind,
         (SELECT pg_get_expr(d.adbin, d.adrelid)
            FROM pg_attrdef d JOIN pg_attribute a
              ON a.attrelid = d.adrelid AND a.attnum = d.adnum
           WHERE d.adrelid = c.oid AND a.attname = 'id')
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = s
   ORDER BY c.relname
$$;

-- Default schema names: shard_ and four digits.
SELECT shardid_shard_schema(0), shardid_shard_schema(42), shardid_shard_schema(8191);
SELECT err($$SELECT shardid_shard_schema(-1)$$);
SELECT err($$SELECT shardid_shard_schema(8192)$$);

-- And back: the shard a schema so named stands for; any other name is
-- refused (22023), never read as some shard.
SELECT shardid_schema_shard('shard_0000'), shardid_schema_shard('shard_0042'),
       shardid_schema_shard('shard_8191'),
       shardid_schema_shard(shardid_shard_schema(1234)) = 1234 AS round_trip;
SELECT err($$SELECT shardid_schema_shard('shard_8192')$$);
SELECT err($$SELECT shardid_schema_shard('shard_42')$$);
SELECT err($$SELECT shardid_schema_shard('shard_00042')$$);
SELECT err($$SELECT shardid_schema_shard('Shard_0042')$$);
SELECT err($$SELECT shardid_schema_shard('tenant_0042')$$);
SELECT err($$SELECT shardid_schema_shard('shard_0042_retired_20260101')$$);
SELECT err($$SELECT shardid_schema_shard('shard_-042')$$);

-- The template: two tables with a bigint id.
CREATE SCHEMA tmpl;
CREATE TABLE tmpl.posts (
  id bigint PRIMARY KEY,
  user_id bigint NOT NULL,
  body text NOT NULL,
  posted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON tmpl.posts (user_id);
CREATE TABLE tmpl.likes (
  id bigint PRIMARY KEY,
  post_id bigint NOT NULL,
  user_id bigint NOT NULL,
  UNIQUE (post_id, user_id)
);

-- First run creates everything.
SELECT * FROM shardid_provision_shard(42, 'tmpl');
SELECT * FROM pg_temp.prov_contents('shard_0042');

-- The tables make IDs of shard 42 from their own sequences.
INSERT INTO shard_0042.posts (user_id, body)
SELECT u, 'post ' || u FROM generate_series(1, 2000) AS u;
INSERT INTO shard_0042.likes (post_id, user_id)
SELECT id, 7 FROM shard_0042.posts ORDER BY id LIMIT 5;
SELECT count(*) AS posts, count(DISTINCT id) AS distinct_ids,
       bool_and(shardid_shard(id) = 42) AS all_shard_42,
       bool_and(id > 0) AS all_positive
  FROM shard_0042.posts;
SELECT count(*) AS likes, bool_and(shardid_shard(id) = 42) AS all_shard_42
  FROM shard_0042.likes;
-- each table's own sequence carries the durable fence of its IDs
SELECT (last_value >> 10) - 1 >= (SELECT max(id) >> 23 FROM shard_0042.posts) AS posts_seq_fence
  FROM shard_0042.posts_id_seq;
SELECT (last_value >> 10) - 1 >= (SELECT max(id) >> 23 FROM shard_0042.likes) AS likes_seq_fence
  FROM shard_0042.likes_id_seq;

-- Running it again changes nothing: same catalog rows, same data.
CREATE TEMP TABLE before_rerun AS
  SELECT c.oid, c.relname, c.relkind FROM pg_class c
   WHERE c.relnamespace = 'shard_0042'::regnamespace;
SELECT * FROM shardid_provision_shard(42, 'tmpl');
SELECT (SELECT count(*) FROM before_rerun) AS relations_before,
       (SELECT count(*) FROM pg_class c
         WHERE c.relnamespace = 'shard_0042'::regnamespace) AS relations_after,
       (SELECT count(*) FROM pg_class c JOIN before_rerun b USING (oid)) AS same_oids,
       (SELECT count(*) FROM shard_0042.posts) AS posts;

-- A schema name of one's own.
SELECT * FROM shardid_provision_shard(7, 'tmpl', 'Seven');
SELECT * FROM pg_temp.prov_contents('Seven');
INSERT INTO "Seven".posts (user_id, body) VALUES (1, 'x');
SELECT shardid_shard(id) FROM "Seven".posts;

-- An empty schema of that name is filled in.
CREATE SCHEMA shard_0100;
SELECT * FROM shardid_provision_shard(100, 'tmpl');

-- A table added to the template: a rerun creates just that one.
CREATE TABLE tmpl.comments (id bigint PRIMARY KEY, post_id bigint, body text);
SELECT * FROM shardid_provision_shard(42, 'tmpl');
SELECT * FROM pg_temp.prov_contents('shard_0042');

-- Shards outside 0 to 8191.
SELECT err($$SELECT * FROM shardid_provision_shard(8192, 'tmpl')$$);
SELECT err($$SELECT * FROM shardid_provision_shard(-1, 'tmpl', 'minus_one')$$);
SELECT count(*) AS minus_one_schemas FROM pg_namespace WHERE nspname = 'minus_one';

-- Only in READ COMMITTED: an older snapshot would not see what other
-- roles made since (nothing is made).
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT err($$SELECT * FROM shardid_provision_shard(9, 'tmpl')$$);
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT err($$SELECT * FROM shardid_provision_shard(9, 'tmpl')$$);
ROLLBACK;
SELECT count(*) AS shard_9_schemas FROM pg_namespace WHERE nspname = shardid_shard_schema(9);

-- Bad templates.
SELECT err($$SELECT * FROM shardid_provision_shard(1, 'no_such_template')$$);
SELECT err($$SELECT * FROM shardid_provision_shard(1, 'tmpl', 'tmpl')$$);
SELECT err($$SELECT * FROM shardid_provision_shard(1, NULL)$$);
CREATE SCHEMA tmpl_empty;
SELECT err($$SELECT * FROM shardid_provision_shard(1, 'tmpl_empty')$$);
CREATE SCHEMA tmpl_noid;
CREATE TABLE tmpl_noid.t (key text PRIMARY KEY);
SELECT err($$SELECT * FROM shardid_provision_shard(1, 'tmpl_noid')$$);
CREATE SCHEMA tmpl_intid;
CREATE TABLE tmpl_intid.t (id integer PRIMARY KEY);
SELECT err($$SELECT * FROM shardid_provision_shard(1, 'tmpl_intid')$$);
CREATE SCHEMA tmpl_identity;
CREATE TABLE tmpl_identity.t (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY);
SELECT err($$SELECT * FROM shardid_provision_shard(1, 'tmpl_identity')$$);
SELECT count(*) AS shard_0001_schemas FROM pg_namespace WHERE nspname = 'shard_0001';

-- Schemas that exist with other contents, left as they were.
CREATE SCHEMA shard_0200;
CREATE TABLE shard_0200.stuff (x int);
SELECT err($$SELECT * FROM shardid_provision_shard(200, 'tmpl')$$);
SELECT * FROM pg_temp.prov_contents('shard_0200');

CREATE SCHEMA shard_0201;
CREATE TABLE shard_0201.posts (id bigint PRIMARY KEY, user_id bigint);
SELECT err($$SELECT * FROM shardid_provision_shard(201, 'tmpl')$$);

CREATE SCHEMA shard_0202;
CREATE FUNCTION shard_0202.f() RETURNS int LANGUAGE sql AS 'SELECT 1';
SELECT err($$SELECT * FROM shardid_provision_shard(202, 'tmpl')$$);

-- The schema of another shard: its defaults name the wrong shard.
SELECT err($$SELECT * FROM shardid_provision_shard(43, 'tmpl', 'shard_0042')$$);

-- A sequence without its table.
CREATE SCHEMA shard_0203;
CREATE SEQUENCE shard_0203.posts_id_seq;
SELECT err($$SELECT * FROM shardid_provision_shard(203, 'tmpl')$$);

-- Hardening (1.1): an existing schema is taken as it is only when the
-- caller or a superuser owns it and everything in it, nothing the template
-- lacks is attached, and no other role may attach code later.  The checks
-- run as a superuser role of this test's own, so that messages name it.
CREATE ROLE regress_prov_admin SUPERUSER;
CREATE ROLE regress_prov_mallory;
CREATE ROLE regress_prov_owner;
DO $$ BEGIN
  EXECUTE format('GRANT CREATE ON DATABASE %I TO regress_prov_mallory, regress_prov_owner',
                 current_database());
END $$;
CREATE SCHEMA regress_prov_mallory AUTHORIZATION regress_prov_mallory;
SET ROLE regress_prov_mallory;
CREATE FUNCTION regress_prov_mallory.pwn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  ALTER ROLE regress_prov_mallory SUPERUSER;
  RETURN NEW;
END $$;
RESET ROLE;
CREATE FUNCTION pg_temp.noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION pg_temp.mallory_is_superuser() RETURNS boolean LANGUAGE sql
AS $$ SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_prov_mallory' $$;

-- The review's repro: mallory pre-creates shard_0007 with a matching
-- posts table, the matching default, and a BEFORE INSERT trigger that
-- calls her function.  1.0 said "exists"; 1.1 refuses, naming her.
SET ROLE regress_prov_mallory;
CREATE SCHEMA shard_0007;
CREATE SEQUENCE shard_0007.posts_id_seq;
CREATE TABLE shard_0007.posts (
  id bigint PRIMARY KEY DEFAULT shardid_next(7, 'shard_0007.posts_id_seq'),
  user_id bigint NOT NULL,
  body text NOT NULL,
  posted_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER pwn BEFORE INSERT ON shard_0007.posts
  FOR EACH ROW EXECUTE FUNCTION regress_prov_mallory.pwn();
SET ROLE regress_prov_admin;
SELECT err($$SELECT * FROM shardid_provision_shard(7, 'tmpl')$$);
SELECT pg_temp.mallory_is_superuser();
SELECT * FROM pg_temp.prov_contents('shard_0007');

-- The operator's own schema, with CREATE granted to mallory, who made the
-- table: refused for the table's owner.
CREATE SCHEMA shard_0008;
GRANT USAGE, CREATE ON SCHEMA shard_0008 TO regress_prov_mallory;
SET ROLE regress_prov_mallory;
CREATE TABLE shard_0008.posts (id bigint PRIMARY KEY);
SET ROLE regress_prov_admin;
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
DROP TABLE shard_0008.posts;
-- Empty now, but mallory may still create objects in it.
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
SELECT count(*) AS shard_0008_relations FROM pg_class WHERE relnamespace = 'shard_0008'::regnamespace;
REVOKE CREATE ON SCHEMA shard_0008 FROM regress_prov_mallory;
SELECT * FROM shardid_provision_shard(8, 'tmpl');

-- TRIGGER granted on a shard table: mallory attaches her trigger.
GRANT TRIGGER ON shard_0008.posts TO regress_prov_mallory;
SET ROLE regress_prov_mallory;
CREATE TRIGGER pwn BEFORE INSERT ON shard_0008.posts
  FOR EACH ROW EXECUTE FUNCTION regress_prov_mallory.pwn();
SET ROLE regress_prov_admin;
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
DROP TRIGGER pwn ON shard_0008.posts;
-- The grant alone is refused too.
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
REVOKE TRIGGER ON shard_0008.posts FROM regress_prov_mallory;
GRANT CREATE ON SCHEMA shard_0008 TO PUBLIC;
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
REVOKE CREATE ON SCHEMA shard_0008 FROM PUBLIC;
-- Data privileges are the owner's business: kept as they are.
GRANT SELECT, INSERT ON shard_0008.posts TO regress_prov_mallory;
GRANT USAGE ON SEQUENCE shard_0008.posts_id_seq TO regress_prov_mallory;
SELECT action, count(*) FROM shardid_provision_shard(8, 'tmpl') GROUP BY 1;
SELECT pg_temp.mallory_is_superuser();

-- Triggers, rules, policies and inheritance the template lacks, even the
-- owner's own: refused with 55000.
CREATE TRIGGER audit BEFORE UPDATE ON shard_0008.likes FOR EACH ROW EXECUTE FUNCTION pg_temp.noop();
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
-- The template has it as well: accepted.
CREATE TRIGGER audit BEFORE UPDATE ON tmpl.likes FOR EACH ROW EXECUTE FUNCTION pg_temp.noop();
SELECT action, count(*) FROM shardid_provision_shard(8, 'tmpl') GROUP BY 1;
-- The same name on another event is not the same trigger.
DROP TRIGGER audit ON shard_0008.likes;
CREATE TRIGGER audit BEFORE DELETE ON shard_0008.likes FOR EACH ROW EXECUTE FUNCTION pg_temp.noop();
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
DROP TRIGGER audit ON shard_0008.likes;
DROP TRIGGER audit ON tmpl.likes;
CREATE RULE keep AS ON DELETE TO shard_0008.posts DO INSTEAD NOTHING;
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
DROP RULE keep ON shard_0008.posts;
CREATE POLICY mine ON shard_0008.posts USING (user_id = 1);
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
DROP POLICY mine ON shard_0008.posts;
CREATE TABLE public.posts_child () INHERITS (shard_0008.posts);
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
DROP TABLE public.posts_child;
SELECT action, count(*) FROM shardid_provision_shard(8, 'tmpl') GROUP BY 1;

-- Objects that are not relations.
CREATE OPERATOR shard_0008.=== (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = int8eq);
SELECT err($$SELECT * FROM shardid_provision_shard(8, 'tmpl')$$);
DROP OPERATOR shard_0008.=== (bigint, bigint);

-- The template is copied into every shard, so it must be trusted too.
CREATE SCHEMA tmpl_mallory AUTHORIZATION regress_prov_mallory;
SET ROLE regress_prov_mallory;
CREATE TABLE tmpl_mallory.posts (id bigint PRIMARY KEY);
SET ROLE regress_prov_admin;
SELECT err($$SELECT * FROM shardid_provision_shard(300, 'tmpl_mallory')$$);
GRANT USAGE, CREATE ON SCHEMA tmpl TO regress_prov_mallory;
SET ROLE regress_prov_mallory;
CREATE TABLE tmpl.zzz (id bigint PRIMARY KEY);
SET ROLE regress_prov_admin;
SELECT err($$SELECT * FROM shardid_provision_shard(300, 'tmpl')$$);
SELECT count(*) AS shard_0300_schemas FROM pg_namespace WHERE nspname = 'shard_0300';
DROP TABLE tmpl.zzz;
REVOKE USAGE, CREATE ON SCHEMA tmpl FROM regress_prov_mallory;

-- Default privileges that would hand TRIGGER to another role: a fresh
-- shard is refused as a rerun would be, and nothing is left behind.
ALTER DEFAULT PRIVILEGES FOR ROLE regress_prov_admin GRANT TRIGGER ON TABLES TO regress_prov_mallory;
SELECT err($$SELECT * FROM shardid_provision_shard(301, 'tmpl')$$);
SELECT count(*) AS shard_0301_schemas FROM pg_namespace WHERE nspname = 'shard_0301';
ALTER DEFAULT PRIVILEGES FOR ROLE regress_prov_admin REVOKE TRIGGER ON TABLES FROM regress_prov_mallory;

-- A named owner: provisioning run as that role makes the shard its own,
-- and a rerun as that role takes it as it is.  Others, even superusers,
-- are refused: they must provision as the owner (SET ROLE).
GRANT USAGE ON SCHEMA tmpl TO regress_prov_owner;
GRANT SELECT ON ALL TABLES IN SCHEMA tmpl TO regress_prov_owner;
SET ROLE regress_prov_owner;
SELECT * FROM shardid_provision_shard(9, 'tmpl');
SELECT action, count(*) FROM shardid_provision_shard(9, 'tmpl') GROUP BY 1;
SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = 'shard_0009'::regnamespace;
SELECT pg_get_userbyid(nspowner) AS schema_owner FROM pg_namespace WHERE nspname = 'shard_0009';
INSERT INTO shard_0009.posts (user_id, body) VALUES (9, 'mine') RETURNING shardid_shard(id);
SET ROLE regress_prov_admin;
SELECT err($$SELECT * FROM shardid_provision_shard(9, 'tmpl')$$);
SET ROLE regress_prov_mallory;
SELECT err($$SELECT * FROM shardid_provision_shard(9, 'tmpl')$$);
SET ROLE regress_prov_admin;

-- Names are counted in bytes.  A schema name longer than 63 bytes is
-- refused rather than truncated.
SELECT err(format('SELECT * FROM shardid_provision_shard(10, %L, %L)', 'tmpl', 'shard_' || repeat('x', 58)));
-- Long table names: two that share their first 56 characters get two
-- sequences, each within 63 bytes; a multibyte name is cut on a character
-- boundary.
CREATE SCHEMA tmpl_long;
DO $$ BEGIN
  EXECUTE format('CREATE TABLE tmpl_long.%I (id bigint PRIMARY KEY)', repeat('a', 56) || '_one');
  EXECUTE format('CREATE TABLE tmpl_long.%I (id bigint PRIMARY KEY)', repeat('a', 56) || '_two');
  EXECUTE format('CREATE TABLE tmpl_long.%I (id bigint PRIMARY KEY)', repeat('é', 30));
  EXECUTE format('CREATE TABLE tmpl_long.%I (id bigint PRIMARY KEY)', repeat('b', 56));
END $$;
SELECT kind, action FROM shardid_provision_shard(10, 'tmpl_long');
SELECT count(*) AS sequences, count(DISTINCT relname) AS distinct_names,
       bool_and(octet_length(relname) <= 63) AS all_fit,
       bool_and(relname ~ '_id_seq$') AS all_id_seq,
       count(*) FILTER (WHERE relname = repeat('b', 56) || '_id_seq') AS short_name_kept
  FROM pg_class WHERE relnamespace = 'shard_0010'::regnamespace AND relkind = 'S';
-- each table takes its IDs from its own sequence
SELECT count(DISTINCT pg_get_expr(d.adbin, d.adrelid)) AS distinct_defaults
  FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
 WHERE c.relnamespace = 'shard_0010'::regnamespace;
DO $$
DECLARE t regclass;
BEGIN
  FOR t IN SELECT oid FROM pg_class WHERE relnamespace = 'shard_0010'::regnamespace AND relkind = 'r' LOOP
    EXECUTE format('INSERT INTO %s DEFAULT VALUES', t);
  END LOOP;
END $$;
SELECT action, count(*) FROM shardid_provision_shard(10, 'tmpl_long') GROUP BY 1;
-- A table named like another's sequence: refused before anything is made.
CREATE SCHEMA tmpl_clash;
CREATE TABLE tmpl_clash.a (id bigint PRIMARY KEY);
CREATE TABLE tmpl_clash.a_id_seq (id bigint PRIMARY KEY);
SELECT err($$SELECT * FROM shardid_provision_shard(11, 'tmpl_clash')$$);
SELECT count(*) AS shard_0011_schemas FROM pg_namespace WHERE nspname = 'shard_0011';
-- An index that LIKE names after one table (a_pkey) does not take the
-- name of another table.
DROP TABLE tmpl_clash.a_id_seq, tmpl_clash.a;
CREATE TABLE tmpl_clash.a_pkey (id bigint PRIMARY KEY);
CREATE TABLE tmpl_clash.a (id bigint PRIMARY KEY);
SELECT * FROM shardid_provision_shard(11, 'tmpl_clash');
SELECT relname, relkind FROM pg_class WHERE relnamespace = 'shard_0011'::regnamespace ORDER BY 1;

-- Templates partitioned by RANGE (id): the shard gets a partitioned parent
-- with the same key and no partitions; the template's own partitions are
-- not tables of the template.
CREATE SCHEMA tmpl_part;
CREATE TABLE tmpl_part.events (
  id bigint PRIMARY KEY,
  kind text NOT NULL
) PARTITION BY RANGE (id);
CREATE TABLE tmpl_part.events_default PARTITION OF tmpl_part.events DEFAULT;
CREATE TABLE tmpl_part.users (id bigint PRIMARY KEY, name text);
SELECT * FROM shardid_provision_shard(12, 'tmpl_part');
SELECT c.relname, c.relkind, pg_get_partkeydef(c.oid) AS partition_key,
       (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = c.oid) AS partitions
  FROM pg_class c
 WHERE c.relnamespace = 'shard_0012'::regnamespace AND c.relkind IN ('r', 'p')
 ORDER BY 1;
-- Partitions added to the shard's parent are the shard's own.
CREATE TABLE shard_0012.events_p0 PARTITION OF shard_0012.events
  FOR VALUES FROM (shardid_floor('2011-01-01')) TO (shardid_floor('2045-11-01'));
CREATE TABLE shard_0012.events_default PARTITION OF shard_0012.events DEFAULT;
INSERT INTO shard_0012.events (kind) VALUES ('a'), ('b');
SELECT tableoid::regclass AS partition, count(*), bool_and(shardid_shard(id) = 12) AS shard_12
  FROM shard_0012.events GROUP BY 1;
SELECT action, count(*) FROM shardid_provision_shard(12, 'tmpl_part') GROUP BY 1;
-- A trigger of a partition's own (not a clone of the parent's): refused.
CREATE TRIGGER audit BEFORE INSERT ON shard_0012.events_p0 FOR EACH ROW EXECUTE FUNCTION pg_temp.noop();
SELECT err($$SELECT * FROM shardid_provision_shard(12, 'tmpl_part')$$);
DROP TRIGGER audit ON shard_0012.events_p0;
-- A shard table that is not partitioned where the template's is.
CREATE SCHEMA shard_0013;
CREATE SEQUENCE shard_0013.events_id_seq;
CREATE TABLE shard_0013.events (
  id bigint PRIMARY KEY DEFAULT shardid_next(13, 'shard_0013.events_id_seq'),
  kind text NOT NULL);
SELECT err($$SELECT * FROM shardid_provision_shard(13, 'tmpl_part')$$);
-- Other partitionings are refused.
CREATE SCHEMA tmpl_list;
CREATE TABLE tmpl_list.t (id bigint, k text) PARTITION BY LIST (k);
SELECT err($$SELECT * FROM shardid_provision_shard(14, 'tmpl_list')$$);
CREATE SCHEMA tmpl_hash;
CREATE TABLE tmpl_hash.t (id bigint) PARTITION BY HASH (id);
SELECT err($$SELECT * FROM shardid_provision_shard(14, 'tmpl_hash')$$);
CREATE SCHEMA tmpl_range2;
CREATE TABLE tmpl_range2.t (id bigint, k int) PARTITION BY RANGE (id, k);
SELECT err($$SELECT * FROM shardid_provision_shard(14, 'tmpl_range2')$$);
CREATE SCHEMA tmpl_rangex;
CREATE TABLE tmpl_rangex.t (id bigint) PARTITION BY RANGE ((id + 1));
SELECT err($$SELECT * FROM shardid_provision_shard(14, 'tmpl_rangex')$$);
SELECT count(*) AS shard_0014_schemas FROM pg_namespace WHERE nspname = 'shard_0014';

SELECT pg_temp.mallory_is_superuser();
RESET ROLE;

-- Clean up.
SET client_min_messages = warning;
DROP SCHEMA shard_0042, "Seven", shard_0100, shard_0200, shard_0201,
  shard_0202, shard_0203, tmpl, tmpl_empty, tmpl_noid, tmpl_intid,
  tmpl_identity CASCADE;
DROP SCHEMA shard_0007, shard_0008, shard_0009, shard_0010, shard_0011,
  shard_0012, shard_0013, tmpl_mallory, tmpl_long, tmpl_clash, tmpl_part,
  tmpl_list, tmpl_hash, tmpl_range2, tmpl_rangex, regress_prov_mallory CASCADE;
DO $$ BEGIN
  EXECUTE format('REVOKE CREATE ON DATABASE %I FROM regress_prov_mallory, regress_prov_owner',
                 current_database());
END $$;
DROP ROLE regress_prov_admin, regress_prov_mallory, regress_prov_owner;
