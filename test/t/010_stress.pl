# Copyright: see the shardid LICENSE.
#
# 010_stress.pl: shardid_next under load, on a real server with shardid
# preloaded.  Millions of IDs from one sequence in one statement, then
# several sessions at once on one sequence, then a sequence whose every
# value needs a millisecond of its own (so the guard must pace it), then
# cycling sequences.  All IDs go into a table without a unique index, with
# their issue order, and the test checks:
#   - no ID repeats;
#   - no (sequence, millisecond) holds more than 1,024 IDs;
#   - a sequence's time field never goes back in issue order;
#   - one session's IDs strictly increase (not for a cycling or descending
#     sequence, whose values themselves go down);
#   - each ID's millisecond lies between the clock readings just before and
#     just after the call (at most 1 ms after the latter: the guard's
#     lead), so IDs follow the server clock;
#   - shardid_stats.ids_issued equals the number of IDs.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $node = shardid_node('stress', 'synchronous_commit = off',
	"max_wal_size = '2GB'", "work_mem = '256MB'");
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
-- no unique index: duplicates must be visible, not refused
CREATE UNLOGGED TABLE ids (
	sess	integer NOT NULL,	-- the session (or statement) that took it
	ord		bigint NOT NULL,	-- issue order within that session
	seq		regclass NOT NULL,
	t0		timestamptz NOT NULL,	-- clock_timestamp() before the call
	id		bigint NOT NULL,
	t1		timestamptz NOT NULL	-- clock_timestamp() after it
);
CREATE SEQUENCE one;
CREATE SEQUENCE many;
CREATE SEQUENCE cyc MINVALUE 0 MAXVALUE 1023 CYCLE;
CREATE SEQUENCE tiny MINVALUE 0 MAXVALUE 9 CYCLE;
CREATE SEQUENCE down INCREMENT -1 MINVALUE -1000000000 MAXVALUE 5000 START 5000;
});

# The properties every sequence's IDs must have; $what names the case.
sub check_ids
{
	my ($seq, $count, $what, $cycles) = @_;
	my $res = $node->safe_psql(
		'postgres', qq{
SELECT count(*), count(DISTINCT id) FROM ids WHERE seq = '$seq'::regclass;
SELECT coalesce(max(n), 0) FROM
  (SELECT count(*) AS n FROM ids WHERE seq = '$seq'::regclass
    GROUP BY id >> 23) AS per_ms;
SELECT count(*) FILTER (WHERE id >> 23 < prev >> 23),
       count(*) FILTER (WHERE id <= prev)
  FROM (SELECT id, lag(id) OVER (PARTITION BY sess ORDER BY ord) AS prev
          FROM ids WHERE seq = '$seq'::regclass) AS o;
SELECT ids_issued FROM shardid_stats WHERE sequence = '$seq'::regclass;
SELECT count(*) FROM ids
 WHERE seq = '$seq'::regclass
   AND (shardid_created_at(id) < date_trunc('milliseconds', t0)
        OR shardid_created_at(id) > t1 + interval '1 ms');
});
	my ($counts, $per_ms, $order, $issued, $off_clock) = split /\n/, $res;
	is($counts, "$count|$count", "$what: $count IDs, none repeated");
	cmp_ok($per_ms, '<=', 1024, "$what: at most 1,024 IDs per millisecond");
	my ($back, $not_up) = split /\|/, $order;
	is($back, '0', "$what: time never goes back in each session's issue order");
	is($not_up, '0', "$what: IDs strictly increase in each session's issue order")
	  unless $cycles;
	is($issued, $count, "$what: shardid_stats.ids_issued counts every ID");
	is($off_clock, '0',
		"$what: each ID's millisecond is within the clock readings around its call"
	);
	return $per_ms;
}

# 1. One statement, one sequence, 2,000,000 IDs: faster than 1,024 a
# millisecond, so the guard must move to the next millisecond again and
# again.  generate_series gives the issue order.
$node->safe_psql(
	'postgres', q{
INSERT INTO ids (sess, ord, seq, t0, id, t1)
SELECT 0, g, 'one', clock_timestamp(), shardid_next(1, 'one'), clock_timestamp()
  FROM generate_series(1, 2000000) AS g;
});
my $per_ms = check_ids('one', 2000000, 'one statement');
note "one statement: at most $per_ms IDs in a millisecond";
is( $node->safe_psql(
		'postgres', q{
SELECT bool_and(shardid_shard(id) = 1 AND shardid_seq(id) = ord % 1024)
  FROM ids WHERE seq = 'one'::regclass;
}),
	't',
	'one statement: shard field and seq = nextval % 1024');

