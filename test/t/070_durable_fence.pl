# Copyright: see the shardid LICENSE.
#
# 070_durable_fence.pl: no ID repeats, whatever happens to the server.
#
# Each database keeps a durable fence (a time field at or before which it
# issues no ID again) in its own sequence shardid_fence, written ahead of
# the IDs.  This test takes the fence every way the data travels, each
# time with the server's clock set behind the last ID (libfaketime), and
# counts duplicates in tables without a unique index:
#
#   A. kill -9 of the postmaster after 1,000,000 IDs in one statement,
#      restart with the clock a few seconds behind: waited out;
#   B. the same with the clock 30 s behind, past max_clock_regression:
#      refused with 55000, then fine once the clock is right;
#   C. a streaming standby with its clock behind: kill -9 the primary,
#      promote the standby, go on with the same sequence;
#   D. a base backup taken during a load, restored to a new data directory
#      and recovered with the clock behind;
#   E. pg_dump / pg_restore into a fresh cluster whose clock is 28 s
#      behind: refused, then normal inserts once the clock passes the fence;
#   F. pg_upgrade of that cluster, started with the clock behind;
#   G. one database, one epoch: a database that takes a custom epoch issues
#      under it; a second epoch that would make its time fields meet is
#      refused, by shardid_next and by shardid_set_epoch;
#   H. under steady load the fence is written once per shardid.fence_lead,
#      one WAL record each (counted with pg_waldump).
#
# "No duplicate" is checked over every row of the table, "every time
# field" by: no ID's time is later than the clock when its row was made
# (plus the guard's 1 ms lead), and each phase's IDs are later than the
# phase's before.  A clean 55000 is safe; a silent repeat is a failure.
# No check depends on how long anything takes.

use strict;
use warnings;

use File::Temp ();
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
my @conf = ('shardid.max_clock_regression = 10s');

my $schema = q{
CREATE EXTENSION shardid;
CREATE TABLE ids (
	ord		bigserial,
	phase	text NOT NULL,
	id		bigint NOT NULL,
	made	timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE SEQUENCE s;
CREATE FUNCTION take(p text, n integer) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO ids (phase, id)
	SELECT p, shardid_next(5, 's') FROM generate_series(1, n)
$$;
};

# Every ID once; none later than its row's clock (+1 ms); shard 5; each
# phase (in the order they ran) after the one before.
sub check_ids
{
	my ($node, $what) = @_;
	is( duplicates($node, 'ids') . "\n" . $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM ids
 WHERE shardid_created_at(id) > date_trunc('milliseconds', made) + interval '1 ms'
    OR shardid_shard(id) <> 5;
SELECT count(*) FROM
  (SELECT lo, lag(hi) OVER (ORDER BY first) AS prev_hi
     FROM (SELECT min(ord) AS first, min(id) AS lo, max(id) AS hi
             FROM ids GROUP BY phase) AS p) AS q
 WHERE lo <= prev_hi;
}),
		"0\n0\n0",
		"$what: 0 duplicates, no ID ahead of its clock, each phase after the one before"
	);
	return;
}

sub stat_of
{
	my ($node, $column) = @_;
	return $node->safe_psql('postgres',
		"SELECT $column FROM shardid_stats WHERE sequence = 's'::regclass");
}

# The clock offset (seconds from the real clock) that puts $node's clock
# $seconds behind the time its stored fence stands for.
sub behind_fence
{
	my ($node, $seconds) = @_;
	my $fence_s = $node->safe_psql('postgres',
		'SELECT extract(epoch FROM shardid_created_at(' . fence_of($node, 'postgres', 's') . ' << 23))');
	return $fence_s - Time::HiRes::time() - $seconds;
}

# With $node's clock 28 s behind its stored fence, IDs are refused (55000);
# once the clock is past the fence they are made, and none repeats.
sub refused_then_made
{
	my ($node, $clock_file, $what) = @_;
	my $offset = behind_fence($node, 28);
	set_clock($clock_file, $offset);
	ok(wait_for_clock($node, $offset), "$what: the clock runs 28 s behind the fence");
	like(
		sql_error($node, qq{SELECT take('$what refused', 1000)}),
		qr/^55000: system clock is \d+ ms behind the durable fence$/,
		"$what: refused with 55000 while the clock is behind the fence");
	$offset += 29;
	set_clock($clock_file, $offset);
	ok(wait_for_clock($node, $offset), "$what: the clock is past the fence again");
	$node->safe_psql('postgres', qq{SELECT take('$what after', 200000)});
	check_ids($node, "$what, with the clock behind");
	return;
}

