# test/perl/FleetTest.pm: what the fleet TAP tests share: data servers with
# logical replication, the tool, writers through the router that log every
# row they were given and when, and the checks that every row is where the
# map says, readable through the router by ID, with its ID unchanged.
package FleetTest;

use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use Exporter 'import';
use IPC::Run;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ShardidTest;

our @EXPORT = qw(fleet_node fleet_servers fleet_setup fleet_provision connstr tool tool_start tool_finish read_map
  write_map setup_writers start_writers stop_writers writer_report failed_writes
  check_fleet fleet_objects restart_killed $tool $examples $nshards);

my $tree = abs_path(dirname(__FILE__) . '/../..');
our $tool = "$tree/tools/shardid-fleet";
our $examples = "$tree/tools/examples";
# no run of the tool in a test takes this long: one that does is killed
# and fails, so that a stuck wait (a sync that never ends) fails the test
# instead of hanging it
our $tool_timeout = 600;
our $nshards = 64;      # logical shards in use: posts_user_shard() is user_id % 64

# The fleet's router is PL/Proxy: without it (Debian has no
# postgresql-19-plproxy yet) the fleet tests have nothing to test.
{
	my ($sharedir) = PostgreSQL::Test::Utils::run_command([ 'pg_config', '--sharedir' ]);
	chomp $sharedir;
	plan skip_all => "PL/Proxy is not installed in $sharedir (Debian package postgresql-NN-plproxy)"
	  unless -e "$sharedir/extension/plproxy.control";
}

# A data server or router: shardid preloaded, logical replication on.
sub fleet_node
{
	my ($name, @conf) = @_;
	return shardid_node(
		$name,
		'wal_level = logical',
		'max_wal_senders = 10',
		'max_replication_slots = 10',
		'max_logical_replication_workers = 4',
		'max_worker_processes = 16',
		'max_connections = 60',
		'wal_retrieve_retry_interval = 200ms',
		@conf);
}

# Three data servers and a router, started: (\@data, $router).
sub fleet_servers
{
	my @data;
	for my $i (1 .. 3)
	{
		my $node = fleet_node("data$i");
		$node->start;
		push @data, $node;
	}
	my $router = fleet_node('router');
	$router->start;
	return (\@data, $router);
}

# fleet_setup(): the fleet of 050 and 052, started: three data servers,
# a router, and a map file (in a temporary directory) that provisions
# logical shards 0 to 63 and puts 0-20 on server 1, 21-41 on server 2 and
# the rest on server 3.  Returns a hash reference: data (the data nodes),
# conn (their connection strings, as the map names them), router,
# router_conn, dir (the temporary directory) and mapfile.
sub fleet_setup
{
	my ($data, $router) = fleet_servers();
	my @conn = map { connstr($_) } @$data;
	my $dir = PostgreSQL::Test::Utils::tempdir;
	my $mapfile = "$dir/fleet.map";
	write_map($mapfile, <<"EOF");
# logical shard ranges -> data servers
provision 0 63
0    20    $conn[0]
21   41    $conn[1]
42   8191  $conn[2]
EOF
	return {
		data => $data,
		conn => \@conn,
		router => $router,
		router_conn => connstr($router),
		dir => $dir,
		mapfile => $mapfile
	};
}

