# Copyright: see the shardid LICENSE.
#
# 086_one_record.pl: a sequence called less often than its lead writes
# one WAL record a call, not two (docs/design.md, "One record a call"):
# the call that writes its sequence's fence takes its value from that
# setval (is_called true) instead of a nextval before it, whose record
# the setval's zeroed count made the next call write again.
#
#   A  30 calls 60 ms apart, the lead 20 ms: each writes the fence, and
#      pg_waldump counts exactly 30 records of the sequence (60 before);
#      each call's value is the first of the block after its fence, the
#      ID's low bits 0, currval that value; IDs unique and increasing.
#   B  the rights nextval checks, checked before the owner's setval: a
#      role without USAGE or UPDATE gets 42501 (with SELECT alone too), a
#      read-only transaction 25006, and neither moves the sequence or
#      writes a record of it; with USAGE the call takes the setval's value.
#   D  what a nextval before the write showed the guard, the write shows
#      it now: a sequence set ahead (a restore, RESTART, the owner's
#      setval), with is_called false as a dump sets it or true, then a
#      call: 55000 as before (the clock behind its fence), and the fence
#      still in the sequence (the setval's call read no value while
#      is_called was false, and wrote over it); a sequence at a MAXVALUE
#      past the horizon, and one at a MAXVALUE lowered below the fence's
#      next value: nextval's 2200H, the sequence left as it was; one set
#      past the horizon: refused, and not set back.
#   C  kill -9 right after such calls (their setvals flushed by their
#      commits alone), a restart: no ID repeats, every one later than
#      the last before.
#   F  a sequence altered in an open transaction (ALTER SEQUENCE, TRUNCATE
#      ... RESTART IDENTITY: a new file, which a rollback drops and which
#      pg_dump does not read until the commit) takes no fence write: an
#      ID past its fence is refused with 55000 in that transaction, so
#      that none depends on a fence a rollback takes back (helper-26's
#      case: 400 IDs from a savepoint rolled back after an ALTER, then
#      pg_dump -t, repeated by the copy); after the commit, after a
#      rollback to a savepoint before the ALTER, and for a sequence made
#      and altered at one level of the same transaction, calls go on as
#      before; one made in it and altered again in an open savepoint is
#      refused (a review found it let through).
#   E  a race, rollbacks and evictions on that path: 4 pgbench clients
#      call 24 sequences, a shard each (4 of them hot), with 16 slots, a transaction in
#      four rolled back (its ID recorded after the rollback), so that
#      calls write their fence at once on one sequence, after a rollback
#      and after an eviction; no ID repeats, and every sequence carries a
#      fence at or past every ID it gave.  Then pg_dump -t of the table
#      and the sequences, restored into another database, with the clock
#      3 s behind the last ID: the copies issue no dumped ID again.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $node = shardid_node('onerecord', "shardid.fence_lead = '20ms'");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE s;
CREATE TABLE ids (n serial, id bigint, v bigint);
CREATE ROLE plain LOGIN;
CREATE ROLE reader LOGIN;
GRANT SELECT ON s TO reader;
GRANT SELECT, INSERT ON ids TO plain;
GRANT USAGE ON SEQUENCE ids_n_seq TO plain;
SELECT shardid_next(1, 's');
});

# The records of sequence s (its relfilenode) in WAL from $from to $to.
sub seq_records
{
	my ($from, $to) = @_;
	my $file = $node->safe_psql('postgres', q{SELECT pg_relation_filenode('s')});
	my ($out, $err) = run_command(
		[ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $from, '-e', $to ]);
	return scalar grep { m{^rmgr: Sequence .* rel \d+/\d+/$file\b} } split /\n/, $out;
}

sub lsn { return $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()') }

# --- A: one record a call
my $from = lsn();
$node->safe_psql(
	'postgres', q{
DO $$
BEGIN
	FOR i IN 1..30 LOOP
		PERFORM pg_sleep(0.06);
		INSERT INTO ids (id, v) SELECT shardid_next(1, 's'), currval('s');
	END LOOP;
END $$;
});
my $to = lsn();
is(seq_records($from, $to), 30,
	'A: 30 calls past their fence wrote 30 records of the sequence, one a call');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT id),
       bool_and(id & 1023 = 0 AND v % 1024 = 0),
       bool_and(id > coalesce(prev, 0))
  FROM (SELECT id, v, lag(id) OVER (ORDER BY n) AS prev FROM ids) t}),
	'30|30|t|t',
	'A: each value the first of its block (the low bits 0, currval the value), the IDs unique and increasing');
is( $node->safe_psql(
		'postgres', q{SELECT is_called, log_cnt FROM s}),
	"t|0", 'A: the sequence as the last setval left it, is_called true');

