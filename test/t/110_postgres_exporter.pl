# Copyright: see the shardid LICENSE.
#
# 110_postgres_exporter.pl: monitoring/shardid-queries.yaml in the real
# postgres_exporter (Debian's prometheus-postgres-exporter), set up as
# docs/monitoring.md says: its role block as written, its ARGS as written
# (the queries file is the tree's), and its DATA_SOURCE_NAME with the test
# server's socket directory and port.  The exporter listens on loopback
# only; the test scrapes /metrics with HTTP::Tiny.
#
# Checks, after a load that gives every metric a value of its own (IDs
# issued, a call refused after the server's clock (libfaketime) stepped
# back, maintenance runs that end ok, busy and failed,
# rows moved out of a default partition and rows left in one):
#   - every metric of the queries file is exported with its type
#     (# TYPE counter or gauge) and its description;
#   - shardid_stats: one series per sequence, each counter equal to the
#     view's column;
#   - shardid_fence: loaded, missing, sequences, writes, write_waits and
#     standby_timeouts equal to the view; ahead_seconds between the fence's time less the
#     clock after the scrape and before it;
#   - shardid_partition: one series per table, partitions, default_rows,
#     moved, last_ok/busy/failed and last_run_time_seconds equal to the
#     view, ahead_seconds bounded by the clock as above;
#   - every metric that monitoring/shardid-alerts.yml names is exported,
#     and on the scraped values exactly the expected alerts hold:
#     ShardidRefusing for the refused sequence, ShardidPartitionsEndSoon
#     for the table made without premake and the failed one (which has no
#     partition), ShardidPartitionRunFailed for
#     the failed one, ShardidDefaultPartitionRows for the tables with rows
#     in their default partition, and not ShardidClockBehindFence.
# Skips when the exporter is not installed.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use HTTP::Tiny;
use IPC::Run;
use Time::HiRes qw(usleep);
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => 'prometheus-postgres-exporter is not installed' unless -x $exporter;

my $root = "$FindBin::RealBin/../..";
my $queries_file = "$root/monitoring/shardid-queries.yaml";
my $alerts_file = "$root/monitoring/shardid-alerts.yml";

sub slurp
{
	my ($file) = @_;
	open my $fh, '<', $file or die "could not read \"$file\": $!";
	local $/;
	my $text = <$fh>;
	close $fh;
	return $text;
}

# docs/monitoring.md's blocks, by name (as in 066_pg_cron.pl)
my %block;
{
	my @lines = split /^/, slurp("$root/docs/monitoring.md");
	for (my $i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /<!-- 110_postgres_exporter: (\w+) -->/;
		my $name = $1;
		my $j = $i + 1;
		$j++ while $lines[$j] =~ /^\s*$/;
		$lines[$j] =~ /^```/ or die "no code block after the marker $name";
		my @body;
		push @body, $lines[$j] while $lines[++$j] !~ /^```\s*$/;
		$block{$name} = join '', @body;
	}
}
is(join(' ', sort keys %block), 'default install role', 'docs/monitoring.md has its three blocks');
like($block{install}, qr{/usr/share/doc/postgresql-15-shardid/monitoring/shardid-queries\.yaml},
	'the doc installs the packaged queries file');
like($block{install}, qr{^apt-get install prometheus-postgres-exporter daemon$}m,
	'the doc installs daemon, which Debian\'s init script of the exporter needs');

# The metrics the queries file defines: name => usage, from its YAML
# (queries at column 0, metrics as "    - column:" then "usage:").
my %usage;
{
	my $ns;
	my $col;
	for (split /\n/, slurp($queries_file))
	{
		$ns = $1 if /^(\w+):\s*$/;
		$col = $1 if /^    - (\w+):\s*$/;
		$usage{"${ns}_$col"} = $1 if /^\s+usage: "(\w+)"/;
	}
}
my @metrics = sort grep { $usage{$_} ne 'LABEL' } keys %usage;
is(scalar(@metrics), 21, 'the queries file defines 21 metrics');

