# test/t/051_fleet_security.pl: the findings of the security review of the
# fleet tool, each run as its repro and checked for the safe outcome: no
# role gains privileges, nothing someone else made is adopted, and the map
# file and the router stay consistent.
#
#  1  SQL injection through table names in a move
#  2  search_path hijack of apply, and of CREATE EXTENSION without SCHEMA
#  3  router adopting a pre-created shardid_fleet or plproxy schema
#  4  provisioning taking a pre-created, booby-trapped shard schema
#  5  a move that fails after the router switch splitting the shard; stale
#     map files; two runs at once
#  6  the map file's mode and temporary name; passwords on command lines and
#     in output; backslashes in connection strings; all 8,192 shards
#     provisioned under the default max_locks_per_transaction
#
# and of the second review (the section "Second review" at the end):
#
#  R2.1  a router database whose owner sets role for every session, a
#        trigger on shardid_fleet.moves, and a tampered state row of a move
#  R2.3  the template and API files run with a function of another role on
#        their search_path (public.now(), and an overload that wins over
#        pg_catalog's)
#  R2.2  move --owner R running R's code as a superuser on the new server
#        (refused on PostgreSQL 15; run_as_owner = false from 16 on)
#  R2.4  secrets on the command lines of the tool and of its children, in
#        the rewritten map file and in the router's record of moves
#  R2.5  masking of backslash-escaped and quoted passwords
#
# mallory is an ordinary role with CREATE on every database.  Before the
# tool first runs she plants, in a schema named after the operator's role
# (first on the default search_path, after pg_catalog), functions and
# operators that would make her a superuser if the operator's session ever
# called them: shardid's functions by their unqualified names, and = for
# oid and regnamespace, which pg_catalog has only through a cast.

use strict;
use warnings;

use Fcntl qw(:flock);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use FleetTest;

my $secret = 'fleet-secret-42';

my ($data_ref, $router) = fleet_servers();
my @data = @$data_ref;
my @all = (@data, $router);

# Connection strings carry a password (trust authentication ignores it):
# it must never show in output or on a command line.  Server 3's has a
# backslash (libpq reads application_name=fleet\x as "fleetx"), which the
# bash tool's awk mangled.
my @conn = map { connstr($_) . " password=$secret" } @data;
$conn[2] .= ' application_name=fleet\x';
my $router_conn = connstr($router) . " password=$secret";
my $operator = $router->safe_psql('postgres', 'SELECT current_user');

my $dir = PostgreSQL::Test::Utils::tempdir;
my $mapfile = "$dir/fleet.map";
write_map($mapfile, <<"EOF");
# logical shard ranges -> data servers, for 051_fleet_security.pl
provision 0 63
0    20    $conn[0]
21   41    $conn[1]
42   8191  $conn[2]
EOF
chmod 0600, $mapfile;

# every run of the tool in this test: no password in what it prints
my $leaks = 0;
sub run_tool
{
	my ($ok, $out, $err) = tool(@_);
	$leaks++ if ($out . $err) =~ /\Q$secret\E/;
	return ($ok, $out, $err);
}

# mallory, and her traps on every server
for my $node (@all)
{
	$node->safe_psql('postgres', qq{
		CREATE ROLE mallory LOGIN;
		GRANT CREATE ON DATABASE postgres TO mallory;
		SET ROLE mallory;
		CREATE SCHEMA "$operator";
		CREATE FUNCTION "$operator".pwn() RETURNS boolean LANGUAGE plpgsql AS \$\$
		BEGIN
		  IF current_user <> 'mallory' THEN
		    ALTER ROLE mallory SUPERUSER;
		  END IF;
		  RETURN true;
		END \$\$;
		CREATE FUNCTION "$operator".shardid_provision_shard(integer, text)
		  RETURNS TABLE (kind text, name text, action text) LANGUAGE sql
		  AS \$\$ SELECT 'schema', 'x', 'created' WHERE "$operator".pwn() \$\$;
		CREATE FUNCTION "$operator".shardid_provision_shard(integer, text, text)
		  RETURNS TABLE (kind text, name text, action text) LANGUAGE sql
		  AS \$\$ SELECT 'schema', 'x', 'created' WHERE "$operator".pwn() \$\$;
		CREATE FUNCTION "$operator".shardid_shard_schema(integer) RETURNS text LANGUAGE sql
		  AS \$\$ SELECT 'x' WHERE "$operator".pwn() \$\$;
		CREATE FUNCTION "$operator".eq(oid, regnamespace) RETURNS boolean LANGUAGE sql
		  AS \$\$ SELECT "$operator".pwn() AND \$1 OPERATOR(pg_catalog.=) \$2::oid \$\$;
		CREATE OPERATOR "$operator".= (LEFTARG = oid, RIGHTARG = regnamespace, FUNCTION = "$operator".eq);
		});
}

sub mallory_is_superuser
{
	return join ',', map { $_->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}) } @all;
}

#
# Finding 4, through apply: mallory pre-creates shard_0007 on server 1
# with a matching posts table, the matching default and a BEFORE INSERT
# trigger that calls her function.
#
$data[0]->safe_psql('postgres', qq{
	SET ROLE mallory;
	CREATE SCHEMA shard_0007;
	CREATE SEQUENCE shard_0007.posts_id_seq;
	CREATE TABLE shard_0007.posts (
	  id bigint PRIMARY KEY,
	  user_id bigint NOT NULL,
	  body text NOT NULL,
	  posted_at timestamptz NOT NULL DEFAULT now());
	CREATE FUNCTION "$operator".trg() RETURNS trigger LANGUAGE plpgsql AS \$\$
	BEGIN PERFORM "$operator".pwn(); RETURN NEW; END \$\$;
	CREATE TRIGGER pwn BEFORE INSERT ON shard_0007.posts FOR EACH ROW EXECUTE FUNCTION "$operator".trg();
	});

my ($ok, $out, $err) = run_tool('apply', '--api', "$examples/posts-shard-api.sql",
	$mapfile, "$examples/posts-template.sql");
ok(!$ok, "finding 4: apply refuses server 1, where mallory pre-created shard_0007");
like($err, qr/42501: schema "shard_0007" is owned by role "mallory"/, 'finding 4: naming the schema and its owner');
is($data[0]->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname ~ '^shard_' AND nspname <> 'shard_0007'}),
	'0', 'finding 4: nothing was provisioned on server 1');
is(mallory_is_superuser(), 'f,f,f,f', 'finding 4: mallory is not a superuser anywhere');
$data[0]->safe_psql('postgres', 'DROP SCHEMA shard_0007 CASCADE');

