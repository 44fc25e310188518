# test/t/053_fleet_plain_roles.pl: what a role without privileges can do
# to a fleet (issue 23, item 2).
#
# On shardid 1.2 the router's gate was an advisory lock, which any role
# can take: a plain LOGIN role that held it stopped every call through the
# router, and one that held the tool's run lock (another advisory lock)
# stopped router and move.  Here, on every database of the fleet, two
# roles take every lock they can and keep it:
#
#  - mallory: LOGIN and nothing else (CONNECT, through PUBLIC)
#  - app: what a role that calls through the router needs (USAGE on the
#    router's schemas plproxy and shardid_fleet, SELECT on the tables of
#    shardid_fleet), on the router only
#
# They hold the old advisory keys, lock every relation LOCK TABLE lets
# them lock in the strongest mode it grants, lock the rows of every table
# they can read, PREPARE statements that name every relation (parse
# analysis locks what a statement names, privileges or not) and call the
# functions that open a relation by OID.  Meanwhile calls through the
# router, by a superuser and by app, go on; router, apply and a move of a
# shard under writers go through; no backend of the router ever waits for
# a lock they hold; and the gate is one that only shardid-fleet takes.
#
# First, a router as shardid-fleet of shardid 1.2 made it (the gate an
# advisory lock): status says so, move warns and does without the gate,
# and router upgrades it.

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

my @data = map { my $n = fleet_node("data$_"); $n->start; $n } 1 .. 2;
my $router = fleet_node('router');
$router->start;
my @conn = map { connstr($_) } @data;
my $router_conn = connstr($router);

my $dir = PostgreSQL::Test::Utils::tempdir;
my $mapfile = "$dir/fleet.map";
write_map($mapfile, <<"EOF");
# logical shard ranges -> data servers, for 053_fleet_plain_roles.pl
provision 0 63
0    31    $conn[0]
32   8191  $conn[1]
EOF

# the roles, before anything of the fleet exists
for my $node (@data, $router)
{
	$node->safe_psql('postgres', q{CREATE ROLE mallory LOGIN; CREATE ROLE app LOGIN;});
}

my ($ok, $out, $err) = tool('apply', '--api', "$examples/posts-shard-api.sql", $mapfile,
	"$examples/posts-template.sql");
ok($ok, 'apply provisions the fleet') or diag $err;
($ok, $out, $err) = tool('router', '--api', "$examples/posts-router-api.sql", $mapfile, $router_conn);
ok($ok, 'router is set up') or diag $err;
setup_writers($router, @data);

# app reads posts through the router: what it needs on the router (the
# security model in docs/fleet.md) and on the data servers
$router->safe_psql('postgres', q{
	GRANT USAGE ON SCHEMA plproxy, shardid_fleet TO app;
	GRANT SELECT ON ALL TABLES IN SCHEMA shardid_fleet TO app;});
for my $node (@data)
{
	$node->safe_psql('postgres', q{
		DO $$
		DECLARE s text;
		BEGIN
		  FOR s IN SELECT nspname FROM pg_namespace WHERE nspname ~ '^shard_[0-9]{4}$' LOOP
		    EXECUTE format('GRANT USAGE ON SCHEMA %I TO app', s);
		    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO app', s);
		  END LOOP;
		END $$;});
}
my @ids = split /\n/, $router->safe_psql('postgres', q{
	INSERT INTO load_log (writer, id, user_id, body, attempts)
	SELECT 0, insert_post(g, 'before-' || g), g, 'before-' || g, 1 FROM generate_series(0, 639) g
	RETURNING id});
is(scalar @ids, 640, '640 posts through the router, 10 on each of the 64 shards');

#
# A router made by shardid-fleet of shardid 1.2: its gate is an advisory
# lock (the gate of get_cluster_version as 1.2 made it), and it has no
# gate table.
#
$router->safe_psql('postgres', q{
	DROP SCHEMA IF EXISTS shardid_fleet_gate CASCADE;
	CREATE OR REPLACE FUNCTION plproxy.get_cluster_version(cluster_name pg_catalog.text)
	RETURNS pg_catalog.int4
	LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp
	AS $fn$
	BEGIN
	    -- the gate of 1.2 (x'53484647' = 1397245511), without its lock_timeout message
	    PERFORM pg_catalog.pg_advisory_lock_shared(1397245511, pg_catalog.hashtext(cluster_name)),
	            pg_catalog.pg_advisory_unlock_shared(1397245511, pg_catalog.hashtext(cluster_name));
	    RETURN (SELECT c.version FROM shardid_fleet.cluster AS c WHERE c.name OPERATOR(pg_catalog.=) cluster_name);
	END
	$fn$;});
