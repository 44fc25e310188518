# Copyright: see the shardid LICENSE.
#
# 061_partition_maintenance.pl: shardid_partition_run(), partition
# maintenance that can be left running (issue 17), on real servers with
# real pgbench loads.
#
#   A. Deadlocks: a table partitioned every 2 seconds, with a default
#      partition; 3 pgbench readers on id >= shardid_floor(now() - 1 day),
#      pgbench inserts, and 10 runs (25 with PG_TEST_EXTRA=shardid_load)
#      each making one partition and dropping one.  deadlock_timeout is 100 ms, so that a lock cycle is found as a
#      deadlock before any lock_wait runs out.  Expect 0 deadlocks (40P01 in
#      the server log or among the readers' failures) and 0 readers killed;
#      the inserts' p99 and max latency are reported, not checked.  (1.1's
#      shardid_partition_maintain_all in place of the CALL: 42 readers
#      failed with 40P01 in one such run.)
#   B. A transaction holding AccessShare on the parent for 10 s (20 s
#      with PG_TEST_EXTRA=shardid_load): the run with a drop due ends with
#      55P03 within 7 s (10 s) and the status says 'busy', inserts into the
#      current partition go on meanwhile (no pause of 7 s, or 10 s), and
#      the run after the transaction ends drops the partition.
#   C. A stray row dated day+5 in shard_0002's default, under one run over
#      3 shards while pgbench writes to all three (and rows dated day+5
#      into shard_0002): every shard gets its new partition, the stray
#      row's partition is made and the rows moved, the defaults are empty,
#      and every ID written (logged in the same transaction) is there once.
#      A row routed to the default just before its range is attached fails
#      with 23514, as PostgreSQL does (docs/partitions.md): the writer tries
#      it again once, and the retries are reported.
#   D. A parent that fails among 3 (its partition's name taken, 42P07; one
#      not owned by the caller, 42501): the others get their partitions,
#      the CALL ends in an ERROR, a WARNING names the parent and the
#      SQLSTATE, and the status says 'failed' for it and 'ok' for the rest
#      (a table the caller does not own is not recorded at all).
#   E. 400 parents with premake 7 on a stock max_locks_per_transaction (64);
#      8,192 with PG_TEST_EXTRA=shardid_load.  The times are reported.
#   F. Faked clock (libfaketime): a stray row in the default, rows of a
#      past day and of the day the clock jumps to (3 days ahead) in the
#      default; one run puts every row in its day's partition.
#
# schedule: serial (A's runs keep to 2-second windows; B times the busy run
# and the pauses between inserts)
#
# A and B need the real clock (libfaketime keeps lock_timeout from firing
# when the clock is ahead).  Daily steps are kept clear of UTC midnight.

use strict;
use warnings;

use IPC::Run;
use POSIX qw(ceil floor);
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
# long the transaction holds its lock, C: how long pgbench writes).
my $long = test_extra('shardid_load');
my $runs = $long ? 25 : 10;
my $hold = $long ? 20 : 10;
my $max_wait = $long ? 10 : 7;	# B: less than a wait for the transaction's end
my $c_seconds = $long ? 12 : 6;

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

##########################################################################
# C. A stray row in one shard's default, 3 shards, concurrent inserts.
##########################################################################
clear_of_midnight(90);
$node->safe_psql(
	'postgres', q{
CREATE SCHEMA log;
CREATE TABLE log.written (id bigint PRIMARY KEY);	-- every ID the writers got
CREATE SEQUENCE log.future_seq;
});
three_shards($node);
my $shards = q{ARRAY['shard_0001.posts', 'shard_0002.posts', 'shard_0003.posts']::regclass[]};
($state, $err) = run_sql($node, "CALL shardid_partition_run($shards, '1 day', 1)");
is($state, 'ok', 'C: the first run over 3 shards succeeds') or diag $err;
$node->safe_psql(
	'postgres', q{
INSERT INTO shard_0002.posts VALUES (shardid_encode(now() + interval '5 days', 2, 0), 'stray');
});
is( $node->safe_psql(
		'postgres', q{SELECT tableoid::regclass FROM shard_0002.posts WHERE body = 'stray'}),
	'shard_0002.posts_default', 'C: the stray row dated day+5 is in shard_0002\'s default');

