# Copyright: see the shardid LICENSE.
#
# 071_fence_holes.pl: the four ways issue 14 found to repeat IDs past the
# durable fence give no duplicate now.  Each case runs on real servers
# whose clocks are set by libfaketime, loads a table without a unique index
# (so that a repeat shows as a second row, not as an error), then takes the
# clock back behind the last ID and loads again:
#
#   1. A DROP EXTENSION / CREATE EXTENSION that rolls back.  Session X runs
#      BEGIN; DROP EXTENSION shardid CASCADE; CREATE EXTENSION shardid; and
#      then calls shardid_next every 5 ms for a few seconds, while session
#      Y inserts batches of IDs from the same sequence; then X rolls back.
#      The fence X writes lives in a sequence of its own transaction, so it
#      is never published: Y's batches stop at the fence the database had
#      (waiting for X's lock on it) and go on after the rollback, past a
#      fence written for everything the server issued.  X itself, having
#      dropped the committed fence, is refused (55000) past it, so that
#      no ID it hands its client depends on a fence a rollback undoes.
#      Right after the rollback, and again after Y's next statement, no
#      committed ID is past the stored fence, and after the restart none
#      of X's IDs comes out again.  Then the server stops (kill -9 in one round,
#      -m fast in the other) and starts with its clock 3 s behind the
#      stored fence; when the clock is 0.6 s behind, 600,000 more IDs.
#      (Before the fix the rollback left Y's IDs past the fence, and this
#      load repeated them.)  The sequence is not OWNED BY the table's
#      column, so the guard does not read the table: the fence alone keeps
#      the IDs apart here.  (The index on id is for the test: the largest
#      committed ID, read in the same breath as the rollback.)
#   2. The fence on disk never goes back when a database's shared-memory
#      entry is reused while a fence write is under way.  The interleaving
#      is forced with shardid.debug_fence_write_delay: with
#      shardid.max_databases = 4, backend W1 in database d sets the delay
#      to 5 s and issues IDs until its early fence write starts; it then
#      sleeps between reading the stored fence and writing its new one,
#      holding the fence lock (seen in pg_locks).  Four other databases
#      issue IDs meanwhile, so that d's entry goes to the last of them, and
#      a new session in d takes another entry and commits 1,000,000 IDs.
#      Before the fix that session raced W1 through its new entry's own
#      lock, and W1's late write put the fence on disk below the session's
#      IDs; now the session waits for W1's fence lock (seen in pg_locks as
#      a lock not granted), and the stored fence, sampled all along, never
#      goes down and ends past every ID.  Then kill -9, and a start with
#      the clock 1.6 s behind the stored fence.
#   3. DROP EXTENSION, a clean restart, CREATE EXTENSION, with the table
#      kept: the new fence knows nothing, but the table's own floor (the
#      largest ID of the int8 column the sequence is OWNED BY, read through
#      a B-tree index on it, here not unique) holds the new IDs after the
#      old ones: a clock 3 s behind the last ID is refused (55000) or
#      waited out, never used.  The same without any index is the
#      documented limit (such a sequence keeps only the fence, which DROP
#      EXTENSION removed; docs/operations.md): the test reports what
#      happens there, and marks its duplicate check TODO unless the guard
#      held the IDs back.
#   4. Partial dumps: pg_dump -n public (table and sequence, without
#      CREATE EXTENSION, and nothing of the extension's own sequences,
#      which are in shardid_internal) and pg_dump -t ids -t s, restored
#      into new databases on a second server whose clock runs 3 s behind
#      the last dumped ID: 600,000 new IDs, none equal to a dumped one, all
#      after them: the sequence's own fence holds.  -n public is restored
#      once with the extension created first and once as issue 14 did it,
#      with the extension created afterwards.
#
# Every case checks each row of its table: no ID twice, no ID's time field
# later than its row's clock_timestamp() plus the guard's 1 ms, shard 5.
# Every call that can wait on a faked clock is bounded by a timeout.
#
# schedule: serial (case 1's load must start while the clock is still
# 0.6 s behind the fence, and counts that it waited)

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use Time::HiRes ();

