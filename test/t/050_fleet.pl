# test/t/050_fleet.pl: a fleet of three data servers and one PL/Proxy
# router, laid out, loaded, and rebalanced online with tools/shardid-fleet.
#
#  - check the map and the servers; provision 64 logical shards over three
#    servers from a map file, twice (the second run creates nothing), and
#    build the router from the map, twice
#  - insert posts for every shard through the router, and a logical shard
#    of 200,000 rows (PG_TEST_EXTRA=shardid_load: 5,000,000) directly on its
#    server, and take a snapshot of that shard through the router
#  - move that shard from server 1 to server 2 with logical replication
#    while two writers insert into it and two into other shards through the
#    router; report each writer's longest stall (the target is 1 s at most
#    on the moving shard, none on the others: reported, not asserted)
#  - every row readable through the router by ID and unchanged, 0 duplicate
#    IDs across the fleet, every shard on the server the map names, nothing
#    of the move left behind (publication, subscription, slots)
#  - move another shard to a fourth server whose clock is 8 s behind: the
#    move waits for its clock, and every ID it makes follows every old one
#
# Every server listens on a Unix socket only.

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
# The default tier's 200,000 rows take the move through every step as
# more would (schema, publication, slot, the copy, the catch-up of the
# writes made during the copy, the fence, the router switch, the cleanup):
# the copy lasts a second or more, and four unpaced writers write into the
# moving shard and the others all along (asserted below); the snapshot, the
# md5 comparisons and the reads by ID then cover every one of its rows.
# The long tier moves 5,000,000.
my $bulk_rows = $long ? 5_000_000 : 200_000;
my $moved = 5;          # the logical shard that moves, from server 1 to 2

my $fleet = fleet_setup();
my ($router, $router_conn, $dir, $mapfile) = @$fleet{qw(router router_conn dir mapfile)};
my @data = @{ $fleet->{data} };
my @conn = @{ $fleet->{conn} };

#
# Checking and provisioning
#
my ($ok, $out, $err) = tool('check', $mapfile);
ok($ok, 'map and servers check') or diag $err;
like($out, qr/\Q$conn[0]\E: 21 logical shards, provisioned: 0-20/, 'check: server 1 holds 21 shards');
like($out, qr/\Q$conn[2]\E: 8150 logical shards, provisioned: 42-63/, 'check: server 3 holds the rest');
is(() = $out =~ /wal_level logical/g, 3, 'check: every server has wal_level = logical');

# apply, then the router (checked below)
my ($apply, $routed) = fleet_provision($fleet);
($ok, $out, $err) = @$apply;
ok($ok, 'apply provisions the fleet') or diag $err;
like($out, qr/logical shards 0-20 \(21\): created 21 schemas, 21 tables, 21 sequences/,
	'server 1 gets logical shards 0 to 20');
like($out, qr/logical shards 21-41 \(21\): created 21 schemas, 21 tables, 21 sequences/,
	'server 2 gets logical shards 21 to 41');
like($out, qr/logical shards 42-63 \(22\): created 22 schemas, 22 tables, 22 sequences/,
	'server 3 gets logical shards 42 to 63');

($ok, $out, $err) = tool('apply', '--api', "$examples/posts-shard-api.sql",
	$mapfile, "$examples/posts-template.sql");
ok($ok, 'apply runs again') or diag $err;
is(() = $out =~ /all complete, nothing created/g, 3, 'the second apply creates nothing on any server');
like($out, qr/apply: 3 servers, 0 objects created/, 'the second apply reports nothing created');
unlike($out . $err, qr/warning/, 'and warns of nothing');

my @expect_schemas = ([ 0 .. 20 ], [ 21 .. 41 ], [ 42 .. 63 ]);
for my $i (0 .. 2)
{
	is( $data[$i]->safe_psql('postgres',
			q{SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname ~ '^shard_'}),
		join(',', map { sprintf 'shard_%04d', $_ } @{ $expect_schemas[$i] }),
		'server ' . ($i + 1) . ' holds exactly its shard schemas');
	is( $data[$i]->safe_psql('postgres',
			q{SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
			   WHERE e.extname = 'shardid'}),
		'public', 'server ' . ($i + 1) . ': extension shardid in schema public');
}
is( $data[0]->safe_psql('postgres',
		q{SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef
		   WHERE adrelid = 'shard_0007.posts'::regclass AND adnum = 1}),
	q{shardid_next(7, 'shard_0007.posts_id_seq'::regclass)},
	'a shard table takes its IDs from shardid_next with its shard and sequence');

