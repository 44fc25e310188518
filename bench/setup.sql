-- bench/setup.sql: the objects every comparison of bench/run.sh uses.
--
-- Run once in a fresh database of the throwaway cluster.  Results go to
-- tables in the schema "bench"; run.sh copies them out as CSV.

\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE EXTENSION shardid;
CREATE SCHEMA bench;

--
-- The published Instagram scheme, written for this benchmark:
--   id = (ms since 2011-01-01 << 23) | (shard << 10) | (nextval(seq) % 1024)
-- as one RETURN expression, the cheapest form PL/pgSQL allows, so that the
-- comparison errs in its favour.  It has no guard: past 1,024 calls per
-- millisecond on one sequence it repeats itself.
--
CREATE FUNCTION bench.ig_next(shard int, seq regclass)
RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $fn$
BEGIN
	RETURN ((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
			 - 1293840000000) << 23)
		| (shard::bigint << 10)
		| (nextval(seq) % 1024);
END
$fn$;

-- Sixteen sequences for the cost per ID (comparison 1).
SELECT format('CREATE SEQUENCE bench.cost_seq_%s', g)
  FROM generate_series(0, 15) AS g \gexec

-- One sequence per generator for the ceiling (comparison 2).
CREATE SEQUENCE bench.ceil_seq_shardid;
CREATE SEQUENCE bench.ceil_seq_plpgsql;
CREATE SEQUENCE bench.ceil_seq_sql;

-- Raw results.
CREATE TABLE bench.cost (rep int, pos int, method text, n bigint, seconds float8);
CREATE TABLE bench.ceiling_ids (method text, id bigint);	-- no unique index
CREATE TABLE bench.ceiling (method text, n bigint, seconds float8,
							distinct_ids bigint, duplicates bigint,
							first_ms bigint, last_ms bigint);
CREATE TABLE bench.bulk (method text, chunk int, rows_before bigint,
						 rows_after bigint, seconds float8, status text);
CREATE TABLE bench.bulk_size (method text, table_rows bigint,
							  index_bytes bigint, heap_bytes bigint);
CREATE TABLE bench.pgbench (rep int, method text, clients int, layout text,
							tps float8);
CREATE TABLE bench.info (key text, value text);
