-- Keep only the last run of each table that is still there.  SECURITY
-- DEFINER, as only the extension's owner may delete; what it deletes no
-- one reads, so any role may call it.  It never waits: a row another
-- transaction holds stays for the next purge.
CREATE FUNCTION shardid_partition_log_purge()
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	n pg_catalog.int8;
BEGIN
	DELETE FROM @extschema@.shardid_partition_log AS l
	 WHERE l.ctid OPERATOR(pg_catalog.=) ANY (ARRAY(
		SELECT o.ctid
		  FROM @extschema@.shardid_partition_log AS o
		 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
							WHERE c.oid OPERATOR(pg_catalog.=) o.parent
							  AND c.relkind OPERATOR(pg_catalog.=) 'p')
			OR EXISTS (SELECT FROM @extschema@.shardid_partition_log AS later
						WHERE later.parent OPERATOR(pg_catalog.=) o.parent
						  AND later.ran_at OPERATOR(pg_catalog.>) o.ran_at)
		   FOR UPDATE SKIP LOCKED));
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_log_purge() IS
'internal: forget all but the last partition maintenance run of each table';