# The highest time field in the table.
sub max_field
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT max(id >> 23) FROM ids');
}

my $clock = "$tmp/primary.faketime";
my $offset = 5;

# ---------------------------------------------------------------------
# A. kill -9 of the postmaster, restart with the clock a few seconds
#    behind the last ID: waited out.
# ---------------------------------------------------------------------
my $node = shardid_node('primary', { allows_streaming => 1 }, @conf);
set_clock($clock, $offset);
start_faked($node, $clock);
ok(wait_for_clock($node, $offset), 'A: the server clock runs 5 s ahead');
$node->safe_psql('postgres', $schema);
$node->safe_psql('postgres', q{SELECT take('a-before', 1000000)});
cmp_ok(fence_of($node, 'postgres', 's'), '>=', max_field($node),
	'A: the stored fence is at or past every issued time field');
kill9_and_reap($node);
set_clock($clock, $offset - 5);
start_faked($node, $clock);
ok(wait_for_clock($node, $offset - 5), 'A: restarted with the clock 5 s back');
# the restart took seconds of a clock that ran on: set it again, 9 s
# before the last ID (within max_clock_regression, 10 s, of the fence,
# which is the lead, 0.5 s, past it), so that a loaded machine's slow
# restart, and its slow wait for the new offset (CI's, at a load of 11,
# took more than 3.5 s; a rehearsal's at a load of 9, 6 s), do not leave
# it past the ID; set again, up to three times, if it did
my $last_a = $node->safe_psql('postgres',
	'SELECT extract(epoch FROM max(shardid_created_at(id))) FROM ids');
my $behind = 'f';
for my $try (1 .. 3)
{
	ok(defined clock_to($node, $clock, $last_a - 9), "A: the clock is set 9 s before the last ID (try $try)");
	$behind = $node->safe_psql('postgres', q{
SELECT max(shardid_created_at(id)) - clock_timestamp() > interval '1 s' FROM ids});
	last if $behind eq 't';
}
is($behind, 't', 'A: the clock reads more than a second before the last ID');
$node->safe_psql('postgres', q{SELECT take('a-after', 200000)});
check_ids($node, 'A: kill -9, clock a few seconds back');
is( $node->safe_psql(
		'postgres', q{
SELECT clock_waits >= 1, clock_refusals FROM shardid_stats WHERE sequence = 's'::regclass}
	),
	't|0',
	'A: the step back was waited out, and counted');
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT min(id >> 23) FROM ids WHERE phase = 'a-after') > f.start
  FROM shardid_fence_status f WHERE f.datname = current_database()}),
	't',
	'A: after the restart the sequence started past the fence read back');

# ---------------------------------------------------------------------
# B. The same, 30 s back: past max_clock_regression (10 s), refused.
# ---------------------------------------------------------------------
$offset = 40;
set_clock($clock, $offset);
ok(wait_for_clock($node, $offset), 'B: the clock runs 40 s ahead');
$node->safe_psql('postgres', q{SELECT take('b-before', 1000000)});
kill9_and_reap($node);
set_clock($clock, $offset - 30);
start_faked($node, $clock);
ok(wait_for_clock($node, $offset - 30), 'B: restarted with the clock 30 s back');
like(
	sql_error($node, q{SELECT take('b-refused', 1000)}),
	qr/^55000: system clock is \d+ ms behind the durable fence$/,
	'B: refused with 55000');
is(stat_of($node, 'clock_refusals'), '1', 'B: the refusal is counted');
$offset += 1;
set_clock($clock, $offset);
ok(wait_for_clock($node, $offset), 'B: the clock is right again');
$node->safe_psql('postgres', q{SELECT take('b-after', 200000)});
check_ids($node, 'B: kill -9, clock 30 s back');
is($node->safe_psql('postgres', q{SELECT count(*) FROM ids WHERE phase = 'b-refused'}),
	'0', 'B: the refused statement wrote nothing');