# 2. Four sessions at once on one sequence, 600,000 IDs each.  They wait
# on an advisory lock that this test holds until all four are queued, so
# that they run together.
my $nsess = 4;
my $per_sess = 600000;
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(4242)');
my @workers;
for my $s (1 .. $nsess)
{
	my ($out, $err) = ('', '');
	my $sql = qq{
SELECT pg_advisory_xact_lock_shared(4242);
INSERT INTO ids (sess, ord, seq, t0, id, t1)
SELECT $s, g, 'many', clock_timestamp(), shardid_next(2, 'many'), clock_timestamp()
  FROM generate_series(1, $per_sess) AS g;
};
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-c', $sql
		],
		'>', \$out, '2>', \$err);
	push @workers, [ $h, \$out, \$err ];
}
ok( $node->poll_query_until(
		'postgres', q{
SELECT count(*) FROM pg_locks
 WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted;
}, "$nsess"),
	'all sessions wait at the start line');
$holder->query_safe('SELECT pg_advisory_unlock(4242)');
for my $w (@workers)
{
	my ($h, $out, $err) = @$w;
	$h->finish;
	is($h->result(0), 0, 'worker session finished without error')
	  or diag $$err;
}
$holder->quit;

# Whether four sessions on two cores outrun 1,024 IDs a millisecond depends
# on the machine and its load, so the ceiling is only reported here; the
# checks above hold either way.  The next case reaches it on any machine.
$per_ms = check_ids('many', $nsess * $per_sess, "$nsess sessions");
note "$nsess sessions: at most $per_ms IDs in a millisecond";
my $waits = $node->safe_psql('postgres',
	q{SELECT exhausted_waits FROM shardid_stats WHERE sequence = 'many'::regclass}
);
note "$nsess sessions: $waits calls waited for the next millisecond";

# 2b. The ceiling on any machine: a sequence with INCREMENT BY 1024 starts a
# new 1,024-block with every value, so every ID needs a millisecond of its
# own, and the guard may run only one millisecond ahead of the clock.  A
# statement of 2,000 IDs therefore lasts about two seconds, and its calls,
# far faster than one a millisecond, must wait for the clock.  Every value
# has the same ten low bits, so two IDs in one millisecond would be equal.
$node->safe_psql(
	'postgres', q{
CREATE SEQUENCE wide INCREMENT BY 1024;
INSERT INTO ids (sess, ord, seq, t0, id, t1)
SELECT 40, g, 'wide', clock_timestamp(), shardid_next(6, 'wide'), clock_timestamp()
  FROM generate_series(1, 2000) AS g;
});
is(check_ids('wide', 2000, 'INCREMENT BY 1024'),
	1, 'INCREMENT BY 1024: one ID per millisecond');
is( $node->safe_psql(
		'postgres', q{
SELECT bool_and(shardid_seq(id) = 1) FROM ids WHERE seq = 'wide'::regclass}),
	't', 'INCREMENT BY 1024: every ID has seq 1');
cmp_ok(
	$node->safe_psql(
		'postgres',
		q{SELECT exhausted_waits FROM shardid_stats WHERE sequence = 'wide'::regclass}
	),
	'>', 0,
	'INCREMENT BY 1024: calls wait for the next millisecond (exhausted_waits > 0)');

# 3. Cycling sequences hand out the same values again: MAXVALUE 1023
# CYCLE (the Instagram recipe's own sequence) from two sessions at once,
# and a sequence of ten values from one statement.  A millisecond may hold
# each slot once, so nothing repeats.
@workers = ();
for my $s (11 .. 12)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-c', qq{
INSERT INTO ids (sess, ord, seq, t0, id, t1)
SELECT $s, g, 'cyc', clock_timestamp(), shardid_next(3, 'cyc'), clock_timestamp()
  FROM generate_series(1, 100000) AS g;
}
		],
		'>', \$out, '2>', \$err);
	push @workers, [ $h, \$out, \$err ];
}
for my $w (@workers)
{
	my ($h, $out, $err) = @$w;
	$h->finish;
	is($h->result(0), 0, 'cycling worker finished without error')
	  or diag $$err;
}
check_ids('cyc', 200000, 'MAXVALUE 1023 CYCLE, two sessions', 1);

$node->safe_psql(
	'postgres', q{
INSERT INTO ids (sess, ord, seq, t0, id, t1)
SELECT 20, g, 'tiny', clock_timestamp(), shardid_next(4, 'tiny'), clock_timestamp()
  FROM generate_series(1, 5000) AS g;
});
check_ids('tiny', 5000, 'MAXVALUE 9 CYCLE', 1);

# 4. A descending sequence, from positive values into negative ones: its
# blocks and slots come from floor division, and each new block still
# moves to a later millisecond.
$node->safe_psql(
	'postgres', q{
INSERT INTO ids (sess, ord, seq, t0, id, t1)
SELECT 30, g, 'down', clock_timestamp(), shardid_next(5, 'down'), clock_timestamp()
  FROM generate_series(1, 300000) AS g;
});
check_ids('down', 300000, 'INCREMENT -1 across zero', 1);
is( $node->safe_psql(
		'postgres', q{
SELECT bool_and(shardid_seq(id) = (5001 - ord) & 1023) FROM ids
 WHERE seq = 'down'::regclass;
}),
	't',
	'INCREMENT -1 across zero: seq = nextval mod 1024, also for negative values');

$node->stop;
done_testing();