#
# Routing
#
($ok, $out, $err) = @$routed;
ok($ok, 'router is set up') or diag $err;
like($out, qr/version 0 -> 1/, 'router map loaded as version 1');
($ok, $out, $err) = tool('router', '--api', "$examples/posts-router-api.sql", $mapfile, $router_conn);
like($out, qr/unchanged \(version 1\)/, 'reloading the same map keeps the version');
is($router->safe_psql('postgres', q{SELECT count(*) FROM plproxy.get_cluster_partitions('shardid')}),
	'8192', 'PL/Proxy cluster has 8,192 partitions');
($ok, $out, $err) = tool('status', $mapfile, $router_conn);
ok($ok, 'status: consistent') or diag $out . $err;

setup_writers($router, @data);

# 20,000 posts for every shard through the router (PL/Proxy splits the
# arrays per server), logged as writer 0
$router->safe_psql('postgres', q{
INSERT INTO load_log (writer, id, user_id, body, attempts)
SELECT 0, p.id, p.user_id, p.body, 1
  FROM generate_series(0, 9) b,
       LATERAL insert_posts(ARRAY(SELECT (g % 5000)::bigint FROM generate_series(b * 2000 + 1, b * 2000 + 2000) g ORDER BY g),
                            ARRAY(SELECT 'bulk-' || g FROM generate_series(b * 2000 + 1, b * 2000 + 2000) g ORDER BY g)) p;
});
is($router->safe_psql('postgres', q{SELECT count(*), count(DISTINCT id) FROM load_log}),
	'20000|20000', '20,000 posts inserted through the router, each with its own ID');

# the shard that moves: its rows straight into server 1, then a snapshot
# of the whole shard taken through the router
$data[0]->safe_psql('postgres', qq{
	INSERT INTO shard_0005.posts (user_id, body)
	SELECT (g % 5000) * 64 + $moved, 'big-' || g FROM generate_series(1, $bulk_rows) g});
$router->safe_psql('postgres', qq{
	CREATE TABLE snap5 AS SELECT * FROM shard_rows($moved);
	CREATE UNIQUE INDEX ON snap5 (id);});
my $snap_rows = $router->safe_psql('postgres', 'SELECT count(*) FROM snap5');
cmp_ok($snap_rows, '>=', $bulk_rows, "logical shard $moved holds $snap_rows rows");
my ($snap_max, $snap_md5) = split /\|/, $router->safe_psql('postgres',
	q{SELECT max(id), md5(string_agg(id || ':' || user_id || ':' || body, ',' ORDER BY id)) FROM snap5});

#
# Moving the big shard online
#
# writers 1 and 2 write to the moving shard only, 3 and 4 to the other 63
my @others = grep { $_ != $moved } 0 .. 63;
my $writers = start_writers($router, [ 1, [$moved] ], [ 2, [$moved] ], [ 3, \@others ], [ 4, \@others ]);
my $move_start = $router->safe_psql('postgres', 'SELECT clock_timestamp()');
my $t0 = time;
($ok, $out, $err) = tool('move', $mapfile, $router_conn, $moved, $conn[1]);
my $move_seconds = time - $t0;
my $move_done = $router->safe_psql('postgres', 'SELECT clock_timestamp()');
ok($ok, "logical shard $moved ($snap_rows rows) moved from server 1 to server 2 under write load") or diag $err;
like($out, qr/1\. schema shard_0005 copied to the new server/, 'the move copies the schema');
like($out, qr/4\. subscription shardid_0005_\w+ on the new server/, 'the move subscribes the new server');
like($out, qr/5\. data copied and caught up/, 'the move waits for the copy and the catch-up');
like($out, qr/6\. writes paused; .* shard_0005 fenced on the old server \(a write there fails with 40001\), to be retired as shard_0005_retired_\d+_\w+/,
	'the move fences the old schema');
