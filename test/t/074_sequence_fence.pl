# Copyright: see the shardid LICENSE.
#
# 074_sequence_fence.pl: the seven paths by which 1.2 repeated IDs, and
# the ways issue 22 found to break the fence's trust model, each
# reproduced on real servers whose clocks libfaketime sets, counting
# duplicates in tables without a unique index on id (a repeat shows as a
# second row).  0 duplicates on every path is the design's promise: each
# sequence carries its own fence in its value, and nothing reads tables.
#
# Each path runs with three sequences at once, each on a shard of its own
# and feeding its own table: one OWNED BY the table's id column (the kind
# a serial column makes, which 1.2's table floor read), one a plain CREATE
# SEQUENCE named in the call or the DEFAULT, and one AS integer, which
# cannot carry a fence in its value: it may be refused at its first use
# (55000, a message naming the sequence and saying why), and then takes no
# further part; if it is not, it must give no duplicate either.  After the
# path's break, each table's load runs in a session of its own, all at
# once.  With the clock behind the last ID by more than
# shardid.max_clock_regression and the fence's lead (1 s and 625 ms), it
# must be refused (55000) or end a wait at statement_timeout (57014);
# nearer, it may also issue.  A statement that fails writes nothing; the
# clock then goes past every old ID, and the refused loads must issue.
# Last, every row is counted: no ID twice, none ahead of its row's clock
# (+1 ms), all on the right shard, every ID made after the break later
# than every ID before it.
#
#   1. A failed restore lowers an intact fence: a whole-database dump, then
#      the tables renamed (their indexes keep their names) and 300,000 more
#      IDs each, spread over 5 s; pg_restore --single-transaction of the
#      dump fails at post-data (42P07, on an index name) and rolls back,
#      leaving nothing; kill -9 at once, a start with the clock 4.5 s
#      behind the last ID (refused), 300,000 IDs each.
#   2. Multi-tenant keys: PRIMARY KEY (tenant_id, id) (and UNIQUE (org_id,
#      id) with the owned sequence), 200,000 IDs each; DROP EXTENSION, kill
#      -9, a start with the clock 1 s behind (refused or waited out),
#      CREATE EXTENSION, 200,000 more.  And pg_dump -t of the tenants'
#      tables and their sequences, restored on the other server with its
#      clock 1 s behind the last dumped ID, 200,000 more there.
#   3. One sequence, two tables: posts (a B-tree index on id; OWNED BY
#      posts.id in the owned variant) and comments, 100,000 posts, then
#      200,000 comments; DROP EXTENSION, kill -9, a start with the clock at
#      the first comment's time (1.5 s behind the last), CREATE EXTENSION,
#      200,000 new comments.
#   4. The first call meets VACUUM FULL: the fence lost as in 2 (an index
#      on id); VACUUM FULL of each table is held in its index rebuild (an
#      index expression that waits for an advisory lock the test holds)
#      with the table's ACCESS EXCLUSIVE lock, while each sequence's first
#      shardid_next runs with the clock 2 s behind the last ID: it must end
#      without waiting for VACUUM FULL.  Then, once VACUUM FULL is done,
#      200,000 IDs each, the clock about 1 s behind.
#   5. A restore split around the index: a table with PRIMARY KEY (id)
#      whose DEFAULT is shardid_next, 150,000 IDs spread over 3 s, the
#      source's clock 30 s forward, a busy loader, and pg_dump -t table -t
#      sequence while it runs.  On the other server, its clock at the
#      first dumped ID's time (35 s behind the last): pre-data and data,
#      the application's inserts (refused), then post-data, which must
#      succeed: the primary key is buildable.  And pg_restore -j 2 while
#      the application inserts: its inserts start once the restore has set
#      the sequence and the column's DEFAULT (before that, the table is one
#      restored without its sequence, which no design covers) and queue
#      behind the table's COPY,
#      ahead of the primary key; pg_restore must succeed.
#   6. IDs that left a rolled-back CREATE EXTENSION: 33 transactions (the
#      issue ran 55; two crashes show what five do) each run CREATE
#      EXTENSION, hand 20,000 IDs of each sequence to the client (COPY TO
#      STDOUT, into a file, then into a table on the other server) and roll
#      back; kill -9 after every 11th, and a start with the clock 2.5 s
#      behind the last ID the client got (the transactions 0.25 s apart,
#      so that the clock catches up within a round: the first ones are
#      refused, the later ones issue).  No ID reaches the client twice,
#      each crash's IDs come after the ones before, and the extension is
#      gone.
#   7. Logical replication as failover: B subscribes to A's tables and
#      makes one early call of each sequence before the data arrives; A
#      issues 300,000 IDs each (its clock 20 s forward half way); A stops;
#      B issues with its clock at A's first ID's time (26 s behind A's
#      last).  With PostgreSQL's documented failover step (each sequence
#      set to the publisher's last_value) done after B's early call:
#      refused, then 0 duplicates.  Without it: a known limit (logical
#      replication carries rows, not sequences), a TODO test that reports
#      the duplicates.
#
# The sizes are the issue's where the path is about them (1); elsewhere
# they are smaller, since a repeat depends on how densely the old IDs
# cover the milliseconds the new ones are issued in, not on their number:
# each load is spread over the stretch the clock goes back into.
#
# Then, on the second server:
#   - sequences that cannot carry a fence are refused at first use (and
#     after) with 55000 and a message naming the sequence and why: AS
#     integer, AS smallint, MAXVALUE too small, INCREMENT BY below 1 or
#     above 1024, cached values that span more blocks than the refresh
#     (CACHE 200 at INCREMENT BY 1024, CACHE 10^8); INCREMENT BY 1024, a
#     plain sequence and CACHE 100000 are not;
#   - the security findings, each as its reproducer, by mallory (a LOGIN
#     role with CREATE on her own schema only) against alice (a table with
#     a primary key, the sequence OWNED BY it): the HIGH (a composite
#     column with an implicit cast to bigint whose function makes mallory a
#     superuser, DEFAULT shardid_next; a superuser then lowers the fence,
#     and the sequence's), the MEDIUM DoS (2^63 - 1 inserted into alice's
#     table in an open transaction, alice's slot evicted by 1,100 temp
#     sequences), shardid_fence_lower(now() + 1 hour) (55000, the fence
#     unchanged), and the MEDIUM epoch attack in a database at 1.1 under
#     this library (an epoch of 1995 per call: 22023).  And the two of
#     the review of 1.3: mallory's sequence set to the horizon while her
#     first call waits for the lock she holds on it (her sequence refused,
#     the database's fence within the clock and the lead), and ALTER
#     EXTENSION UPDATE from 1.2 waiting for alice's lock on her sequence
#     while mallory's IDs keep coming.  And the two of the second
#     review: the update and shardid_fence_lower, each waiting for
#     mallory's lock on her sequence while she puts a view of hers in its
#     place (read by OID, the sequence is read; by name, the view would
#     make her a superuser).  After each, and
#     after a restart at the end, alice's IDs keep coming (from her old
#     sequence and a new one), the fence is within the clock and the lead,
#     and no role gained a privilege.
#
# Every call that can wait on a faked clock is bounded on the client side.
# SHARDID_TEST_PARTS=1,5,security (say) runs only those parts.

use strict;
use warnings;

use IPC::Run;
use List::Util qw(max min);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use Time::HiRes ();

plan skip_all => 'libfaketime is not installed (Debian package "faketime")'
  unless defined libfaketime();

my $tmp = PostgreSQL::Test::Utils::tempdir();

# Unix ms of the default epoch: an ID's time field counts ms after it.
my $epoch_ms = 1293840000000;

# The three kinds of sequence, each on a shard of its own.
my @variants = ([ owned => 1 ], [ free => 2 ], [ int4 => 3 ]);

# The feeds of a path: for each variant, table "${base}_$variant" and its
# sequence "${base}_${variant}_seq" (extra fields from %extra).
sub feeds
{
	my ($base, %extra) = @_;
	return map {
		{
			variant => $_->[0],
			shard => $_->[1],
			table => "${base}_$_->[0]",
			seq => "${base}_$_->[0]_seq",
			label => "$base $_->[0]",
			%extra
		}
	} @variants;
}

# The feeds not refused at their first use.
sub live
{
	my ($feeds) = @_;
	return grep { !$_->{refused} } @$feeds;
}

# The sequence of $f (OWNED BY $owner.id, default its table, if owned).
sub seq_sql
{
	my ($f, $owner) = @_;
	$owner //= $f->{table};
	return "CREATE SEQUENCE $f->{seq}"
	  . ($f->{variant} eq 'owned' ? " OWNED BY $owner.id"
		: $f->{variant} eq 'int4' ? ' AS integer'
		:                           '') . ";\n";
}

