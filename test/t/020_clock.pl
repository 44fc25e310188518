# Copyright: see the shardid LICENSE.
#
# 020_clock.pl: shardid_next when the server's clock steps, faked with
# libfaketime.  The server runs with LD_PRELOAD=libfaketime and reads its
# offset from a file that this test rewrites (write, then rename) while the
# server runs; FAKETIME_NO_CACHE makes every clock read see the file's
# current offset, and FAKETIME_DONT_FAKE_MONOTONIC leaves the monotonic
# clock alone, as a real step of the wall clock would.
#
# Cases:
#   - a 5 ms step back while IDs are being generated is waited out
#     (repeated until a call meets it, see case 1);
#   - a one-hour step back is refused with SQLSTATE 55000;
#   - a wait for the clock ends at statement_timeout and at
#     pg_cancel_backend, with the clock still behind;
#   - across a restart, a step back within shardid.max_clock_regression is
#     waited out and one beyond it is refused;
#   - past the horizon of the default epoch (2045-11-03) shardid_next
#     refuses with SQLSTATE 22008, while a later epoch still works.
# No check depends on the wall clock landing on a given millisecond.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use Time::HiRes ();
use Time::Local qw(timegm);

plan skip_all => 'libfaketime is not installed (Debian package "faketime")'
  unless defined libfaketime();

my $clock_file = PostgreSQL::Test::Utils::tempdir() . '/faketime.rc';
my $offset = 0;    # seconds the server's clock is ahead of the real one

my $node = shardid_node('clock');

# Every clock read sees the file's offset at once (FAKETIME_NO_CACHE):
# this test steps the clock by milliseconds while IDs are made.
sub set_offset
{
	$offset = shift;
	set_clock($clock_file, $offset);
	return;
}

sub start_node
{
	start_faked($node, $clock_file, no_cache => 1);
	return;
}

sub stat_of
{
	my ($column, $seq) = @_;
	return $node->safe_psql('postgres',
		"SELECT $column FROM shardid_stats WHERE sequence = '$seq'::regclass"
	);
}

set_offset(0);
start_node();

# The server's clock follows the file.
set_offset(-7200);
my $behind = $node->safe_psql('postgres',
	q{SELECT extract(epoch FROM clock_timestamp())});
ok(time() - $behind > 7000, 'the server clock follows the faketime file');
set_offset(0);

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE TABLE ids (
	ord		bigserial,			-- issue order
	sess	integer NOT NULL DEFAULT pg_backend_pid(),
	phase	text NOT NULL,
	seq		regclass NOT NULL,
	id		bigint NOT NULL
);
CREATE TABLE ctl (stop boolean NOT NULL);
INSERT INTO ctl VALUES (false);
CREATE SEQUENCE gen;
CREATE SEQUENCE step INCREMENT BY 1024;
CREATE SEQUENCE far;
CREATE SEQUENCE horizon;
CREATE FUNCTION take(p text, s regclass, n integer) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO ids (phase, seq, id)
	SELECT p, s, shardid_next(1, s) FROM generate_series(1, n)
$$;
});

# No ID of the sequence repeats; its time field never goes back in a
# session's issue order; each phase's IDs (the phases ran one after the
# other) are greater than the phase's before; ids_issued counts them all.
sub check_unique_and_ordered
{
	my ($seq, $what) = @_;
	my $res = $node->safe_psql(
		'postgres', qq{
SELECT count(*) = count(DISTINCT id) FROM ids WHERE seq = '$seq'::regclass;
SELECT count(*) FROM
  (SELECT id, lag(id) OVER (PARTITION BY phase, sess ORDER BY ord) AS prev
     FROM ids WHERE seq = '$seq'::regclass) AS o
 WHERE id >> 23 < prev >> 23;
SELECT count(*) FROM
  (SELECT lo, lag(hi) OVER (ORDER BY first) AS prev_hi
     FROM (SELECT min(ord) AS first, min(id) AS lo, max(id) AS hi
             FROM ids WHERE seq = '$seq'::regclass GROUP BY phase) AS p) AS q
 WHERE lo <= prev_hi;
SELECT (SELECT count(*) FROM ids WHERE seq = '$seq'::regclass)
     = (SELECT ids_issued FROM shardid_stats WHERE sequence = '$seq'::regclass);
});
	is($res, "t\n0\n0\nt",
		"$what: no duplicate, time never goes back, ids_issued counts them all"
	);
	return;
}