# --- B: the caller's rights, checked as nextval checks them
my $before = $node->safe_psql('postgres', q{SELECT last_value FROM s});
for my $case ([ 'plain', '42501', 'no USAGE or UPDATE' ], [ 'reader', '42501', 'SELECT alone' ])
{
	my ($role, $code, $what) = @$case;
	$from = lsn();
	my $e = sql_outcome($node, 'postgres',
		q{SELECT pg_sleep(0.06); SELECT shardid_next(1, 's');}, user => $role);
	is($e->{code}, $code, "B: $what: $code ($e->{message})");
	is($node->safe_psql('postgres', q{SELECT last_value FROM s}), $before,
		"B: $what: the sequence did not move");
	is(seq_records($from, lsn()), 0, "B: $what: no record of the sequence");
}
$from = lsn();
my $e = sql_outcome($node, 'postgres',
	q{SELECT pg_sleep(0.06); BEGIN READ ONLY; SELECT shardid_next(1, 's');});
is($e->{code}, '25006', "B: a read-only transaction: 25006 ($e->{message})");
is($node->safe_psql('postgres', q{SELECT last_value FROM s}), $before,
	'B: read-only: the sequence did not move');
is(seq_records($from, lsn()), 0, 'B: read-only: no record of the sequence');

$node->safe_psql('postgres', q{GRANT USAGE ON SEQUENCE s TO plain});
$from = lsn();
$e = sql_outcome($node, 'postgres',
	q{SELECT pg_sleep(0.06); INSERT INTO ids (id, v) SELECT shardid_next(1, 's'), currval('s') RETURNING id & 1023, v % 1024;},
	user => 'plain');
is($e->{code} . ' ' . (split /\n/, $e->{out})[-1], 'none 0|0',
	'B: with USAGE, the call takes the value of its fence\'s setval');
is(seq_records($from, lsn()), 1, 'B: with USAGE: one record of the sequence');

# --- D: a value set ahead, or at its bounds, before a call
$node->safe_psql(
	'postgres', q{
CREATE SEQUENCE d_false; CREATE SEQUENCE d_true;
CREATE SEQUENCE d_max MAXVALUE 2251799813685248;
CREATE SEQUENCE d_far; CREATE SEQUENCE d_low;
SELECT shardid_next(1, 'd_false'), shardid_next(1, 'd_true'),
       shardid_next(1, 'd_max'), shardid_next(1, 'd_far'), shardid_next(1, 'd_low');
SELECT pg_sleep(0.06);
SELECT shardid_next(1, 'd_false'), shardid_next(1, 'd_true'),
       shardid_next(1, 'd_max'), shardid_next(1, 'd_far'), shardid_next(1, 'd_low');
});
for my $called ('false', 'true')
{
	my $seq = "d_$called";
	my $f = $node->safe_psql('postgres',
		qq{SELECT pg_sleep(0.06); SELECT (shardid_next(1, '$seq') >> 23) + 5000});
	$f =~ s/^\s+//;
	$node->safe_psql('postgres', qq{SELECT setval('$seq', ($f + 1)::bigint << 10, $called)});
	$e = sql_outcome($node, 'postgres', qq{SELECT pg_sleep(0.06); SELECT shardid_next(1, '$seq');});
	is($e->{code}, '55000',
		"D: set 5 s ahead with is_called $called: the next call refused as the clock is behind ($e->{message})");
	cmp_ok($node->safe_psql('postgres', qq{SELECT (last_value >> 10) - 1 FROM $seq}), '>=', $f,
		"D: is_called $called: the fence set stays in the sequence");
}
$node->safe_psql('postgres', q{SELECT setval('d_max', 2251799813685248, true)});
$e = sql_outcome($node, 'postgres', q{SELECT pg_sleep(0.06); SELECT shardid_next(1, 'd_max');});
is($e->{code}, '2200H', "D: a sequence at a MAXVALUE past the horizon: nextval's 2200H ($e->{message})");
is($node->safe_psql('postgres', q{SELECT last_value, is_called FROM d_max}),
	'2251799813685248|t', 'D: at a MAXVALUE past the horizon: the sequence left as it was');
my $low = $node->safe_psql('postgres', q{SELECT last_value + 5 FROM d_low});
$node->safe_psql('postgres', qq{ALTER SEQUENCE d_low MAXVALUE $low; SELECT setval('d_low', $low, true)});
$e = sql_outcome($node, 'postgres', q{SELECT pg_sleep(0.06); SELECT shardid_next(1, 'd_low');});
is($e->{code}, '2200H', "D: a sequence at a MAXVALUE below its next fence: nextval's 2200H ($e->{message})");
is($node->safe_psql('postgres', q{SELECT last_value, is_called FROM d_low}),
	"$low|t", 'D: at a MAXVALUE below its next fence: the sequence left as it was');
