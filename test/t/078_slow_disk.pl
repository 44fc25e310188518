# Copyright: see the shardid LICENSE.
#
# 078_slow_disk.pl: IDs keep flowing on a slow disk with many rarely
# called sequences (issue 29).  The server runs under bench/slowsync.c,
# which adds 20 ms to each fsync and fdatasync, with fsync on.  Twelve
# sessions each call their own sequence every 0.7 s, longer than the
# fence's lead, so that every call writes a fence and most find the
# database's fence to be moved too: they contend for its lock.  1.3 as
# first written let go of the sequence's lock when it found the
# database's taken, waited for the database's, released it at once and
# began again; the writers handed the lock to each other for minutes (8
# clients issued 1 ID in 6 minutes).  Now each session must finish its 25
# calls, every one issued; the longest call is printed, not asserted.
# Then the same with the sessions' sequences called in bursts, so that
# early and required writes mix, and every ID is counted: none twice.
# Throughout, the database's published cover is sampled every 100 ms:
# never more than the reach (625 ms) ahead of the clock.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(usleep);

my $sessions = 12;
my $cover_ahead = -1;	# the most the cover was seen ahead of the clock, ms
my $calls = 25;

# the slow disk
my $shim = PostgreSQL::Test::Utils::tempdir() . '/slowsync.so';
system('cc', '-shared', '-fPIC', '-O2', '-o', $shim, "$FindBin::RealBin/../../bench/slowsync.c", '-ldl') == 0
  or BAIL_OUT('could not build bench/slowsync.c');
chmod 0755, $shim;

my $node = shardid_node('slow', 'synchronous_commit = on', "max_connections = 40");
# fsync on: shardid_node sets it off, the last line counts
$node->append_conf('postgresql.conf', "fsync = on\n");
{
	local $ENV{LD_PRELOAD} = $shim;
	local $ENV{SLOWSYNC_US} = '20000';
	$node->start;
}
$node->safe_psql('postgres', qq{
CREATE EXTENSION shardid;
SELECT format('CREATE SEQUENCE s%s', i) FROM generate_series(1, $sessions) AS i \\gexec
CREATE TABLE ids (session int, id bigint, took interval);
});

# each session: N calls of its own sequence, each timed, PAUSE apart
sub run_sessions
{
	my ($pause, $burst) = @_;
	my @h;
	for my $i (1 .. $sessions)
	{
		my $sql = qq{
DO \$\$
DECLARE t0 timestamptz; id bigint;
BEGIN
	FOR c IN 1 .. $calls LOOP
		FOR b IN 1 .. $burst LOOP
			t0 := clock_timestamp();
			id := shardid_next($i, 's$i');
			INSERT INTO ids VALUES ($i, id, clock_timestamp() - t0);
		END LOOP;
		COMMIT;
		PERFORM pg_sleep($pause);
	END LOOP;
END \$\$;};
		my ($out, $err) = ('', '');
		push @h, [ IPC::Run::start(
			[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', $sql ],
			'>', \$out, '2>', \$err, IPC::Run::timeout(600)), \$err ];
	}
	# while they run: how far the database's published cover is ahead of
	# the clock, every 100 ms (never past the reach, 625 ms: the cover is
	# the clock and the lead, 500 ms, however long a write takes)
	while (grep { $_->[0]->pumpable } @h)
	{
		$_->[0]->pump_nb for grep { $_->[0]->pumpable } @h;
		my $ahead = $node->safe_psql('postgres',
			q{SELECT coalesce(round(extract(epoch FROM fence_time - clock_timestamp()) * 1000), -1) FROM shardid_fence_status WHERE datname = 'postgres'});
		$cover_ahead = $ahead if $ahead =~ /^-?\d+$/ && $ahead > $cover_ahead;
		usleep(100_000);
	}
	my $ok = 0;
	for my $h (@h)
	{
		eval { $h->[0]->finish; };
		$ok++ if !$@ && $h->[0]->result == 0;
		diag ${ $h->[1] } if ${ $h->[1] } ne '';
	}
	return $ok;
}

is(run_sessions(0.7, 1), $sessions, "$sessions sessions, each on its own sparse sequence, all finish");
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'), $sessions * $calls,
	'every call issued an ID');
note('the longest call: ' . $node->safe_psql('postgres', 'SELECT max(took) FROM ids'));
note('fence writes: ' . $node->safe_psql('postgres',
		q{SELECT sum(fence_writes) FROM shardid_stats}) . ' of the sequences, '
	  . $node->safe_psql('postgres',
		q{SELECT writes FROM shardid_fence_status WHERE datname = 'postgres'}) . ' of the database');

is(run_sessions(0.3, 200), $sessions, 'the same in bursts of 200: all finish');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	$sessions * $calls * 201, 'every call issued an ID');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM ids'), '0',
	'no ID twice');
note('the longest call: ' . $node->safe_psql('postgres', 'SELECT max(took) FROM ids'));
note("the cover was seen at most $cover_ahead ms ahead of the clock");
ok($cover_ahead >= 0 && $cover_ahead <= 625,
	"the database's cover never past the reach (625 ms) of the clock, however slow the writes");
$node->stop;

done_testing();
