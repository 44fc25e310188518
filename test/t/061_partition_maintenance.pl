# Copyright: see the shardid LICENSE.
#
# 061_partition_maintenance.pl: shardid_partition_run(), partition
# maintenance that can be left running (issue 17), on a real server with
# real pgbench loads, where timing matters (062_partition_cases.pl has the
# cases where it does not).
#
#   A. Deadlocks: a table partitioned every 2 seconds, with a default
#      partition; 3 pgbench readers on id >= shardid_floor(now() - 1 day),
#      pgbench inserts, and 10 runs (25 with PG_TEST_EXTRA=shardid_load)
#      each making one partition and dropping one.  deadlock_timeout is
#      100 ms, so that a lock cycle is found as a deadlock before any
#      lock_wait runs out.  Expect 0 deadlocks (40P01 in the server log
#      or among the readers' failures) and 0 readers killed;
#      the inserts' p99 and max latency are reported, not checked.  (1.1's
#      shardid_partition_maintain_all in place of the CALL: 42 readers
#      failed with 40P01 in one such run.)
#   B. A transaction holding AccessShare on the parent for 10 s (20 s
#      with PG_TEST_EXTRA=shardid_load): the run with a drop due ends with
#      55P03 within 7 s (10 s) and the status says 'busy', inserts into the
#      current partition go on meanwhile (no pause of 7 s, or 10 s), and
#      the run after the transaction ends drops the partition.
#
# schedule: serial (A's runs keep to 2-second windows; B times the busy run
# and the pauses between inserts)
#
# A and B need the real clock (libfaketime keeps lock_timeout from firing
# when the clock is ahead).  B's daily steps are kept clear of UTC
# midnight.

use strict;
use warnings;

use IPC::Run;
use POSIX qw(ceil);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use PartitionTest;
use Time::HiRes ();

my $tempdir = PostgreSQL::Test::Utils::tempdir();

# The loads: PG_TEST_EXTRA=shardid_load runs them longer (A: runs, B: how
# long the transaction holds its lock).
my $long = test_extra('shardid_load');
my $runs = $long ? 25 : 10;
my $hold = $long ? 20 : 10;
my $max_wait = $long ? 10 : 7;	# B: less than a wait for the transaction's end

# The latencies (ms, sorted) of a pgbench's successful transactions that
# ended between the Unix times $from and $to (if given), from its
# per-transaction log: client, transaction, time (us), script, end (s, us).
sub latencies
{
	my ($prefix, $from, $to) = @_;
	my @ms;
	for my $file (glob("$prefix.*"))
	{
		open my $fh, '<', $file or die "could not read \"$file\": $!";
		while (my $line = <$fh>)
		{
			my @f = split ' ', $line;
			next unless defined $f[5] && $f[2] =~ /^\d+$/;
			my $end = $f[4] + $f[5] / 1e6;
			next if defined $from && ($end < $from || $end > $to);
			push @ms, $f[2] / 1000.0;
		}
		close $fh;
	}
	return sort { $a <=> $b } @ms;
}

# "n, p99, max" of sorted latencies, for the log.
sub latency_summary
{
	my @ms = @_;
	return 'no transaction' unless @ms;
	return sprintf('%d inserts, p99 %.1f ms, max %.1f ms, %d over 500 ms',
		scalar @ms, $ms[ ceil(0.99 * @ms) - 1 ], $ms[-1],
		scalar grep { $_ > 500 } @ms);
}

# The status row of a parent, as "result|sqlstate|made|dropped|moved".
sub status_of
{
	my ($node, $parent, $db) = @_;
	return $node->safe_psql(
		$db // 'postgres', qq{
SELECT concat_ws('|', last_result, coalesce(last_sqlstate, '-'), made, dropped, moved)
  FROM shardid_partition_status WHERE parent = '$parent'::regclass});
}

my $node = shardid_node('maint', 'log_error_verbosity = verbose',
	'deadlock_timeout = 100ms');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION shardid');
partition_functions($node);

##########################################################################
# A. Deadlocks: readers, inserts and $runs runs that make and drop.
##########################################################################

# Partitions of 2 seconds, 10 made ahead (20 s), 2 seconds kept: a run
# in each 2-second window makes the one 20 s ahead and drops the one that
# ended 2 s before the window began.
my $run_t = q{CALL shardid_partition_run(ARRAY['t']::regclass[], '2 seconds', 10, '2 seconds')};
$node->safe_psql(
	'postgres', q{
CREATE SEQUENCE t_seq;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT shardid_next(7, 't_seq'), body text)
	PARTITION BY RANGE (id);
CREATE TABLE t_default PARTITION OF t DEFAULT;
});