# 1. A 5 ms step back while a session generates IDs without pause.
#
# A step back is waited out only by a call that finds the sequence's last
# issued millisecond ahead of the (stepped) clock.  The sequence "step" has
# INCREMENT BY 1024, so every value starts a new 1,024-block and every ID
# takes a new millisecond: a generator that calls without pause sits at the
# guard's ceiling, one ID per millisecond, its last millisecond at or one
# ahead of the clock, whatever the machine's speed.  Stepping the clock back
# 5 ms then puts the last issued millisecond ahead of the clock, and the
# generator's next call must wait it out -- unless the generator was
# descheduled for longer than the step around it.  So the step is repeated,
# 5 ms at a time, until clock_waits grows, each attempt bounded in time.
# Nothing here depends on how long a wait took.
my $step_attempts = 20;
my $step_poll_secs = 3;
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-c', q{
DO $$
BEGIN
	LOOP
		PERFORM take('step5', 'step', 50);
		EXIT WHEN (SELECT stop FROM ctl);
	END LOOP;
END
$$;
}
		],
		'>', \$out, '2>', \$err);
	ok( $node->poll_query_until(
			'postgres',
			q{SELECT ids_issued > 200 FROM shardid_stats WHERE sequence = 'step'::regclass}
		),
		'5 ms: IDs are being generated');
	is(stat_of('clock_waits', 'step'), '0', '5 ms: no clock wait before the step');

	my ($attempts, $waited) = (0, 0);
	while (!$waited && $attempts < $step_attempts)
	{
		$attempts++;
		my $before = stat_of('clock_waits', 'step');
		set_offset($offset - 0.005);
		my $until = Time::HiRes::time() + $step_poll_secs;
		while (Time::HiRes::time() < $until)
		{
			if (stat_of('clock_waits', 'step') > $before)
			{
				$waited = 1;
				last;
			}
			Time::HiRes::usleep(20_000);
		}
	}
	note "5 ms: stepped back $attempts time(s)";
	ok($waited,
		"5 ms: a step back is waited out (clock_waits grows; $attempts of at most $step_attempts steps)"
	);
	$node->safe_psql('postgres', 'UPDATE ctl SET stop = true');
	$h->finish;
	is($h->result(0), 0, '5 ms: the generating session ended without error')
	  or diag $err;
	is(stat_of('clock_refusals', 'step'), '0', '5 ms: nothing refused');
	check_unique_and_ordered('step', '5 ms');
	# one session, one value per block: each ID has a millisecond of its own,
	# later than the one before it, across every step
	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FILTER (WHERE id >> 23 <= prev >> 23), count(*) > 0
  FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev
          FROM ids WHERE seq = 'step'::regclass) AS o}),
		'0|t',
		'5 ms: every ID takes a later millisecond than the one before it');
}

# 2. A one-hour step back is refused, and counted.
$node->safe_psql('postgres', q{SELECT take('before1h', 'gen', 1000)});
set_offset($offset - 3600);
like(
	sql_error($node, q{SELECT shardid_next(1, 'gen')}),
	qr/^55000: system clock moved backwards by \d+ ms$/,
	'1 hour: refused with SQLSTATE 55000 and the documented message');
is(stat_of('clock_refusals', 'gen'), '1', '1 hour: clock_refusals counts it');
set_offset($offset + 3600);
$node->safe_psql('postgres', q{SELECT take('after1h', 'gen', 1000)});
check_unique_and_ordered('gen', '1 hour, clock fixed again');

# 3. Waits for the clock end at statement_timeout and at pg_cancel_backend.
# The clock steps back 10 s, well within max_clock_regression (60 s), so
# shardid_next would wait about 10 s; after each interruption the clock
# must still read earlier than the last issued millisecond, which shows the
# wait was cut short rather than waited out.
$node->append_conf('postgresql.conf', "shardid.max_clock_regression = '60s'");
$node->reload;
$node->poll_query_until('postgres',
	q{SELECT current_setting('shardid.max_clock_regression') = '1min'})
  or die 'reload did not take effect';
$node->safe_psql('postgres', q{SELECT take('before-wait', 'gen', 10)});
set_offset($offset - 10);

