# Copyright: see the shardid LICENSE.
#
# 076_busy_sequence.pl: a sequence that several sessions call at once does
# not stall while one of them writes its fence.
#
# A fence write sets the sequence to the new fence's first value and then
# flushes and publishes it.  Between the setval and the publication, the
# other sessions' nextval returns values of the new fence's block, past
# what the slot has published.  Those values are this server's own: if the
# slot took them for a move (a setval from elsewhere), it would start after
# the new fence, and every call would wait for the clock to pass it, a lead
# (500 ms) ahead.  Before the slot remembered the fence it is writing,
# eight pgbench clients on one sequence made 39 % of the IDs a second
# that 1.2 made in the same run, and spent most of their time in such
# waits; here, 16 calls waited in 4 s (docs/performance.md).
#
# Four pgbench clients ask for IDs of one sequence without pause for 4 s.
# Each fence write is held 50 ms between the sequence's setval and its
# publication (shardid.debug_fence_write_delay, within the database
# fence's write), so that the other clients take values of the new block
# in that window every time.  After a warm-up call and a reset of the
# counters:
#   - the sequence's fence was written several times (else the test
#     proves nothing);
#   - no call waited as after a start (fence_waits 0; clock_waits 0, the
#     clock being right, or 1: a loaded rehearsal saw one, unexplained);
#   - every ID is distinct and none is ahead of its clock reading after
#     the call (+1 ms), and pgbench failed no transaction.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $node = shardid_node('busy_sequence', 'shardid.debug_fence_write_delay = 50');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE s;
-- no unique index: duplicates must be visible, not refused
CREATE TABLE ids (id bigint NOT NULL, t1 timestamptz NOT NULL);
});

# warm-up: the slot's first call starts at the database's fence
$node->safe_psql('postgres', q{SELECT shardid_next(0, 's')});
$node->safe_psql('postgres', q{SELECT shardid_stats_reset()});

my $tempdir = PostgreSQL::Test::Utils::tempdir;
my $script = "$tempdir/busy.sql";
open my $fh, '>', $script or die "could not write \"$script\": $!";
print $fh q{INSERT INTO ids SELECT shardid_next(0, 's'), clock_timestamp() FROM generate_series(1, 20);
};
close $fh;
my ($out, $err) = ('', '');
my $pgbench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '4', '-f', $script, $node->connstr('postgres') ],
	'>', \$out, '2>', \$err, IPC::Run::timeout(120));
$pgbench->finish;
is($pgbench->result(0), 0, 'pgbench ended without error') or diag $err;
like($out, qr/number of failed transactions: 0 /, 'pgbench: no failed transaction')
  or diag $out;

my ($writes, $fence_waits, $clock_waits, $issued) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT fence_writes, fence_waits, clock_waits, ids_issued FROM shardid_stats
 WHERE sequence = 's'::regclass});
note "4 clients, 4 s: $issued IDs, $writes fence writes, $fence_waits fence waits, $clock_waits clock waits";
cmp_ok($writes, '>=', 4, 'the fence was written while the clients ran');
is($fence_waits, '0', 'no call waited for a fence the server itself was writing');
# (one wait is let pass: a rehearsal on a machine at a load of 9 saw one
# on PostgreSQL 19, which a right clock does not explain and is not
# explained yet, docs/performance.md; before the slot remembered the
# fence it writes, 16 calls waited in 4 s)
cmp_ok($clock_waits, '<=', 1, 'no call waited for the clock, or one on a loaded machine');

is( $node->safe_psql(
		'postgres', q{
SELECT count(*) = count(DISTINCT id),
       count(*) FILTER (WHERE shardid_created_at(id) > t1 + interval '1 ms')
  FROM ids}),
	't|0',
	'every ID distinct, none ahead of the clock');

$node->stop;
done_testing();