# Wait until $secs past the start of a 2-second window no earlier than
# $not_before; return the window's start.
sub next_window
{
	my ($not_before) = @_;
	my $w = 2 * ceil(($not_before - 0.3) / 2);
	$w += 2 while Time::HiRes::time() > $w + 0.6;
	my $wait = $w + 0.3 - Time::HiRes::time();
	Time::HiRes::sleep($wait) if $wait > 0;
	return $w;
}

my $w0 = next_window(Time::HiRes::time());
my ($state, $err) = run_sql($node, $run_t);
is($state, 'ok', 'A: the first run succeeds') or diag $err;
is(status_of($node, 't'), 'ok|-|11|0|0', 'A: the first run made 11 partitions');

my $read_sql = "$tempdir/read.sql";
write_file($read_sql,
	"SELECT count(*) FROM t WHERE id >= shardid_floor(now() - interval '1 day');\n");
my $insert_sql = "$tempdir/insert.sql";
write_file($insert_sql, "INSERT INTO t (body) VALUES ('x');\n");
my $log_offset = -s $node->logfile;
my $readers = start_pgbench($node, $read_sql, "$tempdir/readA", 'readers',
	'-c', '3', '-T', 2 * $runs + 15, '-R', '300', '--verbose-errors');
my $writers = start_pgbench($node, $insert_sql, "$tempdir/insA", 'writers',
	'-c', '3', '-T', 2 * $runs + 15, '-R', '200');
ok( $node->poll_query_until(
		'postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE application_name IN ('readers', 'writers')}, '6'),
	'A: 3 readers and 3 writers are connected');

# $runs runs, one per window from the first in which a partition is due to go.
my (%results, @made, @dropped, @bad);
my $window = $w0 + 2;
my $runs_start = Time::HiRes::time();
for my $run (1 .. $runs)
{
	$window = next_window($window + 2);
	my ($st, $e) = run_sql($node, $run_t);
	$results{$st}++;
	push @bad, "run $run: $st: $e" if $st ne 'ok' && $st ne '55P03';
	my ($result, $sqlstate, $made, $dropped) = split /\|/, status_of($node, 't');
	push @made, $made;
	push @dropped, $dropped;
}
my $runs_end = Time::HiRes::time();
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE application_name IN ('readers', 'writers')}),
	'6', "A: the readers and writers ran through all $runs runs");
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM t_default), last_result, default_rows, ahead > '0',
       partitions = extract(epoch FROM covered_until - oldest_start) / 2
  FROM shardid_partition_status WHERE parent = 't'::regclass}),
	'0|ok|0|t|t',
	'A: after the runs, no row is in the default; the partitions run without a gap to ahead of the clock');

note 'A: run results: ' . join(', ', map { "$_ x$results{$_}" } sort keys %results);
note 'A: made per run: ' . join(' ', @made) . '; dropped per run: ' . join(' ', @dropped);
is(scalar @bad, 0, 'A: no run ended in an error other than busy (55P03)')
  or diag join("\n", @bad);
is(scalar(grep { $made[$_] >= 1 && $dropped[$_] >= 1 } 0 .. $runs - 1),
	$runs, "A: each of the $runs runs made a partition and dropped one");

ok(finish_pgbench($readers), 'A: no reader was killed (no pgbench client aborted)')
  or diag $readers->{err};
like($readers->{out}, qr/number of failed transactions: 0 /,
	'A: no reader query failed') or diag $readers->{out};
like($readers->{out}, qr/number of deadlock failures: 0 /,
	'A: no reader query failed with a deadlock') or diag $readers->{out};
unlike($readers->{err}, qr/deadlock|40P01/, 'A: no deadlock among the readers\' errors');
my ($reads) = $readers->{out} =~ /number of transactions actually processed: (\d+)/;
note "A: the readers ran " . ($reads // '?') . ' queries';
ok(finish_pgbench($writers), 'A: no writer was killed') or diag $writers->{err};
like($writers->{out}, qr/number of failed transactions: 0 /, 'A: no insert failed')
  or diag $writers->{out};
my $server_log = slurp_file($node->logfile, $log_offset);
is(scalar(grep { /\b40P01\b|deadlock detected/ } split /\n/, $server_log),
	0, 'A: no deadlock in the server log');
diag "A: inserts during the $runs runs: "
  . latency_summary(latencies("$tempdir/insA", $runs_start, $runs_end));

##########################################################################
# B. An open transaction holds AccessShare on the parent for $hold s.
##########################################################################
clear_of_midnight(90);
$node->safe_psql(
	'postgres', q{
CREATE TABLE marks (name text PRIMARY KEY, at timestamptz NOT NULL);
CREATE SEQUENCE t2_seq;
CREATE TABLE t2 (id bigint PRIMARY KEY DEFAULT shardid_next(8, 't2_seq'), body text)
	PARTITION BY RANGE (id);
CREATE TABLE t2_default PARTITION OF t2 DEFAULT;
CREATE TABLE t2_p20200101 PARTITION OF t2
	FOR VALUES FROM (shardid_floor('2020-01-01+00')) TO (shardid_floor('2020-01-02+00'));
INSERT INTO t2 VALUES (shardid_encode('2020-01-01 12:00+00', 8, 0), 'old');
});
($state, $err) = run_sql($node,
	q{CALL shardid_partition_run(ARRAY['t2']::regclass[], '1 day', 2)});
is($state, 'ok', 'B: a run without retention succeeds') or diag $err;

my $insert2_sql = "$tempdir/insert2.sql";
write_file($insert2_sql, "INSERT INTO t2 (body) VALUES ('x');\n");
my $writers2 = start_pgbench($node, $insert2_sql, "$tempdir/insB", 'writers',
	'-c', '2', '-T', $hold + 15, '-R', '100');
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) > 100 FROM t2 WHERE body = 'x'}),
	'B: the writers are writing');