#
# Finding 2: apply on servers where mallory's schema comes first on the
# operator's default search_path, and the extension does not exist yet.
#
($ok, $out, $err) = run_tool('apply', '--api', "$examples/posts-shard-api.sql",
	$mapfile, "$examples/posts-template.sql");
ok($ok, 'finding 2: apply provisions the fleet past mallory\'s traps') or diag $err;
like($out, qr/logical shards 0-20 \(21\): created 21 schemas/, 'finding 2: with the real shardid_provision_shard');
for my $i (0 .. 2)
{
	is( $data[$i]->safe_psql('postgres', q{
			SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
			 WHERE e.extname = 'shardid'}),
		'public', 'finding 2: server ' . ($i + 1) . ' has extension shardid in public, not in mallory\'s schema');
}
like($out, qr/\Qhost=\E.*\Qpassword=********\E/, 'finding 6: connection strings are printed with the password masked');
like($out, qr/logical shards 42-63 \(22\): created 22 schemas/,
	'finding 6: the server whose connection string has a backslash gets its 22 shards');
($ok, $out, $err) = run_tool('check', $mapfile);
ok($ok, 'finding 6: check passes') or diag $out . $err;
like($out, qr/application_name=fleet\\?x: 8150 logical shards, provisioned: 42-63/,
	'finding 6: check counts the shards of the server whose connection string has a backslash');

($ok, $out, $err) = run_tool('router', '--api', "$examples/posts-router-api.sql", $mapfile, $router_conn);
ok($ok, 'finding 2: router is set up past mallory\'s traps') or diag $err;
is(mallory_is_superuser(), 'f,f,f,f', 'finding 2: mallory is not a superuser anywhere');
setup_writers($router, @data);
$router->safe_psql('postgres', q{
	INSERT INTO load_log (writer, id, user_id, body, attempts)
	SELECT 0, insert_post(g, 'post-' || g), g, 'post-' || g, 1 FROM generate_series(0, 2999) g});