($ok, $out, $err) = tool('status', $mapfile, $router_conn);
ok(!$ok, 'status: a router with the gate of shardid 1.2 is a problem');
like($out, qr/the router's gate is not this shardid-fleet's \(set up by an older one; its gate is an advisory lock, which any role can hold\): run shardid-fleet router/,
	'status: saying that its gate is an advisory lock, and what to run');
($ok, $out, $err) = tool('move', $mapfile, $router_conn, 6, $conn[1]);
ok($ok, 'move on that router goes through') or diag $err;
like($err, qr/warning: the router's plproxy.get_cluster_version has no gate that only shardid-fleet can take \(made by an older shardid-fleet, its gate is an advisory lock, which any role can hold\)/,
	'move warns that the router has no gate it can rely on');
unlike($out, qr/waited at its gate/, 'and does without the advisory gate');
is($router->safe_psql('postgres', q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'}),
	'0', 'no advisory lock is left on the router');
is( $router->safe_psql('postgres', q{SELECT to_regclass('shardid_fleet_gate.shardid') IS NOT NULL}),
	't', 'move made the gate table for its run lock');
($ok, $out, $err) = tool('router', '--api', "$examples/posts-router-api.sql", $mapfile, $router_conn);
ok($ok, 'router upgrades the router of shardid 1.2') or diag $err;
is( $router->safe_psql('postgres', q{
		SELECT p.prosecdef, strpos(p.prosrc, 'pg_advisory') = 0, strpos(p.prosrc, 'LOCK TABLE ONLY shardid_fleet_gate.%I IN ROW SHARE MODE') > 0
		  FROM pg_proc p WHERE p.oid = 'plproxy.get_cluster_version(text)'::regprocedure}),
	't|t|t', 'plproxy.get_cluster_version is SECURITY DEFINER and passes the gate table, no advisory lock');
($ok, $out, $err) = tool('status', $mapfile, $router_conn);
ok($ok, 'status after the upgrade: consistent') or diag $out . $err;

# the gate: nobody but its owner may use the schema or the table
is( $router->safe_psql('postgres', q{
		SELECT (SELECT count(*) FROM pg_namespace n, aclexplode(n.nspacl) a
		         WHERE n.nspname = 'shardid_fleet_gate' AND a.grantee <> n.nspowner)
		     + (SELECT count(*) FROM pg_class c, aclexplode(c.relacl) a
		         WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'shardid_fleet_gate') AND a.grantee <> c.relowner)}),
	'0', 'schema shardid_fleet_gate and its table grant nothing to any other role');
for my $role ('mallory', 'app')
{
	like( sql_error($router, "SET ROLE $role; BEGIN; LOCK TABLE shardid_fleet_gate.shardid IN ACCESS SHARE MODE;"),
		qr/^42501: permission denied for schema shardid_fleet_gate/, "$role cannot lock the gate by name");
	like( sql_error($router, "SET ROLE $role; PREPARE p AS SELECT FROM shardid_fleet_gate.shardid FOR UPDATE;"),
		qr/^42501: permission denied for schema shardid_fleet_gate/, "$role cannot name it in a PREPAREd statement");
}
is( $router->safe_psql('postgres', q{SET ROLE app; SELECT plproxy.get_cluster_version('shardid')}),
	'2', 'app passes the gate (the function is SECURITY DEFINER) and reads the version');
is( $router->safe_psql('postgres', qq{SET ROLE app; SELECT count(*) FROM get_posts('{@{[ join ',', @ids ]}}')}),
	'640', 'app reads every post through the router');

# What a cluster name must be: the gate is named after it
($ok, $out, $err) = tool('router', '--cluster', 'x' x 64, $mapfile, $router_conn);
ok(!$ok, 'router refuses a cluster name longer than the gate table can be named');
like($err, qr/the name of PL\/Proxy cluster "x{64}" is longer than 63 bytes/, 'saying so');

