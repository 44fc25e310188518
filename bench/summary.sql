-- bench/summary.sql: the table of ratios, as Markdown, from the raw
-- results in schema bench.  bench/run.sh writes its output to results.md.
--
-- Medians are over repetitions; a method's net cost in one repetition is
-- its time less the time of its empty loop in the same repetition.

\set ON_ERROR_STOP on
\pset format unaligned
\pset tuples_only on
SET search_path = bench, public;

CREATE FUNCTION bench.r(x float8, d int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT round(x::numeric, d)::text $$;
CREATE FUNCTION bench.n(x float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(x, 'FM999,999,999,999,990') $$;
CREATE FUNCTION bench.mb(x float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT round((x / 1048576)::numeric, 1)::text || ' MB' $$;
CREATE FUNCTION bench.yes(ok bool) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN ok THEN 'yes' ELSE '**no**' END $$;

-- comparison 1: median net ns per ID
CREATE TEMP VIEW cost_net AS
WITH t AS (
	SELECT c.rep, c.method, c.n, c.seconds,
		   c.seconds - b.seconds AS net
	  FROM bench.cost c
	  JOIN bench.cost b
		ON b.rep = c.rep
	   AND b.method = CASE WHEN c.method = 'gen_random_uuid' THEN 'base_plain'
						   ELSE 'base_args' END
	 WHERE c.method NOT LIKE 'base%')
SELECT method,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY net) / max(n) * 1e9 AS net_ns,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) / max(n) * 1e9 AS gross_ns,
	   count(*) AS reps, max(n) AS n
  FROM t GROUP BY method;

CREATE TEMP VIEW ceil AS
SELECT *, n::float8 / (last_ms - first_ms + 1) AS per_ms FROM bench.ceiling;

CREATE TEMP VIEW bulk_total AS
SELECT b.method, sum(b.seconds) AS seconds, max(b.rows_after) AS table_rows,
	   count(*) FILTER (WHERE b.status <> 'ok') AS failed_chunks,
	   count(*) AS chunks, s.index_bytes, s.heap_bytes
  FROM bench.bulk b JOIN bench.bulk_size s USING (method)
 GROUP BY b.method, s.index_bytes, s.heap_bytes;

-- every method but bigserial, with its name in the table
CREATE TEMP VIEW bulk_vs AS
SELECT *, CASE method WHEN 'shardid' THEN 'shardid_next'
					  WHEN 'uuid' THEN 'gen_random_uuid()'
					  ELSE 'PL/pgSQL function' END AS label
  FROM bulk_total WHERE method <> 'bigserial';

CREATE TEMP VIEW pgb AS
SELECT method, clients, layout,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS tps
  FROM bench.pgbench GROUP BY 1, 2, 3;

CREATE TEMP VIEW lines AS
-- 1. cost per ID
SELECT 10 AS ord, '1' AS nr,
	   'cost per ID, shardid_next / nextval (16 sequences)' AS what,
	   r(s.net_ns / v.net_ns, 3) || ' (' || r(s.net_ns, 0) || ' vs ' || r(v.net_ns, 0) || ' ns)' AS result,
	   '<= 1.25' AS target, yes(s.net_ns / v.net_ns <= 1.25) AS met
  FROM cost_net s, cost_net v WHERE s.method = 'shardid_next' AND v.method = 'nextval'
UNION ALL
SELECT 11, '1', 'cost per ID, PL/pgSQL function / shardid_next',
	   r(p.net_ns / s.net_ns, 2) || ' (' || r(p.net_ns, 0) || ' vs ' || r(s.net_ns, 0) || ' ns)',
	   '>= 10', yes(p.net_ns / s.net_ns >= 10)
  FROM cost_net s, cost_net p WHERE s.method = 'shardid_next' AND p.method = 'plpgsql'
UNION ALL
SELECT 12, '1', 'cost per ID, gen_random_uuid() / shardid_next',
	   r(u.net_ns / s.net_ns, 2) || ' (' || r(u.net_ns, 0) || ' vs ' || r(s.net_ns, 0) || ' ns)',
	   '', ''
  FROM cost_net s, cost_net u WHERE s.method = 'shardid_next' AND u.method = 'gen_random_uuid'
UNION ALL
SELECT 13, '1', 'cost per ID, PL/pgSQL function / nextval (the floor)',
	   r(p.net_ns / v.net_ns, 2), '', ''
  FROM cost_net v, cost_net p WHERE v.method = 'nextval' AND p.method = 'plpgsql'
UNION ALL
-- 2. the ceiling
SELECT 20, '2', 'one sequence, bulk demand: shardid_next IDs per ms',
	   r(per_ms, 0) || ' = ' || r(per_ms / 1024, 3) || ' x 1,024; ' || n(duplicates) || ' duplicates in ' || n(n),
	   '>= 0.95 x 1,024, 0 duplicates', yes(per_ms >= 0.95 * 1024 AND duplicates = 0)
  FROM ceil WHERE method = 'shardid'
UNION ALL
SELECT 21, '2', 'same workload: PL/pgSQL function duplicates',
	   n(duplicates) || ' of ' || n(n) || ' (' || r(per_ms, 0) || ' IDs per ms)', '', ''
  FROM ceil WHERE method = 'plpgsql'
UNION ALL
SELECT 22, '2', 'same workload: one-line SQL expression duplicates',
	   n(duplicates) || ' of ' || n(n) || ' (' || r(per_ms, 0) || ' IDs per ms)', '', ''
  FROM ceil WHERE method = 'sql'
UNION ALL
-- 3. bulk inserts and index size
SELECT 30 + CASE m.method WHEN 'shardid' THEN 0 WHEN 'uuid' THEN 2 ELSE 4 END,
	   '3', 'bulk insert time, ' || m.label || ' / bigserial',
	   r(m.seconds / b.seconds, 3) || ' (' || r(m.seconds, 1) || ' vs ' || r(b.seconds, 1) || ' s for '
		 || n(m.table_rows) || ' rows'
		 || CASE WHEN m.failed_chunks > 0
				 THEN '; ' || m.failed_chunks || ' of ' || m.chunks || ' chunks failed: duplicate key'
				 ELSE '' END || ')',
	   CASE WHEN m.method = 'shardid' THEN '<= 1.1' ELSE '' END,
	   CASE WHEN m.method = 'shardid' THEN yes(m.seconds / b.seconds <= 1.1) ELSE '' END
  FROM bulk_vs m, bulk_total b WHERE b.method = 'bigserial'
UNION ALL
SELECT 31 + CASE m.method WHEN 'shardid' THEN 0 WHEN 'uuid' THEN 2 ELSE 4 END,
	   '3', 'primary key index size, ' || m.label || ' / bigserial',
	   r(m.index_bytes::float8 / b.index_bytes, 3) || ' (' || mb(m.index_bytes) || ' vs ' || mb(b.index_bytes) || ')',
	   CASE WHEN m.method = 'shardid' THEN '<= 1.05' ELSE '' END,
	   CASE WHEN m.method = 'shardid' THEN yes(m.index_bytes::float8 / b.index_bytes <= 1.05) ELSE '' END
  FROM bulk_vs m, bulk_total b WHERE b.method = 'bigserial'
UNION ALL
-- 4. growth: rows per ms of the chunks that end at 10%, 30% and 100%
SELECT 40 + CASE method WHEN 'bigserial' THEN 0 WHEN 'shardid' THEN 1 ELSE 2 END,
	   '4', 'insert rate (rows/ms) as the table grows, ' || method,
	   string_agg(n(rows_after) || ' rows: ' || r((rows_after - rows_before) / seconds / 1000, 0),
				  ', ' ORDER BY rows_after),
	   '', ''
  FROM bench.bulk b
 WHERE method IN ('bigserial', 'shardid', 'uuid') AND status = 'ok'
   AND chunk IN (SELECT max(chunk) FROM bench.bulk
				 UNION SELECT round(max(chunk) * 0.1) FROM bench.bulk
				 UNION SELECT round(max(chunk) * 0.3) FROM bench.bulk)
 GROUP BY method
UNION ALL
-- 5. concurrency
SELECT 50 + c.ord, '5',
	   'pgbench tps, shardid_next / ' || o.method || ', ' || c.label,
	   r(s.tps / o.tps, 2) || ' (' || n(s.tps) || ' vs ' || n(o.tps) || ')', '', ''
  FROM (VALUES (0, 1, 'one', '1 client'),
			   (2, 2, 'one', '2 clients, one shard'),
			   (4, 2, 'separate', '2 clients, own shards')) AS c(ord, clients, layout, label),
	   (VALUES ('bigserial'), ('uuid')) AS x(method)
  JOIN pgb o ON o.method = x.method
  JOIN pgb s ON s.method = 'shardid'
 WHERE o.clients = c.clients AND o.layout = c.layout
   AND s.clients = c.clients AND s.layout = c.layout
UNION ALL
SELECT 60 + CASE t2.method WHEN 'bigserial' THEN 0 WHEN 'shardid' THEN 2 ELSE 4 END
		  + CASE t2.layout WHEN 'one' THEN 0 ELSE 1 END,
	   '5', 'pgbench scaling 2 / 1 clients, ' || t2.method || ', '
			|| CASE t2.layout WHEN 'one' THEN 'one shard' ELSE 'own shards' END,
	   r(t2.tps / t1.tps, 2), '', ''
  FROM pgb t2 JOIN pgb t1 ON t1.method = t2.method AND t1.clients = 1
 WHERE t2.clients = 2;

SELECT '| # | comparison | result | target | met |';
SELECT '|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s |', nr, what, result, target, met)
  FROM lines ORDER BY ord, what;
