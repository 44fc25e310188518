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
# sessions: M1 on shardid_internal.shardid_fence (which she may not even
# look up: 42501 before any lock), M2 on alice's sequence s in public, which
# shardid_next uses.  Meanwhile writer W1 holds the database fence's
# writers' lock: it sleeps inside a write of the database's cover
# (shardid.debug_fence_write_delay = 60 s; since the cover, no writer holds
# a sequence's lock and the database's at once).  Once mallory is either
# waiting for a lock or has run her loop 50 times without waiting, and the
# clock is past the published fences, W2 asks for an ID of sequence t and
# W3 for one of s: each needs the cover, and waits for the database
# fence's lock; once it has the cover, W3 takes s's, which mallory's
# COMMENT on s must not hold it from.  Then:
#   - W2 and W3 each wait for a lock, and pg_blocking_pids names W1 for
#     each, never M1 or M2;
#   - neither M1 nor M2 waits for a lock;
#   - once W1 is cancelled (57014), W2 and W3 each get their ID.
#
# Part 2: the extension's own sequences (the fence, the epoch, the lead)
# are in the schema shardid_internal, which no role but the extension's
# owner may use (review, HIGH).  A few commands lock the relation they
# name before they check its kind or owner (CREATE RULE and CREATE
# TABLE ... PARTITION OF: AccessExclusiveLock; ATTACH PARTITION; CREATE
# TRIGGER and a foreign key's REFERENCES: ShareRowExclusiveLock): in the
# extension's schema, with a transaction holding RowExclusiveLock on one
# of the sequences, mallory's request queued behind it and every fence
# writer of the database behind her, until that transaction ended.  Here
# H1, mallory's own session, holds the epoch's lock (BEGIN; SELECT
# shardid_epoch(), then idle), and H2 holds all three, as an open fence
# writer's transaction does.  Mallory then runs each of those commands
# against each sequence, by its schema-qualified name, by its 1.2 name in
# public, and through her search_path: each fails with 42501 (permission
# denied for schema shardid_internal) or 42P01 (not found), never waits
# for a lock (her lock_timeout would end such a wait with 55P03, the
# session is seen waiting or finished, never assumed done).  Then writer
# W, with H1 and H2 still open, issues IDs until the database's fence has
# been written three more times: it waits for no lock (pg_blocking_pids),
# and finishes.
#
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
   AND EXISTS (SELECT FROM pg_locks WHERE pid = $w1_pid AND $db_lock AND granted)}),
	'W1 sleeps inside a write of the database\'s cover, holding its fence lock');

# Mallory: COMMENT ON SEQUENCE in a loop, each refused (42501) once it
# has the lock, from two sessions.
my %m;
for my $target ([ 'M1', 'shardid_internal.shardid_fence' ], [ 'M2', 'public.s' ])
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

# W2 and W3 need the database fence's lock once the clock is past the
# fences published for s and t, and for the database: each call then
# needs the cover, and then a write of its sequence's fence (W3: under
# s's lock).
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

# ---------------------------------------------------------------------
# Part 2: no role can name the extension's sequences, nor so lock them.
# ---------------------------------------------------------------------
my @members = qw(shardid_fence shardid_epoch shardid_fence_lead);
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(c.relname, ' ' ORDER BY c.relname)
  FROM pg_class c
 WHERE c.relnamespace = 'shardid_internal'::regnamespace
   AND c.relkind = 'S'
   AND EXISTS (SELECT FROM pg_depend d
                WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e');
SELECT has_schema_privilege('mallory', 'shardid_internal', 'USAGE'),
       has_schema_privilege('alice', 'shardid_internal', 'USAGE'),
       has_schema_privilege('public', 'shardid_internal', 'USAGE');
SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace
   AND relname IN ('shardid_fence', 'shardid_epoch', 'shardid_fence_lead')}),
	"shardid_epoch shardid_fence shardid_fence_lead\nf|f|f\n0",
	'the extension\'s sequences are in shardid_internal, which mallory, alice and PUBLIC may not use');

# Mallory's objects for the attempts: a trigger function, a partitioned
# table, and a table of the outcomes.
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION m.trg() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
CREATE TABLE m.pp (a bigint) PARTITION BY LIST (a);
CREATE TABLE m.outcome (what text NOT NULL, state text NOT NULL);
}, extra_params => [ '-U', 'mallory' ]);

# H1: mallory's own transaction that read the epoch, left open.
my $h1 = $node->background_psql('postgres', on_error_stop => 0, extra_params => [ '-U', 'mallory' ]);
my $h1_pid = $h1->query_safe('SELECT pg_backend_pid()');
$h1->query_safe('BEGIN');
$h1->query_safe('SELECT shardid_epoch()');
# H2: a transaction that holds all three, as an open fence writer's does.
my $h2 = $node->background_psql('postgres', on_error_stop => 0);
my $h2_pid = $h2->query_safe('SELECT pg_backend_pid()');
$h2->query_safe('BEGIN');
$h2->query_safe(join ', ', 'SELECT 1',
	map { "pg_sequence_last_value('shardid_internal.$_')" } @members);
