# test/t/050_fleet.pl: a fleet of three data servers and one PL/Proxy
# router, laid out, loaded, and rebalanced with tools/shardid-fleet.
#
#  - provision 64 logical shards over three servers from a map file, twice
#    (the second run creates nothing), and build the router from the map
#  - insert over 100,000 posts for 5,000 users through the router, and read
#    every one back by ID through the router
#  - move one logical shard from server 1 to server 2 while three writers
#    keep inserting through the router, two for every user including the
#    moved shard's, one for the other shards' users; a transaction held on
#    the shard keeps the move's pause open until the third writer is seen
#    writing meanwhile
#  - move another logical shard to a fourth server whose clock is behind:
#    the move waits, and the new server's IDs come after the copied ones
#  - read everything again, then check each server directly: every post is
#    there once, with its ID unchanged, on the server the map names, in the
#    schema of the shard its ID names, and no ID appears twice in the fleet
#
# Every server listens on a Unix socket only.

use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $tree = abs_path(dirname(__FILE__) . '/../..');
my $tool = "$tree/tools/shardid-fleet";
my $examples = "$tree/tools/examples";
my $nshards = 64;       # logical shards in use: posts_user_shard() is user_id % 64
my $users = 5000;
my $moved = 5;          # the logical shard that moves, from server 1 to 2

# fleet: three data servers and a router
my @data;
for my $i (1 .. 3)
{
	my $node = shardid_node("data$i");
	$node->start;
	push @data, $node;
}
my $router = shardid_node('router');
$router->start;

sub connstr
{
	my ($node) = @_;
	return 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
}
my @conn = map { connstr($_) } @data;
my $router_conn = connstr($router);

# tool NAME, ARGS...: run shardid-fleet, return (exit ok, stdout, stderr)
sub tool
{
	my ($stdout, $stderr) = ('', '');
	my $ok = IPC::Run::run([ 'bash', $tool, @_ ], '>', \$stdout, '2>', \$stderr);
	note "shardid-fleet $_[0]:\n$stdout$stderr";
	return ($ok, $stdout, $stderr);
}

# map file: 64 logical shards provisioned, 21 + 21 + 22 of them per server;
# the rest of the 8,192 map to server 3 for PL/Proxy's sake
my $dir = PostgreSQL::Test::Utils::tempdir;
my $mapfile = "$dir/fleet.map";
PostgreSQL::Test::Utils::append_to_file($mapfile, <<"EOF");
# logical shard ranges -> data servers, for 050_fleet.pl
provision 0 63
0    20    $conn[0]
21   41    $conn[1]
42   8191  $conn[2]
EOF

