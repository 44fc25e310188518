--
-- The durable fence
--
-- Each database keeps, in the sequence shardid_fence, a time field at or
-- before which it issues no ID again.  The guard writes it ahead of the IDs
-- it issues (setval, then a WAL flush), so that WAL, base backups, pg_dump
-- and pg_upgrade carry it wherever the data goes; after any start,
-- promotion or restore, every sequence starts at it.  Only the extension's
-- owner may read or write it: shardid_next switches to the owner for that.
-- shardid_fence_lead keeps the lead the fence was written with, and
-- shardid_fence_lower, for a superuser, takes the fence back down.
--

CREATE SEQUENCE shardid_fence AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_fence IS
'durable fence of shardid_next in this database: a time field at or before which no ID is issued again';

REVOKE ALL ON SEQUENCE shardid_fence FROM PUBLIC;

-- pg_dump carries the fence with the data
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_fence'::pg_catalog.regclass, '');
