-- Bound every lock wait of a maintenance step to lock_wait (NULL: leave
-- lock_timeout as it is), to the end of the transaction: a SET LOCAL of
-- a setting the caller has no SET clause for outlives the function.
CREATE FUNCTION shardid_partition_lock_timeout(lock_wait pg_catalog.interval)
RETURNS pg_catalog.void
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT pg_catalog.set_config('lock_timeout',
		GREATEST(CEIL(EXTRACT(epoch FROM lock_wait) * 1000), 1)::pg_catalog.int8::pg_catalog.text, true)
	 WHERE lock_wait IS NOT NULL
$fn$;

COMMENT ON FUNCTION shardid_partition_lock_timeout(pg_catalog.interval) IS
'internal: bound the lock waits of a partition maintenance step, to the end of the transaction';
