# Copyright: see the shardid LICENSE.
#
# 081_fence_lock_queue.pl: no role can queue in front of the fence
# writers (issue 29/32: "no lock that PUBLIC can also take").
#
# The writers of a fence used to serialize on a ShareUpdateExclusiveLock
# of the sequence that keeps it: the database's, shardid_fence, and each
# sequence's own.  COMMENT ON SEQUENCE takes that lock before it checks
# that the caller owns the sequence, so any role that can name the
# sequence queued for it while a writer held it, and every writer that
# came after her queued behind her (pg_blocking_pids names her).  The
# writers now serialize on a lock tag of shardid's own, which no SQL
# function makes, after a RowExclusiveLock on the sequence, which
# COMMENT's lock does not conflict with.
#
# A plain LOGIN role, mallory, runs COMMENT ON SEQUENCE in a loop from two
# sessions: M1 on shardid_fence, M2 on alice's sequence s, which
# shardid_next uses.  Meanwhile writer W1 holds both fences' writers'
# locks: it sleeps inside a fence write of s (shardid.debug_fence_write_delay
# = 60 s, within the database fence's write).  Once mallory is either
# waiting for a lock or has run her loop 50 times without waiting, W2
# asks for an ID of sequence t (its fence write needs the database's
# fence: W2 waits for the database fence's lock) and W3 for one of s (it
# waits for s's).  Then:
#   - W2 and W3 each wait for a lock, and pg_blocking_pids names W1 for
#     each, never M1 or M2;
#   - neither M1 nor M2 waits for a lock;
#   - once W1 is cancelled (57014), W2 and W3 each get their ID.
# Nothing here depends on how long a step takes: the states are read from
# pg_stat_activity and pg_locks, every wait bounded by poll_query_until.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $node = shardid_node('lock_queue');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE ROLE alice LOGIN;
CREATE ROLE mallory LOGIN;
CREATE SCHEMA m AUTHORIZATION mallory;
-- in public, which every role can name objects in; alice's
CREATE SEQUENCE public.s;
CREATE SEQUENCE public.t;
ALTER SEQUENCE public.s OWNER TO alice;
ALTER SEQUENCE public.t OWNER TO alice;
-- no unique index: the test counts rows
CREATE TABLE ids (who text NOT NULL, id bigint NOT NULL);
});
$node->safe_psql('postgres', q{CREATE SEQUENCE m.tries}, extra_params => [ '-U', 'mallory' ]);

# warm-up: the database's fence is loaded, both sequences' slots started
$node->safe_psql('postgres', q{SELECT shardid_next(1, 's'), shardid_next(1, 't')});

my $s_oid = $node->safe_psql('postgres', q{SELECT 's'::regclass::oid});

# The writers' locks as pg_locks shows them (src/fence.c, writer_tag):
# advisory locks of shardid's own classes, objid 0 for the database's
# fence and the sequence's OID for a sequence's.
my $db_lock = q{locktype = 'advisory' AND objid = 0 AND objsubid = 21316};
my $s_lock = "locktype = 'advisory' AND objid = $s_oid AND objsubid = 21317";

# W1: IDs of s until one of its fence writes sleeps, holding the locks.
my $w1 = $node->background_psql('postgres', on_error_stop => 0);
my $w1_pid = $w1->query_safe(
	'SET shardid.debug_fence_write_delay = 60000; SELECT pg_backend_pid()');
$w1->query_until(
	qr/w1-loop/, q{\echo w1-loop
DO $$
BEGIN
	FOR i IN 1 .. 100000000 LOOP
		PERFORM shardid_next(1, 's');
	END LOOP;
END $$;
});
ok( $node->poll_query_until(
		'postgres', qq{
SELECT EXISTS (SELECT FROM pg_stat_activity
                WHERE pid = $w1_pid AND wait_event_type = 'Extension')
   AND EXISTS (SELECT FROM pg_locks WHERE pid = $w1_pid AND $db_lock AND granted)
   AND EXISTS (SELECT FROM pg_locks WHERE pid = $w1_pid AND $s_lock AND granted)}),
	'W1 sleeps inside a fence write of s, holding the fence locks of s and of the database');