my $holder = $node->background_psql('postgres');
$holder->query_safe(q{BEGIN; SELECT count(*) FROM t2;});
my $hold_start = Time::HiRes::time();
$node->safe_psql('postgres', q{INSERT INTO marks VALUES ('hold', clock_timestamp())});
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_locks
 WHERE relation = 't2'::regclass AND mode = 'AccessShareLock' AND granted
   AND pid <> pg_backend_pid()}),
	'1', 'B: a transaction holds AccessShare on the parent');

my $run_t2 = q{CALL shardid_partition_run(ARRAY['t2']::regclass[], '1 day', 2, '30 days')};
my $secs;
($state, $err, $secs) = run_sql($node, $run_t2);
$node->safe_psql('postgres', q{INSERT INTO marks VALUES ('busy', clock_timestamp())});
is($state, '55P03', 'B: the run with a drop due ends with 55P03');
like($err, qr/ERROR:\s+55P03: partition maintenance left 1 of 1 tables busy/,
	'B: its error says one table was left busy');
note sprintf('B: the busy run took %.1f s', $secs);
cmp_ok($secs, '<', $max_wait, 'B: the busy run gives up instead of waiting for the transaction');
is( $node->safe_psql(
		'postgres', q{
SELECT last_result, dropped, to_regclass('t2_p20200101') IS NOT NULL
  FROM shardid_partition_status WHERE parent = 't2'::regclass}),
	'busy|0|t', 'B: the status says busy; the partition is still there');
sleep(3);
($state, $err) = run_sql($node, $run_t2);
is($state, '55P03', 'B: a retry while the transaction is open is busy again') or diag $err;

# Hold for $hold s in all, then end the transaction.
my $left = $hold - (Time::HiRes::time() - $hold_start);
Time::HiRes::sleep($left) if $left > 0;
$node->safe_psql('postgres', q{INSERT INTO marks VALUES ('commit', clock_timestamp())});
$holder->query_safe('COMMIT');
$holder->quit;
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) > 0 FROM t2
 WHERE shardid_created_at(id) > (SELECT at FROM marks WHERE name = 'busy')
   AND shardid_created_at(id) < (SELECT at FROM marks WHERE name = 'commit')}),
	't', 'B: inserts went on after the busy run while the transaction was open');
my $gap = $node->safe_psql(
	'postgres', q{
SELECT extract(epoch FROM max(gap))
  FROM (SELECT shardid_created_at(id) - lag(shardid_created_at(id)) OVER (ORDER BY id) AS gap
          FROM t2
         WHERE shardid_created_at(id) BETWEEN (SELECT at FROM marks WHERE name = 'hold')
                                          AND (SELECT at FROM marks WHERE name = 'commit')) AS g});
note "B: the longest pause between inserts while the transaction was open: $gap s";
cmp_ok($gap, '<', $max_wait, 'B: no insert waited for the open transaction');

($state, $err) = run_sql($node, $run_t2);
is($state, 'ok', 'B: the run after the transaction ended succeeds') or diag $err;
is( $node->safe_psql(
		'postgres', q{
SELECT last_result, dropped, to_regclass('t2_p20200101') IS NULL
  FROM shardid_partition_status WHERE parent = 't2'::regclass}),
	'ok|1|t', 'B: it dropped the partition');
ok(finish_pgbench($writers2), 'B: pgbench ended without error') or diag $writers2->{err};
like($writers2->{out}, qr/number of failed transactions: 0 /, 'B: no insert failed')
  or diag $writers2->{out};
my ($written2) = $writers2->{out} =~ /number of transactions actually processed: (\d+)/;
is($node->safe_psql('postgres', q{SELECT count(*) FROM t2}),
	$written2 // -1, 'B: every row inserted is there, and the old one is gone');
diag 'B: inserts around the open transaction: ' . latency_summary(latencies("$tempdir/insB"));

$node->stop;
done_testing();