plan skip_all => 'libfaketime is not installed (Debian package "faketime")'
  unless defined libfaketime();

my $tmp = PostgreSQL::Test::Utils::tempdir();
my $timeout = $PostgreSQL::Test::Utils::timeout_default;

# A table without a unique index, and its sequence; with index => 1 a plain
# B-tree index on id, with owned => 1 the sequence OWNED BY ids.id.
sub ids_schema
{
	my (%opt) = @_;
	return q{
CREATE TABLE ids (
	ord		bigserial,
	phase	text NOT NULL,
	id		bigint NOT NULL,
	made	timestamptz NOT NULL DEFAULT clock_timestamp()
);
}
	  . ($opt{index} ? "CREATE INDEX ids_id ON ids (id);\n" : '')
	  . 'CREATE SEQUENCE s'
	  . ($opt{owned} ? ' OWNED BY ids.id' : '') . ";\n";
}

# The statement that inserts $n IDs of phase $phase.
sub take
{
	my ($phase, $n) = @_;
	return qq{INSERT INTO ids (phase, id)
SELECT '$phase', shardid_next(5, 's') FROM generate_series(1, $n)};
}

# Every ID of database $db once, none later than its row's clock (+1 ms),
# all of shard 5.  Returns the number of duplicates.
sub check_ids
{
	my ($node, $db, $what) = @_;
	my ($dups, $rows) = duplicates($node, 'ids', db => $db);
	my $bad = $node->safe_psql(
		$db, q{
SELECT count(*) FILTER (WHERE shardid_created_at(id) >
                              date_trunc('milliseconds', made) + interval '1 ms'
                           OR shardid_shard(id) <> 5)
  FROM ids});
	is("$dups|$bad", '0|0',
		"$what: 0 duplicates in $rows IDs, none ahead of its clock");
	diag "$what: $dups duplicates in $rows IDs, $bad ahead of their clock"
	  if $dups || $bad;
	return $dups;
}

# Every ID of phase $phase is later than every ID inserted before it.
sub follows
{
	my ($node, $db, $phase, $what) = @_;
	is( $node->safe_psql(
			$db, qq{
SELECT min(id) > (SELECT max(id) FROM ids
                   WHERE ord < (SELECT min(ord) FROM ids WHERE phase = '$phase'))
  FROM ids WHERE phase = '$phase'}),
		't',
		"$what: every new ID is later than every ID before it");
	return;
}

# The Unix time (s) the stored fence of $db stands for.
sub fence_seconds
{
	my ($node, $db) = @_;
	return $node->safe_psql($db,
		q{SELECT extract(epoch FROM shardid_created_at(last_value << 23)) FROM shardid_internal.shardid_fence});
}

# The Unix time (s) of the last ID of database $db.
sub last_id_seconds
{
	my ($node, $db) = @_;
	return $node->safe_psql($db,
		q{SELECT extract(epoch FROM shardid_created_at(max(id))) FROM ids});
}

# Wait until $node's clock reads $behind seconds or less before Unix time
# $t; false if that takes more than 30 s.
sub wait_until_behind
{
	my ($node, $t, $behind) = @_;
	for (1 .. 600)
	{
		return 1
		  if $node->safe_psql('postgres',
			qq{SELECT $t - extract(epoch FROM clock_timestamp()) <= $behind})
		  eq 't';
		Time::HiRes::usleep(50_000);
	}
	return 0;
}

# Run $sql in $db, bounded by the test's timeout; "no error", or the
# error as "SQLSTATE: message" (as ShardidTest's sql_error).
sub try_sql
{
	my ($node, $db, $sql) = @_;
	my ($stdout, $stderr);
	my $rc = $node->psql(
		$db, "\\set VERBOSITY verbose\n$sql",
		stdout => \$stdout,
		stderr => \$stderr,
		timeout => $timeout);
	return 'no error' if $rc == 0;
	return $1 if $stderr =~ /ERROR:\s+(\w{5}: [^\n]*)/;
	return "unexpected: $stderr";
}

