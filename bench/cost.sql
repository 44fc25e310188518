-- bench/cost.sql: comparison 1, cost per ID net of an empty loop.
--
-- Every generator runs as SELECT count(f(...)) FROM generate_series(1, n),
-- repeated :reps times, the methods interleaved and their order rotated
-- each repetition.  Two empty loops of the same shapes are timed in the
-- same repetitions:
--   base_args   count(seqs[i % 16 + 1]): the argument of nextval,
--               shardid_next and ig_next, spread over 16 sequences so that
--               no sequence comes near 1,024 IDs per millisecond
--   base_plain  count(i): the loop that gen_random_uuid() sits in
-- The net cost of a method in one repetition is its time minus its empty
-- loop's time in that repetition.
--
-- psql variables: n (loop length), reps.  bench/compare.sh calls
-- bench.run_cost again with later first_rep values.

\set ON_ERROR_STOP on
SET work_mem = '512MB';		-- keep generate_series' tuplestore in memory
SET jit = off;

CREATE FUNCTION bench.run_cost(n bigint, reps int, first_rep int DEFAULT 1) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
	seqs		regclass[];
	methods		text[] := ARRAY['base_args', 'nextval', 'shardid_next',
								'plpgsql', 'base_plain', 'gen_random_uuid'];
	queries		text[] := ARRAY[
		'SELECT count(($2::regclass[])[i % 16 + 1]) FROM generate_series(1, $1::int) AS i',
		'SELECT count(nextval(($2::regclass[])[i % 16 + 1])) FROM generate_series(1, $1::int) AS i',
		'SELECT count(shardid_next(i % 16, ($2::regclass[])[i % 16 + 1])) FROM generate_series(1, $1::int) AS i',
		'SELECT count(bench.ig_next(i % 16, ($2::regclass[])[i % 16 + 1])) FROM generate_series(1, $1::int) AS i',
		'SELECT count(i) FROM generate_series(1, $1::int) AS i',
		'SELECT count(gen_random_uuid()) FROM generate_series(1, $1::int) AS i'];
	m			int;
	k			int;
	r			int;
	t0			timestamptz;
	got			bigint;
BEGIN
	SELECT array_agg(format('bench.cost_seq_%s', g)::regclass ORDER BY g)
	  INTO seqs FROM generate_series(0, 15) AS g;

	-- warm-up: caches, the guard's entries, the function's plan
	FOR m IN 1 .. array_length(methods, 1) LOOP
		EXECUTE queries[m] INTO got USING least(n, 10000), seqs;
	END LOOP;

	FOR r IN first_rep .. first_rep + reps - 1 LOOP
		FOR k IN 0 .. array_length(methods, 1) - 1 LOOP
			m := (k + r - 1) % array_length(methods, 1) + 1;
			t0 := clock_timestamp();
			EXECUTE queries[m] INTO got USING n, seqs;
			INSERT INTO bench.cost
				VALUES (r, k + 1, methods[m], n,
						extract(epoch FROM clock_timestamp() - t0));
			IF got <> n THEN
				RAISE EXCEPTION 'method % counted % of % rows', methods[m], got, n;
			END IF;
		END LOOP;
	END LOOP;
END
$fn$;

SELECT bench.run_cost(:n, :reps);

-- Did any of the 16 sequences have to wait for the next millisecond?
INSERT INTO bench.info
SELECT 'cost_exhausted_waits', coalesce(sum(exhausted_waits), 0)::text
  FROM shardid_stats WHERE sequence::text LIKE 'bench.cost_seq_%';
