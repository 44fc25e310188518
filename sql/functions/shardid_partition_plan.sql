-- The arguments of a maintenance run, checked, and what follows from
-- them at now(): the partitions wanted (the one that holds now() and
-- premake after it, as the starts of their ranges), the suffix format of
-- their names, the horizon of the epoch, and the retention cutoff as an
-- ID (NULL: keep everything).  Each step of a run starts here, so that
-- each transaction of the procedure plans from its own now().
CREATE FUNCTION shardid_partition_plan(
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval,
	epoch pg_catalog.timestamptz,
	lock_wait pg_catalog.interval,
	OUT starts pg_catalog.timestamptz[],
	OUT suffix_format pg_catalog.text,
	OUT horizon pg_catalog.timestamptz,
	OUT cutoff pg_catalog.int8)
RETURNS pg_catalog.record
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
DECLARE
	-- the step, taken apart
	step_months pg_catalog.numeric;
	step_days pg_catalog.numeric;
	step_us pg_catalog.numeric;
	step_ms pg_catalog.int8;
	t pg_catalog.timestamptz;
BEGIN
	IF step IS NULL OR premake IS NULL OR epoch IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent tables, step, premake and epoch must not be null',
			HINT = 'Pass retain as NULL to keep every partition.';
	END IF;

	-- The epoch: shardid_horizon() refuses one that is infinite, not a
	-- whole millisecond or out of range.
	horizon := @extschema@.shardid_horizon(epoch);
	IF pg_catalog.now() < epoch THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('epoch %s is in the future', epoch),
			DETAIL = 'Partitions are made from the current time on, and IDs count milliseconds since the epoch.';
	END IF;

	-- The step: a whole number of milliseconds that divides a day, one
	-- week, or a number of months that divides a year or is whole years.
	-- Partitions then start on the same UTC boundaries on every run.
	step_months := EXTRACT(year FROM step) * 12 + EXTRACT(month FROM step);
	step_days := EXTRACT(day FROM step);
	step_us := EXTRACT(hour FROM step) * 3600000000 + EXTRACT(minute FROM step) * 60000000
			   + EXTRACT(microseconds FROM step);
	IF step <= '0'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('partition step "%s" is not positive', step);
	END IF;
	IF step_months = 0 THEN
		step_us := step_days * 86400000000 + step_us;
		IF step_us % 1000 <> 0 THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_parameter_value',
				MESSAGE = pg_catalog.format('partition step "%s" is not a whole number of milliseconds', step),
				DETAIL = 'Partition bounds are shardid_floor() values, which count whole milliseconds.';
		END IF;
		step_ms := (step_us / 1000)::pg_catalog.int8;
		IF 86400000 % step_ms <> 0 AND step_ms <> 604800000 THEN
			step_ms := NULL;
		END IF;
	ELSIF step_months > 0 AND step_days = 0 AND step_us = 0
		  AND (12 % step_months = 0 OR step_months % 12 = 0) THEN
		step_ms := 0;			-- months: no fixed length
	END IF;
	IF step_ms IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('partition step "%s" does not divide evenly into days or years', step),
			DETAIL = 'A step is a whole number of milliseconds that divides a day (such as 1 hour or 15 minutes), 1 day, 1 week, a number of months that divides a year (1, 2, 3, 4 or 6), or whole years.',
			HINT = 'Partitions start on UTC boundaries of the step: midnight for days, Monday for weeks, January for years.';
	END IF;

	IF premake < 0 OR premake > 1000 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'numeric_value_out_of_range',
			MESSAGE = pg_catalog.format('premake %s is out of range', premake),
			DETAIL = 'premake is the number of partitions to make after the current one, 0 to 1000.';
	END IF;
	IF retain <= '0'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('retention interval "%s" is not positive', retain),
			HINT = 'Pass retain as NULL to keep every partition.';
	END IF;
	IF lock_wait <= '0'::pg_catalog.interval OR lock_wait > '1 day'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('lock wait "%s" is out of range', lock_wait),
			DETAIL = 'lock_wait bounds each lock wait of a maintenance step: more than 0, at most 1 day.';
	END IF;

	-- The partitions wanted: the one holding now(), and premake after it.
	suffix_format := CASE
		WHEN step_ms = 0 THEN 'YYYYMM'
		WHEN step_ms % 86400000 = 0 THEN 'YYYYMMDD'
		WHEN step_ms % 3600000 = 0 THEN 'YYYYMMDD_HH24'
		WHEN step_ms % 60000 = 0 THEN 'YYYYMMDD_HH24MI'
		WHEN step_ms % 1000 = 0 THEN 'YYYYMMDD_HH24MISS'
		ELSE 'YYYYMMDD_HH24MISSMS' END;
	starts := '{}';
	t := pg_catalog.now();
	FOR i IN 0 .. premake LOOP
		t := @extschema@.shardid_partition_step_start(t, step);
		starts := starts || t;
		t := t + step;
		IF t > horizon THEN
			RAISE EXCEPTION USING
				ERRCODE = 'datetime_field_overflow',
				MESSAGE = pg_catalog.format('partition bound %s is past the horizon of the epoch', t),
				DETAIL = pg_catalog.format('With the epoch %s, the last millisecond that encodes to a positive bigint is %s.',
										   epoch, horizon),
				HINT = 'Make fewer partitions ahead, or use a later epoch for new tables.';
		END IF;
	END LOOP;
	IF retain IS NOT NULL AND pg_catalog.now() - retain > epoch THEN
		cutoff := @extschema@.shardid_floor(pg_catalog.now() - retain, epoch);
	END IF;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_plan(pg_catalog.interval, pg_catalog.int4, pg_catalog.interval,
										   pg_catalog.timestamptz, pg_catalog.interval) IS
'internal: check the arguments of a partition maintenance run, and the partitions it wants now';