# Mallory: COMMENT ON SEQUENCE in a loop, each refused (42501) once it
# has the lock, from two sessions.
my %m;
for my $target ([ 'M1', 'public.shardid_fence' ], [ 'M2', 'public.s' ])
{
	my ($name, $seq) = @$target;
	my $h = $node->background_psql(
		'postgres',
		on_error_stop => 0,
		extra_params => [ '-U', 'mallory' ]);
	my $pid = $h->query_safe('SELECT pg_backend_pid()');
	$h->query_until(
		qr/\Q$name\E-loop/, qq{\\echo $name-loop
SET statement_timeout = '300s';
DO \$\$
BEGIN
	FOR i IN 1 .. 100000000 LOOP
		BEGIN
			COMMENT ON SEQUENCE $seq IS 'mallory';
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;
		END;
		PERFORM nextval('m.tries');
	END LOOP;
END \$\$;
});
	$m{$name} = { h => $h, pid => $pid };
}
my $m_pids = join ',', map { $m{$_}{pid} } sort keys %m;

# Both sessions queued for a lock, or looped freely: 50 tries in all.
ok( $node->poll_query_until(
		'postgres', qq{
SELECT (SELECT count(*) FROM pg_stat_activity
         WHERE pid IN ($m_pids) AND wait_event_type = 'Lock') = 2
    OR (SELECT last_value >= 50 FROM m.tries)}),
	'mallory is queued for the locks, or has run her loop 50 times');
my $tries = $node->safe_psql('postgres', q{SELECT last_value FROM m.tries});

# W2 needs the database fence's lock, W3 the lock of s, once the clock is
# past the fences published for s and t, and for the database: each call
# then needs a write of its sequence's fence, and t's must carry the
# database's fence past the published one.
ok( $node->poll_query_until(
		'postgres', q{
SELECT clock_timestamp()
       > (SELECT max(fence) FROM shardid_stats WHERE sequence IN ('s'::regclass, 't'::regclass))
   AND clock_timestamp()
       > (SELECT fence_time FROM shardid_fence_status WHERE datname = current_database())}),
	'the clock is past the published fences');
my %w;
for my $target ([ 'W2', 't' ], [ 'W3', 's' ])
{
	my ($name, $seq) = @$target;
	my $h = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $h->query_safe('SELECT pg_backend_pid()');
	$h->query_until(qr/\Q$name\E-call/,
		"\\echo $name-call\nINSERT INTO ids VALUES ('$name', shardid_next(1, '$seq'));\n");
	$w{$name} = { h => $h, pid => $pid };
}
my $w_pids = join ',', map { $w{$_}{pid} } sort keys %w;
ok( $node->poll_query_until(
		'postgres', qq{
SELECT count(*) = 2 FROM pg_stat_activity
 WHERE pid IN ($w_pids) AND wait_event_type = 'Lock'}),
	'W2 and W3 wait for a lock');

for my $name (sort keys %w)
{
	my $blockers = $node->safe_psql('postgres',
		"SELECT array_to_string(pg_blocking_pids($w{$name}{pid}), ',')");
	my %by = map { $_ => 1 } split /,/, $blockers;
	note "$name ($w{$name}{pid}) waits for: $blockers; W1 is $w1_pid, M1 $m{M1}{pid}, M2 $m{M2}{pid}";
	ok($by{$w1_pid}, "$name waits for W1, the writer that holds the lock");
	ok(!$by{ $m{M1}{pid} } && !$by{ $m{M2}{pid} }, "$name does not wait for mallory");
}
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM pg_stat_activity
 WHERE pid IN ($m_pids) AND wait_event_type = 'Lock'}),
	'0',
	'mallory waits for no lock');
note 'mallory tried '
  . $node->safe_psql('postgres', q{SELECT last_value FROM m.tries})
  . " times in all ($tries when W2 and W3 came)";

# W1 cancelled: W2 and W3 go on and get their IDs.
$node->safe_psql('postgres', "SELECT pg_cancel_backend($w1_pid)");
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) = 2 FROM ids WHERE who IN ('W2', 'W3')}),
	'W2 and W3 each get an ID once W1 is cancelled');
like($w1->query('SELECT 1') // '', qr/1/, 'W1 is usable after its cancel');
like($w1->{stderr}, qr/canceling statement due to user request/, 'W1 ended with a cancel');

$node->safe_psql('postgres', "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid IN ($m_pids)");
$_->{h}->quit for values %m;
$_->{h}->quit for values %w;
$w1->quit;
$node->stop;

done_testing();