#
# Finding 1: mallory, with CREATE on shard_0005, makes a table whose name
# closes the bash tool's quoting.  The move refuses the shard: its apply
# worker would run her table's code as a superuser on the new server.
#
my $evil = q{')t(x);ALTER ROLE mallory SUPERUSER;--};
my $version = $router->safe_psql('postgres', q{SELECT version FROM shardid_fleet.cluster});
$data[0]->safe_psql('postgres', qq{
	GRANT USAGE, CREATE ON SCHEMA shard_0005 TO mallory;
	SET ROLE mallory;
	CREATE TABLE shard_0005."$evil" (id bigint PRIMARY KEY);
	INSERT INTO shard_0005."$evil" VALUES (1);});
($ok, $out, $err) = run_tool('move', $mapfile, $router_conn, 5, $conn[1]);
ok(!$ok, 'finding 1: the move refuses a shard that another role may create objects in');
like($err, qr/lets "mallory" create objects in it/, 'finding 1: naming the role');
$data[0]->safe_psql('postgres', 'REVOKE CREATE ON SCHEMA shard_0005 FROM mallory');
($ok, $out, $err) = run_tool('move', $mapfile, $router_conn, 5, $conn[1]);
ok(!$ok, 'finding 1: the move refuses a shard with a table owned by another role');
like($err, qr/is owned by role "mallory"; the new server would apply its rows as a superuser/,
	'finding 1: naming the owner');
is(mallory_is_superuser(), 'f,f,f,f', 'finding 1: mallory is not a superuser anywhere');
is($router->safe_psql('postgres', q{SELECT version FROM shardid_fleet.cluster}), $version,
	'finding 1: the router map is unchanged');
is(read_map($mapfile)->{5}, $conn[0], 'finding 1: the map file is unchanged');
is($data[1]->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'}),
	'0', 'finding 1: nothing was copied to server 2');
is(fleet_objects($data[0]) + fleet_objects($data[1]), 0, 'finding 1: no publication, subscription or slot was made');

# The same names made by the operator are moved as they are: names are
# identifiers, never SQL.
$data[0]->safe_psql('postgres', qq{
	DROP TABLE shard_0005."$evil";
	CREATE TABLE shard_0005."$evil" (id bigint PRIMARY KEY, note text);
	CREATE TABLE shard_0005."new
line" (id bigint PRIMARY KEY);
	INSERT INTO shard_0005."$evil" VALUES (1, 'quote''s'), (2, E'back\\\\slash');
	INSERT INTO shard_0005."new
line" VALUES (3);});

# finding 6: the children (pg_dump, psql) get no password on their command
# line: it is in their environment
my $spy = "$dir/spybin";
mkdir $spy;
my $bindir = $router->config_data('--bindir');
for my $prog ('pg_dump', 'psql')
{
	open my $fh, '>', "$spy/$prog" or die;
	print $fh "#!/bin/sh\nprintf '%s\\n' \"argv: \$0 \$*\" \"env: PGPASSWORD=\${PGPASSWORD-unset}\" >>'$spy/spy.log'\n"
	  . "exec '$bindir/$prog' \"\$@\"\n";
	close $fh;
	chmod 0755, "$spy/$prog";
}
my @before = sort glob("$dir/.* $dir/*");
($ok, $out, $err) = run_tool({ PG_BINDIR => $spy }, 'move', $mapfile, $router_conn, 5, $conn[1]);
ok($ok, 'finding 1: the shard with those tables moves') or diag $err;
is( $data[1]->safe_psql('postgres', qq{
		SELECT string_agg(c.relname || '=' || c.relkind::text, ' / ' ORDER BY c.relname)
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'shard_0005' AND c.relkind = 'r'}),
	"$evil=r / new\nline=r / posts=r", 'finding 1: the tables arrive under their own names');
is( $data[1]->safe_psql('postgres', qq{SELECT string_agg(id || ':' || note, ',' ORDER BY id) FROM shard_0005."$evil"}),
	"1:quote's,2:back\\slash", 'finding 1: with their rows');
is(mallory_is_superuser(), 'f,f,f,f', 'finding 1: mallory is not a superuser anywhere');
my $spylog = PostgreSQL::Test::Utils::slurp_file("$spy/spy.log");
like($spylog, qr/argv: \S*pg_dump .*--schema-only/, 'finding 6: the move ran pg_dump');
unlike(join("\n", grep { /^argv:/ } split /\n/, $spylog), qr/\Q$secret\E/,
	'finding 6: no password on the command line of pg_dump or psql');
like($spylog, qr/env: PGPASSWORD=\Q$secret\E/, 'finding 6: they get it in their environment');
is(sprintf('%o', (stat $mapfile)[2] & 07777), '600', 'finding 6: the rewritten map file keeps its mode 600');
is(join(',', sort glob("$dir/.* $dir/*")), join(',', @before), 'finding 6: no temporary file is left next to it');
$data[1]->safe_psql('postgres', qq{DROP TABLE shard_0005."$evil", shard_0005."new\nline"});
$data[0]->safe_psql('postgres', q{
	DO $$ DECLARE s name; BEGIN
	  FOR s IN SELECT nspname FROM pg_namespace WHERE nspname ~ '_retired_' LOOP
	    EXECUTE format('DROP SCHEMA %I CASCADE', s);
	  END LOOP; END $$;});

# an error that names a connection string masks its password
($ok, $out, $err) = run_tool('move', $mapfile, $router_conn, 6, "host=/nonexistent port=1 password=$secret");
ok(!$ok, 'finding 6: a move to a server that cannot be reached fails');
like($err, qr/password=\*{8}/, 'finding 6: and its message masks the password');

#
# Finding 3: the router adopts nothing.  mallory pre-creates
# shardid_fleet.cluster and shardid_fleet.map in a new router database.
#
$router->safe_psql('postgres', q{CREATE DATABASE router2; GRANT CREATE ON DATABASE router2 TO mallory;});
my $router2 = connstr($router, 'router2');
$router->safe_psql('router2', q{
	SET ROLE mallory;
	CREATE SCHEMA shardid_fleet;
	CREATE TABLE shardid_fleet.cluster (name text PRIMARY KEY, version integer NOT NULL,
	                                    changed_at timestamptz NOT NULL DEFAULT now());
	CREATE TABLE shardid_fleet.map (cluster text NOT NULL REFERENCES shardid_fleet.cluster,
	                                first_shard integer NOT NULL, last_shard integer NOT NULL,
	                                connstr text NOT NULL, PRIMARY KEY (cluster, first_shard));});
($ok, $out, $err) = run_tool('router', $mapfile, $router2);
ok(!$ok, 'finding 3: router refuses a shardid_fleet schema that mallory made');
like($err, qr/schema "shardid_fleet" .* is owned by role "mallory"/, 'finding 3: naming its owner');
is( $router->safe_psql('router2', q{
		SELECT string_agg(c.relname || ':' || pg_get_userbyid(c.relowner), ',' ORDER BY c.relname)
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'shardid_fleet' AND c.relkind = 'r'}),
	'cluster:mallory,map:mallory', 'finding 3: her tables are left as they were');
is($router->safe_psql('router2', q{SELECT (SELECT count(*) FROM shardid_fleet.cluster) + (SELECT count(*) FROM shardid_fleet.map)}),
	'0', 'finding 3: and hold no map');
is($router->safe_psql('router2', q{SELECT count(*) FROM pg_extension WHERE extname = 'plproxy'}),
	'0', 'finding 3: nothing was created');

# her own PL/Proxy configuration, sending every shard to her server
$router->safe_psql('router2', q{
	DROP SCHEMA shardid_fleet CASCADE;
	SET ROLE mallory;
	CREATE SCHEMA plproxy;
	CREATE FUNCTION plproxy.get_cluster_partitions(cluster_name text) RETURNS SETOF text
	  LANGUAGE sql AS $$ SELECT 'host=mallory.example' FROM generate_series(1, 8192) $$;});
($ok, $out, $err) = run_tool('router', $mapfile, $router2);
ok(!$ok, 'finding 3: router refuses a plproxy schema that mallory made');
like($err, qr/schema "plproxy" .* is owned by role "mallory"/, 'finding 3: naming its owner');
is($router->safe_psql('router2', q{SELECT count(*) FROM pg_namespace WHERE nspname = 'shardid_fleet'}),
	'0', 'finding 3: nothing was created');

# a foreign server of the cluster's name would override the functions
$router->safe_psql('router2', q{
	DROP SCHEMA plproxy CASCADE;
	CREATE EXTENSION plproxy;
	CREATE SERVER shardid FOREIGN DATA WRAPPER plproxy OPTIONS (partition_0 'host=mallory.example');});
($ok, $out, $err) = run_tool('router', $mapfile, $router2);
ok(!$ok, 'finding 3: router refuses a foreign server named like the cluster');
like($err, qr/has a foreign server named "shardid"/, 'finding 3: saying why');
$router->safe_psql('router2', q{DROP SERVER shardid;});
($ok, $out, $err) = run_tool('router', $mapfile, $router2);
ok($ok, 'finding 3: with those gone, router sets up router2') or diag $err;
is( $router->safe_psql('router2', q{
		SELECT has_schema_privilege('mallory', 'shardid_fleet', 'CREATE')
		    OR has_schema_privilege('mallory', 'plproxy', 'CREATE')
		    OR has_table_privilege('mallory', 'shardid_fleet.map', 'INSERT, UPDATE, DELETE, TRIGGER')}),
	'f', 'finding 3: mallory can change nothing of it');
is(mallory_is_superuser(), 'f,f,f,f', 'finding 3: mallory is not a superuser anywhere');

#
# Finding 5: a move cannot leave the shard split.
#
# (a) the map file's directory is not writable: the move refuses before
# changing anything
my $ro = "$dir/ro";
mkdir $ro;
PostgreSQL::Test::Utils::append_to_file("$ro/fleet.map", PostgreSQL::Test::Utils::slurp_file($mapfile));
chmod 0555, $ro;
$version = $router->safe_psql('postgres', q{SELECT version FROM shardid_fleet.cluster});
($ok, $out, $err) = run_tool('move', "$ro/fleet.map", $router_conn, 6, $conn[1]);
ok(!$ok, 'finding 5: a move whose map file cannot be rewritten is refused');
like($err, qr/cannot create a file in the directory of map file/, 'finding 5: saying why');
is($router->safe_psql('postgres', q{SELECT version FROM shardid_fleet.cluster}), $version,
	'finding 5: the router is unchanged');
is($router->safe_psql('postgres', q{SELECT count(*) FROM shardid_fleet.moves WHERE state NOT IN ('done', 'aborted')}),
	'0', 'finding 5: no move was started');
is(fleet_objects($data[0]) + fleet_objects($data[1]), 0, 'finding 5: nothing was made on the servers');
chmod 0755, $ro;

# (b) the tool dies right after the router switch, before the map file is
# rewritten; a stale copy of the map file is kept as well
PostgreSQL::Test::Utils::append_to_file("$dir/stale.map", PostgreSQL::Test::Utils::slurp_file($mapfile));
($ok, $out, $err) = run_tool({ SHARDID_FLEET_KILL_AT => 'after:switched' }, 'move', $mapfile, $router_conn, 6, $conn[1]);
ok(!$ok, 'finding 5: the move is killed after the router switch');
is(read_map($mapfile)->{6}, $conn[0], 'finding 5: the map file still says server 1');
is($router->safe_psql('postgres', q{SELECT (array_agg(c))[7] FROM plproxy.get_cluster_partitions('shardid') c}),
	$conn[1], 'finding 5: the router says server 2');
($ok, $out, $err) = run_tool('status', $mapfile, $router_conn);
ok(!$ok, 'finding 5: status reports the inconsistency');
like($out, qr/move in flight: logical shard 6 .* step switched/, 'finding 5: and the move in flight');
($ok, $out, $err) = run_tool('apply', $mapfile, "$examples/posts-template.sql");
ok(!$ok, 'finding 5: apply with that map file refuses');
like($err, qr/logical shard 6 is on .* but the map file puts it on .*out of date/, 'finding 5: saying why');
($ok, $out, $err) = run_tool('router', $mapfile, $router_conn);
ok(!$ok, 'finding 5: router with that map file refuses');
like($err, qr/logical shard 6 of cluster "shardid" is being moved/, 'finding 5: naming the unfinished move');
# (the old shard_0006 stays on server 1 under its name, fenced, until the
# move's cleanup renames it: apply made no other)
is($data[0]->safe_psql('postgres', q{
		SELECT count(*) FROM pg_namespace AS n WHERE nspname = 'shard_0006'
		   AND NOT EXISTS (SELECT FROM pg_proc AS p
		                    WHERE p.pronamespace = n.oid AND p.proname = 'shardid_fleet_moved')}),
	'0', 'finding 5: no empty shard_0006 was made on server 1');
($ok, $out, $err) = run_tool('move', '--abort', $mapfile, $router_conn);
ok(!$ok, 'finding 5: a move past the router switch cannot be aborted');
like($err, qr/can only be finished/, 'finding 5: only finished');
($ok, $out, $err) = run_tool('move', '--resume', $mapfile, $router_conn);
ok($ok, 'finding 5: move --resume finishes it') or diag $err;
is(read_map($mapfile)->{6}, $conn[1], 'finding 5: the map file now says server 2');
($ok, $out, $err) = run_tool('status', $mapfile, $router_conn);
ok($ok, 'finding 5: status is consistent') or diag $out;
# the stale copy, as in the review: apply then router
($ok, $out, $err) = run_tool('apply', "$dir/stale.map", "$examples/posts-template.sql");
ok(!$ok, 'finding 5: apply with the stale map refuses');
like($err, qr/logical shard 6 is on /, 'finding 5: naming the shard');
($ok, $out, $err) = run_tool('router', "$dir/stale.map", $router_conn);
ok(!$ok, 'finding 5: router with the stale map refuses');
like($err, qr/routes logical shard 6 to .* which does not hold it/, 'finding 5: naming the shard');
is($data[0]->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0006'}),
	'0', 'finding 5: still no shard_0006 on server 1');
check_fleet('finding 5', $router, $mapfile, [ map { [ $data[$_], $conn[$_] ] } 0 .. 2 ]);

# (c) two runs at once: the map file is locked for the whole run, and the
# router keeps one move of a cluster at a time
open my $lock, '<', $mapfile or die;
flock($lock, LOCK_EX) or die;
($ok, $out, $err) = run_tool('move', $mapfile, $router_conn, 7, $conn[1]);
ok(!$ok, 'finding 5: a move while another run holds the map file is refused');
like($err, qr/is locked by another shardid-fleet run/, 'finding 5: saying so');
close $lock;
($ok, $out, $err) = run_tool({ SHARDID_FLEET_KILL_AT => 'after:subscription' }, 'move', $mapfile, $router_conn, 7, $conn[1]);
ok(!$ok, 'finding 5: a move of shard 7 is killed halfway');
($ok, $out, $err) = run_tool('move', $mapfile, $router_conn, 8, $conn[1]);
ok(!$ok, 'finding 5: another move is refused while it is unfinished');
like($err, qr/logical shard 7 of cluster "shardid" is being moved/, 'finding 5: naming the unfinished move');
($ok, $out, $err) = run_tool('move', '--abort', $mapfile, $router_conn);
ok($ok, 'finding 5: move --abort undoes it') or diag $err;
is(fleet_objects($data[0]) + fleet_objects($data[1]), 0, 'finding 5: nothing of it is left on the servers');
is($data[1]->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0007'}),
	'0', 'finding 5: nor its copy');
check_fleet('after the abort', $router, $mapfile, [ map { [ $data[$_], $conn[$_] ] } 0 .. 2 ]);
is(mallory_is_superuser(), 'f,f,f,f', 'mallory is not a superuser anywhere');
is($leaks, 0, 'finding 6: no run of the tool printed the password');

#
# Finding 6: all 8,192 shards on one server, under the default
# max_locks_per_transaction (64): apply commits in batches.
#
my $big = shardid_node('big');
$big->start;
is($big->safe_psql('postgres', 'SHOW max_locks_per_transaction'), '64', 'the big server has the default max_locks_per_transaction');
write_map("$dir/big.map", "0 8191 " . connstr($big) . "\n");
write_map("$dir/big-template.sql", "CREATE TABLE t (id bigint PRIMARY KEY);\n");
my $t0 = time;
($ok, $out, $err) = run_tool('apply', "$dir/big.map", "$dir/big-template.sql");
ok($ok, 'finding 6: apply provisions all 8,192 logical shards on one server') or diag $err;
note 'apply of 8,192 shards took ' . (time - $t0) . ' s';
like($out, qr/logical shards 0-8191 \(8192\): created 8192 schemas, 8192 tables, 8192 sequences/,
	'finding 6: every one of them');
is($big->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname ~ '^shard_[0-9]{4}$'}),
	'8192', 'finding 6: 8,192 shard schemas');
if (test_extra('shardid_load'))
{
	$t0 = time;
	($ok, $out, $err) = run_tool('apply', "$dir/big.map", "$dir/big-template.sql");
	like($out, qr/logical shards 0-8191 \(8192\): all complete, nothing created/, 'finding 6: a rerun finds them complete');
	note 'the rerun took ' . (time - $t0) . ' s';
}

#
# Second review, finding 1: the database owner sets role for the router's
# sessions; then a trigger on shardid_fleet.moves; then a state row that
# names a schema of its choosing.
#
$router->safe_psql('postgres', q{CREATE DATABASE router3 OWNER mallory;});
$router->safe_psql('router3', q{SET ROLE mallory; ALTER DATABASE router3 SET role = mallory;});
my $router3 = connstr($router, 'router3') . " password=$secret";
($ok, $out, $err) = run_tool('router', $mapfile, $router3);
ok(!$ok, 'R2.1: router refuses a router database that sets role for its sessions');
like($err, qr/refusing the session on router ".*it runs as role "mallory", not as "\Q$operator\E", the role it logged in as/,
	'R2.1: naming the role it would run as');
($ok, $out, $err) = run_tool('status', $mapfile, $router3);
ok(!$ok, 'R2.1: status refuses it too');
like($err, qr/it runs as role "mallory"/, 'R2.1: saying why');
is( $router->safe_psql('router3', q{
		SELECT (SELECT count(*) FROM pg_namespace WHERE nspname IN ('shardid_fleet', 'plproxy'))
		     + (SELECT count(*) FROM pg_extension WHERE extname IN ('plproxy', 'shardid'))}),
	'0', 'R2.1: nothing was created there');
# without the setting, in a schema of the operator's (public is mallory's,
# through pg_database_owner), the router is the operator's
$router->safe_psql('router3', q{ALTER DATABASE router3 RESET role;});
$router->safe_psql('router3', q{CREATE SCHEMA fleet_ext});
($ok, $out, $err) = run_tool('router', '--extension-schema', 'fleet_ext', $mapfile, $router3);
ok($ok, 'R2.1: router sets router3 up once the setting is gone') or diag $err;
is( $router->safe_psql('router3', q{
		SELECT (SELECT count(*) FROM pg_namespace WHERE nspname IN ('shardid_fleet', 'plproxy')
		          AND nspowner = 'mallory'::regrole)
		     + (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		         WHERE n.nspname IN ('shardid_fleet', 'plproxy') AND c.relowner = 'mallory'::regrole)
		     + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		         WHERE n.nspname IN ('shardid_fleet', 'plproxy') AND p.proowner = 'mallory'::regrole)}),
	'0', 'R2.1: nothing of the tool in router3 is mallory\'s');
