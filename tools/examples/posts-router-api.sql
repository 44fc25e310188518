-- posts-router-api.sql: the functions applications call on the router, for
-- the posts example.  Apply with `shardid-fleet router --api`; it is rerun
-- on every router update, so it only uses CREATE OR REPLACE.
--
-- PL/Proxy cluster 'shardid' has one partition per logical shard (8,192),
-- so a logical shard number is the partition number:
--   by ID     RUN ON shardid_shard(id)      the shard is in the ID's bits
--   by user   RUN ON <the user's shard>     posts_user_shard(user_id)
-- Each PL/Proxy function runs the function of the same name and arguments
-- on the data server that holds the partition (posts-shard-api.sql).
--
-- Every function runs with search_path = pg_catalog, public: no schema of
-- another role (one named after the caller comes first on the default
-- search_path) can stand in for a function it calls.

-- The application's choice of a user's logical shard: 64 shards in use.
-- A user keeps this shard for good; moving the shard between servers does
-- not change it.
CREATE OR REPLACE FUNCTION posts_user_shard(user_id bigint)
RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, public
AS $$ SELECT (user_id % 64)::integer $$;

-- by user: insert posts (arrays are split per server)
CREATE OR REPLACE FUNCTION insert_posts_on(shards integer[], user_ids bigint[], bodies text[])
RETURNS TABLE (id bigint, user_id bigint, body text)
LANGUAGE plproxy
SET search_path = pg_catalog, public
AS $$
	CLUSTER 'shardid';
	SPLIT ALL;
	RUN ON shards;
$$;

CREATE OR REPLACE FUNCTION insert_posts(user_ids bigint[], bodies text[])
RETURNS TABLE (id bigint, user_id bigint, body text)
LANGUAGE sql
SET search_path = pg_catalog, public
AS $$
	SELECT * FROM insert_posts_on(
		ARRAY(SELECT posts_user_shard(u) FROM unnest(user_ids) WITH ORDINALITY AS t(u, n) ORDER BY n),
		user_ids, bodies)
$$;

-- by user: insert one post, returning its ID
CREATE OR REPLACE FUNCTION insert_post_on(shard integer, user_id bigint, body text)
RETURNS bigint
LANGUAGE plproxy
SET search_path = pg_catalog, public
AS $$
	CLUSTER 'shardid';
	RUN ON shard;
$$;

CREATE OR REPLACE FUNCTION insert_post(user_id bigint, body text)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, public
AS $$ SELECT insert_post_on(posts_user_shard(user_id), user_id, body) $$;

-- by ID: one post
CREATE OR REPLACE FUNCTION get_post(post_id bigint)
RETURNS TABLE (id bigint, user_id bigint, body text, posted_at timestamptz)
LANGUAGE plproxy
SET search_path = pg_catalog, public
AS $$
	CLUSTER 'shardid';
	RUN ON shardid_shard(post_id);
$$;

-- by ID: many posts (the IDs are split per server)
CREATE OR REPLACE FUNCTION get_posts(post_ids bigint[])
RETURNS TABLE (id bigint, user_id bigint, body text, posted_at timestamptz)
LANGUAGE plproxy
SET search_path = pg_catalog, public
AS $$
	CLUSTER 'shardid';
	SPLIT post_ids;
	RUN ON shardid_shard(post_ids);
$$;

-- by user: a user's posts
CREATE OR REPLACE FUNCTION get_user_posts_on(shard integer, for_user bigint)
RETURNS TABLE (id bigint, user_id bigint, body text, posted_at timestamptz)
LANGUAGE plproxy
SET search_path = pg_catalog, public
AS $$
	CLUSTER 'shardid';
	RUN ON shard;
$$;

CREATE OR REPLACE FUNCTION get_user_posts(for_user bigint)
RETURNS TABLE (id bigint, user_id bigint, body text, posted_at timestamptz)
LANGUAGE sql
SET search_path = pg_catalog, public
AS $$ SELECT * FROM get_user_posts_on(posts_user_shard(for_user), for_user) $$;

-- every server: all live posts with the schema that holds them
CREATE OR REPLACE FUNCTION posts_here()
RETURNS TABLE (shard_schema text, id bigint, user_id bigint, body text)
LANGUAGE plproxy
SET search_path = pg_catalog, public
AS $$
	CLUSTER 'shardid';
	RUN ON ALL;
$$;
