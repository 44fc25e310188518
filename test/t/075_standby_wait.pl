# Copyright: see the shardid LICENSE.
#
# 075_standby_wait.pl: an asynchronous failover loses the old primary's
# last transactions, but no new primary issues their IDs again (issue 22,
# item 6).  Under Patroni with the replicas' clocks 5 s behind, failovers
# from a stalled asynchronous primary reissued 101 to 215 IDs that clients
# had been told were committed.  A fence is now used only once every
# connected streaming standby has received it, waited for up to
# shardid.standby_wait; past that bound the primary goes on and counts it
# in shardid_fence_status.standby_timeouts.
#
# Two servers with streaming replication each time, the standby's clock
# 5 s behind the primary's (libfaketime on the standby only), and
# shardid.max_clock_regression = 10s so that the promoted standby waits
# out its clock instead of refusing.  Four client sessions insert IDs
# (INSERT ... RETURNING, autocommit) and write every ID they got back to a
# file.  The primary's walsender is stopped (SIGSTOP) while they run, they
# go on for 3 s, and then every process of the primary is killed with -9,
# as a power loss would (the walsender, stopped, never sends what it
# held); the standby is promoted and four sessions issue IDs there for
# 4 s.
#
#   A. shardid.standby_wait = 30s (longer than the stall): 0 IDs that a
#      client got from the old primary are issued again by the new one,
#      and none twice in its table.  (How many transactions the failover
#      lost is reported.)
#   B. shardid.standby_wait = 200ms: the primary goes on past the bound
#      (clients get IDs more than a second after the stall) and
#      shardid_fence_status.standby_timeouts counts it; how many IDs the
#      new primary then issues again is reported, not asserted: it is the
#      bound's documented cost.
#   C. The cost of a fence write, measured on B's primary before the
#      stall, with its standby streaming and with the standby stopped: 200
#      calls 15 ms apart under shardid.fence_lead = 10ms (so that each
#      call writes a fence), their total time and the fence writes they
#      made, printed as a note, never asserted.
#
# Every wait is bounded on the client side, and every process this test
# stops with SIGSTOP is killed, or continued and killed, in an END block.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use Time::HiRes qw(usleep);

plan skip_all => 'libfaketime is not installed (Debian package "faketime")'
  unless defined libfaketime();

my $tmp = PostgreSQL::Test::Utils::tempdir();

# Unix ms of the default epoch: an ID's time field counts ms after it.
my $epoch_ms = 1293840000000;

# Processes this test stopped with SIGSTOP: never left stopped.
my %stopped;

END
{
	for my $pid (keys %stopped)
	{
		kill 'CONT', $pid;
		kill 'KILL', $pid;
	}
}

