-- bench/bulk.sql: comparisons 3 and 4, bulk inserts, index size, growth.
--
-- Four tables with a primary key on their only column, id:
--   bulk_bigserial  bigserial
--   bulk_shardid    bigint DEFAULT shardid_next(0, seq)
--   bulk_uuid       uuid DEFAULT gen_random_uuid()
--   bulk_plpgsql    bigint DEFAULT bench.ig_next(0, seq)
-- Each receives :total rows in chunks of :chunk rows, one
-- INSERT ... SELECT FROM generate_series(1, :chunk) per chunk and
-- transaction.  The methods take turns chunk by chunk, so drift of the
-- machine's speed falls on all of them alike, and a CHECKPOINT (not timed)
-- precedes every chunk, so each starts with a clean buffer pool.  The time
-- of comparison 3 is the sum of the chunks' times; comparison 4 is the rate
-- of each chunk against the table's size.
--
-- bulk_plpgsql has a primary key like the others: a chunk in which the
-- PL/pgSQL function repeats an ID fails with a duplicate-key error, is
-- rolled back, and is recorded with that status.
--
-- psql variables: total, chunk.

\set ON_ERROR_STOP on
SET work_mem = '512MB';
SET jit = off;

CREATE SEQUENCE bench.bulk_shardid_seq;
CREATE SEQUENCE bench.bulk_plpgsql_seq;
CREATE TABLE bench.bulk_bigserial (id bigserial PRIMARY KEY);
CREATE TABLE bench.bulk_shardid (
	id bigint PRIMARY KEY DEFAULT shardid_next(0, 'bench.bulk_shardid_seq'));
CREATE TABLE bench.bulk_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid());
CREATE TABLE bench.bulk_plpgsql (
	id bigint PRIMARY KEY DEFAULT bench.ig_next(0, 'bench.bulk_plpgsql_seq'));

-- One chunk into one table; returns the status.
CREATE FUNCTION bench.bulk_chunk(method text, chunk bigint, OUT status text)
LANGUAGE plpgsql AS $fn$
BEGIN
	EXECUTE format('INSERT INTO bench.%I SELECT FROM generate_series(1, $1)',
				   'bulk_' || method) USING chunk;
	status := 'ok';
EXCEPTION WHEN unique_violation THEN
	status := 'duplicate key';
END
$fn$;

CREATE PROCEDURE bench.run_bulk(total bigint, chunk bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
	methods		text[] := ARRAY['bigserial', 'shardid', 'uuid', 'plpgsql'];
	c			int := 0;
	k			int;
	m			int;
	done		bigint[] := ARRAY[0, 0, 0, 0];	-- rows in each table
	before		bigint;
	after		bigint;
	st			text;
	t0			timestamptz;
	secs		float8;
BEGIN
	WHILE c * chunk < total LOOP
		c := c + 1;
		FOR k IN 0 .. 3 LOOP
			m := (k + c - 1) % 4 + 1;	-- rotate who goes first
			before := done[m];
			CHECKPOINT;
			COMMIT;
			t0 := clock_timestamp();
			st := bench.bulk_chunk(methods[m], chunk);
			COMMIT;
			secs := extract(epoch FROM clock_timestamp() - t0);
			after := before + CASE WHEN st = 'ok' THEN chunk ELSE 0 END;
			done[m] := after;
			INSERT INTO bench.bulk VALUES (methods[m], c, before, after, secs, st);
			COMMIT;
		END LOOP;
	END LOOP;
END
$fn$;

CALL bench.run_bulk(:total, :chunk);

INSERT INTO bench.bulk_size
SELECT m, (SELECT max(rows_after) FROM bench.bulk b WHERE b.method = m),
	   pg_relation_size(format('bench.bulk_%s_pkey', m)::regclass),
	   pg_relation_size(format('bench.bulk_%s', m)::regclass)
  FROM unnest(ARRAY['bigserial', 'shardid', 'uuid', 'plpgsql']) AS m;

-- How often shardid_next waited for the next millisecond while loading.
INSERT INTO bench.info
SELECT 'bulk_exhausted_waits', exhausted_waits::text
  FROM shardid_stats WHERE sequence = 'bench.bulk_shardid_seq'::regclass;