# Poll $sql in $db until it returns t, for at most $seconds; false if not.
sub poll_until
{
	my ($node, $db, $sql, $seconds) = @_;
	my $deadline = Time::HiRes::time() + $seconds;
	while (Time::HiRes::time() < $deadline)
	{
		return 1 if $node->safe_psql($db, $sql) eq 't';
		Time::HiRes::usleep(50_000);
	}
	return 0;
}

# shardid_stats of sequence s in $db: "clock_waits|clock_refusals|fence_waits".
sub waits_of
{
	my ($node, $db) = @_;
	return $node->safe_psql($db,
		q{SELECT clock_waits, clock_refusals, fence_waits FROM shardid_stats
		   WHERE sequence = 's'::regclass});
}

# Restart $node, by kill -9 or by a fast shutdown, with its clock $behind
# seconds before Unix time $t.
sub restart_behind
{
	my ($node, $clock, $how, $t, $behind) = @_;
	if ($how eq 'kill -9')
	{
		kill9_and_reap($node);
	}
	else
	{
		$node->stop('fast');
	}
	my $offset = $t - Time::HiRes::time() - $behind;
	set_clock($clock, $offset);
	start_faked($node, $clock);
	return wait_for_clock($node, $offset);
}

# ---------------------------------------------------------------------
# 1. A rolled-back DROP/CREATE EXTENSION, then kill -9 or a clean restart.
# ---------------------------------------------------------------------
my $clock1 = "$tmp/one.faketime";
my $node = shardid_node('holes');
set_clock($clock1, 0);
start_faked($node, $clock1);
$node->safe_psql('postgres', "CREATE EXTENSION shardid;\n" . ids_schema(index => 1));
$node->safe_psql('postgres', take('start', 100000));

