# Copyright: see the shardid LICENSE.
#
# 030_restart.pl: the guard's state across restarts, with the real clock.
#   - A clean shutdown saves the state to pg_stat/shardid.state and the
#     next start reads it back: each sequence's last millisecond and
#     counters are as before, and the IDs after the restart are greater than
#     and distinct from those before.
#   - An immediate shutdown (pg_ctl stop -m immediate) is a shutdown, not a
#     crash: the postmaster exits normally and saves the state, which the
#     next start reads back.
#   - After a backend crashes (SIGKILL), the postmaster saves the state
#     before it reinitialises shared memory and reads it back: the
#     milliseconds issued before the crash are known after it, not only
#     those of the last clean shutdown; shardid_next still works and
#     repeats nothing.
#   - A truncated state file is reported with a WARNING and ignored.
#   - A saved state larger than a lowered shardid.max_sequences is loaded
#     with evictions, and IDs still do not repeat.
# (Restarts with the clock set back are in 020_clock.pl.)

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use Time::HiRes qw(usleep);

my $node = shardid_node('restart', 'restart_after_crash = on');
$node->start;

my $state_file = $node->data_dir . '/pg_stat/shardid.state';

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE TABLE ids (
	ord		bigserial,			-- issue order
	phase	text NOT NULL,
	id		bigint NOT NULL
);
CREATE SEQUENCE s;
CREATE FUNCTION take(p text, n integer) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO ids (phase, id)
	SELECT p, shardid_next(5, 's') FROM generate_series(1, n)
$$;
});

# No ID repeats, every phase's IDs are greater than the previous phase's,
# and the IDs strictly increase in issue order.
sub check_ids
{
	my ($what) = @_;
	my $dups = duplicates($node, 'ids');
	my $not_up = $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE id <= prev)
  FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev FROM ids) AS o});
	is("$dups|$not_up", '0|0',
		"$what: no ID repeats and IDs strictly increase in issue order");
	return;
}

my $stats_query = q{
SELECT ids_issued, last_ms FROM shardid_stats WHERE sequence = 's'::regclass};

# 1. Clean restart.
$node->safe_psql('postgres', q{SELECT take('first', 20000)});
my $before = $node->safe_psql('postgres', $stats_query);
$node->stop;
ok(-f $state_file, 'clean shutdown writes pg_stat/shardid.state');
ok(!-e "$state_file.tmp", 'no temporary state file is left behind');
$node->start;
is($node->safe_psql('postgres', $stats_query),
	$before, 'clean restart: last_ms and ids_issued are read back');
$node->safe_psql('postgres', q{SELECT take('after-clean', 20000)});
check_ids('clean restart');
is( $node->safe_psql(
		'postgres', q{SELECT ids_issued FROM shardid_stats WHERE sequence = 's'::regclass}
	),
	'40000',
	'clean restart: ids_issued counts IDs from before and after');

# Several restarts in a row, each followed at once by fast generation.
for my $i (1 .. 3)
{
	$node->restart;
	$node->safe_psql('postgres', qq{SELECT take('restart-$i', 5000)});
}
check_ids('three quick restarts');

# 2. Immediate shutdown: the postmaster still exits normally and saves the
# state; the server comes back with it and shardid_next works.
$before = $node->safe_psql('postgres', $stats_query);
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', $stats_query),
	$before, 'immediate shutdown: last_ms and ids_issued are read back');
$node->safe_psql('postgres', q{SELECT take('after-immediate', 5000)});
check_ids('immediate shutdown');

# 3. A backend crashes: the postmaster saves the state, reinitialises
# shared memory and reads the state back.  The IDs issued after the clean
# restart are later than the file that restart left, so only a state saved
# at the crash knows them.
$node->restart;
my $saved = $node->safe_psql('postgres', $stats_query);
$node->safe_psql('postgres', q{SELECT take('before-crash', 5000)});
my ($max_before_crash, $issued_before_crash) = split /\|/,
  $node->safe_psql('postgres',
	q{SELECT max(shardid_created_at(id)), count(*) FROM ids});
