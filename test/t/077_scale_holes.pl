# Copyright: see the shardid LICENSE.
#
# 077_scale_holes.pl: the paths on which 1.3 as first written repeated or
# stopped IDs (issue 29), each on real servers, counting duplicates in
# tables without a unique index on id (a repeat shows as a second row):
#
#   A. Unlogged sequences: a crash resets one to its start, and
#      pg_dump --no-unlogged-table-data and standbys do not carry its
#      value, so it cannot carry a fence.  CREATE UNLOGGED SEQUENCE is
#      refused at its first call, ALTER SEQUENCE ... SET UNLOGGED at the
#      next call after it, with 55000 and a message that says why; SET
#      LOGGED makes it usable again.  No ID is ever issued from an unlogged
#      sequence, so no dump or crash has one to repeat.
#   B. RESTART + crash + DROP/CREATE EXTENSION: the owner restarts the
#      sequence a column DEFAULT names at 1, the server is killed with -9
#      and starts with its clock 3 s behind the last ID, and the extension
#      is dropped (CASCADE: the DEFAULT goes with it) and made again.  The
#      DROP leaves the sequence carrying the database's fence, so the next
#      IDs are refused (55000) until the clock passes it, and then none
#      repeats.  (1.3 as first written: 8,863 and 4,888 duplicates.)
#   C. The rollback flood: a plain role makes 40 temporary sequences in one
#      transaction, calls shardid_next on each, and rolls back 500
#      savepoints.  Another role's sequence, whose fence is written, keeps
#      it: its next call writes none.  (Before, the 17th sequence
#      overflowed a list of 16, and every rollback made every slot of the
#      server forget its fence: another role's pgbench fell from 648-724
#      to 25-33 tps.)
#   D. An orphaned backend: a session inserts 30 million IDs in one
#      statement when the postmaster is killed with -9; it must stop with
#      57P01 at its next ID instead of going on (it went on for 18 s, its
#      fences never reaching the standby that was then promoted), and
#      commit nothing.
#   E. One wait per stall: with the standby's walsender stopped (SIGSTOP),
#      20 calls on 20 new sequences, 100 ms apart, 2 s in all: the
#      database's cover, renewed every 125 ms, waits for the standby
#      shardid.standby_wait from the first renewal the standby did not
#      receive and counts one standby timeout, and is then published
#      without it; the walsender continued, it catches up, and the next
#      stall counts one more.  (Before, each write waited again: 2-4 % of
#      the primary's IDs a second during a 2 s stall.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(usleep time);

my $faketime = libfaketime();
plan skip_all => 'libfaketime is not installed' unless $faketime;

# Processes this test stopped with SIGSTOP: never left stopped.
my @stopped;
END { kill 'CONT', @stopped if @stopped; }

# =====================================================================
# A. Unlogged sequences are refused.
# =====================================================================
my $a = shardid_node('unlogged');
$a->start;
$a->safe_psql('postgres', q{
CREATE EXTENSION shardid;
CREATE UNLOGGED SEQUENCE u;
CREATE SEQUENCE l;
});
my $e = sql_outcome($a, 'postgres', q{SELECT shardid_next(1, 'u')});
is($e->{code}, '55000', 'A: an unlogged sequence is refused at its first call');
like($e->{message}, qr/sequence "u" cannot carry the durable fence of its IDs/,
	'A: the message names the sequence');
like($e->{detail}, qr/unlogged: a crash resets it/, 'A: the detail says why');
like($e->{hint}, qr/ALTER SEQUENCE u SET LOGGED/, 'A: the hint says what to do');
is($a->safe_psql('postgres', q{SELECT count(*) FROM shardid_stats WHERE sequence = 'u'::regclass}),
	'0', 'A: it got no slot, and issued nothing');

ok($a->safe_psql('postgres', q{SELECT shardid_next(1, 'l') > 0}) eq 't',
	'A: a logged sequence issues');
$a->safe_psql('postgres', q{ALTER SEQUENCE l SET UNLOGGED});
$e = sql_outcome($a, 'postgres', q{SELECT shardid_next(1, 'l')});
is($e->{code}, '55000', 'A: SET UNLOGGED: the next call is refused');
$e = sql_outcome($a, 'postgres',
	q{BEGIN; SELECT shardid_next(1, 'l'); ROLLBACK;});
