--
-- The durable fences
--
-- Each sequence that feeds shardid_next carries its own fence in its
-- value: (value >> 10) - 1 is a time field at or before which it issued
-- every ID, so that the fence goes wherever the sequence goes (pg_dump -t
-- and -n, DROP EXTENSION, every table that shares it, WAL and standbys).
-- Each database keeps one more, here, in the sequence shardid_fence (in
-- the schema shardid_internal, with the others: sql/schemas/): a
-- time field at or after every sequence's fence, at or before which the
-- database issues no ID again, so that a sequence that was set back or
-- made again starts after every ID the database issued.  It is not
-- extension configuration: no dump carries it and no restore can set it
-- back.  The guard writes both ahead of the IDs it issues (setval, then a
-- WAL flush and the standbys' acknowledgement); after any start,
-- promotion or restore, every sequence starts at both.  Only the
-- extension's owner may read or write this one: shardid_next switches to
-- the owner for that.  shardid_fence_lead keeps the lead the fence was
-- written with; shardid_fence_lower and shardid_sequence_lower take the
-- fences back down after a clock that ran fast.
--

CREATE SEQUENCE shardid_internal.shardid_fence AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_internal.shardid_fence IS
'durable fence of shardid_next in this database: a time field at or before which no ID is issued again';

REVOKE ALL ON SEQUENCE shardid_internal.shardid_fence FROM PUBLIC;
