#!/usr/bin/env bash
# demo/run.sh: shardid's main job on an embedded default.
#
# As root, installs the Debian packages it needs and says which (make, gcc,
# rsync, postgresql-NN and postgresql-server-dev-NN; NN is PG_MAJOR, by
# default the newest server installed, else the Debian release's own).
# Builds shardid into a private copy of PostgreSQL $PG_MAJOR under /tmp (the
# system's installation is not touched), starts a throwaway cluster with it
# preloaded (port: SHARDID_PORT, else a free one), lays out
# four logical shards as schemas with a posts table whose id defaults to
# shardid_next, inserts posts for several users, prints each ID beside its
# decoded time and shard, runs a "created since" query on shardid_floor,
# and stops the cluster.  Leaves nothing running.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
. test/cluster.sh

install_packages make gcc rsync postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR

work=$(mktemp -d /tmp/shardid-demo.XXXXXX)
chmod 755 "$work"
trap 'cluster_stop "$work/data"; rm -rf "$work"' EXIT
# build and install into a private copy of PostgreSQL under $work
private_install "$work/pg" >/dev/null
cluster_start "$work/data"
echo "cluster started in $work/data (port $PGPORT)"

"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 <<'SQL'
\pset footer off
SET timezone = 'UTC';
CREATE EXTENSION shardid;

\echo
\echo '== One schema per logical shard, laid out from a template: shard_0000..shard_0003'
-- Users map to logical shards by user_id % 4 here; a real fleet has
-- thousands of logical shards spread over a few servers.
CREATE SCHEMA template;
CREATE TABLE template.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
SELECT p.* FROM generate_series(0, 3) AS n, shardid_provision_shard(n, 'template') AS p;
\d shard_0001.posts

\echo '== Posts for eight users, each written to its user''s shard'
DO $$
DECLARE u int; i int;
BEGIN
  FOR i IN 1..3 LOOP
    FOR u IN 31337..31344 LOOP
      EXECUTE format('INSERT INTO %I.posts (user_id, caption) VALUES ($1, $2)', shardid_shard_schema(u % 4))
        USING u, format('post %s of user %s', i, u);
    END LOOP;
  END LOOP;
END $$;

CREATE VIEW all_posts AS
  SELECT * FROM shard_0000.posts UNION ALL SELECT * FROM shard_0001.posts
  UNION ALL SELECT * FROM shard_0002.posts UNION ALL SELECT * FROM shard_0003.posts;

\echo '== Every ID says when it was made and which shard holds it'
SELECT p.id, d.created_at, d.shard, d.seq, p.user_id, p.user_id % 4 AS user_shard,
       shardid_to_shortcode(p.id) AS shortcode
  FROM all_posts p, shardid_decode(p.id) d
 ORDER BY p.id;

\echo '== Routing by bit shift: (id >> 10) & 8191 is the shard, no lookup needed'
SELECT shardid_shard(id) AS shard, count(*) AS posts,
       bool_and(shardid_shard(id) = user_id % 4) AS every_post_on_its_users_shard
  FROM all_posts GROUP BY 1 ORDER BY 1;

\echo '== "Created since": a range scan on the primary key, no timestamp column'
DO $$ BEGIN PERFORM pg_sleep(0.05); END $$;
SELECT clock_timestamp() AS since \gset
INSERT INTO shard_0002.posts (user_id, caption) VALUES (31338, 'a late post'), (31342, 'another late post');
SELECT id, shardid_created_at(id) AS created_at, caption
  FROM shard_0002.posts WHERE id >= shardid_floor(:'since') ORDER BY id;
EXPLAIN (COSTS OFF)
  SELECT id FROM shard_0002.posts WHERE id >= shardid_floor(:'since');

\echo '== The published example decodes as published'
SELECT * FROM shardid_decode(4185136929178974185);
SELECT shardid_horizon() AS last_usable_millisecond;

\echo '== What the guard saw'
SELECT sequence, ids_issued, exhausted_waits, clock_waits, fence_waits, clock_refusals FROM shardid_stats ORDER BY 1;

\echo '== The durable fence: stored in the database, ahead of every ID it issued'
SELECT datname, state, writes,
       fence_time >= (SELECT max(shardid_created_at(id)) FROM all_posts) AS ahead_of_every_post
  FROM shardid_fence_status WHERE datname = current_database();
SQL
echo
echo "demo done; stopping the cluster"
