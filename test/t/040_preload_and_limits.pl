# Copyright: see the shardid LICENSE.
#
# 040_preload_and_limits.pl:
#   - Without shared_preload_libraries, shardid_next and the statistics
#     refuse with SQLSTATE 55000 and the documented message, while the pure
#     functions work.
#   - shardid.max_sequences bounds the guard's table: with 16 entries and
#     40 sequences, entries are evicted and counted, and a sequence that
#     comes back after eviction repeats none of its IDs, also with four
#     sessions churning through the sequences at once.
#   - A sequence whose slot was evicted before shardid_fence_lower lowered
#     the database's fence comes back with no fence, and issues no ID,
#     past the lowered fence (its ghost kept the fence from before).
#   - shardid.max_sequences refuses values below 16 (as PostgreSQL does
#     for a preloaded library's setting: a WARNING, and the default).
#   - shardid_stats_reset() is for superusers; it zeroes the counters and
#     keeps the milliseconds.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

# 1. Not preloaded.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->append_conf('postgresql.conf', "timezone = 'UTC'\nfsync = off\n");
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION shardid; CREATE SEQUENCE s;');

my $not_loaded =
  '55000: shardid must be loaded via "shared_preload_libraries"';
is(sql_error($plain, q{SELECT shardid_next(1, 's')}),
	$not_loaded, 'not preloaded: shardid_next refuses with SQLSTATE 55000');
is( sql_error($plain, q{SELECT shardid_next(1, 's', '2020-01-01+00')}),
	$not_loaded,
	'not preloaded: shardid_next with an epoch refuses with SQLSTATE 55000');
is(sql_error($plain, q{SELECT * FROM shardid_stats}),
	$not_loaded, 'not preloaded: shardid_stats refuses with SQLSTATE 55000');
is(sql_error($plain, q{SELECT * FROM shardid_stats_info()}),
	$not_loaded,
	'not preloaded: shardid_stats_info refuses with SQLSTATE 55000');
is($plain->safe_psql('postgres', q{SELECT is_called FROM s}),
	'f', 'not preloaded: no sequence value was spent');
is( $plain->safe_psql(
		'postgres', q{
SELECT shardid_encode('2026-10-23 09:20:00+00', 1341, 1001);
SELECT * FROM shardid_decode(4185136929178974185);
SELECT shardid_shard(4185136929178974185), shardid_seq(4185136929178974185),
       shardid_created_at(4185136929178974185);
SELECT shardid_from_shortcode(shardid_to_shortcode(4185136929178974185));
SELECT shardid_floor('2011-01-01 00:00:00.001+00'), shardid_horizon();
}),
	"4185136929178974185
2026-10-23 09:20:00+00|1341|1001
1341|1001|2026-10-23 09:20:00+00
4185136929178974185
8388608|2045-11-03 19:53:47.775+00",
	'not preloaded: the pure functions work');
$plain->stop;

# 2. A table of 16 entries and 40 sequences.
my $node = shardid_node('limits', 'shardid.max_sequences = 16');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE TABLE ids (
	ord		bigserial,			-- issue order
	seq		regclass NOT NULL,
	id		bigint NOT NULL
);
SELECT format('CREATE SEQUENCE q%s', i) FROM generate_series(0, 39) AS i \gexec
});

is( $node->safe_psql(
		'postgres', q{
SELECT entries, max_sequences, evictions, floor_ms IS NULL FROM shardid_stats_info()}
	),
	'0|16|0|t',
	'empty table before any ID');

# One ID from each of the 40 sequences, twice round.
$node->safe_psql(
	'postgres', q{
INSERT INTO ids (seq, id)
SELECT format('q%s', i % 40)::regclass, shardid_next(1, format('q%s', i % 40)::regclass)
  FROM generate_series(0, 79) AS i;
});
my ($entries, $evictions, $floor_set) = split /\|/,
  $node->safe_psql('postgres',
	q{SELECT entries, evictions, floor_ms IS NOT NULL FROM shardid_stats_info()}
  );
cmp_ok($entries, '<=', 16, 'at most 16 entries');
cmp_ok($evictions, '>=', 24, 'each sequence beyond the 16th evicted one');
is($floor_set, 't', 'evictions raise the floor');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM shardid_stats'),
	'<=', 16, 'shardid_stats shows at most 16 sequences');