# A primary (real clock) with a streaming standby whose clock runs 5 s
# behind, both with @conf; the table ids (no unique index) and sequence s.
sub pair
{
	my ($name, @conf) = @_;
	my $primary = shardid_node("${name}_primary", { allows_streaming => 1 },
		'shardid.max_clock_regression = 10s', @conf);
	$primary->start;
	$primary->safe_psql(
		'postgres', q{
CREATE EXTENSION shardid;
CREATE TABLE ids (phase text NOT NULL, id bigint NOT NULL,
	made timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE SEQUENCE s;
});
	$primary->backup($name);
	my $standby = PostgreSQL::Test::Cluster->new("${name}_standby");
	$standby->init_from_backup($primary, $name, has_streaming => 1);
	my $clock = "$tmp/$name.faketime";
	set_clock($clock, -5);
	start_faked($standby, $clock);
	ok(wait_for_clock($standby, -5), "$name: the standby's clock runs 5 s behind");
	ok( $primary->poll_query_until(
			'postgres', q{SELECT count(*) = 1 FROM pg_stat_replication WHERE state = 'streaming'}),
		"$name: the standby streams");
	return ($primary, $standby, $clock);
}

# Four client sessions on $node, each inserting 200 IDs of phase $phase
# per statement, 2,000 statements 10 ms apart (longer than the test lets
# them run), and writing the IDs it got back to a file of its own.
sub start_clients
{
	my ($node, $name, $phase) = @_;
	my $script = "$tmp/$name-$phase.sql";
	my $statement =
	    "INSERT INTO ids (phase, id) SELECT '$phase', shardid_next(5, 's') FROM generate_series(1, 200) RETURNING id;\n"
	  . "SELECT pg_sleep(0.01) \\g /dev/null\n";
	PostgreSQL::Test::Utils::append_to_file($script, $statement x 2000);
	my @clients;
	for my $i (1 .. 4)
	{
		my $out = "$tmp/$name-$phase-$i.ids";
		my ($err) = ('');
		push @clients,
		  {
			out => $out,
			h => IPC::Run::start(
				[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-f', $script, '-d', $node->connstr('postgres') ],
				'>', $out, '2>', \$err, IPC::Run::timeout(120))
		  };
	}
	return @clients;
}

# Wait for the clients to end (the server they talk to is gone); every ID
# they got, as a list.
sub client_ids
{
	my (@clients) = @_;
	my @ids;
	for my $c (@clients)
	{
		eval { $c->{h}->finish; 1 } or $c->{h}->kill_kill;
		push @ids, slurp_file($c->{out}) =~ /^(\d+)$/mg;
	}
	return @ids;
}

# The Unix time (s) of an ID.
sub id_time
{
	my ($id) = @_;
	return (($id >> 23) + $epoch_ms) / 1000;
}

# Stop $primary's walsender with SIGSTOP; its pid.
sub stall_walsender
{
	my ($primary, $name) = @_;
	my $pid = $primary->safe_psql('postgres', 'SELECT pid FROM pg_stat_replication');
	ok($pid =~ /^\d+$/, "$name: the walsender is found") or return 0;
	$stopped{$pid} = 1;
	kill 'STOP', $pid;
	return $pid;
}

# kill -9 every process of $node at once, as a power loss would.
sub power_loss
{
	my ($node, $name) = @_;
	my $pm = $node->{_pid};
	my @procs = ($pm, children_of($pm));
	kill 'KILL', @procs;
	for (1 .. 300)
	{
		last unless grep { -e "/proc/$_" } @procs;
		usleep(50_000);
	}
	ok(!(grep { -e "/proc/$_" } @procs), "$name: every process of the primary is gone");
	delete @stopped{@procs};
	$node->{_pid} = undef;    # as PostgreSQL::Test::Cluster's kill9 leaves it
	return;
}

# After the failover: $standby, promoted, takes IDs from four sessions for
# 4 s (waiting for its clock first); the IDs a client got from the old
# primary go into table received.  Returns (IDs got, of them lost with the
# old primary, of them issued again, duplicates in ids).
sub after_failover
{
	my ($standby, $name, @got) = @_;
	$standby->promote;
	ok($standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
		"$name: the standby is promoted");
	my $load = q{
DO $$
DECLARE t0 timestamptz;
BEGIN
	INSERT INTO ids (phase, id) VALUES ('after', shardid_next(5, 's'));
	t0 := clock_timestamp();
	WHILE clock_timestamp() < t0 + interval '4 s' LOOP
		INSERT INTO ids (phase, id) SELECT 'after', shardid_next(5, 's') FROM generate_series(1, 200);
		PERFORM pg_sleep(0.005);
	END LOOP;
END $$};
	my @s;
	for my $i (1 .. 4)
	{
		my ($out, $err) = ('', '');
		push @s,
		  {
			err => \$err,
			h => IPC::Run::start(
				[
					'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose',
					'-c', $load, '-d', $standby->connstr('postgres')
				],
				'>', \$out, '2>', \$err, IPC::Run::timeout(60))
		  };
	}
	for my $s (@s)
	{
		my $ok = eval { $s->{h}->finish; 1 } && $s->{h}->result(0) == 0;
		$s->{h}->kill_kill unless $ok;
		ok($ok, "$name: a session issues IDs on the promoted standby for 4 s") or diag ${ $s->{err} };
	}
	$standby->safe_psql('postgres', 'CREATE TABLE received (id bigint NOT NULL)');
	my $file = "$tmp/$name-received";
	PostgreSQL::Test::Utils::append_to_file($file, join('', map { "$_\n" } @got));
	$standby->safe_psql('postgres', "COPY received FROM '$file'; ANALYZE received, ids;");
	return split /\|/, $standby->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM received),
       (SELECT count(*) FROM received r WHERE NOT EXISTS (SELECT FROM ids i WHERE i.id = r.id AND i.phase = 'before')),
       (SELECT count(*) FROM received r JOIN ids i ON i.id = r.id AND i.phase = 'after'),
       (SELECT count(*) - count(DISTINCT id) FROM ids)});
}

