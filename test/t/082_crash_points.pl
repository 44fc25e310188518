# Copyright: see the shardid LICENSE.
#
# 082_crash_points.pl: every named fault point of the fence protocol's C
# (src/fault.h), swept: each point x {crash, stall} x {asynchronous,
# synchronous standby}, under load, then a restart or a promotion with the
# clock set back; no ID is handed out twice.  Issue 30, part 4.
#
# Long tier only: PG_TEST_EXTRA must name shardid_faults, and shardid must
# be built with `make FAULTS=1` (test/run.sh does so when PG_TEST_EXTRA
# names shardid_faults).  SHARDID_FAULT_POINTS (a list of point names)
# sweeps those points only.
#
# The world: a primary and a streaming standby (asynchronous, then
# synchronous: synchronous_standby_names = '*'), both under libfaketime;
# three sequences, one busy (two sessions, 50 IDs a statement), one sparse
# (one ID now and then), one set back by its owner (setval to 1 every few
# statements), and 20 more that the mixed session takes in turn, so that
# with shardid.max_sequences = 16 slots start and are evicted all the
# time; the mixed session also rolls back a transaction that took IDs.
# Every ID goes into the table ids (seq, id), which has no unique index,
# and every ID psql printed (RETURNING: the client had it, whatever became
# of its transaction) into a client log.
#
# Each case arms the point in the load's sessions (PGOPTIONS: the
# settings shardid.fault_point and shardid.fault_action):
#   crash: the server crashes at the point (abort(): the postmaster
#          restarts everything), twice, each time under a new load; then
#          the primary is stopped (immediate) and started with its clock
#          2.5 s back (shardid.max_clock_regression 3 s);
#   stall: a backend stalls at the point (4 s); meanwhile the primary's
#          postmaster is killed with -9, and the standby is promoted with
#          its clock 2.5 s behind the old primary's; a new standby is made
#          from the new primary.
# Then a load without faults runs on the primary, and the case counts:
# duplicates in the table (count(*) - count(DISTINCT (seq, id))), and in
# what the clients received: both must be 0.  Every error a client got
# must carry a SQLSTATE, and none (in the clients or any server's log) is
# XX000.  The points x outcomes table is printed (note) at the end.
#
# Run time: 44 cases, 246 checks, 322 s and 463 s in two runs on a shared,
# loaded 2-core machine (about 7 to 10 s a case).

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
use Time::HiRes qw(usleep);

plan skip_all => 'the crash sweep runs when PG_TEST_EXTRA names shardid_faults'
  unless test_extra('shardid_faults');
plan skip_all => 'libfaketime is not installed (Debian package "faketime")'
  unless defined libfaketime();

# The points of src/fault.h, in the order of a fence write.
my @points = qw(seq_after_insert db_after_insert after_flush
  before_standby_wait after_standby_wait db_after_publish after_publish
  xact_commit xact_abort slot_start slot_evict);
@points = split ' ', $ENV{SHARDID_FAULT_POINTS} if $ENV{SHARDID_FAULT_POINTS};
my $crashes = 2;         # crashes at each point, each under a new load
my $back = 2.5;          # seconds the clock is set back at a restart
my $fire_timeout = 30;   # seconds a load may take to reach a point

my $tmp = PostgreSQL::Test::Utils::tempdir();
my @conf = (
	'shardid.max_clock_regression = 3s',
	'shardid.fence_lead = 100ms',
	'shardid.max_sequences = 16',
	'log_error_verbosity = verbose',
	'wal_sender_timeout = 10s',
	# a crash restarts the server, as in production (the TAP clusters' own
	# setting is off); the load's statements are not logged
	'restart_after_crash = on',
	'log_statement = none');

# ---- the load ---------------------------------------------------------
my %script;
{
	my $busy = "\\set VERBOSITY verbose\n"
	  . (q{INSERT INTO ids SELECT 'busy', shardid_next(1, 'busy') FROM generate_series(1, 50) RETURNING seq, id;
SELECT pg_sleep(0.02);
} x 20000);
	my $mixed = "\\set VERBOSITY verbose\n";
	for my $i (1 .. 5000)
	{
		$mixed .= q{INSERT INTO ids SELECT 'sparse', shardid_next(2, 'sparse') RETURNING seq, id;
INSERT INTO ids SELECT 'setback', shardid_next(3, 'setback') FROM generate_series(1, 20) RETURNING seq, id;
INSERT INTO ids SELECT s, shardid_next(10 + i, s::regclass) FROM generate_series(1, 20) i, format('c%s', i) s RETURNING seq, id;
BEGIN;
INSERT INTO ids SELECT 'busy', shardid_next(1, 'busy') FROM generate_series(1, 5) RETURNING seq, id;
ROLLBACK;
SELECT pg_sleep(0.05);
};
		$mixed .= "SELECT setval('setback', 1);\n" if $i % 5 == 0;
	}
	for my $kind (qw(busy mixed))
	{
		$script{$kind} = "$tmp/$kind.sql";
		open my $fh, '>', $script{$kind} or die "could not write $script{$kind}: $!";
		print $fh $kind eq 'busy' ? $busy : $mixed;
		close $fh or die;
	}
}

