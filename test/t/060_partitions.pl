# Copyright: see the shardid LICENSE.
#
# 060_partitions.pl: time partitions on shardid keys, kept by
# shardid_partition_maintain_all() while the server's clock jumps three days
# ahead (libfaketime) and writers insert without pause.
#
# The server runs with LD_PRELOAD=libfaketime, reading its offset from a
# file this test rewrites.  Its clock starts at noon UTC of the real day (so
# that no step of the test straddles a midnight) and then jumps 3 days
# ahead.  Three logical shards' posts tables are partitioned by day; shards
# 1 and 2 receive rows from pgbench the whole time, shard 3 none.
#
# Checks:
#   - the maintenance makes today's partition and premake after it, on
#     every shard, rows or not; a second run makes nothing;
#   - after the jump and one more run, partitions exist ahead of the new
#     clock on every shard (shard 3 too, which never had a row), and the
#     partition older than the retention interval is gone;
#   - no row is lost: every row pgbench wrote is in its shard's table except
#     those of the dropped partition, and no row is in a default partition;
#   - on a second server with the real clock (libfaketime keeps
#     lock_timeout from firing when the clock is ahead): a transaction that
#     made partitions and is still open does not block inserts into the
#     current partition; a drop that cannot get its lock within
#     lock_timeout is reported as "busy" and done by the next run, and the
#     partitions are made anyway.

use strict;
use warnings;

use IPC::Run;
use POSIX qw(floor);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use PartitionTest;

plan skip_all => 'libfaketime is not installed (Debian package "faketime")'
  unless defined libfaketime();

my $tempdir = PostgreSQL::Test::Utils::tempdir();
my $clock_file = "$tempdir/faketime.rc";

# Noon UTC of the real day, as an offset from the real clock.
my $noon = floor(time() / 86400) * 86400 + 43200;
my $offset = $noon - time();
set_clock($clock_file, $offset);

my $node = shardid_node('partitions');
start_faked($node, $clock_file);

# Wait until the server's clock reads the given UTC day and hour.
sub wait_for_server_time
{
	my ($what, $expected) = @_;
	ok( $node->poll_query_until(
			'postgres',
			q{SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24')},
			$expected),
		"the server's clock reads $expected ($what)");
	return;
}

my $day0 = $node->safe_psql('postgres',
	"SELECT to_char(to_timestamp($noon) AT TIME ZONE 'UTC', 'YYYY-MM-DD')");
wait_for_server_time('noon of the real day', "$day0 12");

$node->safe_psql('postgres', 'CREATE EXTENSION shardid');
three_shards($node);
partition_functions($node);
$node->safe_psql(
	'postgres', q{
CREATE TABLE written (id bigint PRIMARY KEY);	-- what the writers inserted
-- the maintenance as cron would run it
CREATE FUNCTION maintain() RETURNS TABLE (parent regclass, partition text, action text)
LANGUAGE sql AS $$
	SELECT m.parent, m.partition, m.action
	  FROM shardid_partition_maintain_all(
			ARRAY(SELECT c.oid::regclass FROM pg_class c
				   WHERE c.relname = 'posts' AND c.relkind = 'p'
					 AND c.relnamespace::regnamespace::text ~ '^shard_[0-9]{4}$'),
			'1 day', 4, '2 days') AS m
$$;
-- shard s's posts table
CREATE FUNCTION posts_of(s int) RETURNS regclass LANGUAGE sql AS $$
	SELECT format('%I.posts', shardid_shard_schema(s))::regclass
$$;
});

# 1. The first run: today and 4 days ahead, on every shard.
is( $node->safe_psql(
		'postgres',
		q{SELECT action, count(*), count(DISTINCT parent) FROM maintain() GROUP BY action}),
	'created|15|3',
	'first run: 5 partitions created on each of 3 shards');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM generate_series(1, 3) s WHERE partitions_of(posts_of(s)) = days('posts', 0, 4)}),
	'3', 'first run: every shard has today and the 4 days after it');