# q0 issues fast, is evicted by one call on each of the other sequences,
# and issues fast again, all within a few milliseconds; twenty times over.
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION churn() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	evicted integer := 0;
BEGIN
	FOR round IN 1 .. 20 LOOP
		INSERT INTO ids (seq, id)
		SELECT 'q0', shardid_next(1, 'q0') FROM generate_series(1, 1500);
		FOR attempt IN 1 .. 10 LOOP
			FOR i IN 1 .. 39 LOOP
				INSERT INTO ids (seq, id)
				VALUES (format('q%s', i)::regclass,
						shardid_next(1, format('q%s', i)::regclass));
			END LOOP;
			EXIT WHEN NOT EXISTS (SELECT FROM shardid_stats
								   WHERE sequence = 'q0'::regclass);
		END LOOP;
		IF NOT EXISTS (SELECT FROM shardid_stats WHERE sequence = 'q0'::regclass) THEN
			evicted := evicted + 1;
		END IF;
		INSERT INTO ids (seq, id)
		SELECT 'q0', shardid_next(1, 'q0') FROM generate_series(1, 1500);
	END LOOP;
	RETURN evicted;
END
$$;
});
is($node->safe_psql('postgres', 'SELECT churn()'),
	'20', 'q0 was evicted in every round');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT id) FROM ids WHERE seq = 'q0'::regclass;
SELECT count(*) FILTER (WHERE id <= prev) FROM
  (SELECT id, lag(id) OVER (ORDER BY ord) AS prev
     FROM ids WHERE seq = 'q0'::regclass) AS o;
SELECT count(*) = count(DISTINCT (seq, id)) FROM ids;
}),
	"60002|60002\n0\nt",
	'an evicted sequence that comes back repeats none of its IDs, and they keep increasing'
);
cmp_ok(
	$node->safe_psql('postgres', 'SELECT entries FROM shardid_stats_info()'),
	'<=', 16, 'still at most 16 entries');

# Four sessions at once, each going round the 40 sequences ten times and
# taking 100 IDs from each: the table evicts all the time, under
# concurrency.  Per sequence no ID repeats; per session and sequence the
# IDs strictly increase in issue order.
$node->safe_psql(
	'postgres', q{
CREATE TABLE churned (
	ord		bigserial,
	sess	integer NOT NULL,
	seq		regclass NOT NULL,
	id		bigint NOT NULL
);
});
my $evictions_before = $node->safe_psql('postgres',
	'SELECT evictions FROM shardid_stats_info()');
my @workers;
for my $s (1 .. 4)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-c', qq{
DO \$\$
DECLARE
	s regclass;
BEGIN
	FOR round IN 1 .. 10 LOOP
		FOR i IN 0 .. 39 LOOP
			s := format('q%s', (i + $s * 10) % 40)::regclass;
			INSERT INTO churned (sess, seq, id)
			SELECT $s, s, shardid_next(2, s) FROM generate_series(1, 100);
		END LOOP;
	END LOOP;
END
\$\$;
}
		],
		'>', \$out, '2>', \$err);
	push @workers, [ $h, \$err ];
}
for my $w (@workers)
{
	my ($h, $err) = @$w;
	$h->finish;
	is($h->result(0), 0, 'churning session finished without error')
	  or diag $$err;
}
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT (seq, id)) FROM churned;
SELECT count(*) FILTER (WHERE id <= prev) FROM
  (SELECT id, lag(id) OVER (PARTITION BY sess, seq ORDER BY ord) AS prev
     FROM churned) AS o;
}),
	"160000|160000\n0",
	'four sessions churning: no ID repeats within a sequence, and they increase');
cmp_ok(
	$node->safe_psql('postgres', 'SELECT evictions FROM shardid_stats_info()'),
	'>', $evictions_before + 100, 'four sessions churning: many evictions');

# The counters of a full table are read back after a restart.  The
# eviction floor is not: after a restart every sequence starts at the
# database's durable fence, which lies past every ID issued before.
my $info = q{SELECT entries, evictions FROM shardid_stats_info()};
my $info_before = $node->safe_psql('postgres', $info);
my $floor_before = $node->safe_psql('postgres',
	'SELECT floor_ms FROM shardid_stats_info()');
$node->restart;
is($node->safe_psql('postgres', $info),
	$info_before, 'entries and evictions are read back after a restart');