# A grant on the gate, by its owner: router, status and move refuse the
# router until it is revoked
$router->psql('postgres', q{GRANT USAGE ON SCHEMA shardid_fleet_gate TO app;});
($ok, $out, $err) = tool('router', $mapfile, $router_conn);
ok(!$ok, 'router refuses a gate schema that another role may use');
like($err, qr/schema shardid_fleet_gate lets app use it \(USAGE\): only shardid-fleet may lock the gates in it; REVOKE ALL ON SCHEMA shardid_fleet_gate FROM app;/,
	'naming the role and the REVOKE');
($ok, $out, $err) = tool('move', $mapfile, $router_conn, 7, $conn[1]);
ok(!$ok, 'move refuses it too');
$router->psql('postgres', q{REVOKE USAGE ON SCHEMA shardid_fleet_gate FROM app;});
$router->psql('postgres', q{GRANT INSERT ON shardid_fleet_gate.shardid TO app;});
($ok, $out, $err) = tool('status', $mapfile, $router_conn);
ok(!$ok, 'status refuses a gate table with a grant');
like($err, qr/relation shardid_fleet_gate.shardid grants privileges to roles other than its owner/,
	'naming the table');
$router->psql('postgres', q{REVOKE INSERT ON shardid_fleet_gate.shardid FROM app;});

#
# On a data server, pg_dump (the first step of a move) reads pg_settings,
# which any role may lock in ACCESS EXCLUSIVE mode while PUBLIC has UPDATE
# on it, as it has by default: move refuses to wait for that, naming the
# session (a time limit keeps a tool that waits anyway from waiting for
# ever: then it is killed, and this test fails)
#
sub tool_within
{
	my ($seconds, @args) = @_;
	my ($stdout, $stderr) = ('', '');
	my $h = IPC::Run::start([ $tool, @args ], '>', \$stdout, '2>', \$stderr, IPC::Run::timeout($seconds));
	my $finished = eval { $h->finish; 1 };
	$h->kill_kill unless $finished;
	note "shardid-fleet $args[0]" . ($finished ? '' : " (killed after $seconds s)") . ":\n$stdout$stderr";
	return ($finished && $h->result == 0, $stdout, $stderr, $finished);
}
my $settings = $data[0]->background_psql('postgres', extra_params => [ '-U', 'mallory' ]);
$settings->query_safe('BEGIN; LOCK TABLE pg_catalog.pg_settings IN ACCESS EXCLUSIVE MODE;');
my $settings_pid = $settings->query_safe('SELECT pg_backend_pid()');
my $finished;
($ok, $out, $err, $finished) = tool_within(60, 'move', $mapfile, $router_conn, 7, $conn[1]);
ok($finished && !$ok, 'move refuses to copy the schema while a role holds pg_settings in ACCESS EXCLUSIVE mode');
like($err, qr/pg_dump of shard_0007 on the old server would wait: role "mallory" \(pid $settings_pid\) holds ACCESS EXCLUSIVE on pg_catalog.pg_settings, which pg_dump reads/,
	'naming the role and its session');
like($err, qr/HINT: End that transaction \(pg_terminate_backend\), then move --resume; and keep it from happening again: REVOKE UPDATE ON pg_catalog.pg_settings FROM PUBLIC;/,
	'and saying what to do');
$settings->quit;
($ok, $out, $err) = tool('move', '--abort', $mapfile, $router_conn);
ok($ok, 'move --abort undoes that move') or diag $err;
# the remedy, on the data servers (the router and the tool never read
# pg_settings: there mallory keeps her lock on it)
$_->safe_psql('postgres', 'REVOKE UPDATE ON pg_catalog.pg_settings FROM PUBLIC') for @data;

#
# The attack.  Writers first (one on shard 5, which moves, one on the
# other shards), then the two roles take what they can, everywhere.
#
my @others = grep { $_ != 5 && $_ != 6 } 0 .. 63;
my $writers = start_writers($router, [ 1, [5] ], [ 2, \@others ]);