$node->safe_psql('postgres', q{SELECT setval('d_far', 4611686018427387904, true)});
$e = sql_outcome($node, 'postgres', q{SELECT pg_sleep(0.06); SELECT shardid_next(1, 'd_far');});
is($e->{code}, '55000', "D: a sequence set past the horizon: refused ($e->{message})");
is($node->safe_psql('postgres', q{SELECT last_value >= 4611686018427387904 FROM d_far}),
	't', 'D: past the horizon: the sequence not set back');

# --- F: a sequence altered in an open transaction
$node->safe_psql('postgres', q{CREATE SEQUENCE f; CREATE TABLE tr (id bigint); CREATE SEQUENCE tq OWNED BY tr.id;
SELECT shardid_next(1, 'f'), shardid_next(2, 'tq')});
my $f_before = $node->safe_psql('postgres', q{SELECT last_value FROM f});
$e = sql_outcome($node, 'postgres', q{
DO $$
DECLARE
	ids bigint[] := '{}';
BEGIN
	BEGIN
		ALTER SEQUENCE f CACHE 1;
		FOR i IN 1..40 LOOP
			ids := ids || shardid_next(1, 'f');
			PERFORM pg_sleep(0.01);
		END LOOP;
		RAISE EXCEPTION 'undo';
	EXCEPTION WHEN raise_exception THEN NULL;
	END;
	INSERT INTO ids (id) SELECT unnest(ids);
END $$;});
is($e->{code}, '55000',
	"F: IDs past the fence after an ALTER SEQUENCE in a savepoint: refused ($e->{message})");
like($e->{hint} // '', qr/Commit the change to the sequence/, 'F: the hint says to commit the change first');
is($node->safe_psql('postgres', q{SELECT last_value FROM f}), $f_before,
	'F: nothing was written into the sequence');
for my $case (
	[ 'ALTER SEQUENCE', q{ALTER SEQUENCE f INCREMENT 1}, 'f', 1 ],
	[ 'TRUNCATE ... RESTART IDENTITY', q{TRUNCATE tr RESTART IDENTITY}, 'tq', 2 ])
{
	my ($what, $sql, $seq, $shard) = @$case;
	$e = sql_outcome($node, 'postgres',
		qq{BEGIN; $sql; SELECT pg_sleep(0.06); SELECT shardid_next($shard, '$seq'); COMMIT;});
	is($e->{code}, '55000', "F: $what, then a call past the fence in that transaction: 55000");
}
is( $node->safe_psql(
		'postgres', q{
BEGIN; ALTER SEQUENCE f CACHE 1; COMMIT;
SELECT pg_sleep(0.06); SELECT shardid_next(1, 'f') > 0;
BEGIN; SAVEPOINT a; ALTER SEQUENCE f CACHE 1; ROLLBACK TO a; SELECT pg_sleep(0.06); SELECT shardid_next(1, 'f') > 0; COMMIT;
BEGIN; CREATE SEQUENCE g; ALTER SEQUENCE g CACHE 1; SELECT shardid_next(3, 'g') > 0; SELECT pg_sleep(0.06); SELECT shardid_next(3, 'g') > 0; COMMIT;}),
	"\nt\n\nt\nt\n\nt",
	'F: after the commit, after a rollback to before the ALTER, and for a sequence made in the transaction: IDs as before');
$e = sql_outcome($node, 'postgres', q{
BEGIN; CREATE SEQUENCE h; ALTER SEQUENCE h CACHE 1; SELECT shardid_next(4, 'h');
SAVEPOINT b; ALTER SEQUENCE h CACHE 1; SELECT pg_sleep(0.06); SELECT shardid_next(4, 'h'); COMMIT;});
is($e->{code}, '55000',
	'F: a sequence made in the transaction and altered again in a savepoint: 55000 past its fence (review)');
is( $node->safe_psql(
		'postgres', q{
BEGIN; CREATE SEQUENCE h2; ALTER SEQUENCE h2 CACHE 1; SAVEPOINT b; ALTER SEQUENCE h2 CACHE 1; RELEASE b;
SELECT pg_sleep(0.06); SELECT shardid_next(4, 'h2') > 0; COMMIT;}),
	"\nt", 'F: once that savepoint is released, IDs as before');

# --- C: kill -9 after such calls, a restart
my $last = $node->safe_psql('postgres', q{SELECT max(id) FROM ids});
kill9_and_reap($node);
$node->start;
$node->safe_psql(
	'postgres', q{
DO $$
BEGIN
	FOR i IN 1..10 LOOP
		PERFORM pg_sleep(0.03);
		INSERT INTO ids (id, v) SELECT shardid_next(1, 's'), currval('s');
	END LOOP;
END $$;
});
is( $node->safe_psql(
		'postgres', qq{SELECT count(*), count(DISTINCT id), bool_and(id > $last) FILTER (WHERE n > 31) FROM ids}),
	'41|41|t', 'C: after kill -9 and a restart, no ID repeats and each is later than the last before');

$node->stop;

# --- E: a race, rollbacks and evictions, then a partial dump restored with the clock behind
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $clock = "$tmp/race.faketime";
my $race = shardid_node('onerecord_race', "shardid.fence_lead = '20ms'",
	'shardid.max_sequences = 16', "shardid.max_clock_regression = '10s'");
set_clock($clock, 0);
start_faked($race, $clock);
$race->safe_psql('postgres', 'CREATE DATABASE src');
$race->safe_psql('src',
	    q{CREATE EXTENSION shardid;
CREATE TABLE race (id bigint, k int, rb bool NOT NULL DEFAULT false);
}
	  . join('', map { "CREATE SEQUENCE r$_;\n" } 0 .. 23));
my %script = (
	commit => q{\set r random(0, 47)
\set k case when :r < 24 then :r else :r % 4 end
\set s random(0, 8)
\sleep :s ms
INSERT INTO race (id, k) VALUES (shardid_next(:k, ('r' || :k)::regclass), :k);
},
	rollback => q{\set r random(0, 47)
\set k case when :r < 24 then :r else :r % 4 end
\set s random(0, 8)
\sleep :s ms
BEGIN;
SELECT shardid_next(:k, ('r' || :k)::regclass) AS id \gset
ROLLBACK;
INSERT INTO race (id, k, rb) VALUES (:id, :k, true);
});
for my $name (keys %script)
{
	open my $fh, '>', "$tmp/$name.sql" or die "could not write \"$tmp/$name.sql\": $!";
	print $fh $script{$name};
	close $fh;
}
sub race_load
{
	my ($db, $secs, $what) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'pgbench', '-n', '-c', '4', '-j', '2', '-T', $secs,
			'-f', "$tmp/commit.sql\@3", '-f', "$tmp/rollback.sql\@1",
			$race->connstr($db)
		],
		'>', \$out, '2>', \$err);
	ok($ok, "E: $what: pgbench ran to the end without an error") or diag $err;
}
race_load('src', 8, 'the race');
my ($dups, $rows) = duplicates($race, 'race', db => 'src');
my ($zero, $rolled, $shard) = split /\|/, $race->safe_psql('src',
	q{SELECT count(*) FILTER (WHERE id & 1023 = 0), count(*) FILTER (WHERE rb),
	         count(*) FILTER (WHERE shardid_shard(id) <> k) FROM race});
