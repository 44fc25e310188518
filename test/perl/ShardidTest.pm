# test/perl/ShardidTest.pm: what shardid's TAP tests share.
package ShardidTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# PostgreSQL 17's PostgreSQL::Test::Cluster makes a node's data directory
# by copying INITDB_TEMPLATE (an initdb -A trust -N that test/run.sh makes
# once per run) instead of running initdb, which costs seconds of CPU per
# node.  Before 17 it runs initdb every time; here the same copy replaces
# that initdb, the one its init runs without extra options (17's own,
# which honours force_initdb, is left alone).
if (   defined $ENV{INITDB_TEMPLATE}
	&& -d $ENV{INITDB_TEMPLATE}
	&& PostgreSQL::Test::Utils::slurp_file($INC{'PostgreSQL/Test/Cluster.pm'}) !~ /INITDB_TEMPLATE/)
{
	my $system_or_bail = \&PostgreSQL::Test::Utils::system_or_bail;
	no warnings 'redefine';
	*PostgreSQL::Test::Utils::system_or_bail = sub {
		my @cmd = @_;
		if (   @cmd == 6
			&& $cmd[0] eq 'initdb'
			&& $cmd[1] eq '-D'
			&& !-e $cmd[2]
			&& "@cmd[3..5]" eq '-A trust -N')
		{
			return $system_or_bail->('cp', '-RPp', $ENV{INITDB_TEMPLATE}, $cmd[2]);
		}
		return $system_or_bail->(@cmd);
	};
}

our @EXPORT = qw(shardid_node sql_error sql_outcome error_fields libfaketime set_clock
  start_faked wait_for_clock clock_to kill9_and_reap test_extra duplicates fence_of
  children_of);

# True if PG_TEST_EXTRA (a list of words, PostgreSQL's switch for its
# optional tests) names $word: shardid_load runs the long loads, which
# the default tier runs shorter.
sub test_extra
{
	my ($word) = @_;
	return scalar grep { $_ eq $word } split ' ', $ENV{PG_TEST_EXTRA} // '';
}

# A new, initialised node (not started) with shardid preloaded, UTC, no
# fsync, and any further postgresql.conf lines given.  An optional hash
# reference after the name holds options for PostgreSQL::Test::Cluster's
# init (allows_streaming, ...).
sub shardid_node
{
	my ($name, @conf) = @_;
	my %init = ref $conf[0] eq 'HASH' ? %{ shift @conf } : ();
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		join("\n",
			"shared_preload_libraries = 'shardid'",
			"timezone = 'UTC'", 'fsync = off', @conf)
		  . "\n");
	return $node;
}

# Run $sql on $node (in database $db, default postgres) expecting an error;
# return "SQLSTATE: message", or "no error".
sub sql_error
{
	my ($node, $sql, $db) = @_;
	my ($stdout, $stderr);
	my $rc = $node->psql(
		$db // 'postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$stdout,
		stderr => \$stderr);
	return 'no error' if $rc == 0;
	return $1 if $stderr =~ /ERROR:\s+(\w{5}: [^\n]*)/;
	return "unexpected: $stderr";
}

# Run $sql on $node's database $db with verbose errors, stopping at the
# first, as role $opt{user} if given, bounded by $opt{timeout} seconds
# (default 60: enough for any wait the guard may make on a faked clock).
# Returns a hash: code ('none', the first error's SQLSTATE, or 'timeout'),
# message, detail and hint of that error, and out (what psql printed).  A
# statement still running at the timeout is terminated on the server.
sub sql_outcome
{
	my ($node, $db, $sql, %opt) = @_;
	my ($out, $err, $timed_out) = ('', '', 0);
	my $app = "shardid_test_$$";
	local $ENV{PGAPPNAME} = $app;
	my $rc = $node->psql(
		$db, "\\set VERBOSITY verbose\n$sql",
		stdout => \$out,
		stderr => \$err,
		on_error_stop => 1,
		timeout => $opt{timeout} // 60,
		timed_out => \$timed_out,
		$opt{user} ? (extra_params => [ '-U', $opt{user} ]) : ());
	my $e = error_fields($rc == 0 ? '' : $err);
	@$e{qw(code message)} = ('unexpected', $err) if $rc != 0 && $e->{code} eq 'none';
	$e->{out} = $out;
	if ($timed_out)
	{
		local $ENV{PGAPPNAME} = 'shardid_test_cleanup';
		$node->psql('postgres',
			"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '$app'");
		$e->{code} = 'timeout';
	}
	return $e;
}

# The first error in psql's verbose $stderr as a hash: code (its SQLSTATE,
# 'none' if there is none), message, detail and hint.
sub error_fields
{
	my ($stderr) = @_;
	my %e = (code => 'none', message => '', detail => '', hint => '');
	return \%e unless $stderr =~ /ERROR:/;
	@e{qw(code message detail hint)} = $stderr =~
	  /ERROR:\s+(\w{5}): ([^\n]*)\n(?:DETAIL:\s+([^\n]*)\n)?(?:HINT:\s+([^\n]*)\n)?/
	  or @e{qw(code message)} = ('unexpected', $stderr);
	$e{detail} //= '';
	$e{hint} //= '';
	return \%e;
}