my $session_no = 0;

# Start the load on $node: two busy sessions and a mixed one, armed with
# $arm ([point, action]) if given.  Each writes what it received and its
# errors to files of its own.
sub start_load
{
	my ($node, $arm) = @_;
	my @s;
	for my $kind (qw(busy busy mixed))
	{
		$session_no++;
		my %s = (out => "$tmp/s$session_no.out", err => "$tmp/s$session_no.err");
		local $ENV{PGOPTIONS} =
		  $arm
		  ? "-c shardid.fault_point=$arm->[0] -c shardid.fault_action=$arm->[1] -c shardid.fault_stall=4s"
		  : '';
		$s{h} = IPC::Run::start(
			[
				'psql', '-X', '-q', '-A', '-t',
				'-d', $node->connstr('postgres'),
				'-f', $script{$kind}
			],
			'<', \undef, '>', $s{out}, '2>', $s{err});
		push @s, \%s;
	}
	return \@s;
}

# What every client received, across the whole test: seq|id => times.
my %received;

# End the sessions, and add what they received and the errors they got to
# %$outcome: ids, client_dups, and codes (SQLSTATE => count), unclean (an
# error without one).
sub end_load
{
	my ($sessions, $outcome) = @_;
	for my $s (@$sessions)
	{
		$s->{h}->kill_kill;
		open my $out, '<', $s->{out} or die "could not read $s->{out}: $!";
		while (my $line = <$out>)
		{
			next unless $line =~ /^(\w+)\|(\d+)$/;
			$outcome->{ids}++;
			$outcome->{client_dups}++ if $received{"$1|$2"}++;
		}
		close $out;
		open my $err, '<', $s->{err} or die "could not read $s->{err}: $!";
		while (my $line = <$err>)
		{
			if ($line =~ /\b(?:ERROR|FATAL|PANIC):\s+([0-9A-Z]{5}): /)
			{
				$outcome->{codes}{$1}++;
			}
			# refused at connection, before psql could ask for the SQLSTATE
			# (libpq prints none): the server's own startup messages, all
			# 57P03 (ERRCODE_CANNOT_CONNECT_NOW)
			elsif ($line =~
				/^psql: error: connection to server .* failed: FATAL:\s+the database system is (?:in recovery mode|not yet accepting connections|starting up|shutting down)$/
			  )
			{
				$outcome->{codes}{'57P03'}++;
			}
			# core's message when a backend finds its postmaster gone
			# (ERRCODE_ADMIN_SHUTDOWN), which psql may print without its
			# SQLSTATE when it arrives between statements, or while it
			# connects (a backend forked just before the postmaster's kill)
			elsif ($line =~
				/^(?:psql: error: connection to server .* failed: )?FATAL:\s+terminating connection due to unexpected postmaster exit$/
			  )
			{
				$outcome->{codes}{'57P01'}++;
			}
			# no server to connect to (between a crash and the restart)
			elsif ($line =~ /^psql: error: connection to server .* failed: (?!FATAL|ERROR)/)
			{
				$outcome->{codes}{connect}++;
			}
			elsif ($line =~ /\b(?:ERROR|FATAL|PANIC):/)
			{
				$outcome->{unclean}++;
				note "an error without a SQLSTATE: $line";
			}
		}
		close $err;
		unlink $s->{out}, $s->{err};
	}
	return;
}

# How many times the log of $node says the point fired, from byte $from.
sub fired
{
	my ($node, $from, $point, $action) = @_;
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile);
	$log = substr($log, $from) if $from < length $log;
	my @hits = $log =~ /shardid fault point \Q$point\E fired: \Q$action\E/g;
	return scalar @hits;
}

# Wait until $node's log says the point fired $want times since byte
# $from; false after $fire_timeout seconds.
sub wait_fired
{
	my ($node, $from, $point, $action, $want) = @_;
	for (1 .. $fire_timeout * 10)
	{
		return 1 if fired($node, $from, $point, $action) >= $want;
		usleep(100_000);
	}
	return 0;
}

# Wait until $node accepts queries again (after a crash and its restart).
sub wait_ready
{
	my ($node) = @_;
	$node->poll_query_until('postgres', 'SELECT true')
	  or BAIL_OUT($node->name . ' did not come back after a crash');
	return;
}

# ---- the nodes ----------------------------------------------------------
my $schema = q{
CREATE EXTENSION shardid;
CREATE SEQUENCE busy;
CREATE SEQUENCE sparse;
CREATE SEQUENCE setback;
CREATE TABLE ids (seq text NOT NULL, id bigint NOT NULL);
DO $$
BEGIN
	FOR i IN 1 .. 20 LOOP
		EXECUTE format('CREATE SEQUENCE %I', 'c' || i);
	END LOOP;
END
$$;
};

my $node_no = 0;
my $offset = 0;    # the clock of the current primary, from the real one