# fleet_provision(FLEET, [TEMPLATE]): apply TEMPLATE (default: the example
# posts template) with the example shard API on every server of FLEET's
# map, then build the router from the map with the example router API.
# Returns what tool() returned for each, as array references:
# ([ok, stdout, stderr] of apply, [ok, stdout, stderr] of router).
sub fleet_provision
{
	my ($fleet, $template) = @_;
	my @apply = tool('apply', '--api', "$examples/posts-shard-api.sql",
		$fleet->{mapfile}, $template // "$examples/posts-template.sql");
	my @router = tool('router', '--api', "$examples/posts-router-api.sql",
		$fleet->{mapfile}, $fleet->{router_conn});
	return (\@apply, \@router);
}

sub connstr
{
	my ($node, $db) = @_;
	return 'host=' . $node->host . ' port=' . $node->port . ' dbname=' . ($db // 'postgres');
}

# tool(ARGS...): run shardid-fleet; (exit ok, stdout, stderr).  An
# environment for the run may be given as a hash ref first.
sub tool
{
	my $env = ref $_[0] eq 'HASH' ? shift : {};
	my ($stdout, $stderr) = ('', '');
	local %ENV = (%ENV, %$env);
	my $ok = eval {
		IPC::Run::run([ $tool, @_ ], '>', \$stdout, '2>', \$stderr,
			IPC::Run::timeout($tool_timeout));
	};
	if ($@)
	{
		$stderr .= "\n(killed: shardid-fleet $_[0] did not end within $tool_timeout s: $@)";
		$ok = 0;
	}
	note "shardid-fleet @{[ $_[0] ]}:\n$stdout$stderr";
	return ($ok, $stdout, $stderr);
}

# tool_start(ENV, ARGS...): start shardid-fleet in the background
sub tool_start
{
	my ($env, @args) = @_;
	my ($stdout, $stderr) = ('', '');
	local %ENV = (%ENV, %$env);
	my $h = IPC::Run::start([ $tool, @args ], '>', \$stdout, '2>', \$stderr,
		IPC::Run::timeout($tool_timeout));
	return { h => $h, out => \$stdout, err => \$stderr, args => \@args };
}

# tool_finish(HANDLE): wait for it; (exit status, stdout, stderr), where the
# exit status is -SIGNAL for a process killed by a signal
sub tool_finish
{
	my ($t) = @_;
	my $status;
	if (eval { $t->{h}->finish; 1 })
	{
		my $full = $t->{h}->full_result(0);
		$status = ($full & 127) ? -($full & 127) : ($full >> 8);
	}
	else
	{
		my $why = $@;
		$t->{h}->kill_kill;
		${ $t->{err} } .= "\n(killed: shardid-fleet $t->{args}[0] did not end within $tool_timeout s: $why)";
		$status = -9;
	}
	note "shardid-fleet $t->{args}[0] (exit $status):\n${ $t->{out} }${ $t->{err} }";
	return ($status, ${ $t->{out} }, ${ $t->{err} });
}

# read_map(FILE): logical shard -> connection string
sub read_map
{
	my ($file) = @_;
	my %owner;
	open my $fh, '<', $file or die "cannot read $file: $!";
	while (my $line = <$fh>)
	{
		next if $line =~ /^\s*(#|$)/ || $line =~ /^\s*provision\s/;
		$line =~ /^\s*(\d+)\s+(\d+)\s+(.*?)\s*$/ or die "bad map line: $line";
		$owner{$_} = $3 for $1 .. $2;
	}
	close $fh;
	return \%owner;
}

sub write_map
{
	my ($file, $text) = @_;
	open my $fh, '>', $file or die "cannot write $file: $!";
	print $fh $text;
	close $fh;
	return;
}

# On the router: a log of every row the writers were given (with the time
# each insert returned), failed attempts, a stop switch, and the writers.
# On each data server: shard_rows(s), every row of a logical shard, so
# that a test can take a snapshot through the router.
sub setup_writers
{
	my ($router, @data) = @_;
	$router->safe_psql('postgres', q{
CREATE TABLE load_log (writer int, id bigint, user_id bigint, body text,
                       attempts int, at timestamptz DEFAULT clock_timestamp());
CREATE INDEX ON load_log (writer, at);
CREATE TABLE load_err (writer int, user_id bigint, sqlstate text, message text,
                       at timestamptz DEFAULT clock_timestamp());
CREATE TABLE load_ctl (stop boolean NOT NULL);
INSERT INTO load_ctl VALUES (false);

-- Insert posts through the router, one a transaction, for users of the
-- given logical shards, until told to stop, pausing between inserts if
-- asked to.  A failed insert is retried
-- every 10 ms for up to a minute (the router re-reads the map on every
-- call; a shard that is being switched refuses for a moment).
CREATE PROCEDURE load_writer(w int, shards int[], pause float8 DEFAULT 0) LANGUAGE plpgsql AS $$
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
    u := ((i * 7919 + w * 104729) % 5000) * 64 + shards[1 + i % cardinality(shards)];
    b := format('w%s-%s', w, i);
    tries := 0;
    LOOP
      tries := tries + 1;
      BEGIN
        new_id := insert_post(u, b);
        EXIT;
      EXCEPTION WHEN OTHERS THEN
        INSERT INTO load_err VALUES (w, u, SQLSTATE, SQLERRM);
        IF tries >= 6000 THEN RAISE; END IF;
        PERFORM pg_sleep(0.01);
      END;
    END LOOP;
    INSERT INTO load_log (writer, id, user_id, body, attempts)
    VALUES (w, new_id, u, b, tries);
    COMMIT;
    IF pause > 0 THEN
      PERFORM pg_sleep(pause);
    END IF;
  END LOOP;
END $$;

CREATE FUNCTION shard_rows(shard integer)
RETURNS TABLE (id bigint, user_id bigint, body text)
LANGUAGE plproxy AS $$
  CLUSTER 'shardid';
  RUN ON shard;
$$;
});
	data_functions($_) for @data;
	return;
}

# the data server's half of shard_rows()
sub data_functions
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
CREATE OR REPLACE FUNCTION shard_rows(shard integer)
RETURNS TABLE (id bigint, user_id bigint, body text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY EXECUTE format('SELECT p.id, p.user_id, p.body FROM %I.posts AS p',
                              posts_shard_schema(shard));
END $$;
});
	return;
}

# start_writers(ROUTER, [WRITER, [SHARDS...], PAUSE], ...)
sub start_writers
{
	my ($router, @specs) = @_;
	$router->safe_psql('postgres', 'UPDATE load_ctl SET stop = false');
	my @w;
	for my $spec (@specs)
	{
		my ($id, $shards, $pause) = @$spec;
		my ($o, $e) = ('', '');
		push @w,
		  {
			id => $id,
			out => \$o,
			err => \$e,
			h => IPC::Run::start(
				[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', connstr($router),
				  '-c', "CALL load_writer($id, '{@{[ join ',', @$shards ]}}', @{[ $pause // 0 ]})" ],
				'>', \$o, '2>', \$e)
		  };
	}
	# each writer has written
	my $n = scalar @specs;
	$router->poll_query_until('postgres',
		"SELECT count(DISTINCT writer) = $n FROM load_log WHERE writer IN ("
		  . join(',', map { $_->[0] } @specs) . ')')
	  or die 'writers did not start';
	return \@w;
}

sub stop_writers
{
	my ($router, $writers) = @_;
	$router->safe_psql('postgres', 'UPDATE load_ctl SET stop = true');
	for my $w (@$writers)
	{
		ok($w->{h}->finish, "writer $w->{id} ran to the end without giving up")
		  or diag ${ $w->{err} };
	}
	return;
}

# writer_report(ROUTER, FROM, TO): for each writer, rows, failed attempts
# and its longest stall (the longest time between two of its inserts
# returning), overall and between FROM and TO; noted, not asserted
sub writer_report
{
	my ($router, $from, $to) = @_;
	my $r = $router->safe_psql('postgres', qq{
		WITH g AS (
		  SELECT writer, at, at - lag(at) OVER (PARTITION BY writer ORDER BY at) AS gap
		    FROM load_log WHERE writer > 0)
		SELECT writer, count(*),
		       (SELECT count(*) FROM load_err e WHERE e.writer = g.writer),
		       round(extract(epoch FROM max(gap)) * 1000),
		       coalesce(round(extract(epoch FROM max(gap) FILTER (
		         WHERE at BETWEEN '$from' AND '$to'::timestamptz + interval '1 second')) * 1000), 0)
		  FROM g GROUP BY writer ORDER BY writer});
	my %stall;
	for my $line (split /\n/, $r)
	{
		my ($w, $n, $errs, $max, $during) = split /\|/, $line;
		$stall{$w} = $during;
		note sprintf('writer %d: %d rows, %d failed attempts retried, longest stall %d ms '
			  . '(%d ms during the move)', $w, $n, $errs, $max, $during);
	}
	return \%stall;
}

# failed_writes(ROUTER, WHAT, WRITERS...): the writers' failed attempts by
# SQLSTATE (each was retried), noted; returns (retryable, other): 40001
# and 40P01 are the retryable kind, which drivers and ORMs retry
sub failed_writes
{
	my ($router, $what, @writers) = @_;
	my $r = $router->safe_psql('postgres', qq{
		SELECT sqlstate, count(*), min(message) FROM load_err
		 WHERE writer IN (@{[ join ',', @writers ]}) GROUP BY 1 ORDER BY 1});
	my ($retryable, $other) = (0, 0);
	for my $line (split /\n/, $r)
	{
		my ($state, $n, $msg) = split /\|/, $line, 3;
		note "$what: $n failed attempts with SQLSTATE $state (e.g. \"$msg\")";
		if ($state eq '40001' || $state eq '40P01') { $retryable += $n }
		else { $other += $n }
	}
	note "$what: $retryable retryable failed attempts (40001/40P01), $other others";
	return ($retryable, $other);
}

# restart(NODE): start a node whose postmaster was killed with SIGKILL, once
# the old one is gone (it stays a zombie for a moment)
sub restart_killed
{
	my ($node) = @_;
	my $pidfile = $node->data_dir . '/postmaster.pid';
	if (open my $fh, '<', $pidfile)
	{
		my $pid = <$fh>;
		close $fh;
		chomp $pid;
		for (1 .. 300)
		{
			last unless kill 0, $pid;
			waitpid($pid, 1);
			usleep(100_000);
		}
	}
	for (1 .. 60)
	{
		$node->{_pid} = undef;
		return 1 if $node->start(fail_ok => 1);
		usleep(500_000);
	}
	return 0;
}

# Publications, subscriptions and replication slots of moves on a node: the
# query, and its count
our $fleet_objects_sql = q{
		SELECT (SELECT count(*) FROM pg_publication WHERE pubname ~ '^shardid_')
		     + (SELECT count(*) FROM pg_subscription WHERE subname ~ '^shardid_')
		     + (SELECT count(*) FROM pg_replication_slots)};

sub fleet_objects
{
	my ($node) = @_;
	return $node->safe_psql('postgres', $fleet_objects_sql);
}

# check_fleet(NAME, ROUTER, MAPFILE, [DATA NODES or [NODE, CONN]], [SNAPSHOT TABLES]):
# every row the writers were given and every row of each snapshot is
# readable through the router by ID, unchanged; the fleet holds each ID
# once, on the server the map names, in the schema of the shard the ID
# names.
sub check_fleet
{
	my ($what, $router, $mapfile, $data, $snapshots) = @_;
	my $r = $router->safe_psql('postgres', q{
		SELECT count(*),
		       count(*) FILTER (WHERE p.user_id = l.user_id AND p.body = l.body)
		  FROM load_log l
		  LEFT JOIN get_posts(ARRAY(SELECT id FROM load_log)) p USING (id)});
	my ($total, $same) = split /\|/, $r;
	is($same, $total, "$what: every row the writers were given is readable through the router by ID, unchanged ($total)");
	for my $snap (@{ $snapshots // [] })
	{
		# in batches, by ID, through the router
		my $n = $router->safe_psql('postgres', "SELECT count(*) FROM $snap");
		my $found = 0;
		for my $k (0 .. 9)
		{
			$found += $router->safe_psql('postgres', qq{
				SELECT count(*) FROM $snap s
				  JOIN get_posts(ARRAY(SELECT id FROM $snap WHERE id % 10 = $k)) p USING (id)
				 WHERE p.user_id = s.user_id AND p.body = s.body});
		}
		is($found, $n, "$what: every row of $snap is readable through the router by ID, unchanged ($n)");
	}
	# the fleet, through the router and from each server
	$r = $router->safe_psql('postgres', q{
		SELECT count(*), count(DISTINCT id),
		       count(*) FILTER (WHERE shard_schema <> format('shard_%s', lpad(shardid_shard(id)::text, 4, '0'))),
		       count(*) FILTER (WHERE shardid_shard(id) <> user_id % 64)
		  FROM posts_here()});
	my ($rows, $distinct, $wrong_schema, $wrong_shard) = split /\|/, $r;
	is($rows - $distinct, 0, "$what: 0 duplicate IDs across the fleet ($rows rows)");
	is($wrong_schema, 0, "$what: each row is in the schema of the shard its ID names");
	is($wrong_shard, 0, "$what: each row's ID names its user's shard");
	my $owner = read_map($mapfile);
	my $misplaced = 0;
	for my $d (@$data)
	{
		# a node, or a node and its connection string in the map
		my ($node, $c) = ref $d eq 'ARRAY' ? @$d : ($d, connstr($d));
		my $s = $node->safe_psql('postgres', q{
			SELECT string_agg(DISTINCT substr(shard_schema, 7)::int::text, ',') FROM posts_here()});
		$misplaced += grep { ($owner->{$_} // '') ne $c } split /,/, $s;
	}
	is($misplaced, 0, "$what: each shard's rows are on the server the map names");
	return;
}

1;
