# Copyright: see the shardid LICENSE.
#
# 072_fence_epoch.pl: no role without the privilege can stop a database's
# IDs, the epoch belongs to the database, and an operator can undo a fence
# that a wrong clock or a smaller lead left behind.
#
# Version 1.1 compared time fields under whatever epoch each call passed,
# so one call with an early epoch, by any role, pushed the durable fence
# to the signed-bit horizon and stopped the database until 2045.  Since
# 1.2 the epoch is a property of the database.  This test proves, on real
# servers, in tables without a unique index:
#
#   A. The attack, as a LOGIN role with default privileges only (mallory,
#      who may create TEMP objects and nothing else): the early-epoch call
#      is refused with 22023, a message naming the database and a HINT
#      naming shardid_set_epoch; the stored fence stays within the clock
#      plus the lead; another role (alice) goes on issuing IDs without a
#      restart, after a clean restart and after kill -9, and after 1,100
#      temp sequences (each called with the default epoch and refused with
#      the early one) have evicted every slot.  mallory may not set the
#      epoch, lower or set the fence, reload it, write the extension's
#      sequences or change the guard's settings (42501, 55P02), not even
#      when granted EXECUTE on those functions.  Then every function of the
#      extension that mallory may execute is called with hostile arguments
#      (epochs at and past the ends of time, shards out of range, other
#      roles' sequences, sequences that jump blocks, cycle, run negative or
#      end, temp tables whose largest key feeds the guard's table floor,
#      adoption, partitions, shortcodes, provisioning).  Each is judged on
#      its own, with every slot of the guard taken: afterwards alice's old
#      sequence and a new one (whose slot evicts one of mallory's) get
#      IDs, and neither the stored fence nor the database floor is further
#      ahead of the clock than the lead.  Last, after all of them again,
#      mallory's fields are taken everywhere a slot's field goes (her slots
#      evicted by 1,100 more temp sequences, the database's entry evicted
#      by her calls in four other databases, a superuser's fence reload as
#      ALTER EXTENSION UPDATE runs it, kill -9): alice's sequences, new and
#      old, still get IDs and the fence stays within the clock plus the
#      lead.
#   B. shardid_set_epoch: the extension's owner (a role that was a
#      superuser when it created the extension, and is not any more) sets
#      a custom epoch in a fresh database; shardid_epoch() returns it; IDs
#      decode under it to their clock; the epoch named explicitly is
#      accepted, the default one refused (22023).  A plain role may not set
#      it (42501), even when granted EXECUTE; the owner may not lower the
#      fence (42501).  pg_dump/pg_restore of the database carries the
#      epoch, the fence and its lead.  Once IDs exist, an epoch that puts
#      the clock behind the fence is refused (55000); an earlier one, and
#      one 50 ms later (within the lead), are accepted and the time fields
#      still increase, also across a kill -9.
#   C. A database at 1.1 that used a custom epoch: with the 1.2 library it
#      keeps working at 1.1 (README, Upgrading, step 2); after ALTER
#      EXTENSION shardid UPDATE the same call is refused with 22023 and a
#      HINT naming the exact shardid_set_epoch call; once a superuser has
#      run it, the call works, with no duplicate and time fields that
#      increase across the upgrade.
#   D. Item 8 of issue 14: IDs under shardid.fence_lead = 20s (the lead
#      record says 25000 ms), then a reload to 10ms, a few more IDs, kill
#      -9 and a restart with a correct clock: the first call waits for the
#      old fence (bounded by a 90 s client timeout) and is not refused;
#      clock_refusals stays 0; the next fence writes record the new lead.
#      (With the lead of today judging the old fence, a correct clock
#      ~19 s behind it is refused: the issue's 60 s to 10 ms, shortened.)
#   E. Item 9 of issue 14: a clock an hour fast (libfaketime) leaves the
#      fence an hour ahead of a table whose DEFAULT is shardid_next.  After
#      a restart with the correct clock, inserts are refused (55000);
#      shardid_fence_lower is refused for a plain role (42501) and, while
#      the fast rows are there, for a superuser (55000, naming the table
#      and column); once they are deleted it lowers the fence, logs it and
#      inserts work again with no duplicate.  It returns the fence it
#      wrote, which never goes below an ID this server issued; another
#      session's temp table does not stop it.
#
# "No duplicate" is checked over every row, "every time field" by: no
# ID's time (under the epoch it was issued with) is later than its row's
# clock plus 1 ms, and each phase's IDs are later than the phase's before.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $tmp = PostgreSQL::Test::Utils::tempdir();

# The early epoch of the attack: IDs under it have time fields just below
# the signed-bit horizon.
my $early = q{date_trunc('second', now() - interval '1 ms' * (2^40)::bigint + interval '10 seconds')};

# How far the stored fence may be ahead of the clock: the lead (500 ms)
# and its quarter, plus a margin for the time between reading the fence
# and the clock.
my $max_ahead_ms = 500 + 125 + 100;

# The table every part counts IDs in: no unique index, the shard and the
# epoch each row was issued under (IDs of two sequences are apart only on
# different shards), and the clock when the row was made.
my $ids_table = q{
CREATE TABLE ids (
	ord		bigserial,
	phase	text NOT NULL,
	id		bigint NOT NULL,
	shard	integer NOT NULL DEFAULT 5,
	epoch	timestamptz NOT NULL DEFAULT '2011-01-01 00:00:00+00',
	made	timestamptz NOT NULL DEFAULT clock_timestamp()
);
};

# Run $sql as $user in $db (psql, one statement after the other, verbose
# errors).  Returns the first error as a hash (code, message, detail,
# hint), with code 'none' if every statement ran.
sub error_of
{
	my ($node, $db, $user, $sql) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql(
		$db, "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user ],
		stdout => \$out,
		stderr => \$err);
	return { code => 'none', message => '', detail => '', hint => '', out => $out }
	  if $rc == 0;
	my %e = (out => $out);
	@e{qw(code message)} = $err =~ /ERROR:\s+(\w{5}): ([^\n]*)/
	  or return { code => "unexpected: $err", message => '', detail => '', hint => '' };
	($e{detail}) = $err =~ /\nDETAIL:\s+([^\n]*)/;
	($e{hint}) = $err =~ /\nHINT:\s+([^\n]*)/;
	$e{detail} //= '';
	$e{hint} //= '';
	return \%e;
}

# "SQLSTATE: message" of the first error of $sql as $user, or "no error".
sub state_of
{
	my $e = error_of(@_);
	return $e->{code} eq 'none' ? 'no error' : "$e->{code}: $e->{message}";
}

# Run the whole script $sql as $user in $db without stopping at errors;
# returns (stdout, stderr).
sub script_as
{
	my ($node, $db, $user, $sql) = @_;
	my ($out, $err) = ('', '');
	$node->psql(
		$db, "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user ],
		on_error_stop => 0,
		stdout => \$out,
		stderr => \$err);
	return ($out, $err);
}

# $user takes $n IDs from $seq (default s) on $shard (default 5) into
# phase $phase of ids (function take, in $db); "ok" or the error.
sub take_as
{
	my ($node, $user, $phase, $n, $seq, $db, $shard) = @_;
	$seq //= 's';
	$shard //= 5;
	my $s = state_of($node, $db // 'postgres', $user,
		"SELECT take('$phase', $n, '$seq', $shard)");
	return $s eq 'no error' ? 'ok' : $s;
}

# How many ms the stored fence of $db is ahead of the clock (under the
# database's epoch); read as a superuser.
sub fence_ahead
{
	my ($node, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		q{SELECT f.last_value - (extract(epoch FROM clock_timestamp() - shardid_epoch()) * 1000)::bigint
		    FROM shardid_internal.shardid_fence f});
}

# Every ID once; none later than its row's clock (+1 ms) under its epoch;
# each on its row's shard; on each shard (one sequence each), each phase
# (in the order they ran) after the one before.
sub check_ids
{
	my ($node, $db, $what) = @_;
	is( duplicates($node, 'ids', db => $db) . "\n" . $node->safe_psql(
			$db, qq{
SELECT count(*) FROM ids
 WHERE shardid_created_at(id, epoch) > date_trunc('milliseconds', made) + interval '1 ms'
    OR shardid_shard(id) <> shard;
SELECT count(*) FROM
  (SELECT lo, lag(hi) OVER (PARTITION BY shard ORDER BY first) AS prev_hi
     FROM (SELECT shard, min(ord) AS first, min(id) AS lo, max(id) AS hi
             FROM ids GROUP BY phase, shard) AS p) AS q
 WHERE lo <= prev_hi;
}),
		"0\n0\n0",
		"$what: 0 duplicates, no ID ahead of its clock, each phase after the one before"
	);
	return;
}