# Writers: a row into each shard's current partition, and one dated day+5
# into shard_0002 (into its default until its partition exists), each ID
# logged in the same transaction.  A row routed to the default partition
# before the attach of its range commits fails with 23514, as PostgreSQL
# does it (docs/partitions.md): it is tried again once, and counted.
$node->safe_psql(
	'postgres', q{
CREATE TABLE log.retried (id bigint PRIMARY KEY);
CREATE FUNCTION log.write() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	fid bigint := shardid_encode(clock_timestamp() + interval '5 days', 2,
								 (nextval('log.future_seq') % 1024)::int);
BEGIN
	WITH a AS (INSERT INTO shard_0001.posts (body) VALUES ('w') RETURNING id),
		 b AS (INSERT INTO shard_0002.posts (body) VALUES ('w') RETURNING id),
		 c AS (INSERT INTO shard_0003.posts (body) VALUES ('w') RETURNING id)
	INSERT INTO log.written SELECT id FROM a UNION ALL SELECT id FROM b UNION ALL SELECT id FROM c;
	BEGIN
		INSERT INTO shard_0002.posts (id, body) VALUES (fid, 'future');
	EXCEPTION WHEN check_violation THEN
		INSERT INTO shard_0002.posts (id, body) VALUES (fid, 'future');
		INSERT INTO log.retried VALUES (fid);
	END;
	INSERT INTO log.written VALUES (fid);
END
$$;
});
my $insert3_sql = "$tempdir/insert3.sql";
write_file($insert3_sql, "SELECT log.write();\n");
my $writers3 = start_pgbench($node, $insert3_sql, "$tempdir/insC", 'writers',
	'-c', '2', '-T', $c_seconds, '-R', '100');
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) > 50 FROM shard_0002.posts_default}),
	'C: rows dated day+5 pile up in shard_0002\'s default');
($state, $err) = run_sql($node, "CALL shardid_partition_run($shards, '1 day', 2)");
is($state, 'ok', 'C: the run over 3 shards with rows in one default succeeds') or diag $err;
my $day5 = $node->safe_psql('postgres',
	q{SELECT 'shard_0002.posts_p' || to_char(now() + interval '5 days', 'YYYYMMDD')});
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(concat_ws('|', parent, last_result, made >= 1, moved > 0), ',' ORDER BY parent::text)
  FROM shardid_partition_status WHERE parent::text LIKE 'shard_000_.posts'}),
	'shard_0001.posts|ok|t|f,shard_0002.posts|ok|t|t,shard_0003.posts|ok|t|f',
	'C: every shard made its new partition; shard_0002 moved rows out of its default');
is( $node->safe_psql(
		'postgres', q{SELECT tableoid::regclass FROM shard_0002.posts WHERE body = 'stray'}),
	$day5, 'C: the stray row is in its day\'s new partition');
ok(finish_pgbench($writers3), 'C: pgbench ended without error') or diag $writers3->{err};
like($writers3->{out}, qr/number of failed transactions: 0 /, 'C: no insert failed')
  or diag $writers3->{out};
note 'C: inserts tried again after 23514: '
  . $node->safe_psql('postgres', 'SELECT count(*) FROM log.retried');
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM shard_0001.posts_default),
       (SELECT count(*) FROM shard_0002.posts_default),
       (SELECT count(*) FROM shard_0003.posts_default),
       (SELECT sum(default_rows) FROM shardid_partition_status WHERE parent::text LIKE 'shard_000_.posts')}),
	'0|0|0|0', 'C: every default is empty');
is( $node->safe_psql(
		'postgres', q{
SELECT partitions_of('shard_0001.posts') = days('posts', 0, 2),
       partitions_of('shard_0002.posts') = days('posts', 0, 2) || ',' || days('posts', 5, 5),
       partitions_of('shard_0003.posts') = days('posts', 0, 2)}),
	't|t|t', 'C: each shard has today and 2 days ahead, shard_0002 day+5 too');
is( $node->safe_psql(
		'postgres', q{
WITH p AS (SELECT id, body FROM shard_0001.posts UNION ALL SELECT id, body FROM shard_0002.posts
           UNION ALL SELECT id, body FROM shard_0003.posts)
SELECT (SELECT count(*) FROM log.written),
       (SELECT count(*) FROM log.written WHERE shardid_created_at(id) > now() + interval '4 days') > 0,
       (SELECT count(*) FROM log.written w WHERE NOT EXISTS (SELECT FROM p WHERE p.id = w.id)),
       (SELECT count(*) FROM p WHERE body <> 'stray' AND NOT EXISTS (SELECT FROM log.written w WHERE w.id = p.id)),
       (SELECT count(*) - count(DISTINCT id) FROM p),
       (SELECT count(*) FROM p WHERE body = 'stray')}),
	$node->safe_psql('postgres', 'SELECT count(*) FROM log.written') . '|t|0|0|0|1',
	'C: 0 rows lost: every ID written is in its shard once, and nothing else but the stray row');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
	SELECT tableoid::regclass::text AS part, id FROM shard_0001.posts UNION ALL
	SELECT tableoid::regclass::text, id FROM shard_0002.posts UNION ALL
	SELECT tableoid::regclass::text, id FROM shard_0003.posts) AS r
 WHERE right(part, 8) <> to_char(shardid_created_at(id), 'YYYYMMDD')}),
	'0', 'C: every row is in the partition of its day');