# ---------------------------------------------------------------------
# C. Failover: the standby's clock runs 15 s behind the primary's (its
#    max_clock_regression 60 s: waited out, not refused).  So far back
#    that however long a loaded machine takes from the primary's last ID
#    to the promoted standby's first, its clock is still behind the fence
#    (at 6 s, CI's load of 11 let it pass before the first call).
# ---------------------------------------------------------------------
$node->backup('c');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'c', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{shardid.max_clock_regression = 60s});
my $standby_clock = "$tmp/standby.faketime";
set_clock($standby_clock, $offset - 15);
start_faked($standby, $standby_clock);
$node->safe_psql('postgres', q{SELECT take('c-before', 1000000)});
$node->wait_for_catchup($standby);
kill9_and_reap($node);
$standby->promote;
ok(wait_for_clock($standby, $offset - 15), 'C: the promoted standby runs 15 s behind');
$standby->safe_psql('postgres', q{SELECT take('c-after', 200000)});
check_ids($standby, 'C: kill -9 of the primary, standby promoted');
is( $standby->safe_psql(
		'postgres', q{
SELECT clock_waits + fence_waits >= 1, clock_refusals
  FROM shardid_stats WHERE sequence = 's'::regclass}),
	't|0',
	'C: the promoted standby waited for its clock to pass the fence');

# ---------------------------------------------------------------------
# D. A base backup taken during a load, restored with the clock behind.
# ---------------------------------------------------------------------
my $primary2 = $standby;
my $p2_offset = $offset - 15;
# The load runs until it is told to stop, a transaction per 5,000 IDs, so
# that it is still running when the backup ends however long the backup
# takes (a fixed load of 200 rounds ended first on a loaded machine).
$primary2->safe_psql('postgres', q{
CREATE TABLE load_stop ();
CREATE PROCEDURE load_until_stopped() LANGUAGE plpgsql AS $$
BEGIN
	LOOP
		EXIT WHEN EXISTS (SELECT FROM load_stop);
		PERFORM take('d-load', 5000);
		COMMIT;
		PERFORM pg_sleep(0.02);
	END LOOP;
END $$;});
my ($lout, $lerr) = ('', '');
my $loader = IPC::Run::start(
	[
		'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-c', 'CALL load_until_stopped()',
		'-d', $primary2->connstr('postgres')
	],
	'>', \$lout, '2>', \$lerr);
$primary2->poll_query_until('postgres',
	q{SELECT count(*) > 100000 FROM ids WHERE phase = 'd-load'})
  or die 'the loader did not start';
$primary2->backup('d');
my $load_during_backup = $primary2->safe_psql('postgres',
	q{SELECT count(*) FROM ids WHERE phase = 'd-load'});
ok( $primary2->poll_query_until('postgres',
		qq{SELECT count(*) > $load_during_backup FROM ids WHERE phase = 'd-load'}),
	'D: the backup was taken while the load ran (it goes on after it)');
$primary2->safe_psql('postgres', q{INSERT INTO load_stop DEFAULT VALUES});
$loader->finish;
is($loader->result(0), 0, 'D: the load ran through the backup') or diag $lerr;
my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($primary2, 'd');
my $restored_clock = "$tmp/restored.faketime";
set_clock($restored_clock, $p2_offset - 3);
start_faked($restored, $restored_clock);
ok(wait_for_clock($restored, $p2_offset - 3), 'D: the restored server runs 3 s behind');
$restored->safe_psql('postgres', q{SELECT take('d-after', 200000)});
check_ids($restored, 'D: base backup during a load, restored with the clock behind');
$restored->stop;

# ---------------------------------------------------------------------
# E. pg_dump / pg_restore into a fresh cluster whose clock is 28 s behind.
# ---------------------------------------------------------------------
my $dump = "$tmp/ids.dump";
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary2->connstr('postgres') ],
	'E: pg_dump');
my $fresh = shardid_node('fresh', @conf);
my $fresh_clock = "$tmp/fresh.faketime";
set_clock($fresh_clock, 0);
start_faked($fresh, $fresh_clock);
command_ok([ 'pg_restore', '-d', $fresh->connstr('postgres'), $dump ],
	'E: pg_restore into a fresh cluster');
cmp_ok($fresh->safe_psql('postgres', 'SELECT last_value FROM shardid_internal.shardid_fence'), '<',
	max_field($fresh), 'E: the database fence is no dump\'s: the new one knows nothing');
cmp_ok($fresh->safe_psql('postgres', 'SELECT (last_value >> 10) - 1 FROM s'), '>=',
	max_field($fresh), 'E: the sequence came with its fence, past every restored ID');
refused_then_made($fresh, $fresh_clock, 'E: pg_dump/pg_restore');
$primary2->stop;

