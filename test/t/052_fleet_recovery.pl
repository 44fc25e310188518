# test/t/052_fleet_recovery.pl: a move of a logical shard killed at every
# step, and the new server killed in the middle of a copy; each time
# shardid-fleet move --resume or --abort recovers, while writers go on
# inserting through the router.
#
# After every recovery: the map file and the router agree; the shard is
# live on exactly one server, the one they name; nothing of the move is
# left (publication, subscription, replication slots, the incoming copy);
# every row of the shard's snapshot and every row a writer was given is
# readable through the router by ID, unchanged; and no ID is stored twice
# in the fleet.  The template also has a table partitioned by RANGE (id),
# whose partitions (made per shard, as a maintenance function would) move
# with the shard.
#
# The tool is killed with SIGKILL at the points that SHARDID_FLEET_KILL_AT
# names: before and after each step is recorded in the router, and inside
# the write fence (after the lock, after the catch-up, after the rename,
# after its commit).  Each point is then resumed; the points up to the
# router switch are also aborted (all of them with PG_TEST_EXTRA=shardid_load, a
# sample of each kind otherwise).
#
# Of the fleet group (test/run.sh --tap-groups fleet), with 050, 051, 053
# and 054: .ci/run runs the group on PostgreSQL 18.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use FleetTest;

my $long = test_extra('shardid_load');
my $moved = 5;          # the shard moved back and forth
my $big = 9;            # the shard whose copy the new server's crash interrupts
# Shard 5's rows before the writers start: each of the moves (21 in the
# default tier) copies them and each recovery reads every one of them back
# through the router.  The points are reached by SHARDID_FLEET_KILL_AT,
# whatever the shard's size, so the default tier copies 5,000; the long
# tier 20,000.
my $moved_rows = $long ? 20_000 : 5_000;
# the writers' pause between inserts: every row they write to shard 5 is
# copied again by each later move and read back by each later recovery,
# so they write about 20 a second each (the long tier 100): still many
# during every move, which takes seconds
my $pause = $long ? 0.01 : 0.05;

my $fleet = fleet_setup();
my ($router, $router_conn, $dir, $mapfile) = @$fleet{qw(router router_conn dir mapfile)};
my @data = @{ $fleet->{data} };
my @conn = @{ $fleet->{conn} };

write_map("$dir/template.sql", PostgreSQL::Test::Utils::slurp_file("$examples/posts-template.sql") . q{
CREATE TABLE events (id bigint PRIMARY KEY, kind text NOT NULL) PARTITION BY RANGE (id);
});
my ($apply, $routed) = fleet_provision($fleet, "$dir/template.sql");
ok($apply->[0], 'apply provisions the fleet') or diag $apply->[2];
ok($routed->[0], 'router is set up') or diag $routed->[2];
my ($ok, $out, $err);
setup_writers($router, @data);

# the shards' rows, and snapshots of them through the router
$data[0]->safe_psql('postgres', qq{
	INSERT INTO shard_0005.posts (user_id, body)
	SELECT (g % 5000) * 64 + $moved, 'snap-' || g FROM generate_series(1, $moved_rows) g;
	INSERT INTO shard_0009.posts (user_id, body)
	SELECT (g % 5000) * 64 + $big, 'snap-' || g FROM generate_series(1, 300000) g;});
for my $s ($moved, $big)
{
	$data[0]->safe_psql('postgres', sprintf(q{
		CREATE TABLE shard_%04d.events_p1 PARTITION OF shard_%04d.events
		  FOR VALUES FROM (shardid_floor('2011-01-01')) TO (shardid_floor('2040-01-01'));
		CREATE TABLE shard_%04d.events_default PARTITION OF shard_%04d.events DEFAULT;
		INSERT INTO shard_%04d.events (kind) SELECT 'e' || g FROM generate_series(1, 1000) g;}, ($s) x 5));
}
my $events5 = $data[0]->safe_psql('postgres',
	q{SELECT md5(string_agg(tableoid::regclass || ':' || id || ':' || kind, ',' ORDER BY id)) FROM shard_0005.events});