# read_map: logical shard -> connection string, from the map file
sub read_map
{
	my %owner;
	open my $fh, '<', $mapfile or die "cannot read $mapfile: $!";
	while (my $line = <$fh>)
	{
		next if $line =~ /^\s*(#|$)/ || $line =~ /^\s*provision\s/;
		$line =~ /^\s*(\d+)\s+(\d+)\s+(.*?)\s*$/ or die "bad map line: $line";
		$owner{$_} = $3 for $1 .. $2;
	}
	close $fh;
	return \%owner;
}

#
# Provisioning
#
my ($ok, $out, $err);
($ok, $out, $err) = tool('check', $mapfile);
ok($ok, 'map checks') or diag $err;

($ok, $out, $err) = tool('apply', '--api', "$examples/posts-shard-api.sql",
	$mapfile, "$examples/posts-template.sql");
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
unlike($out, qr/warning/, 'and warns of nothing');

my @expect_schemas = ([ 0 .. 20 ], [ 21 .. 41 ], [ 42 .. 63 ]);
for my $i (0 .. 2)
{
	is( $data[$i]->safe_psql('postgres',
			q{SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname ~ '^shard_'}),
		join(',', map { sprintf 'shard_%04d', $_ } @{ $expect_schemas[$i] }),
		'server ' . ($i + 1) . ' holds exactly its shard schemas');
}
is( $data[0]->safe_psql('postgres',
		q{SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef
		   WHERE adrelid = 'shard_0007.posts'::regclass AND adnum = 1}),
	q{shardid_next(7, 'shard_0007.posts_id_seq'::regclass)},
	'a shard table takes its IDs from shardid_next with its shard and sequence');

#
# Routing
#
($ok, $out, $err) = tool('router', '--api', "$examples/posts-router-api.sql", $mapfile, $router_conn);
ok($ok, 'router is set up') or diag $err;
like($out, qr/version 0 -> 1/, 'router map loaded as version 1');
($ok, $out, $err) = tool('router', '--api', "$examples/posts-router-api.sql", $mapfile, $router_conn);
like($out, qr/unchanged \(version 1\)/, 'reloading the same map keeps the version');

is($router->safe_psql('postgres', q{SELECT count(*) FROM plproxy.get_cluster_partitions('shardid')}),
	'8192', 'PL/Proxy cluster has 8,192 partitions');

# helpers on the router: a log of what the router returned, and writers
$router->safe_psql('postgres', q{
CREATE TABLE load_log (writer int, id bigint, user_id bigint, body text,
                       attempts int, at timestamptz DEFAULT clock_timestamp());
CREATE TABLE load_err (writer int, user_id bigint, sqlstate text, message text,
                       at timestamptz DEFAULT clock_timestamp());
CREATE TABLE load_ctl (stop boolean NOT NULL);
INSERT INTO load_ctl VALUES (false);

-- insert posts through the router one at a time, one transaction each,
-- until told to stop, for all users or all but one shard's; a failed
-- insert is retried (the router re-reads the map on every call)
CREATE PROCEDURE load_writer(w int, users int, avoid_shard int DEFAULT -1) LANGUAGE plpgsql AS $$
DECLARE
  i bigint := 0;
  u bigint;
  b text;
  new_id bigint;
  tries int;
BEGIN
  LOOP
    EXIT WHEN (SELECT stop FROM load_ctl);
    i := i + 1;
    u := (i * 7919 + w * 104729) % users;
    CONTINUE WHEN posts_user_shard(u) = avoid_shard;
    b := format('w%s-%s', w, i);
    tries := 0;
    LOOP
      tries := tries + 1;
      BEGIN
        new_id := insert_post(u, b);
        EXIT;
      EXCEPTION WHEN OTHERS THEN
        INSERT INTO load_err VALUES (w, u, SQLSTATE, SQLERRM);
        IF tries >= 500 THEN RAISE; END IF;
        PERFORM pg_sleep(0.01);
      END;
    END LOOP;
    INSERT INTO load_log (writer, id, user_id, body, attempts)
    VALUES (w, new_id, u, b, tries);
    COMMIT;
  END LOOP;
END $$;
});

# 100,000 posts in batches of 2,000 (split per server by PL/Proxy), and
# 1,000 more one at a time
my $load = '';
for my $batch (0 .. 49)
{
	my $from = $batch * 2000 + 1;
	my $to = $from + 1999;
	$load .= qq{
INSERT INTO load_log (writer, id, user_id, body, attempts)
SELECT 0, p.id, p.user_id, p.body, 1
  FROM insert_posts(ARRAY(SELECT (g % $users)::bigint FROM generate_series($from, $to) g ORDER BY g),
                    ARRAY(SELECT 'bulk-' || g FROM generate_series($from, $to) g ORDER BY g)) p;
};
}
$load .= qq{
INSERT INTO load_log (writer, id, user_id, body, attempts)
SELECT 0, insert_post(g % $users, 'single-' || g), g % $users, 'single-' || g, 1
  FROM generate_series(1, 1000) g;
};
$router->safe_psql('postgres', $load);
is($router->safe_psql('postgres', q{SELECT count(*), count(DISTINCT id) FROM load_log}),
	'101000|101000', '101,000 posts inserted through the router, each with its own ID');
is( $router->safe_psql('postgres',
		qq{SELECT count(*) FROM load_log WHERE shardid_shard(id) <> user_id % $nshards}),
	'0', "each post's ID names its user's logical shard");

# every_post_by_id TEST: read every logged post by its ID through the router
sub every_post_by_id
{
	my ($what) = @_;
	my $r = $router->safe_psql('postgres', q{
		SELECT count(*), count(p.id),
		       count(*) FILTER (WHERE p.id = l.id AND p.user_id = l.user_id AND p.body = l.body)
		  FROM load_log l LEFT JOIN LATERAL get_post(l.id) p ON true});
	my ($total, $found, $same) = split /\|/, $r;
	is($found, $total, "$what: every post found by ID through the router ($total)");
	is($same, $total, "$what: every post read by ID is the one inserted");
	is( $router->safe_psql('postgres',
			q{SELECT count(*) FROM get_posts(ARRAY(SELECT id FROM load_log)) p
			    JOIN load_log l USING (id) WHERE p.user_id = l.user_id AND p.body = l.body}),
		$total, "$what: every post found by a batch read by ID through the router");
	return $total;
}
every_post_by_id('before the move');

#
# Moving a shard under write load
#
# writers 1 and 2 write for every user, writer 3 for all but the moved
# shard's users
my @writers;
for my $w (1 .. 3)
{
	my ($o, $e) = ('', '');
	my $avoid = $w == 3 ? $moved : -1;
	push @writers,
	  {
		out => \$o,
		err => \$e,
		h => IPC::Run::start(
			[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $router_conn,
			  '-c', "CALL load_writer($w, $users, $avoid)" ],
			'>', \$o, '2>', \$e)
	  };
}
# wait until writers 1 and 2 have written to the shard that moves, and
# writer 3 to another
$router->poll_query_until('postgres', qq{
	SELECT count(DISTINCT writer) = 3 FROM load_log
	 WHERE (writer IN (1, 2) AND user_id % $nshards = $moved) OR writer = 3})
  or die 'writers did not start';
my $move_start = $router->safe_psql('postgres', q{SELECT clock_timestamp()});
my $before_move = $router->safe_psql('postgres', q{SELECT count(*) FROM load_log WHERE writer > 0});
my $moved_rows_before = $router->safe_psql('postgres',
	qq{SELECT count(*) FROM load_log WHERE shardid_shard(id) = $moved});

# A transaction on server 1 holds a lock on the shard's table, as a slow
# writer would.  The move's lock request queues behind it, and from then
# on the shard's writers queue behind the move: the shard is paused, and
# stays paused until this test lets the move go on.  Meanwhile writer 3
# must go on writing to the other shards.  (Without this, whether writer 3
# gets to write during the move's short pause depends on the scheduler.)
my $slow_writer = $data[0]->background_psql('postgres');
$slow_writer->query_safe("BEGIN; LOCK TABLE shard_0005.posts IN ROW EXCLUSIVE MODE;");
my ($move_out, $move_err) = ('', '');
my $mover = IPC::Run::start(
	[ 'bash', $tool, 'move', '--lock-timeout', '300', $mapfile, $router_conn, $moved, $conn[1] ],
	'>', \$move_out, '2>', \$move_err);
ok( $data[0]->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_locks
	 WHERE relation = 'shard_0005.posts'::regclass AND mode = 'ExclusiveLock' AND NOT granted}),
	'the move waits for the lock on the shard, which pauses its writes');