is($router->safe_psql('router3', q{SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'shardid_fleet.moves'::regclass}),
	$operator, 'R2.1: shardid_fleet.moves is the operator\'s');

# a move through router3, stopped halfway
($ok, $out, $err) = run_tool({ SHARDID_FLEET_KILL_AT => 'after:subscription' }, 'move', $mapfile, $router3, 9, $conn[1]);
ok(!$ok, 'R2.1: a move of shard 9 through router3 is stopped halfway');
is($router->safe_psql('router3', q{SELECT state FROM shardid_fleet.moves WHERE shard = 9}), 'subscription',
	'R2.1: at step subscription');
# mallory, let to add triggers to shardid_fleet.moves, adds one that makes
# her a superuser when the operator's session writes a row
$router->safe_psql('router3', q{
	GRANT USAGE ON SCHEMA shardid_fleet TO mallory;
	GRANT TRIGGER ON shardid_fleet.moves TO mallory;
	SET ROLE mallory;
	CREATE SCHEMA m;
	CREATE FUNCTION m.trg() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
	  IF current_user <> 'mallory' THEN ALTER ROLE mallory SUPERUSER; END IF;
	  RETURN NEW;
	END $$;
	CREATE TRIGGER pwn BEFORE INSERT OR UPDATE ON shardid_fleet.moves FOR EACH ROW EXECUTE FUNCTION m.trg();});