# mallory creates 1,100 temp sequences and calls each once with the
# default epoch (and, with $with_early, once with the early one), each
# statement in a transaction of its own (one transaction would hold 2,200
# locks).  Returns how many IDs she got, how many calls were refused for
# their epoch (22023), how many failed otherwise, and the first of those.
sub many_temp_sequences
{
	my ($node, $prefix, $with_early) = @_;
	my $script = join '',
	  map {
		"CREATE TEMP SEQUENCE $prefix$_;\nSELECT shardid_next(0, '$prefix$_');\n"
		  . ($with_early ? "SELECT shardid_next(0, '$prefix$_', $early);\n" : '')
	  } 1 .. 1100;
	my ($out, $err) = script_as($node, 'postgres', 'mallory', $script);
	my $issued = () = $out =~ /^\d+$/mg;
	my $refused_epoch = () = $err =~ /ERROR:\s+22023: epoch .* is not the epoch of database/g;
	my $other = () = $err =~ /ERROR:\s+(?!22023)\w{5}:/g;
	my ($first_other) = $err =~ /(ERROR:\s+(?!22023)\w{5}: [^\n]*)/;
	return ($issued, $refused_epoch, $other, $first_other // '');
}

# The stored fence is within the clock plus the lead.
sub fence_held
{
	my ($node, $what, $db) = @_;
	my $ahead = fence_ahead($node, $db);
	cmp_ok($ahead, '<=', $max_ahead_ms,
		"$what: the stored fence is at most the lead ahead of the clock ($ahead ms)");
	return;
}

# =====================================================================
# A. A database any role can stop, tried as mallory.
# =====================================================================
# With the spec's test keys of public IDs, so that mallory's calls of the
# public-ID functions run rather than stop at "no keys".
# 1,024 slots (1.3 made 16,384 the default): (c) evicts alice's with
# 1,100 temp sequences
my $node = shardid_node('attack', 'shardid.max_databases = 4', 'shardid.max_sequences = 1024',
	"shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100'");
$node->start;
$node->safe_psql(
	'postgres', qq{
CREATE ROLE mallory LOGIN;
CREATE ROLE alice LOGIN;
CREATE EXTENSION shardid;
$ids_table
CREATE SEQUENCE s;
CREATE FUNCTION take(p text, n integer, seq regclass, sh integer) RETURNS void
LANGUAGE sql AS \$\$
	INSERT INTO ids (phase, id, shard) SELECT p, shardid_next(sh, seq), sh FROM generate_series(1, n)
\$\$;
GRANT SELECT, INSERT ON ids TO alice;
GRANT USAGE ON SEQUENCE s, ids_ord_seq TO alice;
});
for my $d (1 .. 4)
{
	$node->safe_psql('postgres', "CREATE DATABASE d$d");
	$node->safe_psql("d$d", 'CREATE EXTENSION shardid');
}
is( $node->safe_psql(
		'postgres', q{
SELECT has_schema_privilege('mallory', 'public', 'CREATE'),
       has_database_privilege('mallory', 'postgres', 'TEMP'),
       has_database_privilege('mallory', 'postgres', 'CREATE'),
       (SELECT rolsuper OR rolcreatedb OR rolcreaterole FROM pg_roles WHERE rolname = 'mallory')}
	),
	'f|t|f|f',
	'A: mallory may create temp objects and nothing else');
is(take_as($node, 'alice', 'a-start', 100000), 'ok', 'A: alice takes IDs');

# The attack itself.
my $attack = "CREATE TEMP SEQUENCE s;\nSELECT shardid_next(0, 's', $early);";
my $e = error_of($node, 'postgres', 'mallory', $attack);
is($e->{code}, '22023', 'A: the early epoch is refused with 22023');
like(
	$e->{message},
	qr/^epoch \S+ \S+ is not the epoch of database "postgres"$/,
	'A: the message names the epoch and the database');
like($e->{hint}, qr/shardid_set_epoch\('[^']+'\)/,
	'A: the HINT names shardid_set_epoch');
fence_held($node, 'A: after the attack');
is($node->safe_psql('postgres', 'SELECT count(*) FROM shardid_stats WHERE ids_issued > 0 AND last_ms > clock_timestamp() + interval \'1 s\''),
	'0', 'A: no slot issued an ID ahead of the clock');

# (a) without a restart
is(take_as($node, 'alice', 'a-attacked', 100000), 'ok',
	'A(a): alice goes on without a restart');
fence_held($node, 'A(a): after alice\'s IDs');

# (b) a clean restart, then kill -9, each after the attack
$node->restart;
is(take_as($node, 'alice', 'a-restarted', 100000), 'ok',
	'A(b): alice goes on after a clean restart');
is(error_of($node, 'postgres', 'mallory', $attack)->{code},
	'22023', 'A(b): the attack is refused after the restart too');
fence_held($node, 'A(b): after the attack, restarted');
kill9_and_reap($node);
$node->start;
is(take_as($node, 'alice', 'a-crashed', 100000), 'ok',
	'A(b): alice goes on after kill -9, no 55000');
is( $node->safe_psql(
		'postgres', q{SELECT coalesce(sum(clock_refusals), 0) FROM shardid_stats}),
	'0', 'A(b): no call was refused as a clock fault');
check_ids($node, 'postgres', 'A(a, b)');

# (c) 1,100 temp sequences, each called once with the default epoch and
# once with the early one.
is( $node->safe_psql('postgres', q{SELECT count(*) FROM shardid_stats WHERE sequence = 's'::regclass}),
	'1', 'A(c): alice\'s sequence has a slot');
my ($issued, $refused_epoch, $other, $first_other) = many_temp_sequences($node, 'm', 1);
is($issued, 1100, 'A(c): mallory\'s 1,100 temp sequences each issued with the default epoch')
  or diag $first_other;
is($refused_epoch, 1100, 'A(c): and each was refused with the early epoch (22023)');
is($other, 0, 'A(c): no other error') or diag $first_other;
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT evictions > 0 FROM shardid_stats_info()),
       (SELECT count(*) FROM shardid_stats WHERE sequence = 's'::regclass)}),
	't|0',
	'A(c): slots were evicted, alice\'s among them');
fence_held($node, 'A(c): after 1,100 temp sequences');
is(take_as($node, 'alice', 'a-evicted', 100000), 'ok',
	'A(c): alice goes on after the evictions');
check_ids($node, 'postgres', 'A(c)');

# What mallory may not do, even with EXECUTE granted.
my %denied = (
	'shardid_set_epoch' => q{SELECT shardid_set_epoch('2020-01-01 00:00:00+00')},
	'shardid_fence_lower' => q{SELECT shardid_fence_lower(now() + interval '1 day')},
	'shardid_fence_set' => q{SELECT shardid_fence_set(1099511627775)},
	'shardid_fence_reload' => q{SELECT shardid_fence_reload()},
	'shardid_stats_reset' => q{SELECT shardid_stats_reset()},
	'setval on shardid_fence' => q{SELECT setval('shardid_internal.shardid_fence', 1099511627775)},
	'nextval on shardid_fence' => q{SELECT nextval('shardid_internal.shardid_fence')},
	'setval on shardid_epoch' => q{SELECT setval('shardid_internal.shardid_epoch', 0)},
	'setval on shardid_fence_lead' => q{SELECT setval('shardid_internal.shardid_fence_lead', 3600000)},
	'ALTER SEQUENCE shardid_fence' => q{ALTER SEQUENCE shardid_internal.shardid_fence RESTART WITH 1099511627775},
	'SET shardid.debug_fence_write_delay' => q{SET shardid.debug_fence_write_delay = 60000},
	'shardid_next on the fence' => q{SELECT shardid_next(0, 'shardid_internal.shardid_fence')},
	'shardid_next on alice\'s sequence' => q{SELECT shardid_next(0, 's')});