# The stall itself: clients for a second, the walsender stopped, 3 s more,
# and the primary lost.  Returns the IDs the clients got, and the Unix
# time of the stall.
sub stall_and_lose
{
	my ($primary, $name, $before_loss) = @_;
	my @clients = start_clients($primary, $name, 'before');
	my $t = Time::HiRes::time();
	usleep(50_000)
	  until $primary->safe_psql('postgres', 'SELECT count(*) > 20000 FROM ids') eq 't'
	  or Time::HiRes::time() > $t + 30;
	ok($primary->safe_psql('postgres', 'SELECT count(*) > 20000 FROM ids') eq 't',
		"$name: the clients issue IDs");
	$primary->wait_for_catchup("${name}_standby");
	my $walsender = stall_walsender($primary, $name);
	my $t_stall = Time::HiRes::time();
	usleep(3_000_000);
	$before_loss->() if $before_loss;
	power_loss($primary, $name);
	my @got = client_ids(@clients);
	return (\@got, $t_stall);
}

# =====================================================================
# A. shardid.standby_wait = 30s.
# =====================================================================
{
	my ($primary, $standby) = pair('a', 'shardid.standby_wait = 30s');
	my ($got, $t_stall) = stall_and_lose($primary, 'a');
	my ($n, $lost, $again, $dups) = after_failover($standby, 'a', @$got);
	diag "A: clients got $n IDs from the old primary; $lost of them were lost with it; "
	  . "the new primary issued $again of them again";
	is($again, '0', "A: 0 of the $n IDs the clients got from the old primary are issued again");
	is($dups, '0', 'A: no ID twice in the new primary\'s table');
	$standby->stop;
}

# =====================================================================
# B. shardid.standby_wait = 200ms; C. the cost of a fence write.
# =====================================================================
{
	my ($primary, $standby, $clock) = pair('b', 'shardid.standby_wait = 200ms');

	# C. 200 calls, 15 ms apart, each writing a fence (lead 10 ms).
	my $cost = q{
DO $$
DECLARE t timestamptz; total interval := '0';
BEGIN
	FOR i IN 1 .. 200 LOOP
		t := clock_timestamp();
		PERFORM shardid_next(6, 's');
		total := total + (clock_timestamp() - t);
		PERFORM pg_sleep(0.015);
	END LOOP;
	RAISE NOTICE 'ms %', round(extract(epoch FROM total) * 1000, 1);
END $$};
	$primary->safe_psql('postgres',
		q{ALTER SYSTEM SET shardid.fence_lead = '10ms'; SELECT pg_reload_conf()});
	$primary->poll_query_until('postgres', q{SELECT current_setting('shardid.fence_lead') = '10ms'});
	my %c;
	for my $with ('with the standby', 'without it')
	{
		if ($with eq 'without it')
		{
			$standby->stop;
			$primary->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_replication');
		}
		my $writes = q{SELECT writes FROM shardid_fence_status WHERE datname = current_database()};
		my $w0 = $primary->safe_psql('postgres', $writes);
		my ($out, $err) = ('', '');
		$primary->psql('postgres', $cost, stdout => \$out, stderr => \$err, timeout => 60);
		my ($ms) = $err =~ /ms ([\d.]+)/;
		$c{$with} = sprintf '%s ms for %d fence writes', $ms // '?',
		  $primary->safe_psql('postgres', $writes) - $w0;
	}
	diag "C: 200 calls that each need a fence: $c{'with the standby'} with the standby streaming, "
	  . "$c{'without it'} without it";
	$primary->safe_psql('postgres', q{ALTER SYSTEM RESET shardid.fence_lead; SELECT pg_reload_conf()});
	start_faked($standby, $clock);
	ok( $primary->poll_query_until(
			'postgres', q{SELECT count(*) = 1 FROM pg_stat_replication WHERE state = 'streaming'}),
		'b: the standby streams again');

	# B. The stall, with the bound shorter than it.
	my $timeouts;
	my ($got, $t_stall) = stall_and_lose(
		$primary, 'b',
		sub {
			$timeouts = sql_outcome($primary, 'postgres',
				q{SELECT standby_timeouts FROM shardid_fence_status WHERE datname = current_database()});
		});
	is($timeouts->{code}, 'none', 'B: shardid_fence_status has standby_timeouts')
	  or diag explain $timeouts;
	cmp_ok($timeouts->{out} =~ /^(\d+)/ ? $1 : -1, '>', 0,
		'B: fence writes that gave up waiting for the stalled standby are counted');
	my $late = grep { id_time($_) > $t_stall + 1.2 } @$got;
	cmp_ok($late, '>', 0,
		"B: past the 200 ms bound the primary went on ($late IDs more than 1.2 s after the stall)");
	my ($n, $lost, $again, $dups) = after_failover($standby, 'b', @$got);
	diag "B: clients got $n IDs from the old primary; $lost of them were lost with it; "
	  . "the new primary issued $again of them again (the bound's cost, not asserted)";
	$standby->stop;
}

done_testing();