is($node->safe_psql('postgres', q{SELECT action, count(*) FROM maintain() GROUP BY action}),
	'exists|15', 'second run: nothing to do');

# 2. Writers: pgbench inserts into shards 1 and 2 without pause, and logs
# each ID it was given in the same transaction.
my $script = "$tempdir/write.sql";
open my $fh, '>', $script or die "could not write \"$script\": $!";
print $fh q{WITH a AS (INSERT INTO shard_0001.posts (body) VALUES ('w') RETURNING id),
     b AS (INSERT INTO shard_0002.posts (body) VALUES ('w') RETURNING id)
INSERT INTO written SELECT id FROM a UNION ALL SELECT id FROM b;
};
close $fh;
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '2', '-T', test_extra('shardid_load') ? 12 : 8, '-R', '200',
		'-f', $script, $node->connstr('postgres')
	],
	'>', \$pgb_out, '2>', \$pgb_err);
ok($node->poll_query_until('postgres', 'SELECT count(*) > 200 FROM written'),
	'the writers are writing');

# 3. Jump 3 days ahead.  The partitions premade 4 days ahead hold the rows.
$offset += 3 * 86400;
set_clock($clock_file, $offset);
my $day3 = $node->safe_psql('postgres',
	"SELECT to_char(to_timestamp($noon + 3 * 86400) AT TIME ZONE 'UTC', 'YYYY-MM-DD')");
wait_for_server_time('3 days ahead', "$day3 12");
ok( $node->poll_query_until(
		'postgres',
		q{SELECT count(*) > 100 FROM written WHERE shardid_created_at(id) >= date_trunc('day', now())}),
	'the writers write on the new day');

# 4. Maintenance while they write: 3 more partitions ahead on every shard,
# today-3 dropped (retention 2 days).
is( $node->safe_psql(
		'postgres', q{
SELECT action, count(*), count(DISTINCT parent) FROM maintain() GROUP BY action ORDER BY action}),
	"created|9|3\ndropped|3|3\nexists|6|3",
	'after the jump: 3 partitions created and 1 dropped on each shard');
is( $node->safe_psql('postgres',
		q{SELECT s, partitions_of(posts_of(s)) = days('posts', -2, 4) FROM generate_series(1, 3) s ORDER BY s}),
	"1|t\n2|t\n3|t",
	'every shard, shard 3 without a row too, has the days from 2 days ago to 4 days ahead');

# 5. Let the writers finish; nothing is lost, nothing is in a default partition.
$pgbench->finish;
is($pgbench->result(0), 0, 'pgbench ended without error') or diag $pgb_err;
like($pgb_out, qr/number of failed transactions: 0 /, 'pgbench: no failed transaction')
  or diag $pgb_out;
my $written = $node->safe_psql('postgres', 'SELECT count(*) FROM written');
my $old = $node->safe_psql('postgres',
	q{SELECT count(*) FROM written WHERE shardid_created_at(id) < date_trunc('day', now()) - interval '2 days'});
note "pgbench wrote $written rows, $old of them on the day that was dropped";
ok($old >= 200, 'rows were written on the day that was dropped');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE p.id IS NULL AND shardid_created_at(w.id) >= date_trunc('day', now()) - interval '2 days'),
       count(*) FILTER (WHERE p.id IS NULL AND shardid_created_at(w.id) < date_trunc('day', now()) - interval '2 days'),
       count(*) FILTER (WHERE p.id IS NOT NULL AND shardid_created_at(w.id) < date_trunc('day', now()) - interval '2 days'),
       count(*) FILTER (WHERE shardid_created_at(w.id) >= date_trunc('day', now())) > 0
  FROM written w
  LEFT JOIN (SELECT id FROM shard_0001.posts UNION ALL SELECT id FROM shard_0002.posts) p ON p.id = w.id}),
	'0|' . $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM written WHERE shardid_created_at(id) < date_trunc('day', now()) - interval '2 days'})
	  . '|0|t',
	'no row lost: every row is there but those of the dropped day, and those are gone');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM shard_0001.posts_default UNION ALL
