-- IDs this server issued here before the fence existed get one now
SELECT @extschema@.shardid_fence_reload();
