# Copyright: see the shardid LICENSE.
#
# 084_lead_lowered.pl: shardid.fence_lead lowered by a reload, then a
# crash (issue 29).  The fences already written stay as far ahead as the
# old lead: with 60 s lowered to 10 ms, then more load and kill -9, the
# first insert after a restart with a correct clock waited a minute.
# docs/operations.md ("After lowering shardid.fence_lead") brings them
# down with shardid_sequence_lower and shardid_fence_lower; this test runs
# its two statements as the doc prints them.
#
#   1. With a 60 s lead, eight tables fed by DEFAULTs and one sequence
#      called by name: the database's cover and the sequences' fences are
#      about a minute ahead of the clock.
#   2. The lead lowered to 10 ms by a reload, more load: still a minute
#      ahead (what a crash would leave).
#   3. The doc's statements: every fence within a few seconds of the
#      clock; the fences go forward again with the new lead.
#   4. kill -9 of the postmaster, a restart with the correct clock: every
#      stored fence is behind the clock, the first insert into each table
#      waits for no fence (fence_waits 0) and is answered within a
#      statement_timeout of 20 s, and no ID repeats.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(time);

# The doc's block after the marker, as printed.
my $doc_file = "$FindBin::RealBin/../../docs/operations.md";
my $recipe;
{
	open my $fh, '<', $doc_file or die "could not read \"$doc_file\": $!";
	my @lines = <$fh>;
	close $fh;
	for (my $i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /<!-- 084_lead_lowered: lower -->/;
		my $j = $i + 1;
		$j++ while $lines[$j] =~ /^\s*$/;
		$lines[$j] =~ /^```sql$/ or die 'no SQL block after the marker';
		my @body;
		push @body, $lines[$j] while $lines[++$j] !~ /^```$/;
		$recipe = join '', @body;
	}
}
like($recipe // '', qr/shardid_sequence_lower.*\n.*shardid_fence_lower\(now\(\)\);\n\z/s,
	'docs/operations.md has the recipe: the sequences, then the database');

my $node = shardid_node('lead', "shardid.fence_lead = '60s'",
	'restart_after_crash = off', 'autovacuum = off');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
SELECT format('CREATE SEQUENCE s%s; CREATE TABLE t%s (id bigint PRIMARY KEY DEFAULT shardid_next(%s, %L), phase text)',
              i, i, i, 's' || i) FROM generate_series(0, 7) AS i \gexec
CREATE SEQUENCE loose;
CREATE TABLE loose_ids (id bigint PRIMARY KEY, phase text);
});

# load PHASE: 2,000 rows into each table, 100 IDs of the sequence no
# DEFAULT names
sub load
{
	my ($phase) = @_;
	$node->safe_psql(
		'postgres', qq{
SELECT format('INSERT INTO t%s (phase) SELECT %L FROM generate_series(1, 2000)', i, '$phase')
  FROM generate_series(0, 7) AS i \\gexec
INSERT INTO loose_ids SELECT shardid_next(9, 'loose'), '$phase' FROM generate_series(1, 100);
});
	return;
}

# How far the stored fences are ahead of the clock, in ms: the database's
# cover, and the furthest of the nine sequences' (each value carries the
# field before its block: (last_value >> 10) - 1).
sub ahead
{
	return split /\|/, $node->safe_psql(
		'postgres', q{
WITH clock AS (SELECT shardid_encode(clock_timestamp(), 0, 0) >> 23 AS field)
SELECT (SELECT last_value FROM shardid_internal.shardid_fence) - clock.field,
       greatest((SELECT (last_value >> 10) - 1 FROM s0), (SELECT (last_value >> 10) - 1 FROM s1),
                (SELECT (last_value >> 10) - 1 FROM s2), (SELECT (last_value >> 10) - 1 FROM s3),
                (SELECT (last_value >> 10) - 1 FROM s4), (SELECT (last_value >> 10) - 1 FROM s5),
                (SELECT (last_value >> 10) - 1 FROM s6), (SELECT (last_value >> 10) - 1 FROM s7),
                (SELECT (last_value >> 10) - 1 FROM loose)) - clock.field
  FROM clock});
}