for my $args ([ '--resume', '--drop' ], [ '--abort' ], [ 10, $conn[1] ])
{
	($ok, $out, $err) = run_tool('move', grep({ /^--/ } @$args), $mapfile, $router3, grep({ !/^--/ } @$args));
	ok(!$ok, "R2.1: move @$args refuses a router with a trigger on shardid_fleet.moves");
	like($err, qr/has objects that shardid-fleet will not take as its own; nothing was changed:\n  trigger pwn on shardid_fleet\.moves/,
		"R2.1: move @$args names the trigger");
}
($ok, $out, $err) = run_tool('status', $mapfile, $router3);
like($err, qr/trigger pwn on shardid_fleet\.moves/, 'R2.1: so does status');
($ok, $out, $err) = run_tool('router', '--extension-schema', 'fleet_ext', $mapfile, $router3);
like($err, qr/trigger pwn on shardid_fleet\.moves/, 'R2.1: and router');
is($router->safe_psql('router3', q{SELECT state || ',' || drop_retired FROM shardid_fleet.moves WHERE shard = 9}),
	'subscription,false', 'R2.1: the move was left as it was');
is(mallory_is_superuser(), 'f,f,f,f', 'R2.1: mallory is not a superuser anywhere');
$router->safe_psql('router3', q{DROP TRIGGER pwn ON shardid_fleet.moves; REVOKE TRIGGER ON shardid_fleet.moves FROM mallory;
	REVOKE USAGE ON SCHEMA shardid_fleet FROM mallory;});

# a state row that names another schema to retire, and drop
$data[0]->safe_psql('postgres', q{CREATE SCHEMA victim; CREATE TABLE victim.keep (x int); INSERT INTO victim.keep VALUES (1);});
my $victim = $data[0]->safe_psql('postgres', q{SELECT 'victim'::regnamespace::oid});
my ($soid, $token) = split /\|/, $router->safe_psql('router3', q{SELECT source_schema_oid, token FROM shardid_fleet.moves WHERE shard = 9});
$router->safe_psql('router3', qq{UPDATE shardid_fleet.moves SET retired_schema = 'victim', source_schema_oid = $victim WHERE shard = 9});
($ok, $out, $err) = run_tool('move', '--resume', '--drop', $mapfile, $router3);
ok(!$ok, 'R2.1: move --resume --drop refuses a state row whose retired_schema names another schema');
like($err, qr/refusing the move recorded in shardid_fleet\.moves \(id \d+\): retired_schema "victim" is not the name this move retires shard_0009 under \(shard_0009_retired_YYYYMMDDHHMMSS_$token\); nothing was done/,
	'R2.1: naming the field');