is( $node->safe_psql(
		'postgres', qq{
SELECT '$max_before_crash'::timestamptz > last_ms FROM
  (SELECT (regexp_split_to_array('$saved', '[|]'))[2]::timestamptz AS last_ms) AS s}),
	't',
	'before the crash: IDs were issued after the state the clean restart saved');
my ($out, $err) = ('', '');
my $victim = IPC::Run::start(
	[
		'psql', '-XAtq', '-d', $node->connstr('postgres'),
		'-c', 'SELECT pg_sleep(600)'
	],
	'>', \$out, '2>', \$err);
ok( $node->poll_query_until(
		'postgres', q{
SELECT count(*) = 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'}),
	'a backend to kill is running');
my $pid = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'});
my $log_offset = -s $node->logfile;
kill 'KILL', $pid;
$victim->finish;
# A connection may still succeed before the postmaster has seen the crash:
# wait for the log to say it reinitialised shared memory and is ready again
# (each wait bounded by the harness's timeout), then for a connection.
my $reinitialised = eval {
	$node->wait_for_log(qr/terminating any other active server processes/,
		$log_offset);
	$node->wait_for_log(qr/database system is ready to accept connections/,
		$log_offset);
	1;
};
my $up = 0;
for (1 .. 600)
{
	my $res = eval { $node->safe_psql('postgres', 'SELECT 1') };
	if (defined $res && $res eq '1')
	{
		$up = 1;
		last;
	}
	usleep(100_000);
}
ok($up, 'the server restarts after a backend crash');
ok($reinitialised, 'the crash reinitialised shared memory');
is( $node->safe_psql(
		'postgres', qq{
SELECT last_ms >= '$max_before_crash', ids_issued
  FROM shardid_stats WHERE sequence = 's'::regclass}),
	"t|$issued_before_crash",
	'after a crash last_ms is at least the latest millisecond issued before it, and ids_issued counts every ID'
);
$node->safe_psql('postgres', q{SELECT take('after-crash', 5000)});
check_ids('backend crash');

# 4. A damaged state file is reported and ignored; the server starts.
$node->stop;
truncate $state_file, 10 or die "could not truncate \"$state_file\": $!";
$node->start;
ok( $node->log_contains(
		'could not read file "pg_stat/shardid.state": it is truncated or unreadable'
	),
	'a truncated state file is reported');
$node->safe_psql('postgres', q{SELECT take('after-truncated', 5000)});
check_ids('truncated state file');

# 5. The saved state holds more sequences than a smaller
# shardid.max_sequences allows: loading it evicts the least recently used,
# and the floor keeps their IDs from repeating.
$node->safe_psql(
	'postgres', q{
CREATE TABLE many_ids (ord bigserial, seq regclass NOT NULL, id bigint NOT NULL);
SELECT format('CREATE SEQUENCE m%s', i) FROM generate_series(1, 40) AS i \gexec
INSERT INTO many_ids (seq, id)
SELECT format('m%s', i)::regclass, shardid_next(6, format('m%s', i)::regclass)
  FROM generate_series(1, 40) AS i, generate_series(1, 500) AS j;
});
$node->stop;
$node->append_conf('postgresql.conf', 'shardid.max_sequences = 16');
$node->start;
my ($entries, $evictions) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT entries, evictions FROM shardid_stats_info()');
is($entries, '16', 'smaller max_sequences: 16 entries loaded');
cmp_ok($evictions, '>=', 25,
	'smaller max_sequences: the other saved entries were evicted');
$node->safe_psql(
	'postgres', q{
INSERT INTO many_ids (seq, id)
SELECT format('m%s', i)::regclass, shardid_next(6, format('m%s', i)::regclass)
  FROM generate_series(1, 40) AS i, generate_series(1, 500) AS j;
});
my $many_dups = duplicates($node, 'many_ids', key => '(seq, id)');
my $many_not_up = $node->safe_psql(
	'postgres', q{
SELECT count(*) FILTER (WHERE id <= prev) FROM
  (SELECT id, lag(id) OVER (PARTITION BY seq ORDER BY ord) AS prev
     FROM many_ids) AS o;
});
is("$many_dups|$many_not_up", '0|0',
	'smaller max_sequences: no ID repeats, each sequence keeps increasing');

$node->stop;
done_testing();