for my $how ('kill -9', 'clean restart')
{
	my $r = $how eq 'kill -9' ? '1a' : '1b';

	# The stored fence and the largest committed ID, at once (the index
	# on id makes max(id) one probe); and how many IDs up to that one lie
	# past that fence, counted afterwards.
	my $fence_and_max = q{SELECT last_value, (SELECT max(id) FROM ids) FROM shardid_internal.shardid_fence};
	my $past = sub {
		my ($fence, $max) = split /\|/, shift;
		return $node->safe_psql('postgres',
			"SELECT count(*) FROM ids WHERE id <= $max AND id >> 23 > $fence");
	};

	# X's calls, one every 5 ms, until the guard refuses one: the IDs X
	# got, which its client holds whatever happens to its transaction.
	# (A PL/pgSQL body makes no dependency: DROP EXTENSION leaves it.)
	$node->safe_psql(
		'postgres', q{
CREATE OR REPLACE FUNCTION x_take(n integer) RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP
		BEGIN
			RETURN NEXT shardid_next(5, 's');
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			RETURN;
		END;
		PERFORM pg_sleep(0.005);
	END LOOP;
END $$});
	my $x = $node->background_psql('postgres', on_error_stop => 1);
	$x->query_safe(
		q{SET client_min_messages = warning;
BEGIN; DROP EXTENSION shardid CASCADE; CREATE EXTENSION shardid;});

	# Y's next statement after the rollback comes through a session
	# connected now, so that it follows the rollback within milliseconds
	# (as a busy application's would).
	my $y_next = $node->background_psql('postgres', on_error_stop => 1);

	# Y: 6 batches of 50,000 IDs, 0.2 s apart, each its own transaction,
	# all meant to run while X's transaction is open (as they did before
	# the fix); now they wait while X holds its locks, which is the point.
	my $y_file = "$tmp/$r-y.sql";
	PostgreSQL::Test::Utils::append_to_file($y_file,
		join('', map { take("$r-y", 50000) . ";\nSELECT pg_sleep(0.2);\n" } 1 .. 6));
	my ($yout, $yerr) = ('', '');
	my $y = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr('postgres'), '-f', $y_file
		],
		'>', \$yout, '2>', \$yerr,
		IPC::Run::timeout($timeout));

	# X: about 5 s of calls, 5 ms apart, then the rollback, and at once
	# the stored fence and the largest committed ID
	my ($x_count, $x_ids) = split /\|/, $x->query_safe(
		q{SELECT count(*), coalesce(string_agg(id::text, ','), '') FROM x_take(1000) AS id});
	my $at_rollback = $x->query_safe(qq{ROLLBACK;
$fence_and_max;});
	is($x_count, 1000,
		"$r: in the transaction that dropped the database's fence, X's IDs go on under their sequence's own fence");
	$y_next->query_safe(take("$r-y-next", 1000));
	my $after_next = $node->safe_psql('postgres', $fence_and_max);
	$x->quit;
	$y_next->quit;
	is($past->($at_rollback), '0',
		"$r: right after X's rollback, no committed ID is past the stored fence");
	is($past->($after_next), '0',
		"$r: after Y's next statement, no committed ID is past the stored fence");

	$y->finish;
	is($y->result(0), 0, "$r: Y's batches went through") or diag $yerr;
	is($past->($node->safe_psql('postgres', $fence_and_max)),
		'0', "$r: after all of Y's batches, no committed ID is past the stored fence");
	my $max0 = (split /\|/, $at_rollback)[1];
	diag "$r: Y committed "
	  . $node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE id <= $max0), count(*) FROM ids WHERE phase = '$r-y'")
	  =~ s/\|/ of /r
	  . " IDs before X's rollback";
	my $dups_before = check_ids($node, 'postgres', "$r: before the restart");

	my $fence_s = fence_seconds($node, 'postgres');
	my $fence_before = fence_of($node, 'postgres');
	ok(restart_behind($node, $clock1, $how, $fence_s, 3),
		"$r: after $how, the clock starts 3 s behind the stored fence");
	ok(wait_until_behind($node, $fence_s, 0.6),
		"$r: the clock is 0.6 s behind the stored fence");
	my $fence_waits = q{
SELECT coalesce((SELECT fence_waits FROM shardid_stats WHERE sequence = 's'::regclass), 0)};
	my ($waits0, $waits1) = split /\n/, $node->safe_psql('postgres',
		"$fence_waits;\n" . take("$r-after", 600000) . ";\n$fence_waits",
		timeout => $timeout);
	# What must hold is that the load's IDs start after the stored fence;
	# whether its first call still found the clock behind the fence, and
	# waited, depends on how long a loaded machine takes to connect after
	# the clock came within 0.6 s of it (so it is reported, not asserted)
	my $first = $node->safe_psql('postgres',
		qq{SELECT min(id >> 23) FROM ids WHERE phase = '$r-after'});
	cmp_ok($first, '>', $fence_before,
		"$r: the load's IDs start after the fence stored before $how");
	note "$r: the load's first ID $first, the stored fence $fence_before; fence waits "
	  . ($waits1 - $waits0);
	my $dups_after = check_ids($node, 'postgres', "$r: $how, clock behind the stored fence");
	diag "$r: the load after $how repeated " . ($dups_after - $dups_before) . ' IDs'
	  if $dups_after > $dups_before;
	follows($node, 'postgres', "$r-after", "$r: $how");
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*) FROM ids WHERE id = ANY ('{$x_ids}'::bigint[])}),
		'0',
		"$r: none of the IDs X got before its rollback came out again");
}

# ---------------------------------------------------------------------
# 2. An entry reused while its fence write is under way.
# ---------------------------------------------------------------------
my $clock2 = "$tmp/two.faketime";
my $evict = shardid_node('evict', 'shardid.max_databases = 4',
	'shardid.fence_lead = 500ms', 'shardid.max_clock_regression = 10s');
set_clock($clock2, 0);
start_faked($evict, $clock2);
$evict->safe_psql('postgres', 'CREATE EXTENSION shardid');
for my $db (qw(d d1 d2 d3 d4))
{
	$evict->safe_psql('postgres', "CREATE DATABASE $db");
	$evict->safe_psql($db, "CREATE EXTENSION shardid;\n" . ids_schema());
}
my $d_oid = $evict->safe_psql('postgres',
	q{SELECT oid FROM pg_database WHERE datname = 'd'});
