CREATE VIEW shardid_partition_status AS
	SELECT * FROM @extschema@.shardid_partition_status();

COMMENT ON VIEW shardid_partition_status IS
'the partition maintenance of each table it ran on: how far ahead the partitions go, the rows in the default partition, and the last run';

GRANT SELECT ON shardid_partition_status TO PUBLIC;