like($out, qr/calls through the router waited at its gate for \d+ ms/, 'router calls wait at the gate during the switch');
like($out, qr/shard_0005 renamed to shard_0005_retired_\d+_\w+ on the old server/, 'the cleanup retires the old schema');
like($out, qr/7\. router: logical shard 5 now on the new server \(map version 2\)/, 'the move switches the router');
my ($paused) = $out =~ /writes to it were paused for (\d+) ms/;
note "the move took $move_seconds s; the tool held writes to the shard for " . ($paused // '?') . ' ms';

# the writers go on for a while on the new layout, then stop
$router->poll_query_until('postgres', qq{
	SELECT count(*) >= 200 FROM load_log WHERE writer IN (1, 2) AND at > '$move_done'})
  or die 'writers did not continue on the moved shard';
stop_writers($router, $writers);
my $stall = writer_report($router, $move_start, $move_done);
note "longest stall on the moving shard: " . ($stall->{1} > $stall->{2} ? $stall->{1} : $stall->{2})
  . " ms (target: 1,000 ms at most); on other shards: "
  . ($stall->{3} > $stall->{4} ? $stall->{3} : $stall->{4}) . ' ms';
is($router->safe_psql('postgres', q{SELECT count(*) FROM load_err WHERE writer IN (3, 4)}),
	'0', 'no write to another shard failed during the move');
# A write to the moving shard waits at the router's gate while the shard
# is fenced and switched, and then goes to the new server; one already on
# its way to the old server meets the fence there: 40001, retried.  Never
# 42P01, never another error.
my ($retryable, $other) = failed_writes($router, "move of shard $moved", 1, 2, 3, 4);
is($other, 0, "no write failed during the move with anything but a retryable SQLSTATE ($retryable retryable)");
is($router->safe_psql('postgres', qq{SELECT count(*) FROM load_err WHERE sqlstate = '42P01'}),
	'0', 'no write failed with 42P01');
cmp_ok($router->safe_psql('postgres', qq{
		SELECT count(*) FROM load_log WHERE writer IN (3, 4) AND at BETWEEN '$move_start' AND '$move_done'}),
	'>', 0, 'writes to other shards went on while the shard moved');
cmp_ok($router->safe_psql('postgres', qq{
		SELECT count(*) FROM load_log WHERE writer IN (1, 2) AND at BETWEEN '$move_start' AND '$move_done'}),
	'>', 0, 'writes to the moving shard went on while it moved');

# the map, in the file and in the router
my $owner = read_map($mapfile);
is($owner->{$moved}, $conn[1], 'the map file puts the moved shard on server 2');
is($owner->{ $moved - 1 }, $conn[0], 'and leaves its neighbours on server 1');
is( $router->safe_psql('postgres',
		qq{SELECT (array_agg(c))[$moved + 1] FROM plproxy.get_cluster_partitions('shardid') c}),
	$conn[1], "the router's partition $moved is server 2");

check_fleet('after the move', $router, $mapfile, \@data, ['snap5']);
is( $data[1]->safe_psql('postgres', qq{
		SELECT md5(string_agg(id || ':' || user_id || ':' || body, ',' ORDER BY id))
		  FROM shard_0005.posts WHERE id <= $snap_max}),
	$snap_md5, 'server 2 holds the snapshot of the moved shard byte for byte (IDs unchanged)');
my $retired = $data[0]->safe_psql('postgres',
	q{SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shard_0005_retired_%'});
like($retired, qr/^shard_0005_retired_\d+_[0-9a-f]+$/, 'server 1 keeps the retired copy');
# the retired copy keeps the fence: a write straight into it fails, retryably
my ($rc_ret, $out_ret, $err_ret) = $data[0]->psql('postgres', qq{
	\\set VERBOSITY verbose
	INSERT INTO "$retired".posts (user_id, body) VALUES ($moved, 'into the retired copy')});
like($err_ret, qr/40001: logical shard 5 is moving to another server \(shardid-fleet move [0-9a-f]+\)/,
	'a write into the retired copy fails with 40001, naming the move');
# Server 2 holds the retired rows, unchanged, and above them (in ID, which
# is to say in time) only the rows it made itself.
my ($n_retired, $max_retired, $md5_retired) = split /\|/, $data[0]->safe_psql('postgres', qq{
	SELECT count(*), max(id), md5(string_agg(id || ':' || user_id || ':' || body, ',' ORDER BY id))
	  FROM "$retired".posts});
my ($n_below, $md5_below, $n_above) = split /\|/, $data[1]->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE id <= $max_retired),
	       md5(string_agg(id || ':' || user_id || ':' || body, ',' ORDER BY id) FILTER (WHERE id <= $max_retired)),
	       count(*) FILTER (WHERE id > $max_retired)
	  FROM shard_0005.posts});