$router->safe_psql('postgres', qq{
	CREATE TABLE snap5 AS SELECT * FROM shard_rows($moved);
	CREATE TABLE snap9 AS SELECT * FROM shard_rows($big);});

my @others = grep { $_ != $moved && $_ != $big } 0 .. 63;
# paced, so that the shards stay small and the checks quick
my $writers = start_writers($router, [ 1, [$moved], $pause ], [ 2, [$big], $pause ], [ 3, \@others, $pause ]);
my $test_start = $router->safe_psql('postgres', 'SELECT clock_timestamp()');

# the server (index into @data) the router and the map file put a shard
# on; the router's partition for it ($routed) if already read
sub placed
{
	my ($shard, $routed) = @_;
	my $file = read_map($mapfile)->{$shard};
	$routed //= $router->safe_psql('postgres',
		"SELECT (array_agg(c))[$shard + 1] FROM plproxy.get_cluster_partitions('shardid') c");
	my ($i) = grep { $conn[$_] eq $routed } 0 .. $#conn;
	return ($file eq $routed) ? $i : "file $file, router $routed";
}

# after a recovery: everything in place for SHARD on server WHERE (one
# query on the router and one on each data server, each check asserted
# on its own)
sub recovered
{
	my ($what, $shard, $where, $snap) = @_;
	my ($routed, $unfinished, $snap_n, $snap_same, $log_n, $log_same, $dups) = split /\|/,
	  $router->safe_psql('postgres', qq{
		SELECT (SELECT (array_agg(c))[$shard + 1] FROM plproxy.get_cluster_partitions('shardid') c),
		       (SELECT count(*) FROM shardid_fleet.moves WHERE state NOT IN ('done', 'aborted')),
		       s.*, l.*,
		       (SELECT count(*) - count(DISTINCT id) FROM shard_rows($shard))
		  FROM (SELECT count(*), count(p.id) FROM $snap s
		          LEFT JOIN get_posts(ARRAY(SELECT id FROM $snap)) p
		            ON p.id = s.id AND p.user_id = s.user_id AND p.body = s.body) s,
		       (SELECT count(*), count(p.id) FROM load_log l
		          LEFT JOIN get_posts(ARRAY(SELECT id FROM load_log WHERE user_id % 64 = $shard)) p
		            ON p.id = l.id AND p.user_id = l.user_id AND p.body = l.body
		         WHERE l.user_id % 64 = $shard) l});
	my (@live, @objects);
	for my $node (@data)
	{
		my ($n, $o) = split /\|/, $node->safe_psql('postgres', sprintf(q{
			SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_%04d'), (%s)},
			$shard, $FleetTest::fleet_objects_sql));
		push @live, $n;
		push @objects, $o;
	}
	is(placed($shard, $routed), $where, "$what: the map file and the router put shard $shard on server " . ($where + 1));
	is(join(',', @live), join(',', map { $_ == $where ? 1 : 0 } 0 .. $#data), "$what: the shard's schema is on that server only");
	is(join(',', @objects), '0,0,0', "$what: no publication, subscription or replication slot is left");
	is($unfinished, '0', "$what: no move is unfinished");
	is($snap_same, $snap_n, "$what: every row of the snapshot ($snap_n) is readable through the router by ID, unchanged");
	is($log_same, $log_n, "$what: every row written to the shard so far ($log_n) is readable through the router by ID, unchanged");
	is($dups, '0', "$what: no ID of the shard is stored twice");
	if ($shard == $moved)
	{
		is( $data[$where]->safe_psql('postgres', q{
				SELECT md5(string_agg(tableoid::regclass || ':' || id || ':' || kind, ',' ORDER BY id))
				  FROM shard_0005.events}),
			$events5, "$what: the partitioned table's rows are there, each in its partition");
	}
	return;
}

# start a move of shard 5 to the other server, killed at POINT
sub killed_move
{
	my ($point, $to) = @_;
	my $t = tool_start({ SHARDID_FLEET_KILL_AT => $point }, 'move', '--drop', $mapfile, $router_conn, $moved, $conn[$to]);
	my ($status) = tool_finish($t);
	is($status, -9, "killed at $point");
	my $state = $router->safe_psql('postgres', q{SELECT state FROM shardid_fleet.moves WHERE state NOT IN ('done', 'aborted')});
	note "the move was left at step '$state'";
	return $state;
}

# every point with PG_TEST_EXTRA=shardid_load; otherwise one after each step
# and every point inside the fence; aborted, one point of each kind (before
# the copy, during it, in the fence, at the switch)
my @points = $long
  ? qw(after:prepared before:schema after:schema before:publication after:publication
  before:slot after:slot before:subscription after:subscription before:sync after:sync
  before:fence fence:locked fence:caught-up fence:fenced fence:committed after:fence
  before:retired before:switched after:switched before:cleaned after:cleaned before:done)
  : qw(after:prepared after:schema after:publication after:slot after:subscription after:sync
  fence:locked fence:caught-up fence:fenced fence:committed before:switched after:switched
  after:cleaned before:done);
my %abort_sample = map { $_ => 1 }
  qw(after:prepared after:subscription fence:locked before:switched);
my $switch_index = (grep { $points[$_] eq 'after:switched' } 0 .. $#points)[0];

my $where = 0;
for my $i (0 .. $#points)
{
	my $p = $points[$i];
	my $to = $where == 0 ? 1 : 0;
	if ($i < $switch_index && ($long || $abort_sample{$p}))
	{
		killed_move($p, $to);
		($ok, $out, $err) = tool('move', '--abort', $mapfile, $router_conn);
		ok($ok, "killed at $p: move --abort undoes the move") or diag $err;
		recovered("aborted at $p", $moved, $where, 'snap5');
	}
	my $state = killed_move($p, $to);
	if ($i >= $switch_index)
	{
		($ok, $out, $err) = tool('move', '--abort', $mapfile, $router_conn);
		ok(!$ok, "killed at $p: the move is past the router switch and cannot be aborted");
	}
	($ok, $out, $err) = tool('move', '--resume', $mapfile, $router_conn);
	ok($ok, "killed at $p (step $state): move --resume finishes the move") or diag $err;
	$where = $to;
	recovered("resumed at $p", $moved, $where, 'snap5');
}

#
# The new server dies during the copy of a 300,000-row shard.
#
my $t = tool_start({}, 'move', $mapfile, $router_conn, $big, $conn[2]);
ok( $data[2]->poll_query_until('postgres', q{
		SELECT count(*) > 0 FROM pg_subscription_rel WHERE srsubstate IN ('i', 'd')}),
	'the new server is copying the shard');
$data[2]->kill9;
my ($status, $tout, $terr) = tool_finish($t);
isnt($status, 0, 'the move stops when the new server dies');
like($terr, qr/stopped at step (sync|subscription)/, 'saying at which step');
ok(restart_killed($data[2]), 'the new server restarts');
($ok, $out, $err) = tool('move', '--resume', $mapfile, $router_conn);
ok($ok, 'move --resume finishes the move after the crash') or diag $err;
recovered('after the crash of the new server', $big, 2, 'snap9');

stop_writers($router, $writers);
my $test_end = $router->safe_psql('postgres', 'SELECT clock_timestamp()');
writer_report($router, $test_start, $test_end);
check_fleet('at the end', $router, $mapfile, \@data, [ 'snap5', 'snap9' ]);
($ok, $out, $err) = tool('status', $mapfile, $router_conn);
ok($ok, 'status: consistent') or diag $out . $err;

$_->stop for @data, $router;
done_testing();