$router->safe_psql('router3', qq{UPDATE shardid_fleet.moves SET state = 'fence', retired_schema = 'shard_0009_retired_20260101000000_$token' WHERE shard = 9});
($ok, $out, $err) = run_tool('move', '--resume', '--drop', $mapfile, $router3);
ok(!$ok, 'R2.1: and one whose source_schema_oid names another schema');
like($err, qr/\(id \d+\): source_schema_oid names schema "victim" on the old server, not shard_0009 or shard_0009_retired_20260101000000_$token; nothing was done/,
	'R2.1: naming the field');
$router->safe_psql('router3', qq{UPDATE shardid_fleet.moves SET state = 'subscription', retired_schema = 'public', source_schema_oid = $soid WHERE shard = 9});
($ok, $out, $err) = run_tool('move', '--abort', $mapfile, $router3);
ok(!$ok, 'R2.1: move --abort refuses a retired_schema of public');
like($err, qr/retired_schema "public" is not the name/, 'R2.1: naming the field');
is($router->safe_psql('router3', q{SELECT state || ',' || drop_retired FROM shardid_fleet.moves WHERE shard = 9}),
	'subscription,false', 'R2.1: the move was left as it was');
is($data[0]->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname IN ('victim', 'public', 'shard_0009')}),
	'3', 'R2.1: schemas victim, public and shard_0009 are still there');
is($data[0]->safe_psql('postgres', q{SELECT count(*) FROM victim.keep}), '1', 'R2.1: with their rows');
$router->safe_psql('router3', q{UPDATE shardid_fleet.moves SET retired_schema = NULL WHERE shard = 9});
($ok, $out, $err) = run_tool('move', '--abort', $mapfile, $router3);
ok($ok, 'R2.1: the row as the tool wrote it is aborted') or diag $err;
is(fleet_objects($data[0]) + fleet_objects($data[1]), 0, 'R2.1: nothing of the move is left on the servers');
is(mallory_is_superuser(), 'f,f,f,f', 'R2.1: mallory is not a superuser anywhere');

#
# Second review, finding 3: mallory, while she had CREATE on public, left
# public.now() and public.lower(varchar) there; the template calls now()
# and lower() on a varchar column, where hers is the better match even
# behind pg_catalog.
#
my $d4 = fleet_node('data4');
$d4->start;
$d4->safe_psql('postgres', q{
	CREATE EXTENSION shardid;
	CREATE ROLE mallory LOGIN;
	GRANT CREATE ON SCHEMA public TO mallory;
	SET ROLE mallory;
	CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE plpgsql AS $$
	BEGIN
	  IF current_user <> 'mallory' THEN ALTER ROLE mallory SUPERUSER; END IF;
	  RETURN pg_catalog.now();
	END $$;
	CREATE FUNCTION public.lower(varchar) RETURNS text LANGUAGE plpgsql AS $$
	BEGIN
	  IF current_user <> 'mallory' THEN ALTER ROLE mallory SUPERUSER; END IF;
	  RETURN pg_catalog.lower($1::text);
	END $$;
	RESET ROLE;
	REVOKE CREATE ON SCHEMA public FROM mallory;});
write_map("$dir/d4.map", "provision 0 3\n0 8191 " . connstr($d4) . "\n");
write_map("$dir/d4-template.sql", q{
CREATE TABLE posts (
	id bigint PRIMARY KEY,
	tag varchar NOT NULL CHECK (lower(tag) <> ''),
	posted_at timestamptz NOT NULL DEFAULT now()
);
});
($ok, $out, $err) = run_tool('check', "$dir/d4.map");
ok(!$ok, 'R2.3: check reports the functions mallory left in public');
like($out, qr/problem: schema "public", on the search_path of the template and API files, holds function public\.lower\(character varying\) \(owned by role "mallory"\)/,
	'R2.3: check names her lower(varchar) and its owner');
like($out, qr/problem: schema "public", on the search_path of the template and API files, holds function public\.now\(\) \(owned by role "mallory"\)/,
	'R2.3: and her now()');
($ok, $out, $err) = run_tool('apply', "$dir/d4.map", "$dir/d4-template.sql");
ok(!$ok, 'R2.3: apply refuses to run the template');
like($err, qr/refusing to run template ".*d4-template\.sql" on ".*": schema "public" on its search_path holds objects of roles that shardid-fleet does not trust; nothing of it was run:\n  function public\.lower\(character varying\) \(owned by role "mallory"\)\n  function public\.now\(\) \(owned by role "mallory"\)/,
	'R2.3: naming both functions and their owner');
is($d4->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname ~ '^shard_|^shardid_template$'}),
	'0', 'R2.3: nothing was provisioned');
$d4->safe_psql('postgres', q{DROP FUNCTION public.now(), public.lower(varchar);});
($ok, $out, $err) = run_tool('check', "$dir/d4.map");
ok($ok, 'R2.3: check passes once the operator has dropped them') or diag $out;
($ok, $out, $err) = run_tool('apply', "$dir/d4.map", "$dir/d4-template.sql");
ok($ok, 'R2.3: and apply provisions the shards') or diag $err;
# pg_catalog's functions are pinned: no pg_depend row names them
is( $d4->safe_psql('postgres', q{
		SELECT (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
		          JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		         WHERE d.adrelid = 'shard_0003.posts'::regclass AND a.attname = 'posted_at')
		    || ' | ' || (SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
		                  WHERE c.conrelid = 'shard_0003.posts'::regclass AND c.contype = 'c')
		    || ' | ' || (SELECT count(*) FROM pg_depend d JOIN pg_proc p ON p.oid = d.refobjid
		                  WHERE d.refclassid = 'pg_proc'::regclass AND p.proname IN ('now', 'lower')
		                    AND ((d.classid = 'pg_attrdef'::regclass
		                          AND d.objid IN (SELECT oid FROM pg_attrdef WHERE adrelid = 'shard_0003.posts'::regclass))
		                      OR (d.classid = 'pg_constraint'::regclass
		                          AND d.objid IN (SELECT oid FROM pg_constraint WHERE conrelid = 'shard_0003.posts'::regclass))))}),
	q{now() | CHECK ((lower((tag)::text) <> ''::text)) | 0},
	'R2.3: the shard tables\' default and check call pg_catalog.now() and pg_catalog.lower(text)');
$d4->safe_psql('postgres', q{INSERT INTO shard_0003.posts (tag) VALUES ('A')});
is($d4->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}), 'f',
	'R2.3: mallory is not a superuser after the operator\'s insert');
is(mallory_is_superuser(), 'f,f,f,f', 'R2.3: nor anywhere else');
is($leaks, 0, 'second review: no run of the tool printed the password');