SELECT count(*) FROM shard_0002.posts_default UNION ALL
SELECT count(*) FROM shard_0003.posts_default}),
	"0\n0\n0",
	'no row in a default partition');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
	SELECT tableoid::regclass::text AS part, id FROM shard_0001.posts UNION ALL
	SELECT tableoid::regclass::text, id FROM shard_0002.posts) AS r
 WHERE right(part, 8) <> to_char(shardid_created_at(id), 'YYYYMMDD')}),
	'0', 'every row is in the partition of its day');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) = count(DISTINCT id) AND count(*) = } . $written
		  . q{ - (SELECT count(*) FROM written WHERE shardid_created_at(id) < date_trunc('day', now()) - interval '2 days')
		   FROM (SELECT id FROM shard_0001.posts UNION ALL SELECT id FROM shard_0002.posts) p}),
	't', 'the shards hold each remaining written row once');

# 6. Locks, on a second server with the real clock (with the clock set
# ahead, libfaketime keeps lock_timeout from firing).
$node->stop;
my $plain = shardid_node('locks');
$plain->start;
$plain->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE t_seq;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT shardid_next(9, 't_seq'), body text)
	PARTITION BY RANGE (id);
CREATE TABLE t_default PARTITION OF t DEFAULT;
CREATE TABLE t_p20200101 PARTITION OF t
	FOR VALUES FROM (shardid_floor('2020-01-01+00')) TO (shardid_floor('2020-01-02+00'));
SELECT count(*) FROM shardid_partition_maintain('t', '1 day', 1);
});

# Making partitions lets inserts into the current partition go on: a
# session that has made partitions and not committed yet does not block
# them.
my $maker = $plain->background_psql('postgres');
is( $maker->query_safe(
		q{BEGIN; SELECT action, count(*) FROM shardid_partition_maintain('t', '1 day', 5) GROUP BY action ORDER BY action;}),
	"created|4\nexists|2",
	'a transaction makes 4 partitions and stays open');
is( $plain->safe_psql(
		'postgres', q{
SET statement_timeout = '10s';
INSERT INTO t (body) VALUES ('while partitions are made') RETURNING tableoid::regclass::text = 't_p' || to_char(now(), 'YYYYMMDD')}),
	't', 'an insert into the current partition is not blocked meanwhile');
$maker->query_safe('COMMIT');
$maker->quit;

# A drop that cannot get its lock within lock_timeout is reported "busy";
# the partitions are made anyway, and the next run drops it.
my $holder = $plain->background_psql('postgres');
$holder->query_safe('BEGIN; LOCK TABLE ONLY t IN ACCESS SHARE MODE;');
is( $plain->safe_psql(
		'postgres', q{
SET lock_timeout = '300ms';
SELECT partition, action FROM shardid_partition_maintain('t', '1 day', 6, '30 days') WHERE action <> 'exists'}),
	"public.t_p" . $plain->safe_psql('postgres', q{SELECT to_char(now() + interval '6 days', 'YYYYMMDD')})
	  . "|created\npublic.t_p20200101|busy",
	'a drop that times out on its lock is reported busy; the new partition is made');
$holder->query_safe('COMMIT');
$holder->quit;
is( $plain->safe_psql(
		'postgres', q{
SET lock_timeout = '300ms';
SELECT partition, action FROM shardid_partition_maintain('t', '1 day', 6, '30 days') WHERE action <> 'exists'}),
	'public.t_p20200101|dropped', 'the next run drops it');
is($plain->safe_psql('postgres', q{SELECT count(*), min(body) FROM t}),
	'1|while partitions are made', 'the row is there');

$plain->stop;
done_testing();