##########################################################################
# D. A parent that fails, among 3.
##########################################################################
clear_of_midnight(60);
$node->safe_psql(
	'postgres', q{
CREATE TABLE fail_a (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE fail_b (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE fail_c (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE fail_a_default PARTITION OF fail_a DEFAULT;
CREATE TABLE fail_b_default PARTITION OF fail_b DEFAULT;
CREATE TABLE fail_c_default PARTITION OF fail_c DEFAULT;
-- an unrelated table with the name of fail_b's partition for today
DO $$
BEGIN
	EXECUTE format('CREATE TABLE %I (x int)', 'fail_b_p' || to_char(now(), 'YYYYMMDD'));
END $$;
});
($state, $err) = run_sql($node,
	q{CALL shardid_partition_run(ARRAY['fail_a', 'fail_b', 'fail_c']::regclass[], '1 day', 1)});
is($state, '42P07', 'D: the CALL ends in an ERROR with the SQLSTATE of the failure');
like($err, qr/ERROR:\s+42P07: partition maintenance failed for 1 of 3 tables/,
	'D: the ERROR says 1 of 3 tables failed');
like($err, qr/WARNING:[^\n]*fail_b[^\n]*/, 'D: a WARNING names the failed parent');
my ($warning) = $err =~ /(WARNING:[^\n]*fail_b[^\n]*)/;
like($warning // '', qr/42P07/, 'D: the WARNING carries the SQLSTATE')
  or diag $err;
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(concat_ws('|', parent, last_result, coalesce(last_sqlstate, '-'),
                            coalesce(last_message, '-') LIKE '%fail_b_p% already exists'),
                  ',' ORDER BY parent::text)
  FROM shardid_partition_status WHERE parent::text LIKE 'fail__'}),
	'fail_a|ok|-|f,fail_b|failed|42P07|t,fail_c|ok|-|f',
	'D: the status says failed with 42P07 for fail_b, ok for the others');
is( $node->safe_psql(
		'postgres', q{
SELECT partitions_of('fail_a') = days('fail_a', 0, 1), partitions_of('fail_b'),
       partitions_of('fail_c') = days('fail_c', 0, 1)}),
	't||t', 'D: the other two have their partitions; fail_b has none');

# A parent the caller does not own, last among 3.
$node->safe_psql(
	'postgres', q{
CREATE ROLE maint;
CREATE SCHEMA own AUTHORIZATION maint;
SET ROLE maint;
CREATE TABLE own.x (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE own.y (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
RESET ROLE;
CREATE TABLE own.z (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
});
($state, $err) = run_sql($node, q{SET ROLE maint;
CALL shardid_partition_run(ARRAY['own.x', 'own.y', 'own.z']::regclass[], '1 day', 1);});
is($state, '42501', 'D: a parent not owned by the caller: the CALL ends with 42501');
like($err, qr/WARNING:[^\n]*own\.z[^\n]*42501|WARNING:\s+42501:[^\n]*own\.z/,
	'D: the WARNING names own.z and 42501');
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(concat_ws('|', parent, last_result, coalesce(last_sqlstate, '-')), ',' ORDER BY parent::text)
  FROM shardid_partition_status WHERE parent::text LIKE 'own._'}),
	'own.x|ok|-,own.y|ok|-',
	'D: the status says ok for the caller\'s tables, and records nothing for one it does not own');
is( $node->safe_psql(
		'postgres', q{
SELECT partitions_of('own.x') = days('x', 0, 1), partitions_of('own.y') = days('y', 0, 1),
       partitions_of('own.z')}),
	't|t|', 'D: the caller\'s own tables have their partitions');

$node->stop;

##########################################################################
# E. 400 (and 8,192) parents on a stock max_locks_per_transaction.
##########################################################################
my $many = shardid_node('many', 'max_locks_per_transaction = 64',
	'log_statement = none');
$many->start;

# Make $n parents p0001... (a primary key and a text column each) in
# database $db, 100 to a transaction, and run the maintenance on them all
# with premake 7; check and report.
sub many_parents
{
	my ($db, $n) = @_;
	$many->safe_psql(
		$db, qq{
CREATE EXTENSION shardid;
DO \$\$
BEGIN
	FOR i IN 1 .. $n LOOP
		EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id)',
					   'p' || lpad(i::text, 4, '0'));
		IF i % 100 = 0 THEN
			COMMIT;
		END IF;
	END LOOP;
END \$\$;
});
	my ($st, $e, $s) = run_sql(
		$many, q{
SELECT array_agg(c.oid::regclass ORDER BY c.relname)::text AS parents
  FROM pg_class c WHERE c.relkind = 'p' AND c.relname ~ '^p[0-9]{4}$' \gset
CALL shardid_partition_run(:'parents'::regclass[], '1 day', 7);
}, $db);
	is($st, 'ok', "E: $n parents with premake 7 on max_locks_per_transaction 64: the CALL completes")
	  or diag $e;
	diag sprintf('E: %d parents, premake 7: %.1f s', $n, $s);
	is( $many->safe_psql(
			$db, q{
SELECT count(*), count(*) FILTER (WHERE last_result = 'ok' AND partitions = 8
                                  AND covered_until >= date_trunc('day', last_run) + interval '8 days')
  FROM shardid_partition_status}),
		"$n|$n", "E: all $n parents have their day and 7 after it");
	return;
}