# The database fence's writers' lock, as pg_locks shows it: an advisory
# lock of shardid's own class (src/fence.c, SHARDID_LOCK_CLASS_DB_FENCE).
my $db_fence_lock = q{locktype = 'advisory' AND objid = 0 AND objsubid = 21316};
$evict->safe_psql('d', take('warm', 10000));

# W1: one ID per statement until one statement takes over 2 s, which is
# the one whose early fence write slept.
my $w1 = $evict->background_psql('d', on_error_stop => 1);
my $w1_pid = $w1->query_safe(
	'SET shardid.debug_fence_write_delay = 5000; SELECT pg_backend_pid()');
$w1->query_until(
	qr/w1-loop/, q{\echo w1-loop
DO $$
DECLARE
	t0 timestamptz := clock_timestamp();
	t timestamptz;
BEGIN
	LOOP
		t := clock_timestamp();
		INSERT INTO ids (phase, id) VALUES ('w1', shardid_next(5, 's'));
		EXIT WHEN clock_timestamp() - t > interval '2 s'
		       OR clock_timestamp() - t0 > interval '60 s';
	END LOOP;
END $$;
});
ok( poll_until(
		$evict, 'postgres', qq{
SELECT EXISTS (SELECT FROM pg_locks
                WHERE pid = $w1_pid AND database = $d_oid AND $db_fence_lock
                  AND granted)
   AND EXISTS (SELECT FROM pg_stat_activity
                WHERE pid = $w1_pid AND wait_event_type = 'Extension')}, 30),
	'2: W1 sleeps inside its fence write, holding the fence lock of d');
my @fences = (fence_of($evict, 'd'));

# Three databases take the free entries; the fourth takes d's, the one
# used least recently (it waits for the entry's io_lock, which W1 holds).
$evict->safe_psql($_, take('other', 1000)) for qw(d1 d2 d3);
my $d4 = $evict->background_psql('d4', on_error_stop => 1);
$d4->query_until(qr/d4-load/, "\\echo d4-load\n" . take('other', 1000) . ";\n");
ok( poll_until(
		$evict, 'postgres', q{
SELECT NOT EXISTS (SELECT FROM shardid_fence_status WHERE datname = 'd')
   AND EXISTS (SELECT FROM shardid_fence_status WHERE datname = 'd4')}, 10),
	"2: d's shared-memory entry went to database d4");

# A new session in d takes another entry: it must wait for W1's write.
my $new = $evict->background_psql('d', on_error_stop => 1);
my $new_pid = $new->query_safe('SELECT pg_backend_pid()');
$new->query_until(qr/new-load/, "\\echo new-load\n" . take('new', 1000000) . ";\n");
ok( poll_until(
		$evict, 'postgres', qq{
SELECT EXISTS (SELECT FROM pg_locks
                WHERE pid = $new_pid AND database = $d_oid AND $db_fence_lock
                  AND NOT granted)}, 10),
	"2: the new session in d waits for W1's fence lock instead of racing it");