# Everything LOCK TABLE grants, rows, PREPAREd statements and the
# functions that open a relation by OID, on every relation of the
# database, each try in a subtransaction that is kept if it succeeds
my $grab = q{
DO $grab$
DECLARE
  r record;
  m text;
BEGIN
  PERFORM pg_try_advisory_xact_lock(k, pg_catalog.hashtext('shardid')),
          pg_try_advisory_xact_lock_shared(k + 1, pg_catalog.hashtext('shardid'))
     FROM unnest(ARRAY[x'53484647'::int, x'5348464C'::int]) AS k;
  FOR r IN SELECT c.oid, c.oid::regclass::text AS rel FROM pg_class c
            WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND c.relpersistence <> 't' ORDER BY c.oid LOOP
    FOREACH m IN ARRAY ARRAY['ACCESS EXCLUSIVE', 'EXCLUSIVE', 'SHARE ROW EXCLUSIVE', 'SHARE',
                             'SHARE UPDATE EXCLUSIVE', 'ROW EXCLUSIVE', 'ROW SHARE', 'ACCESS SHARE'] LOOP
      BEGIN
        EXECUTE format('LOCK TABLE ONLY %s IN %s MODE NOWAIT', r.rel, m);
        EXIT;
      EXCEPTION WHEN OTHERS THEN NULL;
      END;
    END LOOP;
    FOREACH m IN ARRAY ARRAY['UPDATE', 'NO KEY UPDATE', 'SHARE', 'KEY SHARE'] LOOP
      BEGIN
        EXECUTE format('SELECT count(*) FROM (SELECT FROM ONLY %s FOR %s NOWAIT) AS x', r.rel, m);
        EXIT;
      EXCEPTION WHEN OTHERS THEN NULL;
      END;
    END LOOP;
    BEGIN
      EXECUTE format('PREPARE d%s AS DELETE FROM ONLY %s', r.oid, r.rel);
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    BEGIN
      EXECUTE format('PREPARE u%s AS SELECT FROM ONLY %s FOR UPDATE', r.oid, r.rel);
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    BEGIN
      PERFORM pg_relation_size(r.oid), pg_table_size(r.oid), pg_total_relation_size(r.oid),
              pg_indexes_size(r.oid), pg_relation_filenode(r.oid), pg_get_replica_identity_index(r.oid),
              pg_relation_is_publishable(r.oid), pg_relation_is_updatable(r.oid, false),
              pg_partition_root(r.oid), (SELECT count(*) FROM pg_partition_tree(r.oid)),
              (SELECT count(*) FROM pg_partition_ancestors(r.oid));
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
  END LOOP;
END
$grab$;
};
my (@attackers, %pids);
sub session
{
	my ($node, $role) = @_;
	my $s = $node->background_psql('postgres', extra_params => [ '-U', $role ]);
	$s->set_query_timer_restart;
	# (a lock that another attacker holds is not waited for long: the
	# parse analysis of PREPARE waits for the locks it takes)
	$s->query_safe(q{SET client_min_messages = warning; SET lock_timeout = '100ms'});
	push @{ $pids{ $node->name } }, $s->query_safe('SELECT pg_backend_pid()');
	push @attackers, $s;
	return $s;
}
sub attack
{
	my ($node, $role, $keys) = @_;
	# the advisory keys of shardid 1.2, held for the session
	session($node, $role)->query_safe(q{SELECT pg_advisory_lock(x'53484647'::int, hashtext('shardid')),
	                                          pg_advisory_lock(x'5348464C'::int, hashtext('shardid'))})
	  if $keys;
	# and everything else, in a transaction kept open
	my $locks = session($node, $role);
	$locks->query_safe('BEGIN');
	$locks->query_safe($grab);
	return;
}
attack($router, 'mallory', 1);
attack($router, 'app', 0);
attack($data[0], 'mallory', 1);
attack($data[1], 'mallory', 1);

# what they hold, noted; and none of it on the gate
my $router_pids = join ',', @{ $pids{router} };
note "locks the two roles hold on the router:\n" . $router->safe_psql('postgres', qq{
	SELECT a.usename || ': ' || l.mode || ' on ' || count(*) || ' relations of '
	       || coalesce(n.nspname, '(other databases)')
	  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
	  LEFT JOIN pg_class c ON c.oid = l.relation
	  LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
	 WHERE l.pid IN ($router_pids) AND l.locktype = 'relation'
	 GROUP BY a.usename, l.mode, n.nspname ORDER BY 1});