my $paused_at = $router->safe_psql('postgres', q{SELECT clock_timestamp()});
ok( $router->poll_query_until('postgres', qq{
	SELECT count(*) >= 20 FROM load_log WHERE writer = 3 AND at > '$paused_at'}),
	'writes to other shards go on while the shard is paused for the move');
$slow_writer->query_safe('COMMIT');
$slow_writer->quit;
$mover->finish;
$ok = $mover->result(0) == 0;
($out, $err) = ($move_out, $move_err);
note "shardid-fleet move:\n$out$err";
ok($ok, "logical shard $moved moved from server 1 to server 2 under write load") or diag $err;
like($out, qr/copied shard_0005 to the new server: shard_0005\.posts \d+ rows/, 'the move reports the rows it copied');
like($out, qr/version 1 -> 2/, 'the move bumps the router map version');
like($out, qr/renamed to shard_0005_retired_\d+/, 'the move retires the schema on the old server');
my $move_done = $router->safe_psql('postgres', q{SELECT clock_timestamp()});

# let the writers go on for a while on the new layout, then stop them
$router->poll_query_until('postgres', qq{
	SELECT count(*) >= 200 FROM load_log
	 WHERE writer > 0 AND user_id % $nshards = $moved AND at > '$move_done'})
  or die 'writers did not continue on the moved shard';