my $still_behind = q{
SELECT last_ms > clock_timestamp() + interval '1 s'
  FROM shardid_stats WHERE sequence = 'gen'::regclass};

is( sql_error(
		$node, q{SET statement_timeout = '300ms'; SELECT shardid_next(1, 'gen')}),
	'57014: canceling statement due to statement timeout',
	'statement_timeout ends a wait for the clock');
is($node->safe_psql('postgres', $still_behind),
	't', 'statement_timeout: the clock was still behind');

{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-d',
			$node->connstr('postgres'), '-c',
			q{SELECT shardid_next(1, 'gen')}
		],
		'>', \$out, '2>', \$err);
	ok( $node->poll_query_until(
			'postgres', q{
SELECT count(*) = 1 FROM pg_stat_activity
 WHERE query LIKE 'SELECT shardid_next%' AND wait_event_type = 'Extension'}),
		'pg_cancel_backend: the session waits for the clock');
	$node->safe_psql(
		'postgres', q{
SELECT pg_cancel_backend(pid) FROM pg_stat_activity
 WHERE query LIKE 'SELECT shardid_next%' AND pid <> pg_backend_pid()});
	$h->finish;
	like(
		$err,
		qr/ERROR:\s+57014: canceling statement due to user request/,
		'pg_cancel_backend ends a wait for the clock');
	is($node->safe_psql('postgres', $still_behind),
		't', 'pg_cancel_backend: the clock was still behind');
}
set_offset($offset + 10);
$node->safe_psql('postgres', q{SELECT take('after-wait', 'gen', 10)});
check_unique_and_ordered('gen', 'after the interrupted waits');

# 4. Across a restart: the state saved at shutdown keeps the clock honest.
# A 15 s step back with max_clock_regression 30 s is waited out.  (It
# was 5 s: a loaded machine's stop and start took longer, and the first
# call found the clock past the fence already.)
$node->append_conf('postgresql.conf', "shardid.max_clock_regression = '30s'");
$node->safe_psql('postgres', q{SELECT take('before-restart', 'far', 5000)});
my $clock_waits = stat_of('clock_waits', 'far');
$node->stop;
set_offset($offset - 15);
start_node();
$node->safe_psql('postgres', q{SELECT take('after-restart', 'far', 5000)});
check_unique_and_ordered('far', 'restart 15 s back');
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT max(id) FROM ids WHERE phase = 'before-restart')
     < (SELECT min(id) FROM ids WHERE phase = 'after-restart')}),
	't',
	'restart 15 s back: new IDs are greater than those before the restart');
cmp_ok(stat_of('clock_waits', 'far'),
	'>', $clock_waits, 'restart 15 s back: the step was waited out');

# A one-hour step back across a restart is refused.
$node->stop;
set_offset($offset - 3600);
start_node();
like(
	sql_error($node, q{SELECT shardid_next(1, 'far')}),
	qr/^55000: system clock is \d+ ms behind the durable fence$/,
	'restart 1 hour back: refused with SQLSTATE 55000, at the fence');
$node->stop;
set_offset($offset + 3605);
start_node();
$node->safe_psql('postgres', q{SELECT take('clock-fixed', 'far', 1000)});
check_unique_and_ordered('far', 'restart with the clock fixed');

# 5. Past the horizon of the default epoch: 2045-11-03 19:53:47.775 UTC.
# Fake 2046-06-01 00:00:00 UTC.
set_offset(timegm(0, 0, 0, 1, 5, 2046) - time());
like(
	sql_error($node, q{SELECT shardid_next(1, 'horizon')}),
	qr/^22008: time 2046-\S+ \S+ is past the horizon of the epoch$/,
	'past the horizon: shardid_next refuses with SQLSTATE 22008');
# The epoch belongs to the database: a database that never issued an ID
# may take a later one, and its IDs reach past the default's horizon.
$node->safe_psql('postgres', 'CREATE DATABASE later_epoch');
$node->safe_psql(
	'later_epoch', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE horizon;
SELECT shardid_set_epoch('2030-01-01 00:00:00+00');});
is( $node->safe_psql(
		'later_epoch', q{
SELECT extract(year FROM shardid_created_at(shardid_next(1, 'horizon'),
	shardid_epoch()))}),
	'2046',
	'past the horizon: a database with a later epoch still works');

$node->stop;
set_offset(0);
done_testing();