# The stored fence, every 50 ms until the new session is done.
my $deadline = Time::HiRes::time() + $timeout;
while (Time::HiRes::time() < $deadline)
{
	my ($f, $state) = split /\|/, $evict->safe_psql('d',
		"SELECT last_value, (SELECT state FROM pg_stat_activity WHERE pid = $new_pid)
		   FROM shardid_internal.shardid_fence");
	push @fences, $f;
	last if ($state // '') ne 'active';
	Time::HiRes::usleep(50_000);
}
$new->query_safe('SELECT 1');
$w1->query_safe('SELECT 1');
$d4->query_safe('SELECT 1');
push @fences, fence_of($evict, 'd');
$_->quit for ($new, $w1, $d4);

my @down = grep { $fences[$_] < $fences[ $_ - 1 ] } 1 .. $#fences;
is(scalar @down, 0,
	'2: the stored fence never went down (' . scalar(@fences) . ' samples)')
  or diag "fences: @fences";
is( $evict->safe_psql(
		'd', q{
SELECT count(*) FILTER (WHERE phase = 'new'), count(*) FILTER (WHERE phase = 'w1') > 0
  FROM ids}),
	'1000000|t',
	'2: W1 and the new session committed their IDs');
cmp_ok(fence_of($evict, 'd'), '>=',
	$evict->safe_psql('d', 'SELECT max(id >> 23) FROM ids'),
	'2: the stored fence is at or past every ID of d');
check_ids($evict, 'd', '2: before the crash');

my $fence_s = fence_seconds($evict, 'd');
ok(restart_behind($evict, $clock2, 'kill -9', $fence_s, 1.6),
	'2: after kill -9, the clock starts 1.6 s behind the stored fence');
$evict->safe_psql('d', take('after', 300000), timeout => $timeout);
check_ids($evict, 'd', '2: kill -9, clock 1.6 s behind the stored fence');
follows($evict, 'd', 'after', '2: kill -9');
$evict->stop;

# ---------------------------------------------------------------------
# 3. DROP EXTENSION, a clean restart, CREATE EXTENSION; the table kept.
# ---------------------------------------------------------------------
for my $indexed (1, 0)
{
	my $db = $indexed ? 'dropped' : 'noindex';
	my $what = $indexed ? '3, non-unique index' : '3, no index';
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db,
		"CREATE EXTENSION shardid;\n" . ids_schema(index => $indexed, owned => 1));
	$node->safe_psql($db, take('before', 1000000));
	my $last_s = last_id_seconds($node, $db);
	$node->safe_psql($db, 'DROP EXTENSION shardid');
	ok(restart_behind($node, $clock1, 'clean restart', $last_s, 3),
		"$what: restarted with the clock 3 s behind the last ID");
	$node->safe_psql($db, 'CREATE EXTENSION shardid');
	cmp_ok(fence_of($node, $db), '<',
		$node->safe_psql($db, 'SELECT max(id >> 23) FROM ids'),
		"$what: the new fence is behind the table's IDs");

	my $after = $indexed ? 600000 : 300000;
	# how far the clock is behind the last ID as the load starts: a loaded
	# machine may take the 3 s to restart and connect
	my $behind = $node->safe_psql($db,
		qq{SELECT $last_s - extract(epoch FROM clock_timestamp())});
	my $made = try_sql($node, $db, take('after', $after));
	my ($waits, $refusals, $fence_waits) = split /\|/, waits_of($node, $db);
	diag "$what: $made; clock_waits $waits, clock_refusals $refusals, fence_waits $fence_waits";
	like($made,
		qr/^(no error|55000: system clock moved backwards by \d+ ms|55000: system clock is \d+ ms behind the durable fence)$/,
		"$what: the load went through or was refused with 55000");
	# a wait for the fence that DROP EXTENSION wrote into the sequence
	# (since 1.3) holds it back too
	my $held = $made ne 'no error' || $waits > 0 || $fence_waits > 0;
	if ($made ne 'no error')
	{
		ok(wait_until_behind($node, $last_s, -0.01),
			"$what: the clock passed the last ID");
		$node->safe_psql($db, take('after', $after), timeout => $timeout);
	}

	if ($indexed)
	{
	  SKIP:
		{
			skip "$what: the clock had passed the last ID when the load began ($behind s)", 1
			  if $behind <= 0.05;
			ok($held, "$what: the table's own floor held the clock back (refused or waited)");
		}
		check_ids($node, $db, $what);
		follows($node, $db, 'after', $what);
		next;
	}

	# The documented limit: without an index on the column there is no
	# floor, and DROP EXTENSION took the fence.
	my $dups = duplicates($node, 'ids', db => $db);
	diag "$what: " . ($held ? 'held back' : 'issued at once') . ", $dups duplicates";
	TODO:
	{
		local $TODO =
		  'documented limit (docs/operations.md, "What carries the fence"): a sequence without an int8 column that leads a B-tree index keeps the fence alone, which DROP EXTENSION removes'
		  unless $held;
		is($dups, '0', "$what: 0 duplicates");
	}
	is( $node->safe_psql(
			$db, q{
SELECT count(*) FROM ids
 WHERE shardid_created_at(id) > date_trunc('milliseconds', made) + interval '1 ms'
    OR shardid_shard(id) <> 5}),
		'0',
		"$what: no ID ahead of its clock");
}

# ---------------------------------------------------------------------
# 4. Partial dumps restored on a server whose clock is behind.
# ---------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src',
	"CREATE EXTENSION shardid;\n" . ids_schema(index => 1, owned => 1));