cmp_ok($rows, '>', 1000, "E: the race issued $rows IDs, $rolled of them rolled back");
is("$dups|$shard", '0|0', "E: no ID repeats in $rows, each of its sequence's shard");
cmp_ok($zero, '>', $rows / 10,
	"E: $zero calls took the value of their fence's setval (the block's first value)");
my $evictions = $race->safe_psql('src', 'SELECT evictions FROM shardid_stats_info()');
cmp_ok($evictions, '>', 100, "E: slots were evicted meanwhile ($evictions evictions)");
my @behind;
for my $k (0 .. 23)
{
	my ($fence, $top) = split /\|/, $race->safe_psql('src',
		qq{SELECT (SELECT (last_value >> 10) - 1 FROM r$k), max(id >> 23) FROM race WHERE k = $k});
	push @behind, "r$k ($fence < $top)" if $top ne '' && $fence < $top;
}
is("@behind", '', 'E: every sequence carries a fence at or past every ID it gave');

my $dump = "$tmp/race.sql";
command_ok([ 'pg_dump', '-t', 'race', '-t', 'r[0-9]*', '-f', $dump, '-d', $race->connstr('src') ],
	'E: pg_dump -t race -t r[0-9]*');
$race->safe_psql('postgres', 'CREATE DATABASE copy');
$race->safe_psql('copy', 'CREATE EXTENSION shardid');
is($race->psql('copy', PostgreSQL::Test::Utils::slurp_file($dump), on_error_stop => 1), 0,
	'E: the dump restored');
is($race->safe_psql('copy', 'SELECT count(*) FROM race'), $rows, 'E: the rows came with the dump');
my $last_s = $race->safe_psql('src',
	q{SELECT extract(epoch FROM max(shardid_created_at(id))) FROM race});
ok(defined clock_to($race, $clock, $last_s - 3), 'E: the clock runs 3 s behind the last ID');
race_load('copy', 6, 'the copy, the clock behind');
($dups, my $all) = duplicates($race, 'race', db => 'copy');
cmp_ok($all, '>', $rows + 200, 'E: the copy issued ' . ($all - $rows) . ' IDs more');
is($dups, 0, "E: no ID of the copy repeats a dumped one, or another ($all IDs)");
$race->stop;

done_testing();
