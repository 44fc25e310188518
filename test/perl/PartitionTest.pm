# test/perl/PartitionTest.pm: what the time-partition TAP tests (060, 061,
# 062) share: three logical shards' tables partitioned by ID, functions
# that list a table's partitions by name, SQL run for its SQLSTATE, and
# pgbench in the background.
package PartitionTest;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use Test::More;
use Time::HiRes ();

our @EXPORT = qw(three_shards partition_functions run_sql clear_of_midnight
  write_file start_pgbench finish_pgbench);

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

# Run $sql through psql on $node (database $db), each statement on its own
# (so CALL runs outside a transaction block), with verbose errors.
# Returns 'ok' or the SQLSTATE of the ERROR, psql's stderr and the seconds
# it took.
sub run_sql
{
	my ($node, $sql, $db) = @_;
	my ($out, $err) = ('', '');
	my $t0 = Time::HiRes::time();
	my $rc = $node->psql(
		$db // 'postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$out,
		stderr => \$err,
		on_error_stop => 1);
	my $secs = Time::HiRes::time() - $t0;
	my $state =
	    $rc == 0 ? 'ok'
	  : $err =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1
	  : "unexpected: $err";
	return ($state, $err, $secs);
}

# If fewer than $secs seconds are left before UTC midnight, wait for it:
# daily checks must not straddle a day boundary.
sub clear_of_midnight
{
	my ($secs) = @_;
	my $left = 86400 - (time() % 86400);
	if ($left < $secs)
	{
		note "waiting ${left}s for UTC midnight";
		sleep($left + 2);
	}
	return;
}

sub write_file
{
	my ($file, $text) = @_;
	open my $fh, '>', $file or die "could not write \"$file\": $!";
	print $fh $text;
	close $fh or die "could not write \"$file\": $!";
	return;
}

# pgbench running $script on $node in the background, seen in
# pg_stat_activity as application_name $app; its per-transaction log goes
# to files named $prefix.*.
sub start_pgbench
{
	my ($node, $script, $prefix, $app, @opts) = @_;
	my $b = { out => '', err => '', prefix => $prefix };
	$b->{h} = IPC::Run::start(
		[
			'pgbench', '-n', '-f', $script, @opts,
			'--failures-detailed', '-l', "--log-prefix=$prefix",
			$node->connstr('postgres') . " application_name=$app"
		],
		'>', \$b->{out}, '2>', \$b->{err});
	return $b;
}

# Wait for a background pgbench; true if it exited 0 (no client aborted).
sub finish_pgbench
{
	my ($b) = @_;
	$b->{h}->finish;
	return $b->{h}->result(0) == 0;
}

1;