$node->safe_psql('src', take('dumped', 300000));
my $src_fence = fence_of($node, 'src');
my $src_last_s = last_id_seconds($node, 'src');
my %dump = (public => "$tmp/public.sql", tables => "$tmp/tables.sql");
command_ok([ 'pg_dump', '-n', 'public', '-f', $dump{public}, '-d', $node->connstr('src') ],
	'4: pg_dump -n public');
unlike(PostgreSQL::Test::Utils::slurp_file($dump{public}), qr/shardid_internal|\.shardid_(epoch|fence)\b/,
	'4: pg_dump -n public carries none of the extension\'s sequences (they are in shardid_internal)');
command_ok(
	[ 'pg_dump', '-t', 'ids', '-t', 's', '-f', $dump{tables}, '-d', $node->connstr('src') ],
	'4: pg_dump -t ids -t s');
$node->stop;

my $clock4 = "$tmp/four.faketime";
my $target = shardid_node('target', 'shardid.max_clock_regression = 10s');
set_clock($clock4, 0);
start_faked($target, $clock4);
for my $case (
	[ 'r_public', 'public', 'first', '-n public, extension first' ],
	[ 'r_public_late', 'public', 'after', '-n public, extension after it' ],
	[ 'r_tables', 'tables', 'first', '-t ids -t s, extension first' ])
{
	my ($db, $file, $ext, $label) = @$case;
	my $what = "4, $label";
	$target->safe_psql('postgres', "CREATE DATABASE $db");
	$target->safe_psql($db, 'CREATE EXTENSION shardid') if $ext eq 'first';
	my ($out, $err) = ('', '');
	$target->psql(
		$db, PostgreSQL::Test::Utils::slurp_file($dump{$file}),
		on_error_stop => 0,
		stdout => \$out,
		stderr => \$err);
	$target->safe_psql($db, 'CREATE EXTENSION shardid') if $ext eq 'after';
	is($target->safe_psql($db, q{SELECT count(*) FROM ids WHERE phase = 'dumped'}),
		'300000', "$what: the rows came with the dump");
	# The database's fence is no dump's: the sequence brings its own, at
	# or after every ID it issued.
	unlike($err, qr/shardid_internal|\.shardid_(epoch|fence)\b/,
		"$what: the dump names none of the extension's sequences")
	  if $file eq 'public' && $ext eq 'after';
	cmp_ok(fence_of($target, $db), '<',
		$target->safe_psql($db, 'SELECT max(id >> 23) FROM ids'),
		"$what: no database fence came with the rows");
	cmp_ok($target->safe_psql($db, 'SELECT (last_value >> 10) - 1 FROM s'), '>=',
		$target->safe_psql($db, 'SELECT max(id >> 23) FROM ids'),
		"$what: the sequence came with its fence, past every dumped ID");

	my $offset = $src_last_s - Time::HiRes::time() - 3;
	set_clock($clock4, $offset);
	ok(wait_for_clock($target, $offset), "$what: the clock runs 3 s behind the last dumped ID");
	$target->safe_psql($db, take('after', 600000), timeout => $timeout);
	my ($waits, $refusals, $fence_waits) = split /\|/, waits_of($target, $db);
	ok($waits + $fence_waits >= 1 && $refusals == 0,
		"$what: the step back was waited out ($waits clock waits, $fence_waits fence waits)");
	check_ids($target, $db, $what);
	follows($target, $db, 'after', $what);
}
$target->stop;

done_testing();