$router->safe_psql('postgres', q{UPDATE load_ctl SET stop = true});
for my $w (@writers)
{
	ok($w->{h}->finish, 'a writer ran to the end without giving up') or diag ${ $w->{err} };
}
cmp_ok(
	$router->safe_psql('postgres', qq{
		SELECT count(*) FROM load_log
		 WHERE writer = 3 AND at BETWEEN '$move_start' AND '$move_done'}),
	'>=', 20, 'writes to other shards went on while the shard moved');
is($router->safe_psql('postgres', q{SELECT count(*) FROM load_err WHERE writer = 3}),
	'0', 'no write to another shard failed during the move');
my $after_move = $router->safe_psql('postgres', q{SELECT count(*) FROM load_log WHERE writer > 0});
cmp_ok($after_move, '>', $before_move, "writers kept inserting during and after the move ($after_move posts)");
note 'failed attempts retried by the writers: '
  . $router->safe_psql('postgres', q{SELECT count(*) || ' ' || coalesce(string_agg(DISTINCT sqlstate, ','), '') FROM load_err});
cmp_ok(
	$router->safe_psql('postgres', qq{SELECT count(*) FROM load_log WHERE shardid_shard(id) = $moved}),
	'>', $moved_rows_before, 'new posts went to the moved shard after the move');

# the map now names server 2 for the moved shard, in the file and the router
my $owner = read_map();
is($owner->{$moved}, $conn[1], 'the map file puts the moved shard on server 2');
is($owner->{ $moved - 1 }, $conn[0], 'and leaves its neighbours on server 1');
is( $router->safe_psql('postgres',
		qq{SELECT (array_agg(c))[$moved + 1] FROM plproxy.get_cluster_partitions('shardid') c}),
	$conn[1], "the router's partition $moved is server 2");
is($router->safe_psql('postgres', q{SELECT version FROM shardid_fleet.cluster WHERE name = 'shardid'}),
	'2', 'router map version is 2');

#
# Moving a shard to a server whose clock is behind
#
# Server 4 runs 8 seconds behind the others (libfaketime).  Before it
# accepts writes for the moved shard its clock must pass the last copied
# ID, so the move waits (8 seconds less however long the move took to get
# there), and every ID it makes afterwards is from a later millisecond than
# every copied one.  Only that effect is checked, not how long the wait
# took: 8 seconds leaves a slow machine time to reach the fence before
# server 4's clock passes the copied IDs on its own.
my $libfaketime;
for my $d ('/usr/lib/x86_64-linux-gnu/faketime', '/usr/lib/aarch64-linux-gnu/faketime',
	'/usr/lib/faketime', '/usr/local/lib/faketime')
{
	$libfaketime = "$d/libfaketime.so.1" if -e "$d/libfaketime.so.1";
}
my $lagging = 6;        # the logical shard that moves to server 4
SKIP:
{
	skip 'libfaketime is not installed (Debian package "faketime")', 9
	  unless defined $libfaketime;

	my $node = shardid_node('data4');
	{
		local $ENV{LD_PRELOAD} = $libfaketime;
		local $ENV{FAKETIME} = '-8s';
		local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
		$node->start;
	}
	push @data, $node;
	push @conn, connstr($node);
	# the router's clock read after server 4's: how far server 4 is behind,
	# plus however long the reads took, so at least the true lag
	my $clock4 = $node->safe_psql('postgres', q{SELECT extract(epoch FROM clock_timestamp())});
	my $lag = $router->safe_psql('postgres', q{SELECT extract(epoch FROM clock_timestamp())}) - $clock4;
	cmp_ok($lag, '>', 7.5, sprintf('server 4 runs behind (%.1f s)', $lag));

	($ok, $out, $err) = tool('apply', '--api', "$examples/posts-shard-api.sql", '--server', $conn[3],
		$mapfile, "$examples/posts-template.sql");
	ok($ok, 'apply prepares server 4, which holds no shard yet') or diag $err;
	like($out, qr/server \Q$conn[3]\E\n  extension shardid: created\n.*\n  logical shards: none provisioned here/,
		'server 4 gets the extension and template, and no shard');

	# some posts for the shard that moves, just before the move
	$router->safe_psql('postgres', qq{
		INSERT INTO load_log (writer, id, user_id, body, attempts)
		SELECT 3, insert_post(u, 'lag-before-' || g), u, 'lag-before-' || g, 1
		  FROM generate_series(1, 300) g, LATERAL (SELECT (g * $nshards + $lagging)::bigint AS u) x});

	($ok, $out, $err) = tool('move', '--max-clock-wait', '60', $mapfile, $router_conn, $lagging, $conn[3]);
	ok($ok, "logical shard $lagging moved from server 1 to server 4") or diag $err;
	my ($waited) = $out =~ /waited (\d+) ms/;
	cmp_ok($waited // 0, '>', 0, "the move waited for server 4's clock to pass the last copied ID");
	note "the clock fence waited " . ($waited // '?') . ' ms';

	$router->safe_psql('postgres', qq{
		INSERT INTO load_log (writer, id, user_id, body, attempts)
		SELECT 3, insert_post(u, 'lag-after-' || g), u, 'lag-after-' || g, 1
		  FROM generate_series(1, 300) g, LATERAL (SELECT (g * $nshards + $lagging)::bigint AS u) x});

	my $retired6 = $data[0]->safe_psql('postgres',
		q{SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shard_0006_retired_%'});
	my $copied = $data[0]->safe_psql('postgres', qq{SELECT count(*) FROM "$retired6".posts});
	my $last6 = $data[0]->safe_psql('postgres', qq{SELECT max(shardid_created_at(id)) FROM "$retired6".posts});
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) FROM shard_0006.posts WHERE body LIKE 'lag-after-%'}),
		'300', 'server 4 took the inserts for the moved shard');
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) FROM shard_0006.posts
			 WHERE body LIKE 'lag-after-%' AND shardid_created_at(id) <= '$last6'}),
		'0', "every ID server 4 made is from a later millisecond than every copied ID, though its clock is behind");
	is( $node->safe_psql('postgres', q{SELECT count(*) FROM shard_0006.posts WHERE body NOT LIKE 'lag-after-%'}),
		$copied, "server 4 has every copied row ($copied)");
	is(read_map()->{$lagging}, $conn[3], 'the map file puts the shard on server 4');
}
$owner = read_map();

