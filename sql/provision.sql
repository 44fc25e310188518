--
-- shardid_provision_shard: one schema per logical shard, made from a
-- template; running it again creates only what is missing; bad shards and
-- schemas that hold something else are clear errors.
--
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
SELECT last_value AS posts_seq FROM shard_0042.posts_id_seq;
SELECT last_value AS likes_seq FROM shard_0042.likes_id_seq;

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

-- Clean up.
SET client_min_messages = warning;
DROP SCHEMA shard_0042, "Seven", shard_0100, shard_0200, shard_0201,
  shard_0202, shard_0203, tmpl, tmpl_empty, tmpl_noid, tmpl_intid,
  tmpl_identity CASCADE;