is($n_below, $n_retired, "server 2 has as many rows up to the last old ID as the retired copy ($n_retired)");
is($md5_below, $md5_retired, 'and they are the same rows, byte for byte');
cmp_ok($n_above, '>', 0, "every other row of server 2 ($n_above, made after the move) has a later ID than every old one");
is(fleet_objects($data[0]) + fleet_objects($data[1]), 0,
	'no publication, subscription or replication slot is left');
($ok, $out, $err) = tool('status', $mapfile, $router_conn);
ok($ok, 'status after the move: consistent') or diag $out . $err;
like($out, qr/move 1: logical shard 5 .* done/, 'status lists the move');
like($out, qr/retired schemas: shard_0005_retired_\d+_\w+/, 'status lists the retired schema');

#
# Moving a shard to a server whose clock is behind
#
# Server 4 runs 8 seconds behind the others (libfaketime).  Before it takes
# writes for the moved shard its clock must pass the last ID of the shard,
# so the move waits (8 seconds less however long the move took to get
# there), and every ID it makes afterwards is from a later millisecond than
# every copied one.
my $libfaketime;
for my $d ('/usr/lib/x86_64-linux-gnu/faketime', '/usr/lib/aarch64-linux-gnu/faketime',
	'/usr/lib/faketime', '/usr/local/lib/faketime')
{
	$libfaketime = "$d/libfaketime.so.1" if -e "$d/libfaketime.so.1";
}
my $lagging = 6;        # the logical shard that moves to server 4
SKIP:
{
	skip 'libfaketime is not installed (Debian package "faketime")', 11
	  unless defined $libfaketime;

	my $node = fleet_node('data4');
	{
		local $ENV{LD_PRELOAD} = $libfaketime;
		local $ENV{FAKETIME} = '-8s';
		local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
		$node->start;
	}
	push @data, $node;
	push @conn, connstr($node);
	my $clock4 = $node->safe_psql('postgres', q{SELECT extract(epoch FROM clock_timestamp())});
	my $lag = $router->safe_psql('postgres', q{SELECT extract(epoch FROM clock_timestamp())}) - $clock4;
	cmp_ok($lag, '>', 7.5, sprintf('server 4 runs behind (%.1f s)', $lag));

	($ok, $out, $err) = tool('apply', '--api', "$examples/posts-shard-api.sql", '--server', $conn[3],
		$mapfile, "$examples/posts-template.sql");
	ok($ok, 'apply prepares server 4, which holds no shard yet') or diag $err;
	FleetTest::data_functions($node);

	$router->safe_psql('postgres', qq{
		INSERT INTO load_log (writer, id, user_id, body, attempts)
		SELECT 5, insert_post(u, 'lag-before-' || g), u, 'lag-before-' || g, 1
		  FROM generate_series(1, 300) g, LATERAL (SELECT (g * 64 + $lagging)::bigint AS u) x});

	# writers 6 (on the moving shard) and 7 (on the others) go on through
	# this move too; the router's gate opens while the clock fence waits,
	# so writer 7 is not held for seconds, and writer 6 meets the fence
	$router->safe_psql('postgres', 'DELETE FROM load_err');
	my $lag_writers = start_writers($router, [ 6, [$lagging] ], [ 7, \@others ]);
	my $last6 = $data[0]->safe_psql('postgres', q{SELECT max(shardid_created_at(id)) FROM shard_0006.posts});
	($ok, $out, $err) = tool('move', '--max-clock-wait', '60', '--drop', $mapfile, $router_conn, $lagging, $conn[3]);
	ok($ok, "logical shard $lagging moved from server 1 to server 4") or diag $err;
	my $lag_done = $router->safe_psql('postgres', 'SELECT clock_timestamp()');
	$router->poll_query_until('postgres', qq{
		SELECT count(*) >= 50 FROM load_log WHERE writer = 6 AND at > '$lag_done'})
	  or die 'writer 6 did not continue on the moved shard';
	stop_writers($router, $lag_writers);
	my ($lag_retryable, $lag_other) = failed_writes($router, "move of shard $lagging", 6, 7);
	is($lag_other, 0, "no write failed during the move to the lagging server with anything but a retryable SQLSTATE "
		  . "($lag_retryable retryable)");
	my ($waited) = $out =~ /waited (\d+) ms/;
	cmp_ok($waited // 0, '>', 0, "the move waited for server 4's clock to pass the last ID of the shard");
	note 'the clock fence waited ' . ($waited // '?') . ' ms';
	like($out, qr/shard_0006_retired_\d+_\w+ dropped on the old server/, '--drop drops the retired schema');

	$router->safe_psql('postgres', qq{
		INSERT INTO load_log (writer, id, user_id, body, attempts)
		SELECT 5, insert_post(u, 'lag-after-' || g), u, 'lag-after-' || g, 1
		  FROM generate_series(1, 300) g, LATERAL (SELECT (g * 64 + $lagging)::bigint AS u) x});
	is( $node->safe_psql('postgres', q{SELECT count(*) FROM shard_0006.posts WHERE body LIKE 'lag-after-%'}),
		'300', 'server 4 took the inserts for the moved shard');
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) FROM shard_0006.posts
			 WHERE body LIKE 'lag-after-%' AND shardid_created_at(id) <= '$last6'}),
		'0', 'every ID server 4 made is from a later millisecond than every old one, though its clock is behind');
	is(read_map($mapfile)->{$lagging}, $conn[3], 'the map file puts the shard on server 4');
}

