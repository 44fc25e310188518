-- bench/pgbench-setup.sql: tables for comparison 5, concurrency.
--
-- Two tables per method, for shards 0 and 1, each with a primary key; the
-- shardid tables draw from a sequence of their own with their own shard.
-- bench/insert.pgbench inserts one row per transaction into table :tab.
-- Two clients on one shard both write to <method>_0; on their own shards
-- one writes to <method>_0 and the other to <method>_1.

\set ON_ERROR_STOP on
SELECT format('CREATE TABLE pg_bigserial_%s (id bigserial PRIMARY KEY)', s),
	   format('CREATE SEQUENCE pg_shardid_seq_%s', s),
	   format('CREATE TABLE pg_shardid_%s (id bigint PRIMARY KEY DEFAULT shardid_next(%s, %L))',
			  s, s, 'pg_shardid_seq_' || s),
	   format('CREATE TABLE pg_uuid_%s (id uuid PRIMARY KEY DEFAULT gen_random_uuid())', s)
  FROM generate_series(0, 1) AS s \gexec