# ---------------------------------------------------------------------
# F. pg_upgrade of the restored cluster, started with the clock behind.
# ---------------------------------------------------------------------
my $fence_before_upgrade = fence_of($fresh, 'postgres', 's');
$fresh->stop;
my $upgraded = shardid_node('upgraded', @conf);
my $bindir = $fresh->config_data('--bindir');
{
	my $cwd = File::Temp::tempdir(DIR => $tmp);
	chdir $cwd or die "could not chdir to \"$cwd\": $!";
	command_ok(
		[
			'pg_upgrade', '--no-sync',
			'-d', $fresh->data_dir, '-D', $upgraded->data_dir,
			'-b', $bindir, '-B', $bindir,
			'-p', $fresh->port, '-P', $upgraded->port,
			'-s', $fresh->host
		],
		'F: pg_upgrade');
	chdir $tmp;
}
my $upgraded_clock = "$tmp/upgraded.faketime";
set_clock($upgraded_clock, 0);
start_faked($upgraded, $upgraded_clock);
is(fence_of($upgraded, 'postgres', 's'), $fence_before_upgrade, 'F: pg_upgrade carried the fence');
refused_then_made($upgraded, $upgraded_clock, 'F: pg_upgrade');

# ---------------------------------------------------------------------
# G. One database, one epoch.  The database takes the epoch 2020-01-01
#    before its first ID; E2 = that epoch + the time the first run took
#    would give the second run the first run's time fields: shardid_next
#    refuses E2 (22023), and so does shardid_set_epoch once IDs exist
#    (55000): the fields, and the fence, would go back.
# ---------------------------------------------------------------------
$upgraded->safe_psql('postgres', 'CREATE DATABASE epochs');
$upgraded->safe_psql(
	'epochs', q{
CREATE EXTENSION shardid;
SELECT shardid_set_epoch('2020-01-01+00');
CREATE SEQUENCE ep;
CREATE TABLE epoch_ids (epoch text NOT NULL, id bigint NOT NULL);
});
my $t0 = $upgraded->safe_psql('epochs',
	q{SELECT date_trunc('milliseconds', clock_timestamp())});
$upgraded->safe_psql(
	'epochs', qq{
INSERT INTO epoch_ids SELECT 'E1', shardid_next(9, 'ep')
  FROM generate_series(1, 1000000)});
is( $upgraded->safe_psql(
		'epochs', qq{
SELECT min(shardid_created_at(id, '2020-01-01+00')) >= '$t0'::timestamptz,
       max(shardid_created_at(id, '2020-01-01+00'))
         <= date_trunc('milliseconds', clock_timestamp()) + interval '1 ms'
  FROM epoch_ids}),
	't|t', 'G: the IDs count time from the database\'s epoch')
  or diag $upgraded->safe_psql(
	'epochs', qq{
SELECT '$t0', min(shardid_created_at(id, '2020-01-01+00')),
       max(shardid_created_at(id, '2020-01-01+00')), clock_timestamp()
  FROM epoch_ids});
my $e2 = $upgraded->safe_psql(
	'epochs', qq{
SELECT timestamptz '2020-01-01+00'
       + (date_trunc('milliseconds', clock_timestamp()) - '$t0'::timestamptz)});
like(
	sql_error(
		$upgraded, qq{
INSERT INTO epoch_ids SELECT 'E2', shardid_next(9, 'ep', '$e2')
  FROM generate_series(1, 1000000)}, 'epochs'),
	qr/^22023: epoch .* is not the epoch of database "epochs"$/,
	'G: a second epoch is refused with 22023');
like(
	sql_error($upgraded, qq{SELECT shardid_set_epoch('$e2')}, 'epochs'),
	qr/^55000: epoch .* would put the clock \d+ ms behind the durable fence$/,
	'G: the database may not move to it either: 55000');
$upgraded->safe_psql('epochs',
	q{INSERT INTO epoch_ids SELECT 'E1-more', shardid_next(9, 'ep') FROM generate_series(1, 100000)});

# After a restart every sequence of the database starts at its fence, and
# a new one too.
$upgraded->stop;
start_faked($upgraded, $upgraded_clock);
$upgraded->safe_psql('epochs', 'CREATE SEQUENCE later');
$upgraded->safe_psql(
	'epochs', q{
INSERT INTO epoch_ids SELECT 'E1-after', shardid_next(9, 'ep') FROM generate_series(1, 100000);
INSERT INTO epoch_ids SELECT 'later', shardid_next(9, 'later') FROM generate_series(1, 1000);});
is( duplicates($upgraded, 'epoch_ids', db => 'epochs') . "\n" . $upgraded->safe_psql(
		'epochs', q{
SELECT count(*) FILTER (WHERE epoch = 'E2') FROM epoch_ids;
SELECT min(id) FILTER (WHERE epoch = 'E1-after') > max(id) FILTER (WHERE epoch IN ('E1', 'E1-more'))
  FROM epoch_ids;}),
	"0\n0\nt",
	'G: 0 duplicates, nothing under the second epoch, and after the restart the IDs follow the ones before'
);