# A new standby of $primary, from a fresh base backup, its clock at the
# primary's.
sub new_standby
{
	my ($primary) = @_;
	$node_no++;
	my $backup = "b$node_no";
	$primary->backup($backup);
	my $standby = PostgreSQL::Test::Cluster->new("standby$node_no");
	$standby->init_from_backup($primary, $backup, has_streaming => 1);
	$standby->{shardid_clock} = "$tmp/standby$node_no.faketime";
	set_clock($standby->{shardid_clock}, $offset);
	start_faked($standby, $standby->{shardid_clock});
	return $standby;
}

my @rows;    # the outcomes table

for my $mode (qw(async sync))
{
	my $primary = shardid_node("primary_$mode", { allows_streaming => 1 }, @conf);
	$primary->{shardid_clock} = "$tmp/primary_$mode.faketime";
	$offset = 0;
	set_clock($primary->{shardid_clock}, $offset);
	start_faked($primary, $primary->{shardid_clock});
	if ($primary->safe_psql('postgres',
			q{SELECT current_setting('shardid.fault_point', true) IS NULL}) eq 't')
	{
		fail('shardid is built with its fault points (make FAULTS=1; test/run.sh '
			  . 'builds so when PG_TEST_EXTRA names shardid_faults)');
		$primary->stop;
		done_testing();
		exit;
	}
	$primary->safe_psql('postgres', $schema);
	my $standby = new_standby($primary);
	if ($mode eq 'sync')
	{
		# synchronous from now on, the standby made: every standby made
		# after has it from its base backup, for when it is promoted
		$primary->append_conf('postgresql.conf', "synchronous_standby_names = '*'");
		$primary->reload;
		$standby->append_conf('postgresql.conf', "synchronous_standby_names = '*'");
		$standby->reload;
		$primary->poll_query_until('postgres',
			q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'})
		  or BAIL_OUT('the standby did not become synchronous');
	}
	%received = ();

	for my $point (@points)
	{
		for my $action (qw(crash stall))
		{
			my %o = (point => $point, action => $action, mode => $mode,
				ids => 0, client_dups => 0, fired => 0, codes => {},
				unclean => 0);
			my $what = "$mode, $point, $action";
			if ($action eq 'crash')
			{
				for my $round (1 .. $crashes)
				{
					my $from = -s $primary->logfile;
					my $load = start_load($primary, [ $point, 'crash' ]);
					my $hit = wait_fired($primary, $from, $point, 'crash', 1);
					end_load($load, \%o);
					$o{fired} += $hit;
					last unless $hit;
					wait_ready($primary);
				}
				# restart with the clock set back
				$primary->stop('immediate');
				$offset -= $back;
				set_clock($primary->{shardid_clock}, $offset);
				start_faked($primary, $primary->{shardid_clock});
				ok(wait_for_clock($primary, $offset), "$what: restarted with the clock $back s back");
			}
			else
			{
				my $from = -s $primary->logfile;
				my $load = start_load($primary, [ $point, 'stall' ]);
				my $hit = wait_fired($primary, $from, $point, 'stall', 1);
				$o{fired} += $hit;
				# the postmaster killed while a backend stalls at the point
				my $pid = $primary->{_pid};
				my @backends = children_of($pid);
				kill9_and_reap($primary);
				$offset -= $back;
				set_clock($standby->{shardid_clock}, $offset);
				ok(wait_for_clock($standby, $offset), "$what: the standby's clock is $back s back");
				$standby->promote;
				# the old backends and their clients run on meanwhile
				$primary = $standby;
				$standby = new_standby($primary);
				usleep(1_000_000);
				end_load($load, \%o);
				kill 'KILL', @backends;
			}
			# a load without faults, then the count
			my $load = start_load($primary);
			usleep(2_000_000);
			end_load($load, \%o);
			my ($dups, $rows) = duplicates($primary, 'ids', key => '(seq, id)');
			$o{table_dups} = $dups;
			$o{rows} = $rows;
			ok($o{fired} >= 1, "$what: the point was reached");
			is($dups, '0', "$what: no ID twice in the table ($rows rows)");
			is($o{client_dups}, 0, "$what: no ID handed out twice ($o{ids} received)");
			ok(!$o{codes}{XX000} && !$o{unclean}, "$what: every error a clean SQLSTATE");
			push @rows, \%o;
		}
	}

	# no server of this mode logged an internal error
	for my $node ($primary, $standby)
	{
		my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile);
		unlike($log, qr/\bXX000\b/, "$mode: no XX000 in " . $node->name . "'s log");
	}
	$standby->stop;
	$primary->stop;
}

# ---- the points x outcomes table ----------------------------------------
my $table = sprintf "%-6s %-20s %-6s %5s %9s %8s %6s %6s  %s\n",
  qw(mode point action fired received rows t.dup c.dup errors);
for my $o (@rows)
{
	$table .= sprintf "%-6s %-20s %-6s %5d %9d %8d %6d %6d  %s\n",
	  @$o{qw(mode point action fired ids rows table_dups client_dups)},
	  join(' ', map { "$_:$o->{codes}{$_}" } sort keys %{ $o->{codes} }) || '-';
}
note "points x outcomes\n$table";
diag "points x outcomes\n$table";

done_testing();
