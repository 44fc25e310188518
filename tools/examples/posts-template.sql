-- posts-template.sql: the tables of one logical shard, for the posts example.
--
-- shardid-fleet apply runs this file once per data server, inside a fresh
-- template schema (shardid_template) that is first on the search_path, so
-- write the tables unqualified.  shardid_provision_shard() then copies each
-- table into every logical shard's schema (LIKE ... INCLUDING ALL) and gives
-- its "id" column a sequence of its own and the default
-- shardid_next(<shard>, '<schema>.<table>_id_seq').
--
-- Rules for a template: plain SQL (no psql commands); ordinary tables, or
-- tables partitioned by RANGE (id) (each shard gets the partitioned parent,
-- without partitions), each with a plain bigint column "id" (no identity,
-- no default needed).  Foreign keys are not copied by LIKE; keep references
-- inside one shard and check them in the application, or add them per
-- shard afterwards.  See docs/fleet.md.

CREATE TABLE posts (
	id bigint PRIMARY KEY,
	user_id bigint NOT NULL,
	body text NOT NULL,
	posted_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX posts_user_id_idx ON posts (user_id, id);