# ---------------------------------------------------------------------
# H. Steady load: one fence record per lead less its refresh, and only one.  The restart
#    in G left this database's fence unread: its first call reads it and
#    writes it again (one more record, counted as a write), so one call
#    goes first and the count starts after it.
# ---------------------------------------------------------------------
$upgraded->safe_psql('postgres', q{SELECT take('h-first', 1)});
my ($lsn0, $writes0) = split /\|/, $upgraded->safe_psql(
	'postgres', q{
SELECT pg_current_wal_lsn(), writes FROM shardid_fence_status
 WHERE datname = current_database()});
my ($elapsed_ms) = $upgraded->safe_psql(
	'postgres', q{
DO $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	WHILE clock_timestamp() < t0 + interval '3 s' LOOP
		PERFORM take('h-steady', 5000);
	END LOOP;
END $$;
SELECT extract(epoch FROM max(made) - min(made)) * 1000 FROM ids WHERE phase = 'h-steady'});
my ($lsn1, $writes1, $lead, $fence_file) = split /\|/, $upgraded->safe_psql(
	'postgres', q{
SELECT pg_current_wal_lsn(), writes, current_setting('shardid.fence_lead'),
       pg_relation_filepath('shardid_internal.shardid_fence')
  FROM shardid_fence_status WHERE datname = current_database()});
$lead =~ s/ms$//;
my $writes = $writes1 - $writes0;
cmp_ok($writes, '>=', 2, 'H: the fence moved along with the load');
# a busy sequence writes its fence again when the clock is a refresh (a
# quarter of the lead) short of it, and the database's fence follows it:
# one write per lead less the refresh (375 ms at the default lead)
my $every = $lead - int($lead / 4);
cmp_ok($writes, '<=', int($elapsed_ms / $every) + 2,
	"H: at most one fence write per lead less its refresh ($writes in $elapsed_ms ms, one per $every ms)");
my ($spc, $db, $rel) = $fence_file =~ m{^base/(\d+)/(\d+)$} ? (1663, $1, $2) : ();
my $waldump = `pg_waldump -p @{[ $upgraded->data_dir ]}/pg_wal -s $lsn0 -e $lsn1 --relation=$spc/$db/$rel 2>&1`;
my $records = () = $waldump =~ /^rmgr: Sequence/mg;
is($records, $writes, 'H: each fence write is one WAL record of the fence sequence')
  or diag $waldump;
check_ids($upgraded, 'H: steady load');

# The cover is the database's, not a sequence's: 64 sequences called in
# turn (one slot's fence step after another, each finding the cover) add
# no write to it.  It is appended once it is less than the refresh ahead
# of the clock, one write per lead less the refresh; a rule that appended
# whenever a step found it less than the lead less the refresh ahead
# wrote one about every 250 ms here (26 in 6 s, against 16).
$upgraded->safe_psql(
	'postgres', q{
SELECT format('CREATE SEQUENCE many_%s', i) FROM generate_series(1, 64) AS i \gexec
});
my ($writes_m0) = $upgraded->safe_psql('postgres',
	q{SELECT writes FROM shardid_fence_status WHERE datname = current_database()});
my ($elapsed_m) = $upgraded->safe_psql(
	'postgres', q{
CREATE TABLE many_ids (id bigint NOT NULL, made timestamptz NOT NULL DEFAULT clock_timestamp());
DO $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	WHILE clock_timestamp() < t0 + interval '6 s' LOOP
		INSERT INTO many_ids (id)
		SELECT shardid_next(i, format('many_%s', i)::regclass)
		  FROM generate_series(1, 64) AS i, generate_series(1, 20);
	END LOOP;
END $$;
SELECT extract(epoch FROM max(made) - min(made)) * 1000 FROM many_ids});
my ($writes_m1) = $upgraded->safe_psql('postgres',
	q{SELECT writes FROM shardid_fence_status WHERE datname = current_database()});
cmp_ok($writes_m1 - $writes_m0, '<=', int($elapsed_m / $every) + 2,
	"H: 64 sequences, still at most one cover write per lead less its refresh (@{[ $writes_m1 - $writes_m0 ]} in $elapsed_m ms)");
is(duplicates($upgraded, 'many_ids'), 0, 'H: 64 sequences, 0 duplicates');

$upgraded->stop;
done_testing();