for my $what (sort keys %denied)
{
	like(state_of($node, 'postgres', 'mallory', $denied{$what}),
		qr/^42501: /, "A: mallory may not: $what (42501)");
}
for my $guc ('shardid.fence_lead = \'60s\'', 'shardid.max_clock_regression = \'1h\'',
	'shardid.max_sequences = 16')
{
	like(state_of($node, 'postgres', 'mallory', "SET $guc"),
		qr/^55P02: /, "A: mallory may not SET $guc (55P02)");
}
$node->safe_psql(
	'postgres', q{
GRANT EXECUTE ON FUNCTION shardid_set_epoch(timestamptz), shardid_fence_lower(timestamptz),
	shardid_fence_set(bigint) TO mallory});
for my $f ('shardid_set_epoch', 'shardid_fence_lower', 'shardid_fence_set')
{
	# the function's own check says why (a DETAIL or HINT); the ACL's not
	my $err = error_of($node, 'postgres', 'mallory', $denied{$f});
	ok( $err->{code} eq '42501' && "$err->{detail}$err->{hint}" ne '',
		"A: mallory, granted EXECUTE, still may not call $f: it checks its caller (42501)"
	) or diag explain $err;
}
$node->safe_psql(
	'postgres', q{
REVOKE EXECUTE ON FUNCTION shardid_set_epoch(timestamptz), shardid_fence_lower(timestamptz),
	shardid_fence_set(bigint) FROM mallory});
is($node->safe_psql('postgres', 'SELECT shardid_epoch()'),
	'2011-01-01 00:00:00+00', 'A: the epoch is still the default one');
fence_held($node, 'A: after the denied calls');

