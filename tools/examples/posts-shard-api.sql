-- posts-shard-api.sql: the functions PL/Proxy calls on every data server,
-- for the posts example.  Apply with `shardid-fleet apply --api`; it is
-- rerun on every apply, so it only uses CREATE OR REPLACE.
--
-- The router calls a function of the same name and arguments here.  Each
-- one finds the logical shard's schema (shard_NNNN) and fails, rather than
-- returning nothing, when this server does not hold the shard: the router's
-- map may have just changed, and the caller should retry.  It fails with
-- SQLSTATE 40001 (serialization_failure), which drivers and ORMs already
-- retry, as does a write that meets a shard fenced by a move.
--
-- Every function runs with search_path = pg_catalog, public: no schema of
-- another role (one named after the caller comes first on the default
-- search_path) can stand in for a function it calls.

-- The schema of logical shard s, if this server holds it.
CREATE OR REPLACE FUNCTION posts_shard_schema(s integer)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public
AS $$
DECLARE
	nsp text := shardid_shard_schema(s);
BEGIN
	IF to_regclass(format('%I.posts', nsp)) IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'serialization_failure',
			MESSAGE = format('logical shard %s is not on this server', s),
			DETAIL = format('Schema "%s" with table "posts" does not exist here.', nsp),
			HINT = 'The shard may have moved; retry through the router.';
	END IF;
	RETURN nsp;
END
$$;

-- Insert posts; shards[i] is the logical shard of user_ids[i].
CREATE OR REPLACE FUNCTION insert_posts_on(shards integer[], user_ids bigint[], bodies text[])
RETURNS TABLE (id bigint, user_id bigint, body text)
LANGUAGE plpgsql
SET search_path = pg_catalog, public
AS $$
DECLARE
	s integer;
BEGIN
	FOR s IN SELECT DISTINCT x FROM unnest(shards) AS x ORDER BY 1 LOOP
		RETURN QUERY EXECUTE format(
			'INSERT INTO %I.posts AS p (user_id, body)
			 SELECT t.u, t.b FROM unnest($1, $2, $3) AS t(s, u, b) WHERE t.s = $4
			 RETURNING p.id, p.user_id, p.body', posts_shard_schema(s))
			USING shards, user_ids, bodies, s;
	END LOOP;
EXCEPTION
	-- the shard moved away while this insert waited for it
	WHEN undefined_table OR invalid_schema_name THEN
		RAISE EXCEPTION USING
			ERRCODE = 'serialization_failure',
			MESSAGE = 'a logical shard of this insert is not on this server',
			DETAIL = SQLERRM,
			HINT = 'The shard moved; retry through the router.';
END
$$;

CREATE OR REPLACE FUNCTION insert_post_on(shard integer, user_id bigint, body text)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, public
AS $$
	SELECT p.id FROM insert_posts_on(ARRAY[shard], ARRAY[user_id], ARRAY[body]) AS p
$$;

CREATE OR REPLACE FUNCTION get_post(post_id bigint)
RETURNS TABLE (id bigint, user_id bigint, body text, posted_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public
AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT p.id, p.user_id, p.body, p.posted_at FROM %I.posts AS p WHERE p.id = $1',
		posts_shard_schema(shardid_shard(post_id)))
		USING post_id;
END
$$;

CREATE OR REPLACE FUNCTION get_posts(post_ids bigint[])
RETURNS TABLE (id bigint, user_id bigint, body text, posted_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public
AS $$
DECLARE
	s integer;
BEGIN
	FOR s IN SELECT DISTINCT shardid_shard(x) FROM unnest(post_ids) AS x ORDER BY 1 LOOP
		RETURN QUERY EXECUTE format(
			'SELECT p.id, p.user_id, p.body, p.posted_at FROM %I.posts AS p
			  WHERE p.id = ANY ($1)', posts_shard_schema(s))
			USING post_ids;
	END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION get_user_posts_on(shard integer, for_user bigint)
RETURNS TABLE (id bigint, user_id bigint, body text, posted_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public
AS $$
BEGIN
	RETURN QUERY EXECUTE format(
		'SELECT p.id, p.user_id, p.body, p.posted_at FROM %I.posts AS p
		  WHERE p.user_id = $1 ORDER BY p.id', posts_shard_schema(shard))
		USING for_user;
END
$$;

-- Every post in every live logical shard of this server (schemas named
-- shard_NNNN; retired copies are left out), with its schema.
CREATE OR REPLACE FUNCTION posts_here()
RETURNS TABLE (shard_schema text, id bigint, user_id bigint, body text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public
AS $$
DECLARE
	nsp text;
BEGIN
	FOR nsp IN SELECT n.nspname FROM pg_namespace AS n
				WHERE n.nspname ~ '^shard_[0-9]{4}$'
				  AND to_regclass(format('%I.posts', n.nspname)) IS NOT NULL
				ORDER BY 1 LOOP
		RETURN QUERY EXECUTE format(
			'SELECT %L::text, p.id, p.user_id, p.body FROM %I.posts AS p', nsp, nsp);
	END LOOP;
END
$$;
