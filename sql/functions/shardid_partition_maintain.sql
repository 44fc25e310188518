CREATE FUNCTION shardid_partition_maintain(
	parent pg_catalog.regclass,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval DEFAULT NULL,
	epoch pg_catalog.timestamptz DEFAULT '2011-01-01 00:00:00+00',
	OUT partition pg_catalog.text,
	OUT action pg_catalog.text,
	OUT range_start pg_catalog.timestamptz,
	OUT range_end pg_catalog.timestamptz)
RETURNS SETOF pg_catalog.record
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT m.partition, m.action, m.range_start, m.range_end
	  FROM @extschema@.shardid_partition_maintain_all(ARRAY[parent], step, premake, retain, epoch) AS m
$fn$;

COMMENT ON FUNCTION shardid_partition_maintain(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
											   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of a table partitioned by range on a shardid key ahead of the clock, move rows out of its default partition, and drop partitions older than retain';