is($e->{code}, '55000', 'A: and every call after it, in any transaction');
$a->safe_psql('postgres', q{ALTER SEQUENCE l SET LOGGED});
ok($a->safe_psql('postgres', q{SELECT shardid_next(1, 'l') > 0}) eq 't',
	'A: SET LOGGED: it issues again');
# within one transaction: SET UNLOGGED after a call, then a call
$e = sql_outcome($a, 'postgres',
	q{BEGIN; SELECT shardid_next(1, 'l'); ALTER SEQUENCE l SET UNLOGGED; SELECT shardid_next(1, 'l'); COMMIT;});
is($e->{code}, '55000', 'A: SET UNLOGGED in the transaction of a call: the next call is refused');
$a->stop;

# =====================================================================
# B. RESTART + crash + DROP/CREATE EXTENSION, the clock 3 s behind.
# =====================================================================
my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
set_clock($clock, 0);
my $b = shardid_node('restart', 'shardid.max_clock_regression = 1s');
start_faked($b, $clock);
$b->safe_psql('postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE s;
CREATE TABLE ids (id bigint DEFAULT shardid_next(3, 's'), phase text);
INSERT INTO ids (phase) SELECT 'before' FROM generate_series(1, 200000);
});
my $last_ms = $b->safe_psql('postgres',
	q{SELECT (extract(epoch FROM max((shardid_decode(id)).created_at)) * 1000)::bigint FROM ids});
$b->safe_psql('postgres', q{ALTER SEQUENCE s RESTART WITH 1});
kill9_and_reap($b);
my $behind = $last_ms / 1000 - 3 - time();
set_clock($clock, $behind);
start_faked($b, $clock);
ok(wait_for_clock($b, $behind), 'B: the clock runs 3 s behind the last ID');
$b->safe_psql('postgres', q{
DROP EXTENSION shardid CASCADE;
CREATE EXTENSION shardid;
ALTER TABLE ids ALTER id SET DEFAULT shardid_next(3, 's');
});
is($b->safe_psql('postgres', q{SELECT last_value >= 1024 FROM s}), 't',
	'B: the DROP left the sequence carrying the database\'s fence');
$e = sql_outcome($b, 'postgres',
	q{INSERT INTO ids (phase) SELECT 'behind' FROM generate_series(1, 100000)});
ok($e->{code} eq '55000' || $e->{code} eq 'none',
	"B: with the clock 3 s behind, refused or issued past the fence: $e->{code}")
  or diag explain $e;
clock_to($b, $clock, time());
$e = sql_outcome($b, 'postgres',
	q{INSERT INTO ids (phase) SELECT 'after' FROM generate_series(1, 200000)});
is($e->{code}, 'none', 'B: with the clock right, it issues');
is(duplicates($b, 'ids'), '0', 'B: no ID twice');
is( $b->safe_psql('postgres',
		q{SELECT min(id) > (SELECT max(id) FROM ids WHERE phase = 'before') FROM ids WHERE phase <> 'before'}),
	't', 'B: every new ID after every old one');
$b->stop;

# =====================================================================
# C. The rollback flood, as a plain role, against another role's fence.
# =====================================================================
my $c = shardid_node('flood', q{shardid.fence_lead = '20s'});
$c->start;
$c->safe_psql('postgres', q{
CREATE EXTENSION shardid;
CREATE ROLE alice LOGIN;
CREATE ROLE mallory LOGIN;
CREATE SCHEMA a AUTHORIZATION alice;
SET ROLE alice;
CREATE SEQUENCE a.s;
});
$c->safe_psql('postgres', q{SELECT shardid_next(1, 'a.s')}, extra_params => [ '-U', 'alice' ]);
my $writes0 = $c->safe_psql('postgres',
	q{SELECT fence_writes FROM shardid_stats WHERE sequence = 'a.s'::regclass});
cmp_ok($writes0, '>=', 1, "C: alice's sequence wrote its fence: $writes0");
$e = sql_outcome($c, 'postgres', q{
BEGIN;
SELECT format('CREATE TEMP SEQUENCE t%s', i) FROM generate_series(1, 40) AS i \gexec
SELECT count(shardid_next(0, format('pg_temp.t%s', i)::regclass)) FROM generate_series(1, 40) AS i;
DO $$
BEGIN
	FOR i IN 1 .. 500 LOOP
		BEGIN
			PERFORM shardid_next(0, 'pg_temp.t1');
			PERFORM 1 / 0;
		EXCEPTION WHEN division_by_zero THEN NULL;
		END;
	END LOOP;
END $$;
COMMIT;
}, user => 'mallory');
is($e->{code}, 'none', 'C: mallory makes 40 sequences and rolls back 500 savepoints');
$c->safe_psql('postgres', q{SELECT shardid_next(1, 'a.s')}, extra_params => [ '-U', 'alice' ]);
is( $c->safe_psql('postgres',
		q{SELECT fence_writes FROM shardid_stats WHERE sequence = 'a.s'::regclass}),
	$writes0, "C: alice's next call writes no fence: her slot kept it");