#
# Second review (an attacker with a plain LOGIN role, on PostgreSQL 15):
# findings R2.2, R2.4 and R2.5.
#

# R2.2: move --owner R ran R's code as a superuser on the new server.  appo
# owns shard_0010 and its table, with a CHECK constraint calling her own
# function, which makes her a superuser when it runs as anyone else.  On
# PostgreSQL 15 the subscription's workers run as its owner, a superuser:
# the move is refused, naming the function.  From 16 on they act as the
# table's owner (run_as_owner = false): the move goes through and the
# function runs as appo.
$_->safe_psql('postgres', 'CREATE ROLE appo LOGIN') for @all, $big;
$data[0]->safe_psql('postgres', q{
	ALTER SCHEMA shard_0010 OWNER TO appo;
	ALTER TABLE shard_0010.posts OWNER TO appo;
	SET ROLE appo;
	CREATE FUNCTION shard_0010.posts_ok(bigint) RETURNS boolean LANGUAGE plpgsql AS $$
	BEGIN
	  IF current_user <> 'appo' THEN
	    ALTER ROLE appo SUPERUSER;
	  END IF;
	  RETURN true;
	END $$;
	ALTER TABLE shard_0010.posts ADD CONSTRAINT posts_ok CHECK (shard_0010.posts_ok(id));});
sub appo_is_superuser
{
	return join ',', map { $_->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'appo'}) } @all;
}
my $rows10 = $data[0]->safe_psql('postgres', 'SELECT count(*) FROM shard_0010.posts');
my $pgnum = $data[1]->safe_psql('postgres', 'SHOW server_version_num');
if ($pgnum < 160000)
{
	($ok, $out, $err) = run_tool('move', '--owner', 'appo', $mapfile, $router_conn, 10, $conn[1]);
	ok(!$ok, 'R2.2: on PostgreSQL 15, move --owner appo refuses a shard whose table calls her function');
	like($err, qr/the tables of shard_0010 use a function that shardid-fleet does not trust; nothing was changed:\n  function shard_0010\.posts_ok\(bigint\), owned by role "appo", used by constraint posts_ok on table shard_0010\.posts\n/,
		'R2.2: naming the function, its owner and where it is used');
	like($err, qr/--owner does not extend to them/, 'R2.2: saying that --owner does not trust them');
	is(read_map($mapfile)->{10}, $conn[0], 'R2.2: the map file is unchanged');
	is($data[1]->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0010'}),
		'0', 'R2.2: nothing was copied to server 2');
	is(fleet_objects($data[0]) + fleet_objects($data[1]), 0, 'R2.2: no publication, subscription or slot was made');
}
else
{
	# stopped once the subscription is made, to look at it
	($ok, $out, $err) = run_tool({ SHARDID_FLEET_KILL_AT => 'after:subscription' },
		'move', '--owner', 'appo', $mapfile, $router_conn, 10, $conn[1]);
	is($data[1]->safe_psql('postgres', q{
			SELECT string_agg(subrunasowner::text, ',') FROM pg_subscription WHERE subname ~ '^shardid_0010_'}),
		'false', "R2.2: on PostgreSQL $pgnum the move's subscription has run_as_owner = false");
	($ok, $out, $err) = run_tool('move', '--resume', '--owner', 'appo', $mapfile, $router_conn);
	ok($ok, "R2.2: and move --owner appo goes through") or diag $err;
	is(read_map($mapfile)->{10}, $conn[1], 'R2.2: the map file puts shard 10 on server 2');
	is($data[1]->safe_psql('postgres', 'SELECT count(*) FROM shard_0010.posts'), $rows10,
		'R2.2: every row arrived, each checked as appo');
}
is(appo_is_superuser(), 'f,f,f,f', 'R2.2: appo is not a superuser on any server');

# R2.4: secrets on command lines.  The tool runs a move whose router,
# target and publisher connection strings carry secrets of their own
# (unique to this run), given as env:NAME and @FILE; the target's has an
# sslpassword too.  The command lines of the tool and of every process
# below it are read from /proc/PID/cmdline while it runs.  The test runs as
# the postgres OS user, but /proc/PID/cmdline is readable by every user:
# what it reads here is what nobody would read.  pg_dump and psql are
# wrappers that sleep half a second first, so that they are seen.
my $tag = sprintf('%d-%04d', $$, int(rand(10000)));
my %sec = (router => "router-pw-$tag", to => "to-pw-$tag", ssl => "to-sslpw-$tag", publisher => "pub-pw-$tag");
$big->safe_psql('postgres', 'DROP SCHEMA shard_0011 CASCADE');
my $slow = "$dir/slowbin";
mkdir $slow;
mkdir "$dir/tmp";
for my $prog ('pg_dump', 'psql')
{
	open my $fh, '>', "$slow/$prog" or die;
	print $fh "#!/bin/sh\n"
	  . "if [ -n \"\$PGSERVICEFILE\" ]; then stat -c '$prog service file %a %U' \"\$PGSERVICEFILE\" >>'$slow/slow.log';"
	  . " stat -c 'directory %a' \"\$(dirname \"\$PGSERVICEFILE\")\" >>'$slow/slow.log'; fi\n"
	  . "sleep 0.5\nexec '$bindir/$prog' \"\$@\"\n";
	close $fh;
	chmod 0755, "$slow/$prog";
}
write_map("$dir/to.conn", "# the new server\n" . connstr($big) . " password=$sec{to} sslpassword=$sec{ssl}\n");
chmod 0600, "$dir/to.conn";
my $rows11 = $data[0]->safe_psql('postgres', 'SELECT count(*) FROM shard_0011.posts');
my $t = tool_start(
	{
		PG_BINDIR => $slow,
		TMPDIR => "$dir/tmp",
		FLEET_ROUTER => connstr($router) . " password=$sec{router}",
		FLEET_PUBLISHER => connstr($data[0]) . " password=$sec{publisher}"
	},
	'move', '--publisher-conn', 'env:FLEET_PUBLISHER', $mapfile, 'env:FLEET_ROUTER', 11, "\@$dir/to.conn");
