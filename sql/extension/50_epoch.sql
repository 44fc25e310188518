--
-- The epoch
--
-- Each database has an epoch, the instant from which its IDs count
-- milliseconds: 2011-01-01 00:00:00 UTC unless shardid_set_epoch has set
-- another.  It is kept in the sequence shardid_epoch, in Unix
-- milliseconds, so that it travels with the data as the fence does.
--

CREATE SEQUENCE shardid_epoch AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_epoch IS
'epoch of this database in Unix milliseconds, set by shardid_set_epoch; never set (-1) means the default, 2011-01-01 00:00:00 UTC';

REVOKE ALL ON SEQUENCE shardid_epoch FROM PUBLIC;

-- pg_dump carries the epoch with the data
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_epoch'::pg_catalog.regclass, '');

-- The first function of 1.2's library: a server still running an older
-- library (installed, but not restarted since) says so here.
DO $probe$
BEGIN
	CREATE FUNCTION @extschema@.shardid_epoch()
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME', 'shardid_epoch'
	LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
EXCEPTION WHEN undefined_function THEN
	RAISE EXCEPTION USING
		ERRCODE = 'object_not_in_prerequisite_state',
		MESSAGE = 'the shardid library this server loaded is older than version 1.2',
		DETAIL = SQLERRM,
		HINT = 'Restart the server, so that it loads the shardid library that was installed, then run this again.';
END
$probe$;

COMMENT ON FUNCTION shardid_epoch() IS
'epoch of this database: the one shardid_set_epoch set, else 2011-01-01 00:00:00 UTC';

CREATE FUNCTION shardid_set_epoch(epoch pg_catalog.timestamptz)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_set_epoch'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_set_epoch(pg_catalog.timestamptz) IS
'set the epoch of this database; superuser or the extension''s owner only';

REVOKE ALL ON FUNCTION shardid_set_epoch(pg_catalog.timestamptz) FROM PUBLIC;