is( $node->safe_psql(
		'postgres', qq{
SELECT string_agg(format('%s:%s', CASE pid WHEN $h1_pid THEN 'H1' ELSE 'H2' END, c.relname), ' '
                  ORDER BY pid = $h2_pid, c.relname)
  FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid IN ($h1_pid, $h2_pid) AND l.mode = 'RowExclusiveLock' AND l.granted
   AND c.relnamespace = 'shardid_internal'::regnamespace}),
	'H1:shardid_epoch H2:shardid_epoch H2:shardid_fence H2:shardid_fence_lead',
	'H1 (mallory) holds RowExclusiveLock on the epoch, H2 on all three');

# Every attempt, on every sequence, under every name.  Each runs in its
# own subtransaction; its outcome is its SQLSTATE.
my @attempts;
for my $seq (@members)
{
	for my $name ("shardid_internal.$seq", "public.$seq", $seq)
	{
		push @attempts,
		  [ "CREATE RULE on $name", "CREATE RULE r AS ON INSERT TO $name DO INSTEAD NOTHING" ],
		  [ "CREATE TRIGGER on $name",
			"CREATE TRIGGER t BEFORE INSERT ON $name FOR EACH ROW EXECUTE FUNCTION m.trg()" ],
		  [ "PARTITION OF $name", "CREATE TEMP TABLE p PARTITION OF $name FOR VALUES IN (1)" ],
		  [ "ATTACH PARTITION $name", "ALTER TABLE m.pp ATTACH PARTITION $name FOR VALUES IN (1)" ],
		  [ "REFERENCES $name", "CREATE TEMP TABLE f (a bigint REFERENCES $name)" ],
		  [ "COMMENT ON SEQUENCE $name", "COMMENT ON SEQUENCE $name IS 'mallory'" ],
		  [ "LOCK $name", "LOCK TABLE $name IN ACCESS EXCLUSIVE MODE" ];
	}
}
my $block = join '', map {
	my ($what, $sql) = @$_;
	$sql =~ s/'/''/g;
	qq{\tBEGIN\n\t\tEXECUTE '$sql';\n\t\tINSERT INTO m.outcome VALUES ('$what', 'ok');\n}
	  . qq{\tEXCEPTION WHEN OTHERS THEN\n\t\tINSERT INTO m.outcome VALUES ('$what', SQLSTATE);\n\tEND;\n}
} @attempts;
my $m3 = $node->background_psql('postgres', on_error_stop => 0, extra_params => [ '-U', 'mallory' ]);
my $m3_pid = $m3->query_safe('SELECT pg_backend_pid()');
# the unqualified names go through her search_path, where the schema is
# listed but skipped (no USAGE)
$m3->query_safe(q{SET search_path = shardid_internal, public, m});
$m3->query_safe(q{SET lock_timeout = '300s'});
$m3->query_until(qr/m3-attempts/, "\\echo m3-attempts\nDO \$\$\nBEGIN\n$block END \$\$;\n");
ok( $node->poll_query_until(
		'postgres', qq{
SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $m3_pid AND wait_event_type = 'Lock')
    OR (SELECT count(*) FROM m.outcome) = } . scalar(@attempts)),
	'mallory\'s attempts are either all done or waiting for a lock');
is($node->safe_psql('postgres', qq{SELECT count(*) FROM pg_stat_activity WHERE pid = $m3_pid AND wait_event_type = 'Lock'}),
	'0', 'mallory waits for no lock: none of her attempts queued');
my %outcome = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres', 'SELECT what, state FROM m.outcome');
for my $attempt (@attempts)
{
	my $what = $attempt->[0];
	my $want = $what =~ /shardid_internal\./ ? '42501' : '42P01';
	is($outcome{$what} // 'none', $want,
		"mallory: $what fails at once with $want (" . ($want eq '42501' ? 'no USAGE on the schema' : 'not found') . ')');
}

# W: with H1 and H2 open, IDs until the database's fence is written three
# more times; each write takes RowExclusiveLock on the three sequences and
# then the writers' tag.
my $writes0 = $node->safe_psql('postgres',
	q{SELECT writes FROM shardid_fence_status WHERE datname = current_database()});
my $w = $node->background_psql('postgres', on_error_stop => 0);
my $w_pid = $w->query_safe('SELECT pg_backend_pid()');
$w->query_until(
	qr/w-loop/, qq{\\echo w-loop
DO \$\$
BEGIN
	LOOP
		PERFORM shardid_next(1, 't');
		EXIT WHEN (SELECT writes FROM shardid_fence_status
		            WHERE datname = current_database()) >= $writes0 + 3;
	END LOOP;
END \$\$;
SELECT 'w-done';
});
ok( $node->poll_query_until(
		'postgres', qq{
SELECT (SELECT writes FROM shardid_fence_status WHERE datname = current_database()) >= $writes0 + 3
    OR cardinality(pg_blocking_pids($w_pid)) > 0}),
	'the database\'s fence was written three times, or W is blocked');
is($node->safe_psql('postgres', "SELECT array_to_string(pg_blocking_pids($w_pid), ',')"),
	'', 'W is blocked by no one');
cmp_ok($node->safe_psql('postgres',
		q{SELECT writes FROM shardid_fence_status WHERE datname = current_database()}),
	'>=', $writes0 + 3,
	'W wrote the database\'s fence three times while H1 and H2 held the sequences');
like($w->query('SELECT 1') // '', qr/w-done/, 'W\'s loop ended');

$h1->query_safe('ROLLBACK');
$h2->query_safe('ROLLBACK');
$_->quit for ($h1, $h2, $m3, $w);
$node->stop;

done_testing();
