-- The start of the step that holds t, in UTC: steps of months from
-- January of year 0, other steps from Monday 2001-01-01.
CREATE FUNCTION shardid_partition_step_start(t pg_catalog.timestamptz, step pg_catalog.interval)
RETURNS pg_catalog.timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
	SELECT CASE WHEN s.months OPERATOR(pg_catalog.=) 0
				THEN pg_catalog.date_bin(step, t, '2001-01-01 00:00:00+00')
				ELSE pg_catalog.make_timestamptz(s.k OPERATOR(pg_catalog./) 12,
												 (s.k OPERATOR(pg_catalog.%) 12) OPERATOR(pg_catalog.+) 1,
												 1, 0, 0, 0, 'UTC') END
	  FROM (SELECT m.months,
				   m.k0 OPERATOR(pg_catalog.-) (m.k0 OPERATOR(pg_catalog.%) NULLIF(m.months, 0)) AS k
			  FROM (SELECT ((EXTRACT(year FROM step) OPERATOR(pg_catalog.*) 12)
							OPERATOR(pg_catalog.+) EXTRACT(month FROM step))::pg_catalog.int4 AS months,
						   (((EXTRACT(year FROM t) OPERATOR(pg_catalog.*) 12)
							 OPERATOR(pg_catalog.+) EXTRACT(month FROM t))
							OPERATOR(pg_catalog.-) 1)::pg_catalog.int4 AS k0) AS m) AS s
$fn$;

COMMENT ON FUNCTION shardid_partition_step_start(pg_catalog.timestamptz, pg_catalog.interval) IS
'internal: the start of the partition step that holds a time';