is( $router->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_locks l
		 WHERE l.pid IN ($router_pids) AND l.locktype = 'advisory' AND l.granted
		   AND l.classid IN (x'53484647'::int::oid, x'5348464C'::int::oid) AND l.objsubid = 2}),
	'2', 'on the router, mallory holds both advisory keys of shardid 1.2');
is( $router->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		 WHERE l.pid IN ($router_pids) AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'shardid_fleet_gate')}),
	'0', 'neither holds any lock on the gate');
cmp_ok( $router->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		 WHERE l.pid IN ($router_pids) AND c.relnamespace = 'shardid_fleet'::regnamespace
		   AND l.mode = 'RowExclusiveLock'}),
	'>', 0, 'app holds ROW EXCLUSIVE on the tables of shardid_fleet (its PREPAREd DELETEs)');
is( $router->safe_psql('postgres', qq{
		SELECT string_agg(l.relation::regclass::text, ',') FROM pg_locks l
		 WHERE l.pid IN ($router_pids) AND l.locktype = 'relation' AND l.mode = 'AccessExclusiveLock'}),
	'pg_settings', 'mallory holds ACCESS EXCLUSIVE on pg_settings (PUBLIC may UPDATE it), and on nothing else');
for my $i (0, 1)
{
	my $p = join ',', @{ $pids{ $data[$i]->name } };
	is( $data[$i]->safe_psql('postgres', qq{
			SELECT count(*) FROM pg_locks l WHERE l.pid IN ($p) AND l.locktype = 'relation'
			   AND l.mode NOT IN ('AccessShareLock', 'RowShareLock', 'RowExclusiveLock')}),
		'0', 'data server ' . ($i + 1) . ': mallory holds no lock stronger than ROW EXCLUSIVE');
	is( $data[$i]->safe_psql('postgres', qq{
			SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			 WHERE l.pid IN ($p) AND c.relnamespace::regnamespace::text ~ '^shard_'}),
		'0', 'data server ' . ($i + 1) . ': and none on a shard\'s tables');
}

#
# Calls through the router go on: by a superuser and by app.  (A lock
# timeout keeps a call that waits for the attackers from waiting forever:
# then it fails, and so does the test.)
#
my ($rc, $stdout, $stderr) = $router->psql('postgres', qq{
	SET lock_timeout = '10s';
	SELECT count(*) FROM get_posts('{@{[ join ',', @ids ]}}');
	SELECT count(*) FROM insert_posts(ARRAY(SELECT g::bigint FROM generate_series(0, 63) g),
	                                  ARRAY(SELECT 'during-' || g FROM generate_series(0, 63) g));});
is($rc, 0, 'a superuser\'s calls through the router go on') or diag $stderr;
is($stdout, "640\n64", 'reading 640 posts and writing 64');
($rc, $stdout, $stderr) = $router->psql('postgres', qq{
	SET ROLE app; SET lock_timeout = '10s';
	SELECT count(*) FROM get_posts('{@{[ join ',', @ids ]}}');});
is($rc, 0, 'app\'s calls through the router go on') or diag $stderr;
is($stdout, '640', 'reading 640 posts');

#
# router, apply and a move under the writers go through, with the gate
#
($ok, $out, $err) = tool('router', '--api', "$examples/posts-router-api.sql", $mapfile, $router_conn);
ok($ok, 'router goes through') or diag $err;
like($out, qr/map of cluster shardid unchanged \(version 2\)/, 'router: the map unchanged');
($ok, $out, $err) = tool('apply', '--api', "$examples/posts-shard-api.sql", $mapfile, "$examples/posts-template.sql");
ok($ok, 'apply goes through') or diag $err;
like($out, qr/apply: 2 servers, 0 objects created/, 'apply: nothing to create');