is($many->safe_psql('postgres', 'SHOW max_locks_per_transaction'),
	'64', 'E: max_locks_per_transaction is 64');
clear_of_midnight(300);
many_parents('postgres', 400);
SKIP:
{
	skip 'E: 8,192 parents only with PG_TEST_EXTRA=shardid_load (they take long and about 2 GB)', 2
	  unless test_extra('shardid_load');
	$many->safe_psql('postgres', 'CREATE DATABASE long');
	many_parents('long', 8192);
}
$many->stop;

##########################################################################
# F. Faked clock: a stray row, and the clock 3 days ahead.
##########################################################################
SKIP:
{
	skip 'F: libfaketime is not installed (Debian package "faketime")', 7
	  unless defined libfaketime();

	my $clock_file = "$tempdir/faketime.rc";
	# noon UTC of the real day, so that nothing straddles a midnight
	my $noon = floor(time() / 86400) * 86400 + 43200;
	my $offset = $noon - time();
	set_clock($clock_file, $offset);
	my $faked = shardid_node('faked');
	start_faked($faked, $clock_file);
	ok(wait_for_clock($faked, $offset), 'F: the server\'s clock reads noon of the real day');
	$faked->safe_psql(
		'postgres', qq{
CREATE EXTENSION shardid;
CREATE SEQUENCE d_seq;
CREATE TABLE d (id bigint PRIMARY KEY DEFAULT shardid_next(4, 'd_seq'), body text)
	PARTITION BY RANGE (id);
CREATE TABLE d_default PARTITION OF d DEFAULT;
});
	partition_functions($faked);
	($state, $err) = run_sql($faked,
		q{CALL shardid_partition_run(ARRAY['d']::regclass[], '1 day', 1)});
	is($state, 'ok', 'F: the first run succeeds') or diag $err;
	$faked->safe_psql(
		'postgres', q{
INSERT INTO d (body) SELECT 'day 0' FROM generate_series(1, 100);
INSERT INTO d VALUES (shardid_encode(now() + interval '5 days', 4, 0), 'stray day+5'),
                     (shardid_encode(now() + interval '2 days', 4, 0), 'stray day+2');
});

	$offset += 3 * 86400;
	set_clock($clock_file, $offset);
	ok(wait_for_clock($faked, $offset), 'F: the server\'s clock jumped 3 days ahead');
	$faked->safe_psql('postgres',
		q{INSERT INTO d (body) SELECT 'day 3' FROM generate_series(1, 100);});
	is( $faked->safe_psql(
			'postgres', q{SELECT count(*) FROM d_default}),
		'102', 'F: before the run, 102 rows are in the default');
	($state, $err) = run_sql($faked,
		q{CALL shardid_partition_run(ARRAY['d']::regclass[], '1 day', 1)});
	is($state, 'ok', 'F: one run after the jump succeeds') or diag $err;
	is( $faked->safe_psql(
			'postgres', q{
SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM d_default),
       (SELECT count(*) FROM d WHERE right(tableoid::regclass::text, 8)
                                     <> to_char(shardid_created_at(id), 'YYYYMMDD'))}),
		'202|0|0', 'F: every row is in its day\'s partition; the default is empty');
	is( $faked->safe_psql(
			'postgres', q{
SELECT partitions_of('d') = days('d', -3, 2), last_result, moved, default_rows
  FROM shardid_partition_status WHERE parent = 'd'::regclass}),
		't|ok|102|0',
		'F: partitions for days -3 to +2, the status counts 102 rows moved');
	$faked->stop;
}

done_testing();