# $f's table (phase, id, made and @more columns or constraints), its
# sequence after it.
sub feed_sql
{
	my ($f, @more) = @_;
	return "CREATE TABLE $f->{table} (phase text NOT NULL, id bigint NOT NULL, "
	  . "made timestamptz NOT NULL DEFAULT clock_timestamp()"
	  . join('', map { ", $_" } @more) . ");\n"
	  . seq_sql($f);
}

# The statement by which $f takes $n IDs of phase $phase.  shardid_next is
# named in the INSERT (so that DROP EXTENSION leaves the tables as they
# are), or with default => 1 the column's DEFAULT makes them; into
# $o{table} instead of $f's own; a feed with a key column spreads its rows
# over ten keys from $o{k} (default 1).
sub take
{
	my ($f, $phase, $n, %o) = @_;
	my $t = $o{table} // $f->{table};
	my ($kc, $kv) =
	  $f->{key} ? (", $f->{key}", ', ' . ($o{k} // 1) . ' + g % 10') : ('', '');
	return "INSERT INTO $t (phase$kc) SELECT '$phase'$kv FROM generate_series(1, $n) AS g"
	  if $o{default};
	return "INSERT INTO $t (phase, id$kc) SELECT '$phase', shardid_next($f->{shard}, '$f->{seq}')$kv"
	  . " FROM generate_series(1, $n) AS g";
}

# The rows of $f: (phase, id, made), from its table unless it says.
sub rows_of
{
	my ($f) = @_;
	return $f->{rows} // "SELECT phase, id, made FROM $f->{table}";
}

# The Unix time (s) of the last ID of $f in $db.
sub last_time
{
	my ($node, $db, $f) = @_;
	return $node->safe_psql($db,
		'SELECT ((max(id) >> 23) + ' . $epoch_ms . ') / 1000.0 FROM (' . rows_of($f) . ') AS r');
}

# Why an int4 sequence cannot carry a fence: its type, or its maximum.
my $int_why = qr/integer|int4|bigint|int8|type|max/i;

# The error $e is the refusal of sequence $seq at its first use: 55000, a
# message naming it, and the message, detail or hint saying why ($why).
sub refused_ok
{
	my ($e, $seq, $why, $what) = @_;
	my $text = "$e->{message} $e->{detail} $e->{hint}";
	ok( $e->{code} eq '55000' && $e->{message} =~ /\b\Q$seq\E\b/ && $text =~ $why,
		"$what: 55000, a message naming the sequence and saying why")
	  or diag explain $e;
	return;
}

# The first call of each feed of @$feeds in $db (one row of phase "first",
# or $o{phase}).  An int4 sequence may be refused (then as refused_ok, and
# the feed takes no further part); any other one must issue.
sub first_use
{
	my ($node, $db, $feeds, $what, %o) = @_;
	for my $f (@$feeds)
	{
		my $e = sql_outcome($node, $db, take($f, $o{phase} // 'first', 1, %o));
		if ($f->{variant} eq 'int4' && $e->{code} ne 'none')
		{
			refused_ok($e, $f->{seq}, $int_why,
				"$what, $f->{label}: refused at first use");
			$f->{refused} = 1;
			next;
		}
		is($e->{code}, 'none', "$what, $f->{label}: the first call issues an ID")
		  or diag explain $e;
		$f->{refused} = 1 if $e->{code} ne 'none';
	}
	return;
}

# Each live feed takes $n IDs of phase $phase, in one statement, batches of
# 5,000 taking turns, paced to take about $secs s: their time fields cover
# that stretch densely.
sub spread_load
{
	my ($node, $db, $feeds, $phase, $n, $secs, $what, %o) = @_;
	my @live = live($feeds);
	return unless @live;
	my $batches = int($n / 5000);
	my $step = $secs / $batches;
	my $body = join '', map { "\t\t" . take($_, $phase, 5000, %o) . ";\n" } @live;
	my $e = sql_outcome(
		$node, $db, qq{
DO \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	FOR i IN 1 .. $batches LOOP
$body
		PERFORM pg_sleep(extract(epoch FROM t0 + interval '$step s' * i - clock_timestamp()));
	END LOOP;
END \$\$}, timeout => 180);
	is($e->{code}, 'none', "$what: $n IDs of phase $phase for each sequence")
	  or diag explain $e;
	return;
}

# Start $sql in a session of its own on $node's $db (as $user, else the
# superuser) under statement_timeout = 20s (or $timeout), bounded by 60 s
# on the client.
sub start_sql
{
	my ($node, $db, $label, $sql, $timeout, $user) = @_;
	(my $app = "t074 $label") =~ s/\W/_/g;
	my $s = { out => '', err => '', app => $app, node => $node };
	$s->{h} = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose',
			'-d', $node->connstr($db) . " application_name=$app" . ($user ? " user=$user" : ''),
			'-c', 'SET statement_timeout = ' . ($timeout // "'20s'"), '-c', $sql
		],
		'>', \$s->{out}, '2>', \$s->{err},
		IPC::Run::timeout(($timeout // '') =~ /(\d+)s/ && $1 > 30 ? $1 + 30 : 60));
	return $s;
}

# Wait for a session of start_sql; its outcome, as sql_outcome's.
sub finish_sql
{
	my ($s) = @_;
	my $ended = eval { $s->{h}->finish; 1 };
	my $e = error_fields($s->{err});
	if (!$ended)
	{
		$s->{h}->kill_kill;
		$s->{node}->safe_psql('postgres',
			"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '$s->{app}'");
		$e->{code} = 'timeout';
	}
	elsif ($s->{h}->result(0) != 0 && $e->{code} eq 'none')
	{
		@$e{qw(code message)} = ('unexpected', $s->{err});
	}
	$e->{out} = $s->{out};
	return $e;
}

# Run each [label, db, sql] of @runs in a session of its own on $node, all
# at once; returns label => outcome.
sub at_once
{
	my ($node, @runs) = @_;
	my %s = map { ($_->[0] => start_sql($node, $_->[1], $_->[0], $_->[2])) } @runs;
	return map { ($_ => finish_sql($s{$_})) } sort keys %s;
}

# What a load after the break may end with: with the clock further behind
# the last ID than shardid.max_clock_regression (1 s) and the fence's lead
# and quarter (625 ms), a refusal (55000), or a wait ended by
# statement_timeout (57014); nearer, also IDs (checked afterwards to be
# later than every old one).
my $far = qr/^(55000|57014)$/;
my $near = qr/^(none|55000|57014)$/;

# After the break: each live feed of @$feeds (in $db, or in $f->{db}) takes
# $n IDs of phase $phase, all at once.  Each must end as $o{accept} (or
# $f->{accept}) allows, default $near; one that failed wrote nothing.
# Returns the feeds that did not issue.
sub load_try
{
	my ($node, $db, $feeds, $phase, $n, $what, %o) = @_;
	my @live = live($feeds);
	my %out = at_once($node,
		map { [ $_->{label}, $_->{db} // $db, take($_, $phase, $n, %o) ] } @live);
	my @again;
	for my $f (@live)
	{
		my $e = $out{ $f->{label} };
		$f->{outcome} = $e->{code};
		diag "$what, $f->{label}: "
		  . ($e->{code} eq 'none' ? "$n IDs issued" : "$e->{code}: $e->{message}");
		my $accept = $f->{accept} // $o{accept} // $near;
		like($e->{code}, $accept,
			"$what, $f->{label}: "
			  . ($accept eq $far ? 'refused (55000)' : 'issued, refused (55000)')
			  . ' or a wait ended by statement_timeout (57014)') or diag explain $e;
		next if $e->{code} eq 'none';
		push @again, $f;
		is( $node->safe_psql(
				$f->{db} // $db,
				'SELECT count(*) FROM ' . ($o{table} // $f->{table}) . " WHERE phase = '$phase'"),
			'0',
			"$what, $f->{label}: the statement that failed wrote nothing");
	}
	return @again;
}

# The feeds @$again did not issue: the clock goes just past every ID of
# theirs, and they take their IDs again (phase "$phase-again"), which must
# go through.
sub catch_up
{
	my ($node, $db, $clock, $again, $phase, $n, $what, %o) = @_;
	return unless @$again;
	my $last = max map { last_time($node, $_->{db} // $db, $_) } @$again;
	ok(defined clock_to($node, $clock, $last + 1), "$what: the clock is past every old ID");
	my %out = at_once($node,
		map { [ $_->{label}, $_->{db} // $db, take($_, "$phase-again", $n, %o) ] } @$again);
	for my $f (@$again)
	{
		is($out{ $f->{label} }{code}, 'none',
			"$what, $f->{label}: with the clock past every old ID, IDs are issued")
		  or diag explain $out{ $f->{label} };
	}
	return;
}

# Every row of $f (in $db, or $f->{db}): no ID twice, none ahead of its
# row's clock (+1 ms), all on $f's shard, and every ID of a phase
# "after..." later than every other ID.  Returns the duplicates.
sub check_feed
{
	my ($node, $db, $f, $what) = @_;
	return 0 if $f->{refused};
	my ($n, $dups, $bad, $after) = split /\|/, $node->safe_psql(
		$f->{db} // $db, 'WITH r AS (' . rows_of($f) . qq{)
SELECT count(*), count(*) - count(DISTINCT id),
       count(*) FILTER (WHERE (id >> 23) + $epoch_ms > floor(extract(epoch FROM made) * 1000) + 1
                           OR (id >> 10) & 8191 <> $f->{shard}),
       coalesce((SELECT min(id) FROM r WHERE phase LIKE 'after%')
                > (SELECT max(id) FROM r WHERE phase NOT LIKE 'after%'), true)
  FROM r});
	diag "$what, $f->{label}: $dups duplicates in $n IDs" if $dups;
	is("$dups|$bad", '0|0', "$what, $f->{label}: 0 duplicates in $n IDs, none ahead of its clock");
	is($after, 't', "$what, $f->{label}: every ID made after the break is later than every ID before");
	return $dups;
}

# kill -9 the postmaster of $node (after a checkpoint, so that crash
# recovery is short), and start it with its clock at Unix time $t.
sub crash_to
{
	my ($node, $clock, $t, $what) = @_;
	$node->safe_psql('postgres', 'CHECKPOINT');
	kill9_and_reap($node);
	set_clock($clock, $t - Time::HiRes::time());
	start_faked($node, $clock);
	ok($node->safe_psql('postgres', 'SELECT 1') eq '1', "$what: started again after kill -9");
	return;
}

# Right before a load: set $node's clock to read Unix time $t, and say how
# far behind Unix time $last that is.  (It is set 1.5 s early, to cover the
# second that backends forked from the postmaster may take to see a new
# offset, and the test then sleeps until the clock reads $t.)
sub aim
{
	my ($node, $clock, $t, $last, $what) = @_;
	my $offset = clock_to($node, $clock, $t - 1.5);
	ok(defined $offset, "$what: the clock is set back");
	my $sleep = $t - Time::HiRes::time() - ($offset // 0);
	Time::HiRes::sleep($sleep) if $sleep > 0;
	diag "$what: the clock is " . behind($node, $last) . ' s behind the last ID';
	return;
}

# How far (s) $node's clock is behind Unix time $t.
sub behind
{
	my ($node, $t) = @_;
	return sprintf '%.1f', $t - $node->safe_psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
}

# SHARDID_TEST_PARTS=1,5,security (say) runs only those parts.
sub part
{
	my ($name) = @_;
	my $only = $ENV{SHARDID_TEST_PARTS} // '';
	return $only eq '' || grep { $_ eq $name } split /,/, $only;
}

my $one = shardid_node('one', 'wal_level = logical', 'max_wal_senders = 4',
	'max_replication_slots = 4');
my $clock1 = "$tmp/one.faketime";
set_clock($clock1, 0);
start_faked($one, $clock1);
# 1,024 slots, as before 1.3's default of 16,384: the security part
# evicts alice's slot with 1,100 temp sequences
my $two = shardid_node('two', 'shardid.max_sequences = 1024');
my $clock2 = "$tmp/two.faketime";
set_clock($clock2, 0);
start_faked($two, $clock2);

# =====================================================================
# 1. A failed restore lowers an intact fence.
# =====================================================================
if (part('1'))
{
	my $what = '1';
	my @f = feeds('v1');
	$one->safe_psql('postgres', 'CREATE DATABASE p1');
	$one->safe_psql('p1',
		"CREATE EXTENSION shardid;\n"
		  . join('', map { feed_sql($_) . "CREATE INDEX made_$_->{variant} ON $_->{table} (made);\n" } @f));
	first_use($one, 'p1', \@f, $what);
	spread_load($one, 'p1', \@f, 'before', 100000, 1, "$what, before the dump");
	my $dump = "$tmp/p1.dump";
	command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $one->connstr('p1') ],
		"$what: pg_dump of the whole database");

	# The tables are renamed (a new version of the application): the
	# dump's tables no longer exist, its indexes' names still do.
	$one->safe_psql('p1',
		join '', map { "ALTER TABLE $_->{table} RENAME TO ids_$_->{variant};\n"
			  . "ALTER SEQUENCE $_->{seq} RENAME TO ids_$_->{variant}_seq;\n" } @f);
	$_->{table} =~ s/^v1_/ids_/, $_->{seq} =~ s/^v1_/ids_/ for @f;
	spread_load($one, 'p1', \@f, 'live', 300000, 5, "$what, after the dump");
	# in one order: a UNION ALL's rows come in any (a rehearsal swapped two)
	my $count = 'SELECT * FROM ('
	  . join(' UNION ALL ', map { "SELECT '$_->{table}', count(*) FROM $_->{table}" } @f)
	  . q{ UNION ALL SELECT 'tables of the dump', count(*) FROM pg_class WHERE relname LIKE 'v1\_%'}
	  . ') AS c ORDER BY 1';
	my $before_restore = $one->safe_psql('p1', $count);
	my $fence_before = $one->safe_psql('p1', 'SELECT last_value FROM shardid_internal.shardid_fence');

	my ($out, $err) = ('', '');
	my $restored = IPC::Run::run(
		[ 'pg_restore', '--single-transaction', '-d', $one->connstr('p1'), $dump ],
		'>', \$out, '2>', \$err, IPC::Run::timeout(60));
	ok(!$restored, "$what: pg_restore --single-transaction of the older dump fails");
	like($err, qr/relation "made_\w+" already exists.*Command was: CREATE INDEX made_/s,
		"$what: at post-data, on an index name (42P07)");
	is($one->safe_psql('p1', $count), $before_restore,
		"$what: the restore rolled back: the database's tables are as before, the dump's are gone");
	diag "$what: the stored fence went from $fence_before to "
	  . $one->safe_psql('p1', 'SELECT last_value FROM shardid_internal.shardid_fence')
	  . ' with the failed restore';

	my $last = max map { last_time($one, 'p1', $_) } live(\@f);
	# 8 s behind: the load's sessions must still find the clock further
	# behind than max_clock_regression and the reach when they start (at
	# a load of 12, 4.5 s had become 2.9 s at the diag, and less by then)
	crash_to($one, $clock1, $last - 8, $what);
	aim($one, $clock1, $last - 8, $last, $what);
	my @again = load_try($one, 'p1', \@f, 'after', 300000, $what, accept => $far);
	catch_up($one, 'p1', $clock1, \@again, 'after', 10000, $what);
	check_feed($one, 'p1', $_, $what) for @f;
}

# =====================================================================
# 2. Multi-tenant keys.
# =====================================================================
if (part('2'))
{
	my $what = '2';
	my @f = (feeds('pk', key => 'tenant_id'),
		grep { $_->{variant} eq 'owned' } feeds('uq', key => 'org_id'));
	$one->safe_psql('postgres', 'CREATE DATABASE p2');
	$one->safe_psql('p2',
		"CREATE EXTENSION shardid;\n"
		  . join('',
			map { feed_sql($_, "$_->{key} integer NOT NULL",
				($_->{key} eq 'tenant_id' ? 'PRIMARY KEY' : 'UNIQUE') . " ($_->{key}, id)") } @f));
	first_use($one, 'p2', \@f, $what);
	spread_load($one, 'p2', \@f, 'before', 200000, 2, $what);
	my $dump = "$tmp/p2.dump";
	my @pk = grep { $_->{table} =~ /^pk_/ } live(\@f);
	command_ok(
		[
			'pg_dump', '-Fc', '-f', $dump, (map { ('-t', $_->{table}, '-t', $_->{seq}) } @pk),
			'-d', $one->connstr('p2')
		],
		"$what: pg_dump -t of the tenants' tables and their sequences");
	my $last = max map { last_time($one, 'p2', $_) } live(\@f);
	$one->safe_psql('p2', 'DROP EXTENSION shardid');
	crash_to($one, $clock1, $last - 1, $what);
	$one->safe_psql('p2', 'CREATE EXTENSION shardid');
	aim($one, $clock1, $last - 1, $last, $what);
	my @again = load_try($one, 'p2', \@f, 'after', 200000, $what, k => 11);
	catch_up($one, 'p2', $clock1, \@again, 'after', 10000, $what, k => 11);
	check_feed($one, 'p2', $_, $what) for @f;

	# The dump restored on the other server, its clock 1 s behind the
	# last dumped ID.
	$what = '2, pg_dump -t restored elsewhere';
	my @r = map { { %$_, db => 'p2r' } } @pk;
	$two->safe_psql('postgres', 'CREATE DATABASE p2r');
	$two->safe_psql('p2r', 'CREATE EXTENSION shardid');
	command_ok([ 'pg_restore', '-d', $two->connstr('p2r'), $dump ], "$what: pg_restore");
	$last = max map { last_time($two, 'p2r', $_) } @r;
	aim($two, $clock2, $last - 1, $last, $what);
	@again = load_try($two, 'p2r', \@r, 'after', 200000, $what, k => 11);
	catch_up($two, 'p2r', $clock2, \@again, 'after', 10000, $what, k => 11);
	check_feed($two, 'p2r', $_, $what) for @r;
}

# =====================================================================
# 3. One sequence, two tables.
# =====================================================================
if (part('3'))
{
	my $what = '3';
	my @f = feeds('s3');
	for my $f (@f)
	{
		($f->{posts}, $f->{comments}) = ("posts_$f->{variant}", "comments_$f->{variant}");
		$f->{rows} = "SELECT phase, id, made FROM $f->{posts} UNION ALL SELECT phase, id, made FROM $f->{comments}";
	}
	$one->safe_psql('postgres', 'CREATE DATABASE p3');
	$one->safe_psql(
		'p3',
		"CREATE EXTENSION shardid;\n"
		  . join '',
		map {
			feed_sql({ %$_, table => $_->{posts}, seq => $_->{seq} })
			  . "CREATE INDEX ON $_->{posts} (id);\n"
			  . "CREATE TABLE $_->{comments} (LIKE $_->{posts} INCLUDING DEFAULTS);\n"
		} @f);
	$_->{table} = $_->{posts} for @f;
	first_use($one, 'p3', \@f, $what);
	spread_load($one, 'p3', \@f, 'posts', 100000, 0.5, "$what, posts");
	my $last_post = max map { $one->safe_psql('p3',
		"SELECT ((max(id) >> 23) + $epoch_ms) / 1000.0 FROM $_->{posts}") } live(\@f);
	$_->{table} = $_->{comments} for @f;
	spread_load($one, 'p3', \@f, 'comments', 200000, 1.5, "$what, comments");
	my $first_comment = min map { $one->safe_psql('p3',
		"SELECT ((min(id) >> 23) + $epoch_ms) / 1000.0 FROM $_->{comments}") } live(\@f);
	my $last = max map { last_time($one, 'p3', $_) } live(\@f);
	$one->safe_psql('p3', 'DROP EXTENSION shardid');
	crash_to($one, $clock1, $first_comment, $what);
	$one->safe_psql('p3', 'CREATE EXTENSION shardid');
	aim($one, $clock1, $first_comment, $last, $what);
	diag "$what: the clock is " . behind($one, $last_post) . ' s behind the last post';
	my @again = load_try($one, 'p3', \@f, 'after', 200000, $what);
	catch_up($one, 'p3', $clock1, \@again, 'after', 10000, $what);
	check_feed($one, 'p3', $_, $what) for @f;
}

# =====================================================================
# 4. The first call meets VACUUM FULL.
# =====================================================================
if (part('4'))
{
	my $what = '4';
	my @f = feeds('p4');
	$one->safe_psql('postgres', 'CREATE DATABASE p4');
	$one->safe_psql(
		'p4', q{
CREATE EXTENSION shardid;
-- an index expression that waits for advisory lock 74 on the row 'hold':
-- VACUUM FULL, rebuilding the index, holds the table while it waits
CREATE FUNCTION hold(p text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF p = 'hold' THEN
		PERFORM pg_advisory_lock_shared(74);
		PERFORM pg_advisory_unlock_shared(74);
	END IF;
	RETURN p;
END $$;
CREATE TABLE firsts (feed text NOT NULL, phase text NOT NULL, id bigint NOT NULL,
	made timestamptz NOT NULL DEFAULT clock_timestamp());
}
		  . join '',
		map {
			feed_sql($_)
			  . "CREATE INDEX ON $_->{table} (id);\n"
			  . "CREATE INDEX ON $_->{table} (hold(phase)) WHERE phase = 'hold';\n"
		} @f);
	$_->{rows} = "SELECT phase, id, made FROM $_->{table} UNION ALL "
	  . "SELECT phase, id, made FROM firsts WHERE feed = '$_->{variant}'"
	  for @f;
	first_use($one, 'p4', \@f, $what);
	spread_load($one, 'p4', \@f, 'before', 200000, 2, $what);
	$one->safe_psql('p4', join '', map { take($_, 'hold', 1) . ";\n" } live(\@f));
	my $last = max map { last_time($one, 'p4', $_) } live(\@f);
	$one->safe_psql('p4', 'DROP EXTENSION shardid');
	crash_to($one, $clock1, $last - 1, $what);
	$one->safe_psql('p4', 'CREATE EXTENSION shardid');

	my $holder = $one->background_psql('p4', on_error_stop => 1);
	$holder->query_safe('SELECT pg_advisory_lock(74)');
	my %vacuum = map { ($_->{label} => start_sql($one, 'p4', "vacuum $_->{label}", "VACUUM FULL $_->{table}", 0)) }
	  live(\@f);
	my $held = join ' UNION ALL ', map { qq{
SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE l.relation = '$_->{table}'::regclass AND l.mode = 'AccessExclusiveLock' AND l.granted
   AND a.query LIKE 'VACUUM FULL%' AND a.wait_event = 'advisory'} } live(\@f);
	my $all_held = "SELECT sum(count) = " . scalar(live(\@f)) . " FROM ($held) AS h(count)";
	ok($one->poll_query_until('p4', $all_held), "$what: VACUUM FULL holds every table");
	# (2 s behind for the first calls: VACUUM FULL takes a second or so to
	# end, and the load after it then runs about 1 s behind)
	aim($one, $clock1, $last - 2, $last, "$what, the first calls");
	my %first = at_once($one,
		map { [ $_->{label}, 'p4',
			"INSERT INTO firsts (feed, phase, id) VALUES ('$_->{variant}', 'after-first', shardid_next($_->{shard}, '$_->{seq}'))" ] }
		  live(\@f));
	for my $f (live(\@f))
	{
		my $e = $first{ $f->{label} };
		diag "$what, $f->{label}: the first call: $e->{code} $e->{message}";
		like($e->{code}, $near,
			"$what, $f->{label}: the first call, while VACUUM FULL holds the table, issues, is refused (55000) or ends its wait (57014)"
		) or diag explain $e;
	}
	is($one->safe_psql('p4', $all_held), 't',
		"$what: and VACUUM FULL still held every table when the first calls ended");
	$holder->query_safe('SELECT pg_advisory_unlock(74)');
	$holder->quit;
	for my $f (live(\@f))
	{
		my $e = finish_sql($vacuum{ $f->{label} });
		is($e->{code}, 'none', "$what, $f->{label}: VACUUM FULL ends") or diag explain $e;
	}
	diag "$what: the clock is " . behind($one, $last) . ' s behind the last ID';
	my @again = load_try($one, 'p4', \@f, 'after', 200000, $what);
	catch_up($one, 'p4', $clock1, \@again, 'after', 10000, $what);
	check_feed($one, 'p4', $_, $what) for @f;
}

# =====================================================================
# 6. IDs that left a rolled-back CREATE EXTENSION.
# =====================================================================
if (part('6'))
{
	my $what = '6';
	my @f = feeds('p6');
	$one->safe_psql('postgres', 'CREATE DATABASE p6');
	$one->safe_psql('p6', join '', map { feed_sql($_) } @f);
	$two->safe_psql('postgres', 'CREATE DATABASE ledger');
	$two->safe_psql('ledger',
		'CREATE TABLE received (variant text NOT NULL, round integer NOT NULL, id bigint NOT NULL)');
	my @errors;
	for my $round (1 .. 3)
	{
		# 11 transactions; the int4 sequence goes last in each, so that its
		# refusal (if it comes) costs the others nothing.
		my $script = "SET client_min_messages = warning;\nSET statement_timeout = '20s';\n";
		for (1 .. 11)
		{
			$script .= "BEGIN;\nCREATE EXTENSION shardid;\n";
			$script .= "COPY (SELECT '$_->{variant}', $round, shardid_next($_->{shard}, '$_->{seq}')"
			  . " FROM generate_series(1, 20000)) TO STDOUT;\n"
			  for @f;
			$script .= "ROLLBACK;\nDO \$\$ BEGIN PERFORM pg_sleep(0.25); END \$\$;\n";
		}
		my ($in, $out_file, $err_file) = ($script, "$tmp/p6-$round.out", "$tmp/p6-$round.err");
		my $ran = eval {
			IPC::Run::run(
				[ 'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-d', $one->connstr('p6') ],
				'<', \$in, '>', $out_file, '2>', $err_file,
				IPC::Run::timeout(180));
			1;
		};
		ok($ran, "$what, round $round: 11 transactions ran");
		my $err = slurp_file($err_file);
		push @errors, $err =~ /ERROR:\s+(\w{5}: [^\n]*)/g;
		$two->safe_psql('ledger', "COPY received FROM '$out_file'");
		next if $round == 3;
		# the last ID so far: a round may issue none (every call refused
		# while the clock is too far behind), and the crash's clock is
		# set by the last ID of any round
		my $last = $two->safe_psql('ledger',
			"SELECT ((max(id) >> 23) + $epoch_ms) / 1000.0 FROM received WHERE round <= $round");
		ok($last ne '', "$what, after round $round: IDs were issued before the crash")
		  or last;
		crash_to($one, $clock1, $last - 2.5, "$what, after round $round");
		aim($one, $clock1, $last - 2.5, $last, "$what, after round $round");
	}
	my %seen;
	$seen{$_}++ for map { /^(\w{5})/ } @errors;
	diag "$what: errors: " . join(', ', map { "$_ x$seen{$_}" } sort keys %seen);
	is(join(',', grep { !/^(55000|57014|25P02)$/ } sort keys %seen), '',
		"$what: every error was a refusal (55000), a wait ended (57014) or in a transaction already failed");
	for my $f (@f)
	{
		my ($n, $dups, $late) = split /\|/, $two->safe_psql(
			'ledger', qq{
SELECT count(*), count(*) - count(DISTINCT id),
       (SELECT count(*) FROM
          (SELECT min(id) AS lo, max(max(id)) OVER (ORDER BY round ROWS BETWEEN UNBOUNDED PRECEDING
                                                                         AND 1 PRECEDING) AS prev_hi
             FROM received WHERE variant = '$f->{variant}' GROUP BY round) AS q
         WHERE lo <= prev_hi)
  FROM received WHERE variant = '$f->{variant}'});
		if ($f->{variant} eq 'int4' && $n == 0)
		{
			my ($msg, $detail, $hint) = slurp_file("$tmp/p6-1.err") =~
			  /ERROR:\s+55000: ([^\n]*\b$f->{seq}\b[^\n]*)\n(?:DETAIL:\s+([^\n]*)\n)?(?:HINT:\s+([^\n]*)\n)?/;
			refused_ok({ code => defined $msg ? '55000' : 'none', message => $msg // '',
					detail => $detail // '', hint => $hint // '' },
				$f->{seq}, $int_why, "$what, $f->{label}: refused at first use");
			next;
		}
		diag "$what, $f->{label}: $dups of $n IDs handed out twice" if $dups;
		is($dups, '0', "$what, $f->{label}: 0 of $n IDs handed out twice across the crashes");
		is($late, '0', "$what, $f->{label}: after each crash, every ID is later than every one before it");
	}
	is($one->safe_psql('p6', q{SELECT count(*) FROM pg_extension WHERE extname = 'shardid'}),
		'0', "$what: nothing of the rolled-back CREATE EXTENSIONs is left");
}

# =====================================================================
# 5. A restore split around the index.
# =====================================================================
if (part('5'))
{
	my $what = '5';
	my @f = feeds('p5');
	$one->safe_psql('postgres', 'CREATE DATABASE p5');
	$one->safe_psql(
		'p5',
		"CREATE EXTENSION shardid;\n"
		  . join '',
		map {
			"CREATE TABLE $_->{table} (id bigint PRIMARY KEY, phase text NOT NULL, "
			  . "made timestamptz NOT NULL DEFAULT clock_timestamp());\n"
			  . seq_sql($_)
			  . "ALTER TABLE $_->{table} ALTER COLUMN id SET DEFAULT shardid_next($_->{shard}, '$_->{seq}');\n"
		} @f);
	first_use($one, 'p5', \@f, $what, default => 1);
	spread_load($one, 'p5', \@f, 'a', 150000, 3, "$what, before the clock's step", default => 1);
	my $first_a = min map { $one->safe_psql('p5',
		"SELECT ((min(id) >> 23) + $epoch_ms) / 1000.0 FROM $_->{table} WHERE phase = 'a'") } live(\@f);
	my $offset = $one->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())')
	  - Time::HiRes::time() + 30;
	set_clock($clock1, $offset);
	ok(wait_for_clock($one, $offset), "$what: the source's clock steps 30 s forward");

	# A busy table: the loader commits every 20 ms while pg_dump runs.
	my $load = "$tmp/p5-busy.sql";
	PostgreSQL::Test::Utils::append_to_file($load,
		join '', map { join('', map { take($_, 'busy', 2000, default => 1) . ";\n" } live(\@f))
			  . "SELECT pg_sleep(0.02) \\g /dev/null\n" } 1 .. 100);
	my ($lout, $lerr) = ('', '');
	my $loader = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-f', $load, '-d', $one->connstr('p5') ],
		'>', \$lout, '2>', \$lerr, IPC::Run::timeout(120));
	$one->poll_query_until('p5', "SELECT count(*) > 0 FROM $f[0]{table} WHERE phase = 'busy'")
	  or diag 'the loader did not start';
	for my $f (live(\@f))
	{
		$f->{dump} = "$tmp/$f->{table}.dump";
		command_ok(
			[ 'pg_dump', '-Fc', '-f', $f->{dump}, '-t', $f->{table}, '-t', $f->{seq},
				'-d', $one->connstr('p5') ],
			"$what, $f->{label}: pg_dump -t table -t sequence while the loader runs");
	}
	$loader->finish;
	is($loader->result(0), 0, "$what: the loader ran through the dumps") or diag $lerr;

	# Split: pre-data and data, the application, post-data.
	$two->safe_psql('postgres', 'CREATE DATABASE p5split');
	$two->safe_psql('p5split', 'CREATE EXTENSION shardid');
	my @split = map { { %$_, db => 'p5split' } } live(\@f);
	for my $f (@split)
	{
		command_ok([ 'pg_restore', '--section=pre-data', '--section=data',
				'-d', $two->connstr('p5split'), $f->{dump} ],
			"$what, $f->{label}: pg_restore of pre-data and data");
	}
	aim($two, $clock2, $first_a, (max map { last_time($two, 'p5split', $_) } @split), "$what, split");
	my @again = load_try($two, 'p5split', \@split, 'after', 150000, "$what, split",
		default => 1, accept => $far);
	for my $f (@split)
	{
		my ($out, $err) = ('', '');
		my $ok = IPC::Run::run([ 'pg_restore', '--section=post-data', '-d', $two->connstr('p5split'),
				$f->{dump} ], '>', \$out, '2>', \$err, IPC::Run::timeout(60));
		ok($ok, "$what, split, $f->{label}: post-data succeeds") or diag $err;
		is($two->safe_psql('p5split',
				"SELECT count(*) FROM pg_index WHERE indrelid = '$f->{table}'::regclass AND indisprimary AND indisvalid"),
			'1', "$what, split, $f->{label}: the restored table has its primary key");
	}
	catch_up($two, 'p5split', $clock2, \@again, 'after', 10000, "$what, split", default => 1);
	check_feed($two, 'p5split', $_, "$what, split") for @split;

	# pg_restore -j 2 while the application inserts.
	$two->safe_psql('postgres', 'CREATE DATABASE p5par');
	$two->safe_psql('p5par', 'CREATE EXTENSION shardid');
	my @par = map { { %$_, db => 'p5par' } } live(\@f);
	ok(defined clock_to($two, $clock2, $first_a), "$what, -j 2: the clock reads the first dumped ID's time");
	my %restore;
	for my $f (@par)
	{
		my $r = $restore{ $f->{label} } = { out => '', err => '' };
		$r->{h} = IPC::Run::start([ 'pg_restore', '-j', '2', '-d', $two->connstr('p5par'), $f->{dump} ],
			'>', \$r->{out}, '2>', \$r->{err}, IPC::Run::timeout(90));
	}
	# each application session starts once the restore has set its
	# sequence and its table has the DEFAULT (pg_restore -j runs the
	# sequence's SEQUENCE SET as soon as the sequence exists, which may be
	# before the table, or the ALTER TABLE that sets its DEFAULT, is
	# restored)
	my %app;
	my $deadline = Time::HiRes::time() + 60;
	while (keys %app < @par && Time::HiRes::time() < $deadline)
	{
		for my $f (grep { !$app{ $_->{label} } } @par)
		{
			next unless $two->safe_psql('p5par', qq{
SELECT pg_sequence_last_value(to_regclass('$f->{seq}')) IS NOT NULL
   AND EXISTS (SELECT 1 FROM pg_attrdef AS d
                 JOIN pg_attribute AS a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
                WHERE d.adrelid = to_regclass('$f->{table}') AND a.attname = 'id')}) eq 't';
			$app{ $f->{label} } = start_sql($two, 'p5par', "app $f->{label}",
				take($f, 'after', 150000, default => 1));
		}
		Time::HiRes::usleep(10_000);
	}
	is(scalar(keys %app), scalar(@par), "$what, -j 2: the application inserts into every restored table");
	@again = ();
	for my $f (@par)
	{
		my $e = $app{ $f->{label} } ? finish_sql($app{ $f->{label} }) : { code => 'not started', message => '' };
		diag "$what, -j 2, $f->{label}: the application: $e->{code} $e->{message}";
		like($e->{code}, $far,
			"$what, -j 2, $f->{label}: the application's insert is refused (55000) or ends its wait (57014)")
		  or diag explain $e;
		push @again, $f if $e->{code} ne 'none';
		my $r = $restore{ $f->{label} };
		my $ok = eval { $r->{h}->finish; 1 } && $r->{h}->result(0) == 0;
		ok($ok, "$what, -j 2, $f->{label}: pg_restore -j 2 succeeds") or diag $r->{err};
		is($two->safe_psql('p5par',
				"SELECT count(*) FROM pg_index WHERE indrelid = '$f->{table}'::regclass AND indisprimary AND indisvalid"),
			'1', "$what, -j 2, $f->{label}: the restored table has its primary key");
	}
	catch_up($two, 'p5par', $clock2, \@again, 'after', 10000, "$what, -j 2", default => 1);
	check_feed($two, 'p5par', $_, "$what, -j 2") for @par;
}

# =====================================================================
# 7. Logical replication as failover.
# =====================================================================
if (part('7'))
{
	my $what = '7';
	my @a = feeds('lr');
	$one->safe_psql('postgres', 'CREATE DATABASE p7');
	$one->safe_psql('p7', "CREATE EXTENSION shardid;\n" . join('', map { feed_sql($_) } @a)
		  . 'CREATE PUBLICATION p7 FOR TABLE ' . join(', ', map { $_->{table} } @a));
	# B: two databases that subscribe, one per ending; its clock a second
	# behind A's, so that its early calls come before A's IDs.
	my $offset = $one->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())')
	  - Time::HiRes::time();
	ok(defined clock_to($two, $clock2, Time::HiRes::time() + $offset - 1), "$what: B's clock runs behind A's");
	my %b;
	for my $db ('p7step', 'p7nostep')
	{
		$two->safe_psql('postgres', "CREATE DATABASE $db");
		$two->safe_psql($db, "CREATE EXTENSION shardid;\n" . join('', map { feed_sql($_) } @a)
			  . "CREATE SUBSCRIPTION sub_$db CONNECTION '" . $one->connstr . " dbname=p7'"
			  . ' PUBLICATION p7');
		ok($two->poll_query_until($db,
				q{SELECT count(*) = 3 AND bool_and(srsubstate IN ('r', 's')) FROM pg_subscription_rel}),
			"$what: $db subscribes to A's tables");
		$b{$db} = [ map { { %$_, db => $db, label => "$db $_->{variant}",
					accept => $db eq 'p7step' ? $far : $near } } @a ];
		first_use($two, $db, $b{$db}, "$what, $db: B's early call", phase => 'b-early');
	}
	first_use($one, 'p7', \@a, "$what, A");
	spread_load($one, 'p7', \@a, 'a1', 150000, 3, "$what, A");
	my $first_a = min map { $one->safe_psql('p7',
		"SELECT ((min(id) >> 23) + $epoch_ms) / 1000.0 FROM $_->{table} WHERE phase = 'a1'") } live(\@a);
	set_clock($clock1, $offset + 20);
	ok(wait_for_clock($one, $offset + 20), "$what: A's clock steps 20 s forward");
	spread_load($one, 'p7', \@a, 'a2', 150000, 0.5, "$what, A");
	$one->wait_for_catchup("sub_$_") for keys %b;
	my $counts = join ' UNION ALL ', map { "SELECT count(*) FROM $_->{table} WHERE phase <> 'b-early'" } @a;
	for my $db (sort keys %b)
	{
		is($two->safe_psql($db, "SELECT sum(count) FROM ($counts) c"),
			$one->safe_psql('p7', "SELECT sum(count) FROM ($counts) c"),
			"$what, $db: every row of A arrived");
	}
	my %last_value = map { ($_->{seq} => $one->safe_psql('p7', "SELECT last_value FROM $_->{seq}")) } live(\@a);
	my $last = max map { last_time($one, 'p7', $_) } live(\@a);
	$one->stop;
	for my $db (sort keys %b)
	{
		$two->safe_psql($db, "ALTER SUBSCRIPTION sub_$db DISABLE;
ALTER SUBSCRIPTION sub_$db SET (slot_name = NONE);
DROP SUBSCRIPTION sub_$db;");
	}
	# The documented failover step, in p7step only.
	$two->safe_psql('p7step', join '', map { "SELECT setval('$_', $last_value{$_});\n" } sort keys %last_value);
	aim($two, $clock2, $first_a, $last, "$what, B");
	my @both = map { live($b{$_}) } sort keys %b;
	my @again = grep { $_->{db} eq 'p7step' } load_try($two, undef, \@both, 'after', 100000, $what);
	catch_up($two, undef, $clock2, \@again, 'after', 10000, "$what, p7step");
	check_feed($two, undef, $_, "$what, with the sequences copied") for @{ $b{p7step} };
	TODO:
	{
		local $TODO = 'known limit: logical replication carries rows, not sequences; '
		  . 'without the failover step that copies them, the subscriber\'s sequence knows nothing of the publisher\'s IDs';
		check_feed($two, undef, $_, "$what, without the sequences copied") for @{ $b{p7nostep} };
	}
}

# =====================================================================
# Sequences that cannot carry a fence, refused at first use.
# =====================================================================
if (part('kinds'))
{
	$two->safe_psql('postgres', 'CREATE DATABASE kinds');
	$two->safe_psql('kinds', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE k_int4 AS integer;
CREATE SEQUENCE k_int2 AS smallint;
CREATE SEQUENCE k_small MAXVALUE 1000000;
CREATE SEQUENCE k_down INCREMENT BY -1;
CREATE SEQUENCE k_wide INCREMENT BY 2000;
CREATE SEQUENCE k_block INCREMENT BY 1024;
CREATE SEQUENCE k_plain;
CREATE SEQUENCE k_cached CACHE 100000;
CREATE SEQUENCE k_cache_wide INCREMENT BY 1024 CACHE 200;
CREATE SEQUENCE k_cache_huge CACHE 100000000;
});
	for my $k ([ k_int4 => $int_why ], [ k_int2 => qr/smallint|int2|bigint|int8|type|max/i ],
		[ k_small => qr/max|too small|range/i ], [ k_down => qr/increment|step/i ],
		[ k_wide => qr/increment|step/i ], [ k_cache_wide => qr/CACHE 200 and INCREMENT BY 1024/ ],
		[ k_cache_huge => qr/CACHE 100000000 and INCREMENT BY 1/ ])
	{
		my ($seq, $why) = @$k;
		for my $call (1, 2)
		{
			refused_ok(sql_outcome($two, 'kinds', "SELECT shardid_next(0, '$seq')"), $seq, $why,
				"sequence $seq, call $call: refused");
		}
	}
	for my $seq ('k_block', 'k_plain', 'k_cached')
	{
		is(sql_outcome($two, 'kinds', "SELECT count(shardid_next(0, '$seq')) FROM generate_series(1, 1000)")->{code},
			'none', "sequence $seq carries a fence: IDs are issued");
	}
}

# =====================================================================
# Security: mallory against alice, on the second server.
# =====================================================================

# Every role's attributes, and every membership.
my $roles_sql = q{
SELECT string_agg(format('%s:%s%s%s%s%s', rolname, rolsuper::int, rolcreaterole::int,
                         rolcreatedb::int, rolreplication::int, rolbypassrls::int), ' ' ORDER BY rolname)
  FROM pg_roles;
SELECT coalesce(string_agg(format('%s>%s', roleid::regrole, member::regrole), ' '
                           ORDER BY roleid::regrole::text, member::regrole::text), '')
  FROM pg_auth_members};
my ($roles0, $alice_sequences);

# How many ms the fence of $db (stored, and as this server knows it) is
# ahead of the clock, or why it could not be read.  The stored one is in
# shardid_internal since 1.3, in the extension's schema before.
sub fence_ahead
{
	my ($db) = @_;
	my $e = sql_outcome(
		$two, $db, qq{
SELECT max(f) - (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $epoch_ms
  FROM (SELECT pg_sequence_last_value(coalesce(to_regclass('shardid_internal.shardid_fence'),
                                              to_regclass('shardid_fence')))
        UNION ALL SELECT fence FROM shardid_fence_status WHERE datname = current_database()) AS x(f)});
	return $e->{code} eq 'none' ? $e->{out} =~ s/\s+$//r : "unreadable: $e->{code} $e->{message}";
}

# After an attack in $db: alice's IDs keep coming (1,000 more, none ahead
# of its clock, and from a new sequence too), the fence is within the
# clock and the lead, and no role gained a privilege.
sub after_attack
{
	my ($db, $what) = @_;
	my $e = sql_outcome($two, $db,
		q{INSERT INTO alice.t (phase) SELECT 'after' FROM generate_series(1, 1000)},
		user => 'alice');
	is($e->{code}, 'none', "$what: alice's IDs keep coming") or diag explain $e;
	my $n = ++$alice_sequences;
	$e = sql_outcome(
		$two, $db, "CREATE SEQUENCE alice.new$n;
SELECT count(shardid_next(8, 'alice.new$n')) FROM generate_series(1, 1000)", user => 'alice');
	is($e->{code}, 'none', "$what: a new sequence of alice's issues IDs") or diag explain $e;
	is( $two->safe_psql(
			$db, qq{
SELECT count(*) - count(DISTINCT id)
       + count(*) FILTER (WHERE (id >> 23) + $epoch_ms > floor(extract(epoch FROM made) * 1000) + 1)
  FROM alice.t}),
		'0',
		"$what: alice's IDs: no duplicate, none ahead of its clock");
	my $ahead = fence_ahead($db);
	ok($ahead =~ /^-?\d+$/ && $ahead <= 500 + 125 + 100,
		"$what: the fence is within the clock and the lead ($ahead ms ahead)");
	is($two->safe_psql('postgres', $roles_sql), $roles0, "$what: no role gained a privilege");
	return;
}

# alice's table in $db, with a primary key (the index 1.2's floor read)
# and the sequence OWNED BY it; mallory may insert into it, and has a
# schema of her own.
sub alice_table
{
	my ($db) = @_;
	$two->safe_psql(
		$db, q{
CREATE SCHEMA alice AUTHORIZATION alice;
CREATE SCHEMA mallory AUTHORIZATION mallory;
SET ROLE alice;
CREATE SEQUENCE alice.t_seq;
CREATE TABLE alice.t (id bigint PRIMARY KEY DEFAULT shardid_next(7, 'alice.t_seq'),
	phase text NOT NULL, made timestamptz NOT NULL DEFAULT clock_timestamp());
ALTER SEQUENCE alice.t_seq OWNED BY alice.t.id;
INSERT INTO alice.t (phase) SELECT 'start' FROM generate_series(1, 1000);
GRANT USAGE ON SCHEMA alice TO mallory;
GRANT INSERT ON alice.t TO mallory;
});
	return;
}

if (part('security'))
{
	$two->safe_psql(
		'postgres', q{
CREATE ROLE mallory LOGIN;
CREATE ROLE alice LOGIN;
CREATE DATABASE sec;
CREATE DATABASE ep11;
});
	$roles0 = $two->safe_psql('postgres', $roles_sql);
	$two->safe_psql('sec', 'CREATE EXTENSION shardid');
	alice_table('sec');

	# HIGH: a composite column whose implicit cast to bigint makes mallory
	# a superuser when a superuser's max() runs it (and the cast back, for
	# whoever evaluates the DEFAULT).
	my $e = sql_outcome(
		$two, 'sec', q{
CREATE TYPE mallory.evil AS (v bigint);
CREATE FUNCTION mallory.evil_int8(mallory.evil) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	BEGIN ALTER ROLE mallory SUPERUSER; EXCEPTION WHEN insufficient_privilege THEN NULL; END;
	RETURN ($1).v;
END $$;
CREATE FUNCTION mallory.int8_evil(bigint) RETURNS mallory.evil LANGUAGE plpgsql AS $$
BEGIN
	BEGIN ALTER ROLE mallory SUPERUSER; EXCEPTION WHEN insufficient_privilege THEN NULL; END;
	RETURN ROW($1)::mallory.evil;
END $$;
CREATE CAST (mallory.evil AS bigint) WITH FUNCTION mallory.evil_int8(mallory.evil) AS IMPLICIT;
CREATE CAST (bigint AS mallory.evil) WITH FUNCTION mallory.int8_evil(bigint) AS ASSIGNMENT;
CREATE SEQUENCE mallory.s;
CREATE TABLE mallory.t (c mallory.evil DEFAULT shardid_next(0, 'mallory.s'));
INSERT INTO mallory.t DEFAULT VALUES;}, user => 'mallory');
	is($e->{code}, 'none',
		'HIGH: mallory makes a composite column with an implicit cast to bigint, DEFAULT shardid_next')
	  or diag explain $e;
	for my $call (
		[ shardid_fence_lower => q{SELECT shardid_fence_lower(now())} ],
		[ shardid_sequence_lower => q{SELECT shardid_sequence_lower('mallory.s', now())} ])
	{
		$e = sql_outcome($two, 'sec', $call->[1]);
		like($e->{code}, qr/^(none|55000)$/,
			"HIGH: a superuser's $call->[0] lowers or refuses (55000)")
		  or diag explain $e;
		is($two->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}),
			'f', "HIGH: after a superuser's $call->[0], mallory is not a superuser");
		# (so that what follows is judged on its own)
		$two->safe_psql('postgres', 'ALTER ROLE mallory NOSUPERUSER');
		after_attack('sec', "HIGH, after $call->[0]");
	}
	$two->safe_psql('sec', 'DROP TABLE mallory.t');

	# MEDIUM: 2^63 - 1 in alice's table in mallory's open transaction, and
	# alice's slot evicted by mallory's 1,100 temp sequences.
	my $m = $two->background_psql('sec', on_error_stop => 1, extra_params => [ '-U', 'mallory' ]);
	$m->query_safe(q{BEGIN; INSERT INTO alice.t (id, phase) VALUES (9223372036854775807, 'mallory')});
	my ($out, $err) = ('', '');
	$two->psql(
		'sec',
		join('', map { "CREATE TEMP SEQUENCE e$_;\nSELECT shardid_next(0, 'e$_');\n" } 1 .. 1100),
		stdout => \$out,
		stderr => \$err,
		on_error_stop => 0,
		extra_params => [ '-U', 'mallory' ]);
	is(scalar(() = $out =~ /^\d+$/mg), 1100, 'MEDIUM DoS: mallory\'s 1,100 temp sequences issue')
	  or diag substr($err, 0, 500);
	is( $two->safe_psql(
			'sec', q{SELECT count(*) FROM shardid_stats WHERE sequence = 'alice.t_seq'::regclass}),
		'0',
		'MEDIUM DoS: alice\'s slot was evicted');
	after_attack('sec', 'MEDIUM DoS, mallory\'s transaction open');
	$m->query_safe('ROLLBACK');
	$m->quit;
	after_attack('sec', 'MEDIUM DoS, after mallory\'s rollback');

	# shardid_fence_lower above the fence.
	my $fence = $two->safe_psql('sec', 'SELECT last_value FROM shardid_internal.shardid_fence');
	$e = sql_outcome($two, 'sec', q{SELECT shardid_fence_lower(now() + interval '1 hour')});
	is($e->{code}, '55000', 'shardid_fence_lower(now() + 1 hour) is refused (55000)')
	  or diag explain $e;
	is($two->safe_psql('sec', 'SELECT last_value FROM shardid_internal.shardid_fence'),
		$fence, 'shardid_fence_lower(now() + 1 hour): the fence is unchanged');
	after_attack('sec', 'after shardid_fence_lower(now() + 1 hour)');

	# HIGH (the review of 1.3): a role's own sequence carries its fence, so
	# she may set it anywhere, but the database's fence, every sequence's
	# backstop, must not follow it.  mallory holds a lock on her sequence
	# that its writers' lock conflicts with while her first shardid_next
	# waits for it, and sets the sequence to the horizon before she lets
	# go: the call finds a value that asks for a fence 28 years ahead.  (It
	# was COMMENT ON, whose lock the fence's writers waited for, and then
	# the write found the value; no role can hold the writers' lock now,
	# test/t/081_fence_lock_queue.pl: her ALTER SEQUENCE holds up the call's
	# nextval, which finds it.)
	$two->safe_psql('sec', 'CREATE SEQUENCE mallory.r', extra_params => [ '-U', 'mallory' ]);
	my $h = $two->background_psql('sec', on_error_stop => 1, extra_params => [ '-U', 'mallory' ]);
	$h->query_safe(q{BEGIN; ALTER SEQUENCE mallory.r OWNED BY NONE});
	# (120 s: the call waits for her lock while the test polls for the
	# wait, sets the value and commits, which loaded machines made last
	# 20 s, then more than 50 s at a load of 13; what the call waits for
	# after her commit is shown if it fails)
	my $call = start_sql($two, 'sec', 'horizon', q{SELECT shardid_next(0, 'mallory.r')}, "'120s'", 'mallory');
	ok( $two->poll_query_until(
			'sec', q{
SELECT count(*) > 0 FROM pg_locks
 WHERE relation = 'mallory.r'::regclass AND NOT granted}),
		'HIGH, the horizon: mallory\'s first call waits for the lock she holds');
	$h->query_safe(q{SELECT setval('mallory.r', (1::int8 << 50) - 1024); COMMIT});
	$h->quit;
	my $committed = time;
	$two->poll_query_until('sec', q{
SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 't074_horizon' AND state = 'active')});
	my $call_state = $two->safe_psql('sec', q{
SELECT format('%s %s:%s', state, wait_event_type, wait_event) FROM pg_stat_activity
 WHERE application_name = 't074_horizon'});
	$e = finish_sql($call);
	like($e->{code}, qr/^(none|55000)$/,
		'HIGH, the horizon: her call issues or is refused (55000)')
	  or diag explain $e, 'after her commit: ', time - $committed, ' s, the call: ', $call_state;
	$e = sql_outcome($two, 'sec', q{SELECT shardid_next(0, 'mallory.r')}, user => 'mallory');
	is($e->{code}, '55000', 'HIGH, the horizon: her sequence, set to the horizon, is refused (55000)')
	  or diag explain $e;
	after_attack('sec', 'HIGH, a sequence set to the horizon during its fence write');

	# MEDIUM (the review of 1.3): ALTER EXTENSION UPDATE from 1.2 writes the
	# database's fence into every sequence a DEFAULT names, and waits for a
	# lock alice holds on hers; meanwhile mallory's IDs, from a sequence of
	# her own, must keep coming: the update must not hold the database
	# fence's lock while it waits.
	$two->safe_psql('postgres', 'CREATE DATABASE up12');
	$two->safe_psql('up12', q{CREATE EXTENSION shardid VERSION '1.2'});
	alice_table('up12');
	$h = $two->background_psql('up12', on_error_stop => 1, extra_params => [ '-U', 'alice' ]);
	$h->query_safe(q{BEGIN; ALTER SEQUENCE alice.t_seq RENAME TO t_seq_held});
	my $update = start_sql($two, 'up12', 'update', q{ALTER EXTENSION shardid UPDATE TO '1.3'}, '0');
	ok( $two->poll_query_until(
			'up12', q{
SELECT count(*) > 0 FROM pg_stat_activity
 WHERE query LIKE 'ALTER EXTENSION%' AND wait_event_type = 'Lock'}),
		'MEDIUM, the update: ALTER EXTENSION UPDATE waits for alice\'s lock');
	$e = sql_outcome(
		$two, 'up12', q{SET statement_timeout = '20s';
CREATE TEMP SEQUENCE q;
SELECT count(shardid_next(0, 'q')) FROM generate_series(1, 5000);}, user => 'mallory');
	is($e->{code}, 'none', 'MEDIUM, the update: mallory\'s IDs keep coming while it waits')
	  or diag explain $e;
	$h->query_safe('ROLLBACK');
	$h->quit;
	$e = finish_sql($update);
	is($e->{code}, 'none', 'MEDIUM, the update: it ends once alice lets go') or diag explain $e;
	is($two->safe_psql('up12', q{SELECT extversion FROM pg_extension WHERE extname = 'shardid'}),
		'1.3', 'MEDIUM, the update: the database is at 1.3');
	after_attack('up12', 'MEDIUM, after the update');

	# HIGH (the second review of 1.3): the update from 1.2 and
	# shardid_fence_lower, both a superuser's, read each sequence a DEFAULT
	# names.  mallory holds her sequence's lock, so that the reader waits
	# for it, and while it waits she renames the sequence and puts a view
	# of hers in its place, whose function would make her a superuser: a
	# reader that goes by name runs it, one that goes by OID reads the
	# sequence.
	$two->safe_psql('postgres', 'CREATE DATABASE swap12; GRANT CREATE ON DATABASE swap12 TO mallory');
	$two->safe_psql('swap12', q{CREATE EXTENSION shardid VERSION '1.2'});
	$two->safe_psql(
		'swap12', q{
CREATE SCHEMA ms;
CREATE SEQUENCE ms.a;
CREATE TABLE ms.t (id bigint DEFAULT shardid_next(3, 'ms.a'));
INSERT INTO ms.t DEFAULT VALUES;
CREATE FUNCTION ms.evil() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	BEGIN ALTER ROLE mallory SUPERUSER; EXCEPTION WHEN insufficient_privilege THEN NULL; END;
	RETURN 0;
END $$;}, extra_params => [ '-U', 'mallory' ]);
	for my $reader (
		[ 'the update' => q{ALTER EXTENSION shardid UPDATE TO '1.3'} ],
		[ 'shardid_fence_lower' => q{SELECT shardid_fence_lower(now() + interval '10 seconds')} ])
	{
		my ($name, $sql) = @$reader;
		$h = $two->background_psql('swap12', on_error_stop => 1, extra_params => [ '-U', 'mallory' ]);
		$h->query_safe(q{BEGIN; ALTER SEQUENCE ms.a RENAME TO a_x; ALTER SEQUENCE ms.a_x RENAME TO a});
		my $r = start_sql($two, 'swap12', "swap $name", $sql, '0');
		ok( $two->poll_query_until(
				'swap12', q{
SELECT count(*) > 0 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
 WHERE NOT l.granted AND l.relation = 'ms.a'::regclass AND a.usename = 'postgres'}),
			"HIGH, the swap: $name waits for mallory's lock on her sequence");
		$h->query_safe(q{ALTER SEQUENCE ms.a RENAME TO a_old;
CREATE VIEW ms.a AS SELECT ms.evil() AS last_value;
COMMIT});
		$h->quit;
		$e = finish_sql($r);
		like($e->{code}, qr/^(none|55000)$/, "HIGH, the swap: $name ends (or refuses, 55000)")
		  or diag explain $e;
		is($two->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}),
			'f', "HIGH, the swap: after $name, mallory is not a superuser");
		$two->safe_psql('postgres', 'ALTER ROLE mallory NOSUPERUSER');
		# her sequence again, for the next reader
		$two->safe_psql('swap12', 'DROP VIEW ms.a; ALTER SEQUENCE ms.a_old RENAME TO a',
			extra_params => [ '-U', 'mallory' ]);
	}
	is($two->safe_psql('swap12', q{SELECT extversion FROM pg_extension WHERE extname = 'shardid'}),
		'1.3', 'HIGH, the swap: the database is at 1.3');

	# MEDIUM: the epoch attack, in a database at 1.1 under this library.
	$two->safe_psql('ep11', q{CREATE EXTENSION shardid VERSION '1.1'});
	alice_table('ep11');
	$e = sql_outcome($two, 'ep11',
		q{CREATE TEMP SEQUENCE x; SELECT shardid_next(0, 'x', '1995-01-01 00:00:00+00')},
		user => 'mallory');
	is($e->{code}, '22023', 'MEDIUM epoch, 1.1: a per-call epoch of 1995 is refused (22023)')
	  or diag explain $e;
	after_attack('ep11', 'MEDIUM epoch, 1.1');
	$two->safe_psql('ep11', 'ALTER EXTENSION shardid UPDATE');
	after_attack('ep11', 'MEDIUM epoch, after ALTER EXTENSION UPDATE');

	# What any of them left in the stored fences shows after a restart.
	$two->stop;
	start_faked($two, $clock2);
	after_attack('ep11', 'MEDIUM epoch, after a restart');
	after_attack('up12', 'MEDIUM, the update, after a restart');
	after_attack('sec', 'after all of them and a restart');
}

$two->stop;
done_testing();