# 1. A 60 s lead.
load('lead 60s');
my ($cover, $seqs) = ahead();
cmp_ok($cover, '>', 50_000, "1: the cover is a minute ahead of the clock ($cover ms)");
cmp_ok($seqs, '>', 50_000, "1: and the sequences' fences ($seqs ms)");

# 2. Lowered by a reload, then more load.
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET shardid.fence_lead = '10ms'; SELECT pg_reload_conf()});
ok( $node->poll_query_until('postgres', q{SHOW shardid.fence_lead}, '10ms'),
	'2: the reload lowers the lead to 10 ms');
load('lead 10ms');
($cover, $seqs) = ahead();
cmp_ok($cover, '>', 50_000, "2: after more load the cover is still a minute ahead ($cover ms)");
cmp_ok($seqs, '>', 50_000, "2: and so are the sequences' fences ($seqs ms): a crash now would leave them there");

# 3. The doc's statements.
my ($rc, $out, $err) = $node->psql('postgres', $recipe, on_error_stop => 1);
is($rc, 0, "3: the doc's statements run" . ($err ? ": $err" : ''));
my @lowered = grep { /^\d+$/ } split /\n/, $out;
is(scalar @lowered, 10, '3: nine sequences lowered, then the database\'s fence');
($cover, $seqs) = ahead();
cmp_ok($cover, '<', 5_000, "3: the cover is within seconds of the clock ($cover ms)");
cmp_ok($seqs, '<', 5_000, "3: and every sequence's fence ($seqs ms)");
load('after the recipe');
($cover, $seqs) = ahead();
cmp_ok($cover, '<', 5_000, "3: after more load the cover, written with the new lead ($cover ms)");
cmp_ok($seqs, '<', 5_000, "3: and the sequences' fences ($seqs ms)");

# 4. A crash, a restart with the correct clock.
kill9_and_reap($node);
$node->start;
($cover, $seqs) = ahead();
cmp_ok($cover, '<=', 0, "4: after the restart the stored cover is behind the clock ($cover ms)");
cmp_ok($seqs, '<=', 0, "4: and every sequence's fence ($seqs ms)");
my $started = time();
($rc, $out, $err) = $node->psql(
	'postgres', q{
SET statement_timeout = '20s';
SELECT format('INSERT INTO t%s (phase) VALUES (%L)', i, 'first after the crash')
  FROM generate_series(0, 7) AS i \gexec
INSERT INTO loose_ids VALUES (shardid_next(9, 'loose'), 'first after the crash');
}, on_error_stop => 1);
my $took = time() - $started;
is($rc, 0, '4: the first insert into each table after the crash' . ($err ? ": $err" : ''));
diag(sprintf('4: the nine first inserts after the crash took %.0f ms in all', $took * 1000));
is( $node->safe_psql(
		'postgres',
		q{SELECT sum(fence_waits), sum(clock_refusals), count(*) FROM shardid_stats WHERE sequence IS NOT NULL}),
	'0|0|9',
	'4: none of them waited for a fence or was refused');
load('after the crash');
is( $node->safe_psql(
		'postgres', q{
SELECT sum(n), sum(d) FROM (
  SELECT count(*) AS n, count(DISTINCT id) AS d FROM t0 UNION ALL
  SELECT count(*), count(DISTINCT id) FROM t1 UNION ALL SELECT count(*), count(DISTINCT id) FROM t2 UNION ALL
  SELECT count(*), count(DISTINCT id) FROM t3 UNION ALL SELECT count(*), count(DISTINCT id) FROM t4 UNION ALL
  SELECT count(*), count(DISTINCT id) FROM t5 UNION ALL SELECT count(*), count(DISTINCT id) FROM t6 UNION ALL
  SELECT count(*), count(DISTINCT id) FROM t7 UNION ALL SELECT count(*), count(DISTINCT id) FROM loose_ids) AS c}),
	'64409|64409',
	'4: every row is there, no ID twice');
$node->stop;

done_testing();
