CREATE SEQUENCE shardid_internal.shardid_fence_lead AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_internal.shardid_fence_lead IS
'how far ahead of the IDs the durable fence may be, in ms: shardid.fence_lead plus a quarter, as in force when the fence was last written, so that a start judges the fence by the lead it was written with';

REVOKE ALL ON SEQUENCE shardid_internal.shardid_fence_lead FROM PUBLIC;
