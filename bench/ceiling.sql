-- bench/ceiling.sql: comparison 2, one sequence under bulk demand.
--
-- Each generator fills an array with :n IDs from one sequence as fast as
-- the session can call it (array_agg keeps the loop itself cheap, so the
-- demand is well above 1,024 IDs per millisecond), then the IDs go into
-- bench.ceiling_ids, which has no unique index, and are counted there.
-- IDs per millisecond are measured from the IDs themselves: n over the
-- milliseconds from the first ID's to the last ID's, inclusive.
--
--   shardid   shardid_next(0, seq)
--   plpgsql   bench.ig_next(0, seq), the PL/pgSQL function of the scheme
--   sql       the scheme as one SQL expression
--
-- psql variable: n.

\set ON_ERROR_STOP on
SET work_mem = '512MB';
SET jit = off;

CREATE FUNCTION bench.run_ceiling(n bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
	methods		text[] := ARRAY['shardid', 'plpgsql', 'sql'];
	exprs		text[] := ARRAY[
		'shardid_next(0, ''bench.ceil_seq_shardid'')',
		'bench.ig_next(0, ''bench.ceil_seq_plpgsql'')',
		'((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1293840000000) << 23)'
		' | (0::bigint << 10) | (nextval(''bench.ceil_seq_sql'') % 1024)'];
	m			int;
	ids			bigint[];
	t0			timestamptz;
	secs		float8;
BEGIN
	FOR m IN 1 .. 3 LOOP
		t0 := clock_timestamp();
		EXECUTE format('SELECT array_agg(%s) FROM generate_series(1, $1)', exprs[m])
			INTO ids USING n;
		secs := extract(epoch FROM clock_timestamp() - t0);
		INSERT INTO bench.ceiling_ids SELECT methods[m], unnest(ids);
		INSERT INTO bench.ceiling
		SELECT methods[m], count(*), secs, count(DISTINCT id),
			   count(*) - count(DISTINCT id),
			   min(id >> 23), max(id >> 23)
		  FROM bench.ceiling_ids WHERE method = methods[m];
	END LOOP;
END
$fn$;

SELECT bench.run_ceiling(:n);

-- How often shardid_next waited for the next millisecond.
INSERT INTO bench.info
SELECT 'ceiling_exhausted_waits', exhausted_waits::text
  FROM shardid_stats WHERE sequence = 'bench.ceil_seq_shardid'::regclass;