#
# Reading everything again
#
my $total = every_post_by_id('after the move');
cmp_ok($total, '>=', 100000, 'at least 100,000 posts in all');

# each server, directly: where is every post?
my %logged;
for my $row (split /\n/, $router->safe_psql('postgres', q{SELECT id, user_id, body FROM load_log}))
{
	my ($id, $user, $body) = split /\|/, $row, 3;
	$logged{$id} = "$user|$body";
}
my (%seen, $dups, $wrong_server, $wrong_schema, $wrong_shard, $changed, $unlogged);
$dups = $wrong_server = $wrong_schema = $wrong_shard = $changed = $unlogged = 0;
for my $i (0 .. $#data)
{
	my $rows = $data[$i]->safe_psql('postgres',
		q{SELECT shard_schema, id, shardid_shard(id), user_id, body FROM posts_here()});
	for my $row (split /\n/, $rows)
	{
		my ($schema, $id, $shard, $user, $body) = split /\|/, $row, 5;
		$dups++ if $seen{$id}++;
		$wrong_schema++ if $schema ne sprintf('shard_%04d', $shard);
		$wrong_shard++ if $shard != $user % $nshards;
		$wrong_server++ if $owner->{$shard} ne $conn[$i];
		if (!exists $logged{$id}) { $unlogged++ }
		elsif ($logged{$id} ne "$user|$body") { $changed++ }
	}
}
is($dups, 0, 'zero duplicate IDs across the fleet');
is(scalar(keys %seen), scalar(keys %logged), 'the fleet holds exactly the posts the router returned');
is(scalar(grep { !$seen{$_} } keys %logged), 0, 'every post the router returned is on a server');
is($unlogged, 0, 'no post on a server that the router did not return');
is($changed, 0, 'every post has the ID it was given at insert time');
is($wrong_server, 0, 'each post is on the server the map names for its shard');
is($wrong_schema, 0, 'each post is in the schema of the shard its ID names');
is($wrong_shard, 0, "each post's ID names its user's shard");

# the retired copy on server 1 holds the moved shard's rows as of the move,
# all of them on server 2 with the same IDs; once dropped, no ID is stored
# twice anywhere in the fleet
my $retired = $data[0]->safe_psql('postgres',
	q{SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shard_0005_retired_%'});
like($retired, qr/^shard_0005_retired_\d+$/, 'server 1 keeps the retired copy');
is($data[0]->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'}),
	'0', 'server 1 no longer has shard_0005');
my $retired_rows = $data[0]->safe_psql('postgres',
	qq{SELECT string_agg(id || ':' || user_id || ':' || body, ',' ORDER BY id) FROM "$retired".posts});
my %retired_ids = map { (split /:/, $_, 2)[0] => $_ } split /,/, $retired_rows;
my %new_ids = map { (split /:/, $_, 2)[0] => $_ }
  split /\n/, $data[1]->safe_psql('postgres', q{SELECT id || ':' || user_id || ':' || body FROM shard_0005.posts});
is(scalar(grep { !defined $new_ids{$_} || $new_ids{$_} ne $retired_ids{$_} } keys %retired_ids),
	0, 'every row of the retired copy is on server 2 unchanged (' . scalar(keys %retired_ids) . ' rows)');
cmp_ok(scalar(keys %new_ids), '>', scalar(keys %retired_ids), 'server 2 has made new IDs for the moved shard');
my $last_copied = $data[0]->safe_psql('postgres',
	qq{SELECT max(shardid_created_at(id)) FROM "$retired".posts});
is( $data[1]->safe_psql('postgres', qq{
		SELECT count(*) FROM shard_0005.posts
		 WHERE id <> ALL ('{@{[ join ',', keys %retired_ids ]}}'::bigint[])
		   AND shardid_created_at(id) <= '$last_copied'}),
	'0', 'every ID server 2 made for the moved shard is from a later millisecond than every copied ID');

# retired copies are dropped once the move is verified (README: step 6)
for my $node (@data)
{
	$node->safe_psql('postgres', q{
		DO $$
		DECLARE s name;
		BEGIN
		  FOR s IN SELECT nspname FROM pg_namespace WHERE nspname ~ '^shard_[0-9]{4}_retired_' LOOP
		    EXECUTE format('DROP SCHEMA %I CASCADE', s);
		  END LOOP;
		END $$;});
}
my %all;
my $all_dups = 0;
for my $node (@data)
{
	my $ids = $node->safe_psql('postgres', q{
		CREATE TEMP TABLE ids (id bigint);
		DO $$
		DECLARE t regclass;
		BEGIN
		  FOR t IN SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		            WHERE c.relkind = 'r' AND n.nspname ~ '^shard_' LOOP
		    EXECUTE format('INSERT INTO ids SELECT id FROM %s', t);
		  END LOOP;
		END $$;
		SELECT id FROM ids;});
	$all_dups += grep { $all{$_}++ } split /\n/, $ids;
}
is($all_dups, 0, 'no ID is stored twice in any table of any server');

#
# The tool after the move
#
($ok, $out, $err) = tool('apply', $mapfile, "$examples/posts-template.sql");
ok($ok, 'apply runs after the move');
like($out, qr/logical shards 0-4,\d[-\d]* \(\d+\): all complete, nothing created/, 'server 1 is complete without the moved shard');
like($out, qr/logical shards 5,21-41 \(22\): all complete, nothing created/, 'server 2 is complete with it');
is(() = $out =~ /all complete, nothing created/g, scalar(@data), 'every server is complete');
unlike($out, qr/warning/, 'and nothing is out of place');

($ok, $out, $err) = tool('move', $mapfile, $router_conn, $moved, $conn[1]);
ok(!$ok, 'moving a shard to where it is fails');
like($err, qr/already puts logical shard 5 on/, 'with a clear message');

($ok, $out, $err) = tool('move', $mapfile, $router_conn, 9000, $conn[1]);
ok(!$ok, 'moving shard 9000 fails');
like($err, qr/shard ID 9000 is out of range/, 'as out of range');

PostgreSQL::Test::Utils::append_to_file("$dir/gap.map", "0 100 $conn[0]\n102 8191 $conn[1]\n");
($ok, $out, $err) = tool('check', "$dir/gap.map");
ok(!$ok, 'a map with a gap is refused');
like($err, qr/logical shard 101 is not mapped/, 'naming the missing shard');

$_->stop for @data, $router;
done_testing();