# A watcher on the router notes every 50 ms how many backends wait for a
# lock that an attacker holds
$router->safe_psql('postgres', qq{
	CREATE TABLE watch (at timestamptz DEFAULT clock_timestamp(), blocked int, what text);
	CREATE PROCEDURE watch_locks() LANGUAGE plpgsql AS \$\$
	BEGIN
	  LOOP
	    EXIT WHEN (SELECT stop FROM load_ctl);
	    INSERT INTO watch (blocked, what)
	    SELECT count(*), string_agg(a.pid || ' (' || a.usename || '): ' || left(a.query, 60), '; ')
	      FROM pg_stat_activity a
	     WHERE a.wait_event_type = 'Lock' AND pg_blocking_pids(a.pid) && '{$router_pids}'::int[];
	    COMMIT;
	    PERFORM pg_sleep(0.05);
	  END LOOP;
	END \$\$;});
my ($wout, $werr) = ('', '');
my $watcher = IPC::Run::start([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $router_conn, '-c', 'CALL watch_locks()' ],
	'>', \$wout, '2>', \$werr);
$router->poll_query_until('postgres', 'SELECT count(*) > 0 FROM watch') or die 'the watcher did not start';

# On the new server, mallory's PREPAREd statements hold ROW SHARE and ROW
# EXCLUSIVE on pg_replication_origin, a catalog that CREATE SUBSCRIPTION
# locks in EXCLUSIVE mode: the move waits --lock-timeout for it, stops
# there (before it fences anything) and names her session; once that
# session is gone, move --resume finishes the move
my $origin_pid = $pids{data2}[1];
my $move_start = $router->safe_psql('postgres', 'SELECT clock_timestamp()');
($ok, $out, $err, $finished) = tool_within(300, 'move', $mapfile, $router_conn, 5, $conn[1]);
ok($finished && !$ok, 'a lock that mallory holds on the new server stops the move at its subscription');
like($err, qr/CREATE SUBSCRIPTION on the new server waited 5 s for a lock on pg_catalog.pg_replication_origin \(role "mallory" \(pid $origin_pid, database "postgres"\) holds Row(Share|Exclusive)Lock/,
	'naming her session');
like($err, qr/the move of logical shard 5 stopped at step subscription/, 'and the step, to resume');
$data[1]->safe_psql('postgres', "SELECT pg_terminate_backend($origin_pid, 10000)");
($ok, $out, $err) = tool('move', '--resume', $mapfile, $router_conn);
my $move_done = $router->safe_psql('postgres', 'SELECT clock_timestamp()');
ok($ok, 'move --resume moves logical shard 5 under the writers') or diag $err;
like($out, qr/calls through the router waited at its gate for \d+ ms/, 'the move shut the gate for the switch');
unlike($err, qr/warning/, 'and warned of nothing');
$router->poll_query_until('postgres', qq{
	SELECT count(*) >= 50 FROM load_log WHERE writer = 1 AND at > '$move_done'})
  or diag 'the writer of shard 5 did not go on after the move';

($ok, $out, $err) = tool('status', $mapfile, $router_conn);
ok($ok, 'status: consistent') or diag $out . $err;

# the attackers held on throughout: each session is there, the ones with
# a transaction still in it
for my $node ($router, @data)
{
	my $p = join ',', @{ $pids{ $node->name } };
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) || ' sessions, ' || count(*) FILTER (WHERE state = 'idle in transaction') || ' in a transaction'
			  FROM pg_stat_activity WHERE pid IN ($p)}),
		{ router => '3 sessions, 2 in a transaction', data1 => '2 sessions, 1 in a transaction',
		  data2 => '1 sessions, 0 in a transaction' }->{ $node->name },
		$node->name . ': the attackers held on throughout (on data2, but for the session ended above)');
}

for my $s (@attackers)
{
	$s->quit;
}
stop_writers($router, [ @$writers, { id => 'watcher', h => $watcher, err => \$werr } ]);
my ($samples, $blocked, $what) = split /\|/, $router->safe_psql('postgres', q{
	SELECT count(*), count(*) FILTER (WHERE blocked > 0), string_agg(DISTINCT what, '; ') FROM watch});
cmp_ok($samples, '>', 0, "the watcher took $samples samples");
is($blocked, 0, 'no backend of the router ever waited for a lock of mallory or app') or diag $what;
my ($retryable, $other) = failed_writes($router, 'move of shard 5', 1, 2);
is($other, 0, "no write failed with anything but a retryable SQLSTATE ($retryable retryable)");
writer_report($router, $move_start, $move_done);
check_fleet('after the moves', $router, $mapfile, \@data);

$_->stop for @data, $router;
done_testing();