# Every function mallory may execute, with hostile arguments.  Each entry
# runs in a session of its own (its temp objects go with it); afterwards
# alice must still get IDs and the fence be within the clock plus the lead.
my @hostile = (
	[ 'shardid_next', 'shards out of range' => q{
CREATE TEMP SEQUENCE x;
SELECT shardid_next(-1, 'x');
SELECT shardid_next(8192, 'x');
SELECT shardid_next(2147483647, 'x');
SELECT shardid_next(-2147483648, 'x', '2011-01-01 00:00:00+00');} ],
	[ 'shardid_next', 'not sequences' => q{
SELECT shardid_next(0, 0::oid::regclass);
SELECT shardid_next(0, 'pg_class');
SELECT shardid_next(0, 'ids');
SELECT shardid_next(0, 'shardid_fence_status');} ],
	[ 'shardid_next', 'epochs at and past the ends of time' => qq{
CREATE TEMP SEQUENCE x;
SELECT shardid_next(0, 'x', 'infinity');
SELECT shardid_next(0, 'x', '-infinity');
SELECT shardid_next(0, 'x', '4713-01-01 00:00:00+00 BC');
SELECT shardid_next(0, 'x', '294276-12-31 00:00:00+00');
SELECT shardid_next(0, 'x', now() + interval '1 day');
SELECT shardid_next(0, 'x', date_trunc('milliseconds', clock_timestamp()));
SELECT shardid_next(0, 'x', '1970-01-01 00:00:00+00');
SELECT shardid_next(0, 'x', '1900-01-01 00:00:00+00');
SELECT shardid_next(0, 'x', '2011-01-01 00:00:00.0005+00');
SELECT shardid_next(0, 'x', '2011-01-01 00:00:00.001+00');
SELECT shardid_next(0, 'x', '2010-12-31 23:59:59.999+00');
SELECT shardid_next(0, 'x', $early);
SELECT shardid_next(0, 'x', $early - interval '1 year');
SELECT shardid_next(0, 'x', '2011-01-01 00:00:00+00');} ],
	[ 'shardid_next', 'the early epoch in a rolled-back transaction and savepoint' => qq{
BEGIN;
CREATE TEMP SEQUENCE x;
SAVEPOINT a;
SELECT shardid_next(0, 'x', $early);
ROLLBACK TO a;
SELECT shardid_next(0, 'x');
SELECT shardid_next(0, 'x', $early);
ROLLBACK;} ],
	[ 'shardid_next', 'a sequence that jumps a block each call' => q{
CREATE TEMP SEQUENCE x INCREMENT BY 1024;
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 1000);} ],
	[ 'shardid_next', 'a sequence that cycles over two values' => q{
CREATE TEMP SEQUENCE x MINVALUE 1 MAXVALUE 2 CYCLE;
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 1000);} ],
	[ 'shardid_next', 'a sequence set back again and again' => q{
CREATE TEMP SEQUENCE x;
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 3000);
SELECT setval('x', 1);
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 3000);
SELECT setval('x', 1);
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 3000);} ],
	[ 'shardid_next', 'negative and exhausted sequences' => q{
CREATE TEMP SEQUENCE x INCREMENT BY -1 MINVALUE -9223372036854775808 MAXVALUE -9223372036854774000 START WITH -9223372036854774000;
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 1000);
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 1000);
CREATE TEMP SEQUENCE y START WITH 9223372036854775806;
SELECT shardid_next(0, 'y');
SELECT shardid_next(0, 'y');
SELECT shardid_next(0, 'y');} ],
	[ 'shardid_next', 'a table floor at the largest bigint' => q{
CREATE TEMP TABLE t (id bigint PRIMARY KEY);
CREATE TEMP SEQUENCE x OWNED BY t.id;
INSERT INTO t VALUES (9223372036854775807);
SELECT shardid_next(0, 'x');
SELECT shardid_next(0, 'x');} ],
	[ 'shardid_next', 'a table floor 30 minutes ahead, identity column' => q{
CREATE TEMP TABLE t (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY);
INSERT INTO t VALUES (shardid_encode(now() + interval '30 minutes', 0, 0));
SELECT shardid_next(0, pg_get_serial_sequence('t', 'id'));} ],
	[ 'shardid_next', 'a table floor in a partitioned table' => q{
CREATE TEMP TABLE p (id bigint NOT NULL) PARTITION BY RANGE (id);
CREATE TEMP TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (MAXVALUE);
CREATE INDEX ON p (id);
INSERT INTO p VALUES (9223372036854775806);
CREATE TEMP SEQUENCE x OWNED BY p.id;
SELECT shardid_next(0, 'x');} ],
	[ 'shardid_next', 'a sequence set past the horizon, and one with a huge cache' => q{
CREATE TEMP SEQUENCE x;
SELECT setval('x', 4611686018427387904);
SELECT shardid_next(0, 'x');
SELECT shardid_next(0, 'x');
CREATE TEMP SEQUENCE y CACHE 1000000;
SELECT count(shardid_next(0, 'y')) FROM generate_series(1, 3000);
CREATE TEMP SEQUENCE z MAXVALUE 1125899906842624;
SELECT shardid_next(0, 'z');} ],
	[ 'shardid_sequence_lower', 'others\' sequences, the fence, and targets at the ends of time' => qq{
SELECT shardid_sequence_lower('s', now());
SELECT shardid_sequence_lower('shardid_internal.shardid_fence', now());
SELECT shardid_sequence_lower('ids', now());
SELECT shardid_sequence_lower(0::oid::regclass, now());
CREATE TEMP SEQUENCE x;
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 1000);
SELECT shardid_sequence_lower('x', now() + interval '1 hour');
SELECT shardid_sequence_lower('x', 'infinity');
SELECT shardid_sequence_lower('x', '-infinity');
SELECT shardid_sequence_lower('x', $early);
SELECT shardid_sequence_lower('x', '2011-01-01 00:00:00+00');
SELECT shardid_sequence_lower('x', now() - interval '1 day');
SELECT count(shardid_next(0, 'x')) FROM generate_series(1, 1000);} ],
	[ 'shardid_adopt', 'a temp table with the largest bigint' => q{
CREATE TEMP TABLE t (id bigserial PRIMARY KEY, v int);
INSERT INTO t VALUES (9223372036854775807, 1);
SELECT * FROM shardid_adopt('t', 0);
INSERT INTO t (v) VALUES (2);
CREATE TEMP TABLE u (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v int);
SELECT * FROM shardid_adopt('u', 8191);
INSERT INTO u (v) VALUES (1);
SELECT * FROM shardid_adopt('u', -1);
SELECT * FROM shardid_adopt('shardid_fence_status', 0);
SELECT * FROM shardid_adopt('ids', 1);
SELECT shardid_adopt_sequence('ids', 'id'), shardid_adopt_sequence('shardid_partition_log', 'parent');
SELECT shardid_adopt_sequence('t', repeat('x', 100)), shardid_adopt_sequence('t', 'no such column');
SELECT shardid_adopt_sequence(0, 'id'), shardid_adopt_sequence(NULL, NULL);} ],
	[ 'shardid_partition_maintain', 'early, late and endless epochs' => qq{
CREATE TEMP TABLE p (id bigint NOT NULL) PARTITION BY RANGE (id);
SELECT * FROM shardid_partition_maintain('p', '1 day', 3, NULL, $early);
SELECT * FROM shardid_partition_maintain('p', '1 day', 3, '1 day', '-infinity');
SELECT * FROM shardid_partition_maintain('p', '1 millisecond', 3, NULL, '2011-01-01 00:00:00+00');
SELECT * FROM shardid_partition_maintain('p', '-1 day', 3);
SELECT * FROM shardid_partition_maintain_all(ARRAY['p'::regclass, 'ids'::regclass], '1 day', 3);} ],
	[ 'shardid_partition_run', 'others\' tables, stray IDs and endless steps' => q{
CREATE TEMP TABLE p (id bigint NOT NULL) PARTITION BY RANGE (id);
CREATE TEMP TABLE p_default PARTITION OF p DEFAULT;
INSERT INTO p VALUES (9223372036854775807), (0), (-1), (shardid_encode(now() + interval '3 days', 0, 0));
CALL shardid_partition_run(ARRAY['p'::regclass, 'ids'::regclass, 0::regclass], '1 day', 3, '1 day');
CALL shardid_partition_run(ARRAY['p'::regclass], '1 millisecond', 1000, NULL, '-infinity', '1 day');
CALL shardid_partition_run(ARRAY['p'::regclass], '1 day', 3, NULL, NULL, '-1 s');
CALL shardid_partition_run(ARRAY['ids'::regclass], '1 day', 3, NULL, NULL, '1 day');
SELECT * FROM shardid_partition_status;} ],
	[ 'shardid_partition_make', 'the internal steps, called directly, on others\' tables and endless ranges' => q{
CREATE TEMP TABLE p (id bigint NOT NULL) PARTITION BY RANGE (id);
CREATE TEMP TABLE p_default PARTITION OF p DEFAULT;
INSERT INTO p VALUES (9223372036854775807), (0), (-1), (shardid_encode(now() + interval '3 days', 0, 0));
SELECT * FROM shardid_partition_plan('1 day', 1000, '1 day', '-infinity', '1 day');
SELECT * FROM shardid_partition_plan('1 millisecond', 1000, NULL, '2011-01-01+00', NULL);
SELECT * FROM shardid_partition_plan(NULL, NULL, NULL, NULL, NULL);
SELECT * FROM shardid_partition_parent('ids'), shardid_partition_parent(0);
SELECT * FROM shardid_partition_parent(NULL), shardid_partition_parent('shardid_partition_log');
SELECT shardid_partition_lock('ids', 'ACCESS EXCLUSIVE', '1 day');
SELECT shardid_partition_lock('shardid_partition_log', 'ACCESS EXCLUSIVE', '1 day');
SELECT shardid_partition_lock('p', 'ACCESS EXCLUSIVE MODE; DROP TABLE ids; --', '1 s');
SELECT shardid_partition_lock('p', 'SHARE', '-1 s'), shardid_partition_lock('p', NULL, NULL);
SELECT shardid_partition_drop_lock('ids', '1 day', 3, '1 day', '2011-01-01+00', '1 day');
SELECT shardid_partition_drop_lock(0, '1 day', 3, '-1 day', 'infinity', '0');
SELECT * FROM shardid_partition_make('ids', '1 day', 3, '1 day', '2011-01-01+00', '1 day');
SELECT * FROM shardid_partition_make(0, '1 day', 3, NULL, '2011-01-01+00', NULL);
SELECT * FROM shardid_partition_make('p', '1 day', 1000, NULL, '2011-01-01+00', '1 day');
SELECT * FROM shardid_partition_create('ids', '-infinity', 'infinity', '2011-01-01+00', 'x');
SELECT * FROM shardid_partition_create('p', '-infinity', 'infinity', '2011-01-01+00', 'ids');
SELECT * FROM shardid_partition_create('p', now(), now() - interval '1 day', '2011-01-01+00', repeat('x', 100));
SELECT * FROM shardid_partition_create('p', '2011-01-01+00', '294276-01-01+00', '2011-01-01+00', 'p_all');
SELECT * FROM shardid_partition_create('p', NULL, NULL, NULL, NULL);
SELECT shardid_partition_move('ids', 'ids', '-infinity', 'infinity', '2011-01-01+00');
SELECT shardid_partition_move('p', 'shardid_partition_log', '2011-01-01+00', now() + interval '1 year', '2011-01-01+00');
SELECT shardid_partition_move('p', 'p_default', '2011-01-01+00', now() + interval '1 year', '2011-01-01+00');
SELECT * FROM shardid_partition_drop('ids', '1 day', 3, '1 day', '2011-01-01+00', '1 day', 'held');
SELECT * FROM shardid_partition_drop('p', '1 day', 3, '1 day', '2011-01-01+00', '1 day', 'held');
SELECT * FROM shardid_partition_drop('p', '1 day', 3, '1 day', '2011-01-01+00', '1 day', 'x'' OR true');
SELECT shardid_partition_first_id('ids'), shardid_partition_first_id('p'), shardid_partition_first_id(NULL);
SELECT shardid_partition_first_id('shardid_partition_log'), shardid_partition_first_id(0);
SELECT * FROM shardid_partition_ranges('ids'), shardid_partition_ranges(0);
SELECT * FROM shardid_partition_parents(ARRAY['p'::regclass, 'ids'::regclass, 0::regclass], '1 day', 3, NULL, '2011-01-01+00', '1 day');
SELECT * FROM shardid_partition_parents(ARRAY[NULL::regclass], '1 day', 3, NULL, '-infinity', NULL);
SELECT shardid_partition_lock_timeout('-1 day'), shardid_partition_lock_timeout('1000000 years'), shardid_partition_lock_timeout(NULL);
SELECT shardid_partition_record('ids'::regclass, '1 day', 3, NULL, '2011-01-01+00', '{kept,created}', '{0,9223372036854775807}', NULL, NULL, NULL);
SELECT shardid_partition_record('p'::regclass, '-1 day', -1, '-1 day', 'infinity', '{busy,pruned}', '{-1}', 'xxxxxx', 'x', 'x');
SELECT shardid_partition_record(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
SELECT shardid_id_field(-1), shardid_field_floor(9223372036854775807), shardid_value_fence(-9223372036854775808);
SELECT shardid_fence_value(9223372036854775807), shardid_fence_value(-1), shardid_id_field(NULL);
SELECT shardid_partition_log_purge();
SELECT shardid_shard_tables('ids'), shardid_shard_tables(NULL), shardid_shard_tables(repeat('x', 100));
SELECT shardid_partition_step_start('infinity', '1 month'), shardid_partition_step_start(now(), '-1 day');
SELECT shardid_partition_step_start(now(), '0'), shardid_partition_step_start('-infinity', '1000000 years');
INSERT INTO shardid_partition_log (parent, step, premake, epoch, result, made, dropped, moved)
  VALUES ('ids'::regclass, '1 day', 1, '2011-01-01+00', 'failed', 0, 0, 0);
LOCK TABLE shardid_partition_log IN ACCESS EXCLUSIVE MODE;
DELETE FROM shardid_partition_log;} ],
	[ 'shardid_provision_shard', 'system schemas and bad shards' => q{
SELECT * FROM shardid_provision_shard(1, 'pg_catalog');
SELECT * FROM shardid_provision_shard(-1, 'public', 'x');
SELECT * FROM shardid_provision_shard(2, 'public', 'pg_temp');
SELECT * FROM shardid_provision_shard(3, 'information_schema', 'public');
SELECT shardid_shard_schema(-1), shardid_shard_schema(8192), shardid_shard_schema(2147483647);
SELECT shardid_schema_shard(NULL), shardid_schema_shard(''), shardid_schema_shard('shard_8192');
SELECT shardid_schema_shard('shard_-001'), shardid_schema_shard('shard_99999999999999999999');
SELECT shardid_schema_shard(repeat('shard_0', 100000)), shardid_schema_shard(E'shard_0042\n');} ],
	[ 'shardid_provision_table', 'the internal steps, called directly, on system and others\' schemas' => q{
SELECT * FROM shardid_provision_template('pg_catalog', ARRAY(SELECT oid FROM pg_roles));
SELECT * FROM shardid_provision_template('public', NULL), shardid_provision_template(NULL, '{}');
SELECT shardid_provision_check_schema('public', 'pg_catalog', '{ids}', '{s}', ARRAY(SELECT oid FROM pg_roles));
SELECT shardid_provision_check_schema(NULL, NULL, NULL, NULL, NULL);
SELECT shardid_provision_check_table('public', 'ids', 'pg_catalog', 'pg_class'::regclass);
SELECT shardid_provision_check_table('pg_catalog', 'pg_class', 'public', 0);
SELECT shardid_provision_check_grants('public', ARRAY(SELECT oid FROM pg_roles)), shardid_provision_check_grants(NULL, NULL);
SELECT shardid_provision_table(1, 'public', 'ids', 's', 'r', 'public', 'ids'::regclass);
SELECT shardid_provision_table(1, 'public', 'mallory_t', 'ids', 'r', 'pg_catalog', 'pg_class'::regclass);
SELECT shardid_provision_table(1, 'pg_temp', 'mallory_t', 'mallory_t_id_seq', 'p', 'pg_catalog', 'pg_class'::regclass);
SELECT shardid_provision_table(-1, 'pg_catalog', 'pg_class', 'x'')); DROP TABLE ids; --', 'r', 'public', 0);
SELECT shardid_provision_table(NULL, NULL, NULL, NULL, NULL, NULL, NULL);} ],
	[ 'codec', 'hostile epochs, IDs and times' => qq{
SELECT shardid_encode(now(), 0, 0, $early);
SELECT shardid_encode('infinity', 0, 0);
SELECT shardid_encode(now(), 8191, 1023, '-infinity');
SELECT shardid_encode('2045-11-03 19:53:47.775+00', 8191, 1023);
SELECT * FROM shardid_decode(9223372036854775807, $early);
SELECT * FROM shardid_decode(-1);
SELECT * FROM shardid_decode(0, '294276-12-31 00:00:00+00');
SELECT shardid_created_at(9223372036854775807, '4713-01-01 00:00:00+00 BC');
SELECT shardid_created_at(9223372036854775807, '1900-01-01 00:00:00+00');
SELECT shardid_floor(now(), $early), shardid_floor('-infinity');
SELECT shardid_floor('2011-01-01 00:00:00+00', now());
SELECT shardid_horizon($early), shardid_horizon('infinity'), shardid_horizon('294276-12-31 00:00:00+00');
SELECT shardid_shard(-1), shardid_seq(-9223372036854775808);
SELECT shardid_shard(9223372036854775807), shardid_seq(9223372036854775807);} ],
	[ 'shortcodes', 'hostile codes and IDs' => q{
SELECT shardid_from_shortcode('H__________'), shardid_from_shortcode('I__________');
SELECT shardid_from_shortcode(''), shardid_from_shortcode('AAA'), shardid_from_shortcode(repeat('_', 100000));
SELECT shardid_to_shortcode(-1), shardid_to_shortcode(9223372036854775807);} ],
	[ 'shardid_public', 'hostile IDs, strings and key versions' => q{
SELECT shardid_public(-1), shardid_public(0, 63), shardid_public(9223372036854775807, 2147483647);
SELECT shardid_public(9223372036854775807), shardid_public(1, -2147483648);
SELECT shardid_private(''), shardid_private(repeat('_', 100000)), shardid_private('C' || repeat('_', 11));
SELECT shardid_private(E'BH_PAV9oO-h\u00e9'), shardid_private('BH_PAV9oO-hH'), shardid_private(NULL);
SELECT shardid_public_bigint(-1, 1), shardid_public_bigint(9223372036854775807, 64);
SELECT shardid_private_bigint(-9223372036854775808, 2), shardid_private_bigint(9223372036854775807, 1);
SELECT count(*) FROM generate_series(1, 100000) AS i WHERE shardid_private(shardid_public(i)) <> i;
SELECT * FROM shardid_public_keys();} ],
	[ 'shardid_as_owner', 'the owner-switched reads and statement on others\' tables, catalogs and hostile names' => q{
SELECT shardid_as_owner('ids'::regclass, 'TRUNCATE ids'), shardid_as_owner('pg_class'::regclass, 'SELECT 1');
SELECT shardid_as_owner('ids'::regclass, 'ALTER ROLE mallory SUPERUSER'), shardid_as_owner(NULL, NULL);
SELECT shardid_rows_count('ids'::regclass), shardid_rows_count('pg_authid'::regclass), shardid_rows_count(0);
SELECT shardid_rows_exist('ids'::regclass, 'id', 0, 9223372036854775807);
SELECT shardid_rows_exist('pg_class'::regclass, 'x"; DROP TABLE ids; --', -1, -9223372036854775808);
SELECT shardid_rows_min('ids'::regclass, 'id', -9223372036854775808), shardid_rows_min('ids'::regclass, 'phase', 0);
SELECT * FROM shardid_rows_bounds('ids'::regclass, 'id'), shardid_rows_bounds('pg_statistic'::regclass, 'starelid');
SELECT shardid_rows_count(NULL), shardid_rows_exist(NULL, NULL, NULL, NULL), shardid_rows_min(NULL, NULL, NULL);} ],
	[ 'views', 'statistics, fences and the epoch' => q{
SELECT * FROM shardid_stats;
SELECT * FROM shardid_stats();
SELECT * FROM shardid_stats_info();
SELECT * FROM shardid_fence_status;
SELECT * FROM shardid_fence_status();
SELECT shardid_epoch();} ],
);
# Every slot is taken now (A(c)), so alice's new sequence after each call
# evicts the slot that issued least recently: one of mallory's.
my %covered;
for my $i (0 .. $#hostile)
{
	my ($fn, $what, $sql) = @{ $hostile[$i] };
	$covered{$fn} = 1;
	$node->safe_psql('postgres', "CREATE SEQUENCE h$i; GRANT USAGE ON SEQUENCE h$i TO alice");
	script_as($node, 'postgres', 'mallory', $sql);
	my $old = take_as($node, 'alice', "a-hostile-$i", 1000);
	my $new = take_as($node, 'alice', "a-hostile-new-$i", 100, "h$i", 'postgres', 100 + $i);
	my $ahead = fence_ahead($node);
	my $floor = $node->safe_psql('postgres',
		q{SELECT coalesce(extract(epoch FROM floor_ms - clock_timestamp()) * 1000, 0)::bigint
		    FROM shardid_stats_info()});
	next
	  if ok( $old eq 'ok' && $new eq 'ok' && $ahead <= $max_ahead_ms && $floor <= $max_ahead_ms,
		"A: after mallory's $fn with $what, alice's old and new sequences get IDs, the fence and the floor hold"
	  );
	diag "alice's s: $old; alice's new h$i: $new; fence $ahead ms, database floor $floor ms ahead of the clock";

	# judge the next call on its own: a fresh server, every slot taken
	$node->restart;
	many_temp_sequences($node, "r${i}x", 0);
}

# Every function mallory may execute was tried above.
my @executable = split /\n/, $node->safe_psql(
	'postgres', q{
SELECT DISTINCT p.proname FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                  AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'shardid'
 WHERE has_function_privilege('mallory', p.oid, 'EXECUTE')
 ORDER BY 1});
my %tried = (
	%covered,
	map { $_ => 1 } qw(shardid_encode shardid_decode shardid_shard shardid_seq
	  shardid_created_at shardid_floor shardid_horizon shardid_to_shortcode
	  shardid_from_shortcode shardid_epoch shardid_stats shardid_stats_info
	  shardid_fence_status shardid_shard_schema shardid_schema_shard shardid_partition_maintain_all
	  shardid_partition_ranges shardid_partition_log_purge shardid_partition_status
	  shardid_partition_step_start shardid_partition_plan shardid_partition_parent
	  shardid_partition_lock shardid_partition_drop_lock shardid_partition_create
	  shardid_partition_move shardid_partition_drop shardid_provision_template
	  shardid_provision_check_schema shardid_provision_check_table shardid_provision_check_grants
	  shardid_adopt_sequence shardid_partition_first_id shardid_partition_parents
	  shardid_partition_lock_timeout shardid_partition_record shardid_id_field
	  shardid_field_floor shardid_value_fence shardid_fence_value
	  shardid_shard_tables shardid_private
	  shardid_public_bigint shardid_private_bigint shardid_public_keys
	  shardid_rows_count shardid_rows_exist shardid_rows_min shardid_rows_bounds));
is_deeply([ grep { !$tried{$_} } @executable ],
	[], 'A: every function mallory may execute was tried with hostile arguments');
check_ids($node, 'postgres', 'A: after the hostile calls');

# Every hostile call again, then everywhere a slot's field goes: new
# slots of the database, the database floor (mallory's slots evicted by
# 1,100 more temp sequences), the memo of an evicted database entry (her
# calls in four other databases), and the stored fence (a superuser's
# fence reload, which ALTER EXTENSION UPDATE runs, and a restart).
script_as($node, 'postgres', 'mallory', $_->[2]) for @hostile;
$node->safe_psql('postgres',
	'CREATE SEQUENCE s2; CREATE SEQUENCE s3; CREATE SEQUENCE s4; GRANT USAGE ON SEQUENCE s2, s3, s4 TO alice');
is(take_as($node, 'alice', 'a-new-seq', 1000, 's2', 'postgres', 6), 'ok',
	'A: after the hostile calls, a sequence new to the guard gets IDs');
($issued, $refused_epoch, $other, $first_other) = many_temp_sequences($node, 'n', 0);
is($issued, 1100,
	'A: after the hostile calls, 1,100 more temp sequences of mallory\'s each issue')
  or diag $first_other;
is(take_as($node, 'alice', 'a-after-evictions', 1000, 's3', 'postgres', 7), 'ok',
	'A: after mallory\'s slots were evicted, a sequence new to the guard gets IDs');
is(take_as($node, 'alice', 'a-after-evictions-s', 1000), 'ok',
	'A: after mallory\'s slots were evicted, alice\'s old sequence gets IDs');
fence_held($node, 'A: after mallory\'s slots were evicted');
for my $d (1 .. 4)
{
	script_as($node, "d$d", 'mallory',
		"CREATE TEMP SEQUENCE x;\nSELECT shardid_next(0, 'x');\nSELECT shardid_next(0, 'x', $early);");
}
is(take_as($node, 'alice', 'a-reentry', 1000, 's4', 'postgres', 8), 'ok',
	'A: after mallory\'s calls in four other databases evicted this one\'s entry, alice gets IDs');
fence_held($node, 'A: after the database entry was evicted');
$node->safe_psql('postgres', 'SELECT shardid_fence_reload()');
is(take_as($node, 'alice', 'a-reloaded', 1000), 'ok',
	'A: after a superuser\'s fence reload, alice gets IDs');
fence_held($node, 'A: after a superuser\'s fence reload');
kill9_and_reap($node);
$node->start;
is(take_as($node, 'alice', 'a-final', 100000), 'ok',
	'A: after all of it and kill -9, alice gets IDs');
fence_held($node, 'A: at the end');
check_ids($node, 'postgres', 'A: at the end');
$node->stop;

# =====================================================================
# B. shardid_set_epoch, by the extension's owner, and what carries it.
# =====================================================================
my $ep = shardid_node('epochs');
$ep->start;
$ep->safe_psql(
	'postgres', q{
CREATE ROLE extowner LOGIN SUPERUSER;
CREATE ROLE mallory LOGIN;
CREATE DATABASE epochs OWNER extowner;
});
is(state_of($ep, 'epochs', 'extowner', 'CREATE EXTENSION shardid'),
	'no error', 'B: extowner, a superuser then, creates the extension');
$ep->safe_psql('postgres', 'ALTER ROLE extowner NOSUPERUSER');
is( $ep->safe_psql(
		'epochs', q{
SELECT r.rolname, r.rolsuper FROM pg_extension e JOIN pg_roles r ON r.oid = e.extowner
 WHERE e.extname = 'shardid'}),
	'extowner|f',
	'B: the extension\'s owner is no longer a superuser');

my $set2020 = q{SELECT shardid_set_epoch('2020-01-01 00:00:00+00')};
like(state_of($ep, 'epochs', 'mallory', $set2020),
	qr/^42501: /, 'B: a plain role may not set the epoch (42501)');
$ep->safe_psql('epochs',
	'GRANT EXECUTE ON FUNCTION shardid_set_epoch(timestamptz) TO mallory');
like(
	state_of($ep, 'epochs', 'mallory', $set2020),
	qr/^42501: permission denied to set the epoch of database "epochs"$/,
	'B: nor when granted EXECUTE: the function checks its caller (42501)');
$ep->safe_psql('epochs',
	'REVOKE EXECUTE ON FUNCTION shardid_set_epoch(timestamptz) FROM mallory');
like(state_of($ep, 'epochs', 'extowner', q{SELECT shardid_fence_lower(now())}),
	qr/^42501: /, 'B: the extension\'s owner may not lower the fence (42501)');
like(state_of($ep, 'epochs', 'extowner', q{SELECT shardid_fence_set(0)}),
	qr/^42501: /, 'B: nor set it (42501)');
is($ep->safe_psql('epochs', 'SELECT shardid_epoch()'),
	'2011-01-01 00:00:00+00', 'B: a fresh database has the default epoch');

is(state_of($ep, 'epochs', 'extowner', $set2020),
	'no error', 'B: the extension\'s owner sets the epoch before any ID');
is($ep->safe_psql('epochs', 'SELECT shardid_epoch()'),
	'2020-01-01 00:00:00+00', 'B: shardid_epoch() returns it');
is( state_of(
		$ep, 'epochs',
		'extowner', qq{
$ids_table
CREATE SEQUENCE s;
CREATE FUNCTION take(p text, n integer, seq regclass, sh integer) RETURNS void
LANGUAGE sql AS \$\$
	INSERT INTO ids (phase, id, shard, epoch)
	SELECT p, shardid_next(sh, seq), sh, shardid_epoch() FROM generate_series(1, n)
\$\$;
SELECT take('b-2020', 100000, 's', 3);}),
	'no error',
	'B: IDs under the custom epoch');
is( $ep->safe_psql(
		'epochs', q{
SELECT bool_and(abs(extract(epoch FROM shardid_created_at(id, '2020-01-01 00:00:00+00') - made)) < 1),
       bool_and(abs(extract(epoch FROM shardid_created_at(id) - made)) > 86400 * 365)
  FROM ids}),
	't|t',
	'B: each decodes under the custom epoch to within a second of its clock, not under the default');
is(state_of($ep, 'epochs', 'extowner',
		q{SELECT shardid_next(3, 's', '2020-01-01 00:00:00+00')}),
	'no error', 'B: the database\'s epoch named explicitly is accepted');
$e = error_of($ep, 'epochs', 'extowner', q{SELECT shardid_next(3, 's', '2011-01-01 00:00:00+00')});
is("$e->{code}: $e->{message}",
	'22023: epoch 2011-01-01 00:00:00+00 is not the epoch of database "epochs"',
	'B: the default epoch is refused with 22023');

# pg_dump / pg_restore of the whole database carries the epoch.
my $dump = "$tmp/epochs.dump";
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $ep->connstr('epochs') ],
	'B: pg_dump of the database');
