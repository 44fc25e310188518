--
-- The library this server loaded must be this version's: a server that
-- was not restarted since the package was installed still runs the old
-- one.  Its newest symbol tells: the probe function is made and dropped
-- again, and an old library stops the script here with a hint, rather
-- than at the first function it lacks.
--
DO $probe$
BEGIN
	CREATE FUNCTION @extschema@.shardid_library_probe()
	RETURNS pg_catalog.void
	AS 'MODULE_PATHNAME', 'shardid_sequence_lower'
	LANGUAGE C;
	DROP FUNCTION @extschema@.shardid_library_probe();
EXCEPTION WHEN undefined_function THEN
	RAISE EXCEPTION USING
		ERRCODE = 'object_not_in_prerequisite_state',
		MESSAGE = 'the shardid library this server loaded is older than version 1.3',
		DETAIL = SQLERRM,
		HINT = 'Restart the server, so that it loads the shardid library that was installed, then run this again.';
END
$probe$;