# (the snapshot of shard 5 was read by ID after its move; it has not moved since)
check_fleet('after both moves', $router, $mapfile, \@data);

#
# The tool after the moves
#
($ok, $out, $err) = tool('apply', $mapfile, "$examples/posts-template.sql");
ok($ok, 'apply runs after the moves') or diag $err;
like($out, qr/logical shards 5,21-41 \(22\): all complete, nothing created/, 'server 2 is complete with the moved shard');
unlike($out, qr/warning/, 'and nothing is out of place');

($ok, $out, $err) = tool('move', $mapfile, $router_conn, $moved, $conn[1]);
ok(!$ok, 'moving a shard to where it is fails');
like($err, qr/already puts logical shard 5 on/, 'with a clear message');

($ok, $out, $err) = tool('move', $mapfile, $router_conn, 9000, $conn[1]);
ok(!$ok, 'moving shard 9000 fails');
like($err, qr/shard ID 9000 is out of range/, 'as out of range');

write_map("$dir/gap.map", "0 100 $conn[0]\n102 8191 $conn[1]\n");
($ok, $out, $err) = tool('check', "$dir/gap.map");
ok(!$ok, 'a map with a gap is refused');
like($err, qr/logical shard 101 is not mapped/, 'naming the missing shard');

#
# Public ID keys: check compares every server's by fingerprint, never by
# the key itself
#
my %keys = (
	a => '1:000102030405060708090a0b0c0d0e0f',
	b => '1:0f0e0d0c0b0a09080706050403020100');
sub set_keys
{
	my ($node, $k) = @_;
	$node->append_conf('postgresql.conf', "shardid.public_id_keys = '$k'");
	$node->reload;
	$node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM shardid_public_keys()})
	  or die 'the keys were not loaded';
	return $node->safe_psql('postgres', q{SELECT fingerprint FROM shardid_public_keys()});
}
set_keys($_, $keys{a}) for @data;
($ok, $out, $err) = tool('check', $mapfile);
ok($ok, 'check: every server has the same public ID keys') or diag $out . $err;
is(() = $out =~ /public ID keys: version 1 fingerprint [0-9a-f]{16}\n/g, scalar @data,
	'check prints each server\'s key fingerprint');
my $fp_b = set_keys($data[1], $keys{b});
($ok, $out, $err) = tool('check', $mapfile);
ok(!$ok, 'check fails when one server has another key');
like($out, qr/problem: the servers' public ID keys differ .*v1 \Q$fp_b\E/, 'naming the fingerprints that differ');
unlike($out . $err, qr/0001020304|0f0e0d0c/, 'and never printing a key');
set_keys($data[1], $keys{a});

$_->stop for @data, $router;
done_testing();