my $root = $t->{h}{KIDS}[0]{PID};
my ($samples, %seen, @leaked) = (0);
my $secrets_re = join '|', map { quotemeta } values %sec;
while ($t->{h}->pumpable)
{
	$t->{h}->pump_nb;
	# the tool and every process below it
	my %children;
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh> // '';
		close $fh;
		push @{ $children{$2} }, $1 if $line =~ /^(\d+) \(.*\) \S+ (\d+)/s;
	}
	my @tree = ($root);
	for (my $i = 0; $i < @tree; $i++)
	{
		push @tree, @{ $children{ $tree[$i] } // [] };
	}
	for my $pid (@tree)
	{
		open my $fh, '<', "/proc/$pid/cmdline" or next;
		local $/;
		my $cmdline = <$fh> // '';
		close $fh;
		next if $cmdline eq '';
		$samples++;
		my @argv = split /\0/, $cmdline;
		for (@argv)
		{
			$seen{$1}++ if m{/(pg_dump|psql|shardid-fleet)$};
		}
		push @leaked, join(' ', @argv) if $cmdline =~ /$secrets_re/;
	}
	select(undef, undef, undef, 0.002);
}
my ($status, $out4, $err4) = tool_finish($t);
is($status, 0, 'R2.4: the move with secrets in env:NAME and @FILE goes through') or diag $err4;
note "R2.4: $samples command lines read; seen: " . join(', ', map { "$_ x$seen{$_}" } sort keys %seen);
ok($seen{'shardid-fleet'} && $seen{pg_dump} && $seen{psql},
	'R2.4: the command lines of the tool, pg_dump and psql were read while they ran');
is(join("\n", @leaked), '', 'R2.4: no secret was ever on the command line of the tool or of a process below it');
unlike($out4 . $err4, qr/$secrets_re/, 'R2.4: nor in its output');
unlike($err4, qr/warning/, 'R2.4: no warning when no secret is on the command line');
my $slowlog = PostgreSQL::Test::Utils::slurp_file("$slow/slow.log");
like($slowlog, qr/^psql service file 600 \S+\ndirectory 700$/m,
	'R2.4: psql got the sslpassword in a service file of mode 600 in a directory of mode 700');
is(join(',', glob("$dir/tmp/*")), '', 'R2.4: which is removed afterwards');
my $maptext = PostgreSQL::Test::Utils::slurp_file($mapfile);
unlike($maptext, qr/$secrets_re/, 'R2.4: the rewritten map file holds no secret of the move');
is(read_map($mapfile)->{11}, connstr($big), 'R2.4: its line for shard 11 is the new server\'s without password and sslpassword');
my $recorded = $router->safe_psql('postgres', q{
	SELECT string_agg(concat_ws(' ', source, target, publisher), E'\n') FROM shardid_fleet.moves});
like($recorded, qr/\Q${\ connstr($big) }\E/, 'R2.4: the router\'s shardid_fleet.moves records the move');
unlike($recorded, qr/$secrets_re|password/,
	'R2.4: with no password or sslpassword in its source, target and publisher connection strings');
unlike($router->safe_psql('postgres', q{SELECT string_agg(concat_ws(' ', last_error), ' ') FROM shardid_fleet.moves}),
	qr/$secrets_re/, 'R2.4: nor in its errors');
unlike($router->safe_psql('postgres', q{SELECT string_agg(connstr, ' ') FROM shardid_fleet.map}),
	qr/$secrets_re/, 'R2.4: nor does the router\'s map hold a secret of the move');
is($big->safe_psql('postgres', 'SELECT count(*) FROM shard_0011.posts'), $rows11,
	'R2.4: every row of shard 11 is on the new server');
# a secret on the tool's own command line draws a warning
($ok, $out, $err) = run_tool('status', $mapfile, $router_conn);
like($err, qr/^shardid-fleet: warning: the connection string of ROUTER_CONN on the command line holds a password; any local user can read it there/m,
	'R2.4: a password on the tool\'s command line draws a warning');

# R2.5: masking.  Passwords with backslash-escaped spaces and in quotes, in
# a map that check reads, on reachable servers and on unreachable ones.
my $bs = 'Tr0ub4dor\ horse\ battery\ staple';
write_map("$dir/masked.map", join '',
	"0    99   " . connstr($data[0]) . " password=$bs\n",
	"100  199  " . connstr($data[1]) . " password='correct horse'\n",
	"200  299  host=/nonexistent port=1 password=$bs\n",
	"300  8191 host=/nonexistent port=2 password='correct horse'\n");
($ok, $out, $err) = tool('check', "$dir/masked.map");
ok(!$ok, 'R2.5: check reports the unreachable servers');
unlike($out . $err, qr/Tr0ub4dor|horse|battery|staple|correct/, 'R2.5: no word of either password is printed');
like($out, qr/^  \Q${\ connstr($data[0]) }\E password=\*{8}: 100 logical shards, provisioned: 0-99$/m,
	'R2.5: the backslash-escaped password is masked whole');
like($out, qr/^  \Q${\ connstr($data[1]) }\E password=\*{8}: 100 logical shards, provisioned: 100-199$/m,
	'R2.5: the quoted one too');
like($out, qr/^  server \Q${\ connstr($data[0]) }\E password=\*{8}: PostgreSQL /m, 'R2.5: the server is checked');
like($out, qr/^  server host=\/nonexistent port=1 password=\*{8}: unreachable \(cannot connect to server "host=\/nonexistent port=1 password=\*{8}": /m,
	'R2.5: an unreachable server\'s message is well-formed');
like($out, qr/^  server host=\/nonexistent port=2 password=\*{8}: unreachable \(cannot connect to server "host=\/nonexistent port=2 password=\*{8}": /m,
	'R2.5: with the quoted password too');
# a failing connect and a connection string libpq cannot parse, in a move
($ok, $out, $err) = tool('move', $mapfile, $router_conn, 12, "host=/nonexistent port=1 password='correct horse'");
like($err, qr/cannot connect to the new server "host=\/nonexistent port=1 password=\*{8}": /, 'R2.5: a failing connect is masked');
unlike($out . $err, qr/horse|correct/, 'R2.5: without a word of the password');
($ok, $out, $err) = tool('move', $mapfile, $router_conn, 12, 'host=/nonexistent port=1 password=correct horse battery');
like($err, qr/connection string of the new server "host=\/nonexistent port=1 password=\*{8}" is not valid: missing "=" after "\.\.\." in connection info string/,
	'R2.5: a connection string libpq cannot parse is masked, and so is what libpq quotes of it');
unlike($out . $err, qr/horse|correct|battery/, 'R2.5: without a word of the password');
is(appo_is_superuser(), 'f,f,f,f', 'R2.2: appo is not a superuser anywhere at the end');
is(mallory_is_superuser(), 'f,f,f,f', 'mallory is not a superuser anywhere at the end');

$_->stop for @all, $big, $d4;
done_testing();
