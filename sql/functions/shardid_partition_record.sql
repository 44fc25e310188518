-- The end of a maintenance run on one parent: its result from the
-- actions its steps returned (with their rows moved, in the same order),
-- "failed" when a step failed (failed_state, failed_message), else "busy"
-- when a lock wait ran out (sqlstate 55P03, busy_message), else "ok";
-- its counts, and the first ID retention kept below, written to
-- shardid_partition_log as the caller (who may own the table through a
-- role without inheriting: then it is not recorded, nor is a table that
-- is gone).  Returns the result.
CREATE FUNCTION shardid_partition_record(
	parent pg_catalog.oid,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval,
	epoch pg_catalog.timestamptz,
	actions pg_catalog.text[],
	moved pg_catalog.int8[],
	failed_state pg_catalog.text,
	failed_message pg_catalog.text,
	busy_message pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	result pg_catalog.text;
	state pg_catalog.text := failed_state;
	msg pg_catalog.text := failed_message;
	tally record;
BEGIN
	SELECT pg_catalog.count(*) FILTER (WHERE u.a = 'created')::pg_catalog.int4 AS made,
		   pg_catalog.count(*) FILTER (WHERE u.a = 'dropped')::pg_catalog.int4 AS dropped,
		   pg_catalog.count(*) FILTER (WHERE u.a = 'busy')::pg_catalog.int4 AS busy,
		   pg_catalog.count(*) FILTER (WHERE u.a = 'kept')::pg_catalog.int4 AS kept,
		   COALESCE(pg_catalog.sum(u.m) FILTER (WHERE u.a <> 'pruned'), 0)::pg_catalog.int8 AS moved,
		   COALESCE(pg_catalog.sum(u.m) FILTER (WHERE u.a = 'pruned'), 0)::pg_catalog.int8 AS pruned
	  INTO tally
	  FROM ROWS FROM (pg_catalog.unnest(actions), pg_catalog.unnest(moved)) AS u(a, m);
	result := CASE WHEN state IS NOT NULL THEN 'failed' WHEN tally.busy > 0 THEN 'busy' ELSE 'ok' END;
	IF result = 'busy' THEN
		state := '55P03';
		msg := busy_message;
	END IF;
	BEGIN
		INSERT INTO @extschema@.shardid_partition_log
			   (parent, step, premake, retain, epoch, result, sqlstate, message, made, dropped, moved, pruned,
				kept_below)
		VALUES (parent, step, premake, retain, epoch, result, state, msg,
				tally.made, tally.dropped, tally.moved, tally.pruned,
				CASE WHEN tally.kept > 0
					 THEN @extschema@.shardid_partition_first_id(parent::pg_catalog.regclass) END);
	EXCEPTION WHEN insufficient_privilege THEN
		NULL;
	END;
	RETURN result;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_record(pg_catalog.oid, pg_catalog.interval, pg_catalog.int4,
											 pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.text[],
											 pg_catalog.int8[], pg_catalog.text, pg_catalog.text,
											 pg_catalog.text) IS
'internal: record a partition maintenance run on a table from the actions of its steps, and give its result';