$node->safe_psql('postgres', q{SELECT shardid_next(1, 'q0')});
is( $node->safe_psql(
		'postgres', qq{
SELECT floor_ms IS NULL FROM shardid_stats_info();
SELECT fence_time > '$floor_before' FROM shardid_fence_status
 WHERE datname = current_database()}),
	"t\nt",
	'after a restart the floor gives way to the fence, which is past it');

# 3. shardid_stats_reset(): superusers only; zeroes counters, keeps ms.
$node->safe_psql('postgres', 'CREATE ROLE plain_user');
is( sql_error(
		$node,
		q{SET ROLE plain_user; SELECT shardid_stats_reset()}),
	'42501: permission denied for function shardid_stats_reset',
	'shardid_stats_reset is revoked from PUBLIC');
my $last_ms_query =
  q{SELECT string_agg(seqid || ' ' || last_ms, ', ' ORDER BY seqid) FROM shardid_stats};
my $last_ms = $node->safe_psql('postgres', $last_ms_query);
$node->safe_psql('postgres', 'SELECT shardid_stats_reset()');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) > 0,
       sum(ids_issued + exhausted_waits + clock_waits + clock_refusals)
  FROM shardid_stats;
SELECT evictions FROM shardid_stats_info();
}),
	"t|0\n0",
	'shardid_stats_reset zeroes the counters');
is($node->safe_psql('postgres', $last_ms_query),
	$last_ms, 'shardid_stats_reset keeps every last_ms');
$node->stop;

# 4. The database's fence lowered while a sequence's slot is evicted: the
# fence its ghost kept is above the lowered cover, and the slot that comes
# back must not issue past the cover on it (no ID past the database's
# published fence, whatever a slot knew before).  A 60 s lead keeps the
# ghost's fence far above the lowered one.
my $lower = shardid_node('lower',
	"shardid.max_sequences = 16\nshardid.fence_lead = '60s'");
$lower->start;
$lower->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE g;
SELECT format('CREATE SEQUENCE e%s', i) FROM generate_series(1, 16) AS i \gexec
});
my $cover_query = q{SELECT fence_time FROM shardid_fence_status WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database())};
$lower->safe_psql('postgres', q{SELECT shardid_next(1, 'g')});
my $g_fence = $lower->safe_psql('postgres',
	q{SELECT fence FROM shardid_stats WHERE sequence = 'g'::regclass});
$lower->safe_psql('postgres',
	q{SELECT shardid_next(1, format('e%s', i)::regclass) FROM generate_series(1, 16) AS i, pg_sleep(0.01)});
is($lower->safe_psql('postgres', q{SELECT count(*) FROM shardid_stats WHERE sequence = 'g'::regclass}),
	'0', 'lowered: g\'s slot is evicted');
$lower->safe_psql('postgres', q{SELECT shardid_fence_lower(now())});
is($lower->safe_psql('postgres', qq{SELECT ($cover_query) < '$g_fence'}),
	't', 'lowered: the database\'s fence is below the one g\'s ghost kept');
# g comes back (evicting another), then issues after the clock passed the
# lowered cover
$lower->safe_psql('postgres', q{SELECT shardid_next(1, 'g')});
my $g_id = $lower->safe_psql('postgres', q{SELECT shardid_next(1, 'g') FROM pg_sleep(1.5)});
is( $lower->safe_psql(
		'postgres', qq{
SELECT fence <= ($cover_query), shardid_created_at($g_id) <= ($cover_query)
  FROM shardid_stats WHERE sequence = 'g'::regclass}),
	't|t',
	'lowered: g, back from its ghost, holds no fence and issues no ID past the database\'s published fence');
$lower->stop;

# 5. shardid.max_sequences has a minimum of 16.
my $small = shardid_node('small', 'shardid.max_sequences = 8');
$small->start;
ok( $small->log_contains(
		'WARNING:  8 is outside the valid range for parameter "shardid.max_sequences" \(16 \.\. 1000000\)'
	),
	'shardid.max_sequences = 8 is refused with a warning');
is( $small->safe_psql(
		'postgres', q{
CREATE EXTENSION shardid;
SELECT current_setting('shardid.max_sequences'), max_sequences FROM shardid_stats_info();
}),
	'16384|16384',
	'the server runs with the default of 16384');
$small->stop;

done_testing();
