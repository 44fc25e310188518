# test/t/090_bench_smoke.pl: the benchmark harness still runs.
#
# Runs bench/run.sh --scale small (about a minute) into a temporary
# directory and checks that every comparison left its raw numbers, that the
# table was written (the figure is left out: --no-plot), and the duplicate
# counts of the
# ceiling workload: none from shardid_next; for the PL/pgSQL function and
# the one-line SQL expression of the published scheme the counts are
# reported, not asserted, since they depend on the machine's speed (see
# section 2).  Times are never asserted: they belong to the machine, not to
# the code.
#
# versions: first (the harness's scripts, the same on every server; the
# issue path they time is tested on every version by the other tests)

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my $out = PostgreSQL::Test::Utils::tempdir();

# --no-plot: gnuplot belongs to the benchmark, not to the test command
my $ok = run_log([ 'bash', "$root/bench/run.sh", '--scale', 'small',
	'--out', $out, '--no-plot' ]);
ok($ok, 'bench/run.sh --scale small exits with 0');

# A CSV file as a list of hashes keyed by its header.
sub read_csv
{
	my ($name) = @_;
	my $path = "$out/$name";
	return [] unless -f $path;
	my @lines = split /\n/, slurp_file($path);
	my @head = split /,/, shift @lines;
	my @rows;
	foreach my $line (@lines)
	{
		my @f = split /,/, $line;
		my %row;
		@row{@head} = @f;
		push @rows, \%row;
	}
	return \@rows;
}

sub methods_of
{
	my ($rows) = @_;
	my %seen = map { $_->{method} => 1 } @$rows;
	return join(',', sort keys %seen);
}

# 1. cost per ID: every generator and both empty loops, every repetition
my $cost = read_csv('cost.csv');
is(methods_of($cost),
	'base_args,base_plain,gen_random_uuid,nextval,plpgsql,shardid_next',
	'cost.csv has every generator and both empty loops');
ok(@$cost >= 12, 'cost.csv has more than one repetition');

# 2. the ceiling, with the duplicate counts.  How many IDs the published
# scheme repeats depends on how fast this machine calls it: with a sequence
# that counts up by one, none unless some millisecond sees more than 1,024
# calls.  So for the PL/pgSQL function and the SQL
# expression the test checks that the harness counted, and what must hold
# at any speed: their IDs fall in the milliseconds from first_ms to
# last_ms, at most 1,024 distinct IDs in each; the counts are reported.
# shardid_next must repeat nothing, and stay within 1,024 IDs a
# millisecond, at any speed.
my $ceiling = read_csv('ceiling.csv');
my %ceil = map { $_->{method} => $_ } @$ceiling;
is(methods_of($ceiling), 'plpgsql,shardid,sql', 'ceiling.csv has all three');
for my $m (qw(shardid plpgsql sql))
{
	my $r = $ceil{$m} // {};
	my $counted = !grep { !defined $r->{$_} || $r->{$_} !~ /^\d+$/ }
	  qw(n distinct_ids duplicates first_ms last_ms);
	ok( $counted
		  && $r->{n} > 0
		  && $r->{duplicates} == $r->{n} - $r->{distinct_ids}
		  && $r->{first_ms} <= $r->{last_ms},
		"ceiling.csv: $m has its IDs counted (n, distinct_ids, duplicates = n - distinct_ids, first_ms <= last_ms)"
	);
	next unless $counted;
	my $ms = $r->{last_ms} - $r->{first_ms} + 1;
	cmp_ok($r->{distinct_ids}, '<=', 1024 * $ms,
		"ceiling: $m: at most 1,024 distinct IDs a millisecond");
	note sprintf('ceiling: %s: %d duplicates of %d IDs (%.0f IDs per ms)',
		$m, $r->{duplicates}, $r->{n}, $r->{n} / $ms);
}
is($ceil{plpgsql}{n}, $ceil{shardid}{n}, 'the PL/pgSQL function ran the same workload');
is($ceil{sql}{n}, $ceil{shardid}{n}, 'the SQL expression ran the same workload');
is($ceil{shardid}{duplicates}, 0, 'shardid_next issues no duplicates at the ceiling');
is($ceil{shardid}{distinct_ids}, $ceil{shardid}{n}, 'every shardid_next ID is distinct');
cmp_ok($ceil{shardid}{n}, '<=',
	1024 * (($ceil{shardid}{last_ms} // 0) - ($ceil{shardid}{first_ms} // 0) + 1),
	'shardid_next issues at most 1,024 IDs a millisecond');

# 3, 4. bulk inserts, index sizes, growth
my $bulk = read_csv('bulk.csv');
is(methods_of($bulk), 'bigserial,plpgsql,shardid,uuid', 'bulk.csv has all four');
is(scalar(grep { $_->{method} eq 'shardid' && $_->{status} eq 'ok' } @$bulk),
	10, 'shardid_next filled every chunk without a duplicate key');
my $size = read_csv('bulk_size.csv');
is(methods_of($size), 'bigserial,plpgsql,shardid,uuid', 'bulk_size.csv has all four');
ok(!grep({ !($_->{index_bytes} > 0) } @$size), 'every index has a size');
my $growth = read_csv('growth.csv');
is(scalar(@$growth), 10, 'growth.csv has ten points');

# 5. pgbench: every method, for 1 client and 2 on one shard and on two
my $pgb = read_csv('pgbench.csv');
my %cfg = map { ("$_->{method}/$_->{clients}/$_->{layout}", 1) } @$pgb;
is(join(' ', sort keys %cfg),
	join(' ', map { ("$_/1/one", "$_/2/one", "$_/2/separate") }
		  qw(bigserial shardid uuid)),
	'pgbench.csv has every method and client layout');

# the guard's counters
my %info = map { ($_->{key}, $_->{value}) } @{ read_csv('info.csv') };
is(join(',', sort keys %info),
	'bulk_exhausted_waits,ceiling_exhausted_waits,cost_exhausted_waits',
	'info.csv has the guard counters of comparisons 1 to 3');

# the figure and the table
ok(!-e "$out/growth.png", 'with --no-plot no figure is drawn');
my $md = -f "$out/results.md" ? slurp_file("$out/results.md") : '';
like($md, qr/^\| # \| comparison \| result \| target \| met \|$/m,
	'results.md has the table');
is(scalar(() = $md =~ /^\| [1-5] \|/mg), 28, 'results.md has every row');

done_testing();