# The dump makes the extension, and of its own objects carries only the
# epoch's value: the schema shardid_internal and its sequences are the
# extension's members, which CREATE EXTENSION makes.
my ($script, $script_err) = ('', '');
IPC::Run::run([ 'pg_restore', '-f', '-', $dump ], '>', \$script, '2>', \$script_err);
like($script, qr/^CREATE EXTENSION IF NOT EXISTS shardid WITH SCHEMA /m, 'B: the dump makes the extension');
like($script, qr/^SELECT pg_catalog\.setval\('shardid_internal\.shardid_epoch', /m,
	'B: the dump sets the epoch');
unlike($script, qr/CREATE SCHEMA shardid_internal|CREATE SEQUENCE shardid_internal|shardid_internal\.shardid_fence/,
	'B: the dump makes no schema or sequence of the extension\'s, and carries no fence or lead');
$ep->safe_psql('postgres', 'CREATE DATABASE epochs_copy');
command_ok([ 'pg_restore', '-d', $ep->connstr('epochs_copy'), $dump ],
	'B: pg_restore into a fresh database');
is($ep->safe_psql('epochs_copy', 'SELECT shardid_epoch()'),
	$ep->safe_psql('epochs', 'SELECT shardid_epoch()'),
	'B: the epoch came with the data');
is( $ep->safe_psql(
		'epochs_copy', q{SELECT (SELECT last_value FROM shardid_internal.shardid_fence), (SELECT last_value FROM shardid_internal.shardid_fence_lead)}),
	'-1|-1', 'B: the database\'s fence and its lead did not: no dump carries them');
is( $ep->safe_psql(
		'epochs_copy', q{
SELECT n.nspowner = e.extowner, has_schema_privilege('public', n.oid, 'USAGE')
  FROM pg_namespace n, pg_extension e
 WHERE n.nspname = 'shardid_internal' AND e.extname = 'shardid'}),
	't|f', 'B: in the restored database, the extension\'s owner owns shardid_internal, and PUBLIC may not use it');
is( $ep->safe_psql(
		'epochs_copy', q{SELECT (SELECT (last_value >> 10) - 1 FROM s) >= (SELECT max(id >> 23) FROM ids)}),
	't', 'B: the sequence came with its fence, past every restored ID');
is( $ep->safe_psql(
		'epochs_copy', q{
SELECT abs(extract(epoch FROM shardid_created_at(shardid_next(3, 's'), '2020-01-01 00:00:00+00')
                          - clock_timestamp())) < 1}),
	't',
	'B: the restored database issues under the custom epoch');

# Once IDs exist: a later epoch is refused, an earlier one is not.
$e = error_of($ep, 'epochs', 'postgres',
	q{SELECT shardid_set_epoch('2020-01-01 01:00:00+00')});
like(
	"$e->{code}: $e->{message}",
	qr/^55000: epoch 2020-01-01 01:00:00\+00 would put the clock \d+ ms behind the durable fence$/,
	'B: an epoch an hour later, with IDs issued, is refused with 55000');
is($ep->safe_psql('epochs', 'SELECT shardid_epoch()'),
	'2020-01-01 00:00:00+00', 'B: the epoch did not change');
is(state_of($ep, 'epochs', 'postgres', q{SELECT shardid_set_epoch('2019-12-31 23:00:00+00')}),
	'no error', 'B: an epoch an hour earlier is accepted');
is(take_as($ep, 'extowner', 'b-earlier', 100000, 's', 'epochs', 3),
	'ok', 'B: IDs under the earlier epoch');
# The fence may be the lead and a quarter (and 1 ms) ahead of the clock
# right after a write; a set_epoch that moves the clock back by 50 ms must
# then leave it no more than that behind.  Nothing is issued here for 0.3 s
# before, so that the fence is at most ~330 ms ahead, and 50 ms later is
# always within the lead.
is( state_of(
		$ep, 'epochs', 'postgres',
		q{SELECT pg_sleep(0.3); SELECT shardid_set_epoch('2019-12-31 23:00:00.05+00')}),
	'no error',
	'B: an epoch 50 ms later, within the lead, is accepted');
is(take_as($ep, 'extowner', 'b-later-50ms', 100000, 's', 'epochs', 3),
	'ok', 'B: IDs under it');
check_ids($ep, 'epochs', 'B: across three epochs');
kill9_and_reap($ep);
$ep->start;
is(take_as($ep, 'extowner', 'b-crashed', 100000, 's', 'epochs', 3),
	'ok', 'B: IDs after kill -9');
check_ids($ep, 'epochs', 'B: across three epochs and kill -9');

# =====================================================================
# C. A 1.1 database that used a custom epoch, updated to 1.2.
# =====================================================================
$ep->safe_psql('postgres', 'CREATE DATABASE up');
$ep->safe_psql(
	'up', qq{
CREATE EXTENSION shardid VERSION '1.1';
$ids_table
CREATE SEQUENCE s;
});
my $take2020 = q{
INSERT INTO ids (phase, id, epoch)
SELECT '%s', shardid_next(5, 's', '2020-01-01 00:00:00+00'), '2020-01-01 00:00:00+00'
  FROM generate_series(1, 100000)};
is(state_of($ep, 'up', 'postgres', sprintf($take2020, 'c-1.1')),
	'no error', 'C: at 1.1, with the 1.2 library, IDs under the custom epoch');
$ep->safe_psql('up', q{ALTER EXTENSION shardid UPDATE TO '1.2'});
is($ep->safe_psql('up', q{SELECT extversion FROM pg_extension WHERE extname = 'shardid'}),
	'1.2', 'C: updated to 1.2');
$e = error_of($ep, 'up', 'postgres', sprintf($take2020, 'c-refused'));
is($e->{code}, '22023', 'C: after the update the same call is refused with 22023');
like(
	$e->{hint},
	qr/\Qshardid_set_epoch('2020-01-01 00:00:00+00')\E/,
	'C: the HINT names the call that sets the database\'s epoch');
is(state_of($ep, 'up', 'postgres', q{SELECT shardid_set_epoch('2020-01-01 00:00:00+00')}),
	'no error', 'C: the superuser runs it');
is(state_of($ep, 'up', 'postgres', sprintf($take2020, 'c-1.2')),
	'no error', 'C: the call works again');
is($ep->safe_psql('up', q{SELECT count(*) FROM ids WHERE phase = 'c-refused'}),
	'0', 'C: the refused call wrote nothing');
check_ids($ep, 'up', 'C: across the update');
$ep->stop;

# =====================================================================
# D. Item 8: a smaller lead after a crash.
# =====================================================================
my $ld = shardid_node('lead', 'shardid.fence_lead = 20s');
$ld->start;
$ld->safe_psql(
	'postgres', qq{
CREATE EXTENSION shardid;
$ids_table
CREATE SEQUENCE s;
CREATE FUNCTION take(p text, n integer, seq regclass) RETURNS void
LANGUAGE sql AS \$\$
	INSERT INTO ids (phase, id) SELECT p, shardid_next(5, seq) FROM generate_series(1, n)
\$\$;
SELECT take('d-20s', 100000, 's');
});
my $d_lead20 = $ld->safe_psql('postgres', 'SELECT last_value FROM shardid_internal.shardid_fence_lead');
ok($d_lead20 >= 25000 && $d_lead20 < 26000,
	"D: the lead record says 20 s and a quarter (plus the write's time): $d_lead20");
cmp_ok(fence_ahead($ld), '>', 15000, 'D: the fence is about 20 s ahead of the clock');
$ld->safe_psql('postgres',
	q{ALTER SYSTEM SET shardid.fence_lead = '10ms'; SELECT pg_reload_conf()});
ok($ld->poll_query_until('postgres', q{SELECT current_setting('shardid.fence_lead') = '10ms'}),
	'D: the lead is reloaded to 10 ms');
my $fence_before = fence_of($ld);
$ld->safe_psql('postgres', q{SELECT take('d-10ms', 1000, 's')});
is( $ld->safe_psql('postgres',
		'SELECT (SELECT last_value FROM shardid_internal.shardid_fence), (SELECT last_value FROM shardid_internal.shardid_fence_lead)'),
	"$fence_before|$d_lead20",
	'D: a few more IDs under the small lead: the fence and its lead record stay');
kill9_and_reap($ld);
$ld->start;
my ($d_out, $d_err, $d_timed_out) = ('', '', 0);
my $d_rc = $ld->psql(
	'postgres', q{SELECT take('d-after', 1000, 's')},
	stdout => \$d_out,
	stderr => \$d_err,
	timeout => 90,
	timed_out => \$d_timed_out);
ok(!$d_timed_out && $d_rc == 0,
	'D: after kill -9 with a correct clock, the first call is not refused')
  or diag $d_err;
is( $ld->safe_psql(
		'postgres', q{
SELECT clock_refusals, fence_waits >= 1 FROM shardid_stats WHERE sequence = 's'::regclass}),
	'0|t',
	'D: it waited for the old fence; no clock refusal');
is( $ld->safe_psql(
		'postgres', qq{SELECT min(id >> 23) > $fence_before FROM ids WHERE phase = 'd-after'}),
	't', 'D: its IDs are past the fence written under the old lead');
$ld->safe_psql('postgres', q{SELECT take('d-new-lead', 100000, 's')});
# the record is the reach (10 ms and a quarter: 12) plus the last write's
# duration, which a loaded machine makes some milliseconds; never the old
# lead's 25,000
my $d_lead = $ld->safe_psql('postgres', 'SELECT last_value FROM shardid_internal.shardid_fence_lead');
ok($d_lead >= 12 && $d_lead < 1000,
	"D: fences written now record the new lead (10 ms and a quarter, plus the write's time): $d_lead");
check_ids($ld, 'postgres', 'D');
$ld->stop;

# =====================================================================
# E. Item 9: shardid_fence_lower after a clock that ran an hour fast.
# =====================================================================
SKIP:
{
	skip 'libfaketime is not installed (Debian package "faketime")', 1
	  unless defined libfaketime();

	my $fast = shardid_node('fast', 'shardid.max_clock_regression = 10s');
	my $clock = "$tmp/fast.faketime";
	set_clock($clock, 0);
	start_faked($fast, $clock);
	$fast->safe_psql(
		'postgres', qq{
CREATE ROLE mallory LOGIN;
CREATE EXTENSION shardid;
CREATE SEQUENCE evs;
$ids_table
ALTER TABLE ids ALTER COLUMN id SET DEFAULT shardid_next(7, 'evs'),
	ALTER COLUMN shard SET DEFAULT 7;
CREATE SEQUENCE other;
INSERT INTO ids (phase) SELECT 'e-before' FROM generate_series(1, 100000);
});
	set_clock($clock, 3600);
	ok(wait_for_clock($fast, 3600), 'E: the clock runs an hour fast');
	$fast->safe_psql('postgres',
		q{INSERT INTO ids (phase) SELECT 'e-fast' FROM generate_series(1, 100000)});
	my $fast_fence = fence_of($fast);
	$fast->stop;
	set_clock($clock, 0);
	start_faked($fast, $clock);
	ok(wait_for_clock($fast, 0), 'E: restarted with the correct clock');
	like(
		state_of($fast, 'postgres', 'postgres',
			q{INSERT INTO ids (phase) SELECT 'e-refused' FROM generate_series(1, 1000)}),
		qr/^55000: system clock is (\d{7}) ms behind the durable fence$/,
		'E: inserts are refused: the clock is an hour behind the fence');
	like(state_of($fast, 'postgres', 'mallory', q{SELECT shardid_fence_lower(now())}),
		qr/^42501: /, 'E: a plain role may not lower the fence (42501)');
	$e = error_of($fast, 'postgres', 'postgres', q{SELECT shardid_fence_lower(now())});
	is($e->{code}, '55000',
		'E: while the sequence carries the fast clock\'s fence, lowering the database\'s is refused (55000)');
	like($e->{detail}, qr/^Sequence (public\.)?evs carries a durable fence at /,
		'E: the refusal names the sequence');
	like($e->{hint}, qr/shardid_sequence_lower\('(public\.)?evs'/, 'E: the hint says how to lower it');
	is(fence_of($fast), $fast_fence, 'E: the fence did not move');

	# The sequence's owner (here a superuser) knows where its fast IDs
	# went: they are deleted, and the owner lowers the sequence's fence.
	like(state_of($fast, 'postgres', 'mallory', q{SELECT shardid_sequence_lower('evs', now())}),
		qr/^42501: /, 'E: a role that does not own the sequence may not lower its fence (42501)');
	$fast->safe_psql('postgres', q{DELETE FROM ids WHERE phase = 'e-fast'});
	my $log_offset = -s $fast->logfile;
	$e = error_of($fast, 'postgres', 'postgres', q{SELECT shardid_sequence_lower('evs', now())});
	is($e->{code}, 'none', 'E: its owner lowers the sequence\'s fence');
	$e = error_of($fast, 'postgres', 'postgres', q{SELECT shardid_fence_lower(now())});
	is($e->{code}, 'none', 'E: then a superuser lowers the database\'s');
	my ($lowered) = $e->{out} =~ /^(\d+)$/m;
	$lowered //= -1;
	is(fence_of($fast), $lowered, 'E: the stored fence is what it returned');
	ok( $fast->log_contains(
			qr/LOG:  durable fence of database "postgres" lowered from time field $fast_fence to $lowered/,
			$log_offset),
		'E: the server log says so');
	ok($fast->log_contains(qr/LOG:  durable fence of sequence "evs" lowered from time field \d+ to \d+/,
			$log_offset),
		'E: and of the sequence\'s');
	is( state_of($fast, 'postgres', 'postgres',
			q{INSERT INTO ids (phase) SELECT 'e-after' FROM generate_series(1, 200000)}),
		'no error', 'E: inserts work again');
	is($fast->safe_psql('postgres', q{SELECT count(*) FROM ids WHERE phase = 'e-refused'}),
		'0', 'E: the refused insert wrote nothing');
	check_ids($fast, 'postgres', 'E: before the fast clock and after the fence was lowered');
	like(state_of($fast, 'postgres', 'postgres', q{SELECT shardid_fence_lower(now() + interval '1 hour')}),
		qr/^55000: time field \d+ is past the durable fence of database "postgres"$/,
		'E: lowering cannot raise the fence (55000)');

	# Lowered below an ID this server issued (from a sequence that feeds
	# no table): the fence stays at that ID, and the function says where.
	my $t1 = $fast->safe_psql('postgres',
		q{SELECT shardid_created_at(max(id)) + interval '1 ms' FROM ids});
	my $issued_field = $fast->safe_psql('postgres',
		q{SELECT shardid_next(7, 'other') >> 23 FROM pg_sleep(0.3)});
	is(state_of($fast, 'postgres', 'postgres', qq{SELECT shardid_sequence_lower('evs', '$t1')}),
		'no error', 'E: evs\'s fence lowered to just after its last ID');
	$e = error_of($fast, 'postgres', 'postgres', qq{SELECT shardid_fence_lower('$t1')});
	is($e->{code}, 'none', 'E: lowered to just after the table\'s last ID');
	($lowered) = $e->{out} =~ /^(\d+)$/m;
	my $stored = fence_of($fast);
	cmp_ok($stored, '>=', $issued_field,
		'E: the fence stays at or after the last ID this server issued');
	is($lowered // -1, $stored, 'E: shardid_fence_lower returns the fence it wrote');

	# Another session's temp table that defaults to shardid_next.
	my ($in, $out, $err) = (
		"CREATE TEMP SEQUENCE q;\n"
		  . "CREATE TEMP TABLE mt (id bigint DEFAULT shardid_next(0, 'q'));\n"
		  . "INSERT INTO mt VALUES (DEFAULT);\nSELECT 'ready';\n",
		'', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $fast->connstr('postgres') . ' user=mallory' ],
		'<', \$in, '>', \$out, '2>', \$err,
		IPC::Run::timeout(60));
	$h->pump until $out =~ /ready/;
	# lowered to where the fence is (now() may already be past it on a
	# loaded machine: the fence runs a reach ahead of the last ID, never
	# further)
	is( state_of(
			$fast, 'postgres', 'postgres',
			q{SELECT shardid_fence_lower(shardid_created_at(last_value << 23)) FROM shardid_internal.shardid_fence}),
		'no error', 'E: another session\'s temp table does not stop shardid_fence_lower');
	$in .= "\\q\n";
	$h->finish;
	is( state_of($fast, 'postgres', 'postgres',
			q{INSERT INTO ids (phase) SELECT 'e-last' FROM generate_series(1, 100000)}),
		'no error', 'E: inserts go on');
	check_ids($fast, 'postgres', 'E: at the end');
	$fast->stop;
}

done_testing();
