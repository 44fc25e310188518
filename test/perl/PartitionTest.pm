# test/perl/PartitionTest.pm: what the time-partition TAP tests (060, 061)
# share: three logical shards' tables partitioned by ID, and functions that
# list a table's partitions by name.
package PartitionTest;

use strict;
use warnings;

use Exporter 'import';

our @EXPORT = qw(three_shards partition_functions);

# Three logical shards on $node (in database $db, default postgres):
# schemas shard_0001 to shard_0003, each with a sequence posts_id_seq and
# a table posts (id bigint PRIMARY KEY DEFAULT shardid_next(shard,
# sequence), body text NOT NULL) partitioned by RANGE (id), whose only
# partition is its default, posts_default.  The extension must exist.
sub three_shards
{
	my ($node, $db) = @_;
	$node->safe_psql(
		$db // 'postgres', q{
DO $$
BEGIN
	FOR s IN 1 .. 3 LOOP
		EXECUTE format('CREATE SCHEMA %I', shardid_shard_schema(s));
		EXECUTE format('CREATE SEQUENCE %I.posts_id_seq', shardid_shard_schema(s));
		EXECUTE format('CREATE TABLE %I.posts (
			id bigint PRIMARY KEY DEFAULT shardid_next(%s, %L),
			body text NOT NULL) PARTITION BY RANGE (id)',
			shardid_shard_schema(s), s, shardid_shard_schema(s) || '.posts_id_seq');
		EXECUTE format('CREATE TABLE %I.posts_default PARTITION OF %I.posts DEFAULT',
			shardid_shard_schema(s), shardid_shard_schema(s));
	END LOOP;
END $$;
});
	return;
}

# Two functions on $node (in database $db, default postgres):
# partitions_of(t regclass), the names of t's partitions but its default,
# comma-separated in name order ('' if none); and days(base, first, last),
# the names shardid's daily maintenance gives the partitions of a table
# named base for the days first to last from today (0 is today).
sub partition_functions
{
	my ($node, $db) = @_;
	$node->safe_psql(
		$db // 'postgres', q{
CREATE FUNCTION partitions_of(t regclass) RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(string_agg(c.relname, ',' ORDER BY c.relname), '')
	  FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
	  JOIN pg_partitioned_table p ON p.partrelid = h.inhparent
	 WHERE h.inhparent = t AND c.oid <> p.partdefid
$$;
CREATE FUNCTION days(base text, first int, last int) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(base || '_p' || to_char(date_trunc('day', now()) + d * interval '1 day', 'YYYYMMDD'),
					  ',' ORDER BY d)
	  FROM generate_series(first, last) AS d
$$;
});
	return;
}

1;