# The path of libfaketime, or undef if it is not installed.
sub libfaketime
{
	for my $dir (
		'/usr/lib/x86_64-linux-gnu/faketime',
		'/usr/lib/aarch64-linux-gnu/faketime',
		'/usr/lib/faketime', '/usr/local/lib/faketime')
	{
		return "$dir/libfaketime.so.1" if -e "$dir/libfaketime.so.1";
	}
	return undef;
}

# Write a libfaketime offset file: the clocks of the servers that read it
# run $offset seconds from the real clock.  Write, then rename, so that a
# server never reads half a file.
sub set_clock
{
	my ($file, $offset) = @_;
	my $tmp = "$file.tmp";
	open my $fh, '>', $tmp or die "could not write \"$tmp\": $!";
	printf $fh "%+.3f\n", $offset;
	close $fh or die "could not write \"$tmp\": $!";
	rename $tmp, $file or die "could not rename \"$tmp\": $!";
	return;
}

# Start $node (and only the server) under libfaketime reading $file.  The
# wall clock is faked, the monotonic clock is not, as a real step of the
# wall clock would leave it.  A new offset shows within a second or two;
# with no_cache => 1, at once, but every clock read is about five times
# slower.
sub start_faked
{
	my ($node, $file, %opts) = @_;
	my $no_cache = delete $opts{no_cache};
	local $ENV{LD_PRELOAD} = libfaketime();
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $file;
	local $ENV{FAKETIME_CACHE_DURATION} = '1' unless $no_cache;
	local $ENV{FAKETIME_NO_CACHE} = '1' if $no_cache;
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	return $node->start(%opts);
}

# Wait until $node's clock reads $offset seconds from the real clock,
# within a quarter of a second; false if it does not within 30 s.
sub wait_for_clock
{
	my ($node, $offset) = @_;
	for (1 .. 300)
	{
		my $server = $node->safe_psql('postgres',
			q{SELECT extract(epoch FROM clock_timestamp())});
		return 1 if abs($server - Time::HiRes::time() - $offset) < 0.25;
		usleep(100_000);
	}
	return 0;
}

# Set $node's clock (started by start_faked on $file) to read Unix time
# $t now, and wait until it does, as wait_for_clock; by then it reads $t
# plus the second or so that took.  Returns the offset, or undef if the
# clock did not follow.
sub clock_to
{
	my ($node, $file, $t) = @_;
	my $offset = $t - Time::HiRes::time();
	set_clock($file, $offset);
	return wait_for_clock($node, $offset) ? $offset : undef;
}

# How many rows of $table (in database $opt{db}, default postgres; with
# $opt{where}, the rows it selects) share their ID ($opt{key}, default id:
# '(seq, id)' for an ID per sequence) with another row: 0 when no ID
# repeats, which a table without a unique index shows rather than refuses.
# In list context, also how many rows there are.
sub duplicates
{
	my ($node, $table, %opt) = @_;
	my $key = $opt{key} // 'id';
	my $where = defined $opt{where} ? " WHERE $opt{where}" : '';
	my ($dups, $rows) = split /\|/,
	  $node->safe_psql($opt{db} // 'postgres',
		"SELECT count(*) - count(DISTINCT $key), count(*) FROM $table$where");
	return wantarray ? ($dups, $rows) : $dups;
}

# The fence stored for database $db (default postgres), a time field: the
# last value of its shardid_internal.shardid_fence.  With $seq, the fence
# the guard goes by for that sequence: the larger of the database's and
# the one the sequence carries in its value (its last value's time field,
# less one).
sub fence_of
{
	my ($node, $db, $seq) = @_;
	my $sql = 'SELECT last_value FROM shardid_internal.shardid_fence';
	$sql = "SELECT greatest(($sql), (SELECT (last_value >> 10) - 1 FROM $seq))"
	  if defined $seq;
	return $node->safe_psql($db // 'postgres', $sql);
}

# The processes whose parent is $ppid (from /proc).
sub children_of
{
	my ($ppid) = @_;
	my @kids;
	for my $file (glob '/proc/[0-9]*/stat')
	{
		open my $fh, '<', $file or next;
		my $stat = <$fh>;
		close $fh;
		next unless defined $stat && $stat =~ /\) \S (\d+) /;
		push @kids, $file =~ m{^/proc/(\d+)/} if $1 == $ppid;
	}
	return @kids;
}

# kill -9 the postmaster of $node, as a power loss or the OOM killer would,
# and wait until the process is gone (not only dead: a zombie keeps its
# pid, and pg_ctl refuses to start on a postmaster.pid whose pid lives).
sub kill9_and_reap
{
	my ($node) = @_;
	my $pid = $node->{_pid};
	$node->kill9;
	for (1 .. 300)
	{
		last unless -e "/proc/$pid";
		usleep(50_000);
	}
	ok(!-e "/proc/$pid", $node->name . ': postmaster killed with -9');
	return;
}

1;
