-- Lock the parent for a maintenance step, waiting at most lock_wait: true
-- once it is held, false when the wait ran out (the step is then
-- "busy").  Only the two modes maintenance takes: SHARE UPDATE EXCLUSIVE
-- to make partitions (it serialises maintenance runs and blocks no query
-- or insert), ACCESS EXCLUSIVE to drop them.  The lock is held to the end
-- of the transaction, and lock_timeout stays set to lock_wait as long
-- (shardid_partition_lock_timeout).
CREATE FUNCTION shardid_partition_lock(
	parent pg_catalog.regclass,
	mode pg_catalog.text,
	lock_wait pg_catalog.interval)
RETURNS pg_catalog.bool
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	par record;
BEGIN
	IF mode IS NULL OR mode <> ALL ('{SHARE UPDATE EXCLUSIVE,ACCESS EXCLUSIVE}'::pg_catalog.text[]) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('lock mode "%s" is not one partition maintenance takes', mode),
			DETAIL = 'Maintenance locks a parent in SHARE UPDATE EXCLUSIVE or ACCESS EXCLUSIVE mode.';
	END IF;
	SELECT * INTO par FROM @extschema@.shardid_partition_parent(parent);
	PERFORM @extschema@.shardid_partition_lock_timeout(lock_wait);
	BEGIN
		EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN %s MODE', par.nspname, par.relname, mode);
	EXCEPTION WHEN lock_not_available THEN
		RETURN false;
	END;
	RETURN true;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_lock(pg_catalog.regclass, pg_catalog.text, pg_catalog.interval) IS
'internal: lock a table for a partition maintenance step, waiting at most lock_wait';