$c->stop;

# =====================================================================
# D. An orphaned backend hands out no ID.
# =====================================================================
my $d = shardid_node('orphan');
$d->start;
$d->safe_psql('postgres', q{CREATE EXTENSION shardid; CREATE SEQUENCE s; CREATE TABLE ids (id bigint);});
# One statement that never waits for its client (a COPY TO STDOUT would,
# and PostgreSQL ends a backend that waits once its postmaster is gone):
# only shardid's own check can stop it.
my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $d->connstr('postgres'), '-c',
		q{INSERT INTO ids SELECT shardid_next(1, 's') FROM generate_series(1, 30000000)} ],
	'>', \$out, '2>', \$err, IPC::Run::timeout(600));
my $issued = 0;
for (1 .. 600)
{
	$issued = $d->safe_psql('postgres', q{SELECT coalesce(sum(ids_issued), 0) FROM shardid_stats});
	last if $issued > 100_000;
	usleep(50_000);
}
cmp_ok($issued, '>', 100_000, 'D: the session is issuing IDs');
kill9_and_reap($d);
$h->finish;
like($err, qr/terminating connection because the postmaster died/,
	'D: the orphan stops at its next ID, with the documented error')
  or diag $err;
# the orphan gone, the server starts again (its shared memory freed)
my $started = 0;
for (1 .. 30)
{
	last if ($started = $d->start(fail_ok => 1));
	sleep 1;
}
ok($started, 'D: the server starts again');
is($d->safe_psql('postgres', 'SELECT count(*) FROM ids'), '0',
	'D: the orphan committed nothing') if $started;
$d->stop if $started;

# =====================================================================
# E. A stalled standby costs one wait per stall.
# =====================================================================
my $p = shardid_node('stall', { allows_streaming => 1 }, q{shardid.standby_wait = '500ms'});
$p->start;
$p->safe_psql('postgres', q{CREATE EXTENSION shardid;
SELECT format('CREATE SEQUENCE e%s', i) FROM generate_series(1, 40) AS i \gexec});
$p->backup('b');
my $st = PostgreSQL::Test::Cluster->new('stall_standby');
$st->init_from_backup($p, 'b', has_streaming => 1);
$st->start;
$p->wait_for_catchup($st);
$p->safe_psql('postgres', q{SELECT shardid_next(1, 'e1')});
my $walsender = $p->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_replication WHERE state = 'streaming'});
ok($walsender =~ /^\d+$/, 'E: the walsender is found');

sub stall
{
	my ($from, $to) = @_;
	kill 'STOP', $walsender;
	push @stopped, $walsender;
	my $t0 = time();
	$p->safe_psql('postgres', qq{
DO \$\$
BEGIN
	FOR i IN $from .. $to LOOP
		PERFORM shardid_next(1, format('e%s', i)::regclass);
		PERFORM pg_sleep(0.1);
	END LOOP;
END
\$\$});
	my $took = time() - $t0;
	kill 'CONT', $walsender;
	@stopped = ();
	$p->wait_for_catchup($st);
	return $took;
}
my $took = stall(2, 21);
is($p->safe_psql('postgres', q{SELECT standby_timeouts FROM shardid_fence_status WHERE datname = 'postgres'}),
	'1', 'E: 20 calls over 2 s of a stall: one standby timeout');
note(sprintf 'E: the 20 first calls took %.2f s', $took);
# caught up: the next write waits again (and finds the standby)
$p->safe_psql('postgres', q{SELECT shardid_next(1, 'e22')});
stall(23, 40);
is($p->safe_psql('postgres', q{SELECT standby_timeouts FROM shardid_fence_status WHERE datname = 'postgres'}),
	'2', 'E: a second stall: one more');
ok($p->log_contains('every connected streaming standby has received shardid\'s fences again'),
	'E: the log says when the standby caught up');
$st->stop;
$p->stop;

done_testing();