# ---- A server and a load -------------------------------------------------
# Its clock is faked (libfaketime) so that a step back makes a refusal.
my $clock = PostgreSQL::Test::Utils::tempdir() . '/clock';
set_clock($clock, 0);
my $node = shardid_node('exporter', "shardid.max_clock_regression = '100ms'");
start_faked($node, $clock, no_cache => 1);
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql(
	'app', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE posts_id_seq;
CREATE TABLE posts (id bigint NOT NULL DEFAULT shardid_next(7, 'posts_id_seq'), body text,
	PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE posts_default PARTITION OF posts DEFAULT;
CREATE SEQUENCE busy_id_seq;
CREATE TABLE busy (id bigint NOT NULL DEFAULT shardid_next(8, 'busy_id_seq'), PRIMARY KEY (id))
	PARTITION BY RANGE (id);
-- its default partition's rows cannot move: a foreign key references the table
CREATE TABLE stuck (id bigint NOT NULL, PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE stuck_default PARTITION OF stuck DEFAULT;
CREATE TABLE stuck_ref (id bigint REFERENCES stuck);
INSERT INTO stuck VALUES (shardid_encode(now() + interval '30 days', 9, 1));
CREATE TABLE thin (id bigint NOT NULL, PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE SEQUENCE ahead_id_seq;
CREATE TABLE ahead (id bigint PRIMARY KEY DEFAULT shardid_next(10, 'ahead_id_seq'));
INSERT INTO ahead DEFAULT VALUES;
});
$node->safe_psql('app', $block{role});
is( $node->safe_psql('app',
		q{SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_class c
		   WHERE c.relkind = 'r' AND has_table_privilege('prometheus', c.oid, 'SELECT')
		     AND c.relnamespace = 'public'::regnamespace
		     AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
		                     AND d.objid = c.oid AND d.deptype = 'e')}),
	'posts_default stuck_default',
	'the doc\'s role block grants SELECT on every default partition, and on nothing else');
# The clock steps back 5 s: the next ID of ahead_id_seq is refused.
set_clock($clock, -5);
ok(wait_for_clock($node, -5), 'the server\'s clock is 5 s back');
like(sql_error($node, 'INSERT INTO ahead DEFAULT VALUES', 'app'),
	qr/^55000: system clock moved backwards by \d+ ms/, 'a clock refusal');
set_clock($clock, 0);
ok(wait_for_clock($node, 0), 'the clock is right again');

# Rows: 3,000 IDs, then two rows 30 days ahead that the run moves out of
# the default partition.
$node->safe_psql('app', q{
CALL shardid_partition_run(ARRAY['busy'::regclass], '1 day', 7);
INSERT INTO posts (body) SELECT 'p' FROM generate_series(1, 3000);
INSERT INTO busy SELECT FROM generate_series(1, 10);
INSERT INTO posts VALUES (shardid_encode(now() + interval '30 days', 7, 1), 'later'),
                         (shardid_encode(now() + interval '30 days', 7, 2), 'later');
});
# One run: posts ok, busy locked by another session, stuck failed (0A000).
my $holder = $node->background_psql('app');
$holder->query_safe('BEGIN; LOCK TABLE ONLY busy IN SHARE UPDATE EXCLUSIVE MODE;');
like( sql_error($node,
		q{CALL shardid_partition_run(ARRAY['posts', 'busy', 'stuck']::regclass[], '1 day', 7, NULL, NULL, '200ms')},
		'app'),
	qr/^0A000: partition maintenance failed for 1 of 3 tables/,
	'the run fails for stuck, with busy busy');
$holder->query_safe('COMMIT');
$holder->quit;
$node->safe_psql('app', q{CALL shardid_partition_run(ARRAY['thin'::regclass], '1 day', 0)});
# a row left in the default partition after the run
$node->safe_psql('app',
	q{INSERT INTO posts VALUES (shardid_encode(now() + interval '40 days', 7, 3), 'left')});
is( $node->safe_psql('app',
		q{SELECT parent, last_result, moved, default_rows FROM shardid_partition_status ORDER BY parent::text}),
	"busy|busy|0|\nposts|ok|3002|1\nstuck|failed|0|1\nthin|ok|0|",
	'the views hold ok, busy and failed runs, moved rows and rows in default partitions');

# ---- The exporter --------------------------------------------------------
# The doc's /etc/default file, with this server's socket directory and
# port and the tree's queries file, read by sh as the init script reads it.
(my $default = $block{default}) =~ s{host=/run/postgresql port=5432 }{'host=' . $node->host . ' port=' . $node->port . ' '}e
  or die 'no host=/run/postgresql port=5432 in the doc\'s DATA_SOURCE_NAME';
$default =~ s{/etc/prometheus/shardid-queries\.yaml}{$queries_file} or die 'no queries file in the doc\'s ARGS';
my $default_file = PostgreSQL::Test::Utils::tempdir() . '/prometheus-postgres-exporter';
{
	open my $fh, '>', $default_file or die $!;
	print $fh $default;
	close $fh;
}
my ($sourced) = PostgreSQL::Test::Utils::run_command(
	[ 'sh', '-c', '. "$1" && printf "%s\n%s\n" "$DATA_SOURCE_NAME" "$ARGS"', 'sh', $default_file ]);
my ($dsn, $args) = split /\n/, $sourced;
like($dsn, qr/^user=prometheus host=\S+ port=\d+ dbname=app$/, 'DATA_SOURCE_NAME names the user, host, port and database');
my $port = PostgreSQL::Test::Cluster::get_free_port();
my ($out, $err) = ('', '');
local $ENV{DATA_SOURCE_NAME} = $dsn;
my $h = IPC::Run::start(
	[ $exporter, split(/ /, $args), "--web.listen-address=127.0.0.1:$port" ],
	'<', \undef, '>', \$out, '2>', \$err);
my $http = HTTP::Tiny->new(timeout => 10);

sub now_s { return Time::HiRes::time(); }

# Scrape until the shardid metrics are there; return the text and the
# times before and after the scrape that had them.
my ($text, $before, $after);
for (1 .. 100)
{
	$before = now_s();
	my $res = $http->get("http://127.0.0.1:$port/metrics");
	$after = now_s();
	if ($res->{success} && $res->{content} =~ /^shardid_stats_ids_issued\{/m)
	{
		$text = $res->{content};
		last;
	}
	usleep(200_000);
}
ok(defined $text, 'the exporter serves the shardid metrics on /metrics')
  or diag("exporter: $out$err");
$text //= '';

# series: name => [ { labels => {...}, value => N } ]
my %series;
my %type;
my %help;
for (split /\n/, $text)
{
	if (/^# TYPE (shardid_\w+) (\w+)$/) { $type{$1} = $2; next; }
	if (/^# HELP (shardid_\w+) (.+)$/) { $help{$1} = $2; next; }
	next unless /^(shardid_\w+)\{([^}]*)\} (\S+)$/;
	my ($name, $labels, $value) = ($1, $2, $3);
	my %l = $labels =~ /(\w+)="([^"]*)"/g;
	push @{ $series{$name} }, { labels => \%l, value => $value };
}
is( join(' ', map { "$_:" . ($type{$_} // 'missing') } @metrics),
	join(' ', map { "$_:" . lc $usage{$_} } @metrics),
	'every metric of the queries file is exported with its type');
is(scalar(grep { defined $help{$_} } @metrics), scalar(@metrics), 'and a description');

# The value of $name for the series whose labels include %want.
sub value
{
	my ($name, %want) = @_;
	my @found = grep {
		my $s = $_;
		!grep { ($s->{labels}{$_} // '') ne $want{$_} } keys %want
	} @{ $series{$name} // [] };
	return undef unless @found == 1;
	return $found[0]{value};
}

# shardid_stats
my @stats = split /\n/, $node->safe_psql('app',
	q{SELECT sequence, ids_issued, exhausted_waits, clock_waits, fence_waits, clock_refusals
	    FROM shardid_stats WHERE datname = 'app' ORDER BY 1});
is(scalar(@stats), 3, 'the view has three sequences');
is(scalar(@{ $series{shardid_stats_ids_issued} // [] }), 3, 'one series per sequence');
my @counters = qw(ids_issued exhausted_waits clock_waits fence_waits clock_refusals);
for my $row (@stats)
{
	my ($seq, @v) = split /\|/, $row;
	is( join(' ', map { value("shardid_stats_$_", datname => 'app', sequence => $seq) // 'none' } @counters),
		join(' ', @v),
		"shardid_stats for $seq: @counters");
}
is(value('shardid_stats_ids_issued', sequence => 'posts_id_seq'), 3000, 'posts_id_seq issued 3000 IDs');
is(value('shardid_stats_clock_refusals', sequence => 'ahead_id_seq'), 1, 'ahead_id_seq refused one call');

# shardid_fence
my ($loaded, $missing, $sequences, $writes, $waits, $timeouts, $fence_s) = split /\|/,
  $node->safe_psql('app',
	q{SELECT (state = 'loaded')::int, (state = 'none')::int, sequences, writes, write_waits,
	         standby_timeouts, extract(epoch FROM fence_time)
	    FROM shardid_fence_status WHERE datname = 'app'});
is( join(' ', map { value("shardid_fence_$_", datname => 'app') // 'none' }
		qw(loaded missing sequences writes write_waits standby_timeouts)),
	"$loaded $missing $sequences $writes $waits $timeouts",
	'shardid_fence: loaded, missing, sequences, writes, write_waits, standby_timeouts as the view');
is("$loaded $missing", '1 0', 'the fence is loaded');
my $ahead = value('shardid_fence_ahead_seconds', datname => 'app');
ok( $ahead >= $fence_s - $after - 0.001 && $ahead <= $fence_s - $before + 0.001,
	"shardid_fence_ahead_seconds ($ahead) is the fence ($fence_s) less the clock of the scrape");

# shardid_partition
my @parts = split /\n/, $node->safe_psql('app',
	q{SELECT parent, partitions, coalesce(default_rows::text, 'NaN'), moved,
	         (last_result = 'ok')::int, (last_result = 'busy')::int, (last_result = 'failed')::int,
	         extract(epoch FROM last_run), coalesce(extract(epoch FROM covered_until), 0)
	    FROM shardid_partition_status ORDER BY parent::text});
is(scalar(@{ $series{shardid_partition_partitions} // [] }), 4, 'one series per maintained table');
for my $row (@parts)
{
	my ($parent, @v) = split /\|/, $row;
	my $covered = pop @v;
	my $last_run = pop @v;
	is( join(' ', map { value("shardid_partition_$_", parent => $parent) // 'none' }
			qw(partitions default_rows moved last_ok last_busy last_failed)),
		join(' ', @v),
		"shardid_partition for $parent: partitions, default_rows, moved, last_ok, last_busy, last_failed");
	my $run_s = value('shardid_partition_last_run_time_seconds', parent => $parent);
	ok(abs($run_s - $last_run) < 1e-3, "$parent: last_run_time_seconds is last_run ($run_s)");
	my $a = value('shardid_partition_ahead_seconds', parent => $parent);
	if ($covered == 0)
	{
		is($a, 0, "$parent: no partition holds now, ahead_seconds is 0");
	}
	else
	{
		ok( $a >= $covered - $after - 0.001 && $a <= $covered - $before + 0.001,
			"$parent: ahead_seconds ($a) is covered_until less the clock of the scrape");
	}
}

# ---- The alert rules -----------------------------------------------------
# Each rule's expression is "METRIC OP NUMBER" or "increase(METRIC[..]) >
# 0"; on one scrape, increase since the start is the counter itself.
my @rules;
{
	my $name;
	for (split /\n/, slurp($alerts_file))
	{
		$name = $1 if /^\s+- alert: (\w+)$/;
		push @rules, [ $name, $1 ] if /^\s+expr: (.+)$/;
	}
}
is(scalar(@rules), 6, 'six alert rules');
my %fires;
for my $rule (@rules)
{
	my ($name, $expr) = @$rule;
	my ($metric, $op, $bound) = $expr =~ /^(?:increase\()?(shardid_\w+)(?:\[\w+\]\))? (>|<|==) ([\d.]+)$/
	  or die "alert $name: an expression this test cannot read: $expr";
	ok($type{$metric}, "alert $name: $metric is exported");
	for my $s (@{ $series{$metric} // [] })
	{
		my $v = $s->{value};
		next if $v eq 'NaN';
		my $holds = $op eq '>' ? $v > $bound : $op eq '<' ? $v < $bound : $v == $bound;
		push @{ $fires{$name} }, $s->{labels}{parent} // $s->{labels}{sequence} // $s->{labels}{datname}
		  if $holds;
	}
}
is( join('; ', map { "$_: " . join(' ', sort @{ $fires{$_} }) } sort keys %fires),
	'ShardidDefaultPartitionRows: posts stuck; ShardidPartitionRunFailed: stuck; '
	  . 'ShardidPartitionsEndSoon: stuck thin; ShardidRefusing: ahead_id_seq',
	'on these values the alerts that hold are exactly the expected ones');

$h->kill_kill;
$node->stop;
done_testing();
