--
-- The epoch
--
-- Each database has an epoch, the instant from which its IDs count
-- milliseconds: 2011-01-01 00:00:00 UTC unless shardid_set_epoch has set
-- another.  It is kept in the sequence shardid_epoch, in Unix
-- milliseconds, so that it travels with the data as the fence does.
--

CREATE SEQUENCE shardid_internal.shardid_epoch AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_internal.shardid_epoch IS
'epoch of this database in Unix milliseconds, set by shardid_set_epoch; never set (-1) means the default, 2011-01-01 00:00:00 UTC';

REVOKE ALL ON SEQUENCE shardid_internal.shardid_epoch FROM PUBLIC;

-- pg_dump carries the epoch with the data
SELECT pg_catalog.pg_extension_config_dump('shardid_internal.shardid_epoch'::pg_catalog.regclass, '');
