# Copyright: see the shardid LICENSE.
#
# 066_pg_cron.pl: the pg_cron recipe of docs/partitions.md ("pg_cron on
# Debian"), run as written with the real pg_cron (Debian's
# postgresql-NN-cron, unpacked into the test's PostgreSQL by
# test/run.sh) on servers with Debian's own pg_hba.conf rules: local
# connections by peer, TCP ones by scram-sha-256, and the settings read
# from conf.d/ as Debian's postgresql.conf reads them.  The doc's code
# blocks are read from the file (each follows a "<!-- 066_pg_cron: NAME
# -->" line); the test changes only the schedule (every minute, not at
# minute 7), the cluster's paths (its socket directory for
# /var/run/postgresql, its data directory's conf.d for
# /etc/postgresql/15/main/conf.d) and the restart command.
#
# Checks, on a fresh server set up as the recipe says (background
# workers), from its first step (the role, the database, the extension
# and the two shard tables) on:
#   - ALTER SYSTEM SET cron.database_name before pg_cron is preloaded is
#     refused (42704), as the doc says;
#   - after the one restart, pg_cron is loaded with the conf.d settings;
#   - the job, scheduled for the tables' owner, runs three times: a run
#     that makes every table's partitions ("succeeded", CALL), a run while
#     another session holds one table's lock ("failed", "partition
#     maintenance left 1 of 2 tables busy", that table busy in
#     shardid_partition_status and the other ok), and a successful run
#     again; the doc's query, as the owner, shows exactly those runs.
# And on a second server, the socket variant (cron.host), at the same
# minutes:
#   - a connection over TCP without a password is refused, as pg_cron's
#     default connection to localhost is: a job scheduled before
#     cron.host was set keeps nodename = 'localhost' through the restart
#     and when scheduled again under its name, and fails with "connection
#     failed";
#   - the doc's unschedule and schedule give it the socket directory, and
#     its next run succeeds.
# The two servers wait for three minute boundaries, about 2.5 minutes.
# Skips when pg_cron is not installed for the server.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

# The doc's code blocks, by name: the fenced block after each marker, its
# indentation removed.
my $doc_file = "$FindBin::RealBin/../../docs/partitions.md";
my %block;
{
	open my $fh, '<', $doc_file or die "could not read \"$doc_file\": $!";
	my @lines = <$fh>;
	close $fh;
	for (my $i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /<!-- 066_pg_cron: (\w+) -->/;
		my $name = $1;
		my $j = $i + 1;
		$j++ while $lines[$j] =~ /^\s*$/;
		$lines[$j] =~ /^(\s*)```/ or die "no code block after the marker $name";
		my $indent = length $1;
		my @body;
		for ($j++; $lines[$j] !~ /^\s*```\s*$/; $j++)
		{
			push @body, substr($lines[$j], $indent <= length $lines[$j] ? $indent : 0);
		}
		$block{$name} = join '', @body;
	}
}
is( join(' ', sort keys %block),
	'app conf install preload reschedule restart runs schedule',
	'docs/partitions.md has the eight blocks of the recipe');
like($block{install}, qr/^apt-get install postgresql-\d+-cron\n\z/,
	'the package to install is postgresql-NN-cron');
is($block{restart}, "systemctl restart postgresql\@15-main\n",
	'the restart is the cluster\'s (done here by the test harness)');

# A node as Debian makes one: settings from conf.d/, peer on the socket,
# scram-sha-256 over TCP, listening on 127.0.0.1 as Debian's listens on
# localhost.
sub debian_node
{
	my ($name) = @_;
	my $node = shardid_node($name, "listen_addresses = '127.0.0.1'",
		"include_dir = 'conf.d'", 'log_connections = on');
	mkdir $node->data_dir . '/conf.d' or die "mkdir: $!";
	open my $hba, '>', $node->data_dir . '/pg_hba.conf' or die $!;
	print $hba <<'HBA';
# Debian's rules (postgresql-common's pg_hba.conf, less its comments)
local   all             postgres                                peer
local   all             all                                     peer
host    all             all             127.0.0.1/32            scram-sha-256
host    all             all             ::1/128                 scram-sha-256
HBA
	close $hba;
	$node->start;
	return $node;
}

# The doc's text with this node's paths and an every-minute schedule.
sub local_text
{
	my ($node, $text) = @_;
	my $socket = $node->host;
	$text =~ s{'7 \* \* \* \*'}{'* * * * *'}g;
	$text =~ s{/var/run/postgresql}{$socket}g;
	return $text;
}

sub write_conf
{
	my ($node, $text) = @_;
	open my $fh, '>', $node->data_dir . '/conf.d/pg_cron.conf' or die $!;
	print $fh $text;
	close $fh;
	return;
}

# Two shard schemas with a partitioned posts table, owned by $owner (as
# the superuser, who may create for another role; peer lets only the
# operating system's user in).
sub shard_tables
{
	my ($node, $owner) = @_;
	$node->safe_psql(
		'app', qq{
CREATE EXTENSION shardid;
CREATE SCHEMA shard_0001 AUTHORIZATION $owner;
CREATE SCHEMA shard_0002 AUTHORIZATION $owner;
SET ROLE $owner;
CREATE SEQUENCE shard_0001.posts_id_seq;
CREATE TABLE shard_0001.posts (
	id bigint NOT NULL DEFAULT shardid_next(1, 'shard_0001.posts_id_seq'),
	body text, PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE shard_0001.posts_default PARTITION OF shard_0001.posts DEFAULT;
CREATE SEQUENCE shard_0002.posts_id_seq;
CREATE TABLE shard_0002.posts (
	id bigint NOT NULL DEFAULT shardid_next(2, 'shard_0002.posts_id_seq'),
	body text, PRIMARY KEY (id)) PARTITION BY RANGE (id);
RESET ROLE;
});
	return;
}

my $probe = shardid_node('probe');
$probe->start;
if ($probe->safe_psql('postgres',
		q{SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_cron'}) ne '1')
{
	$probe->stop;
	plan skip_all =>
	  'pg_cron is not installed for this server (Debian package "postgresql-NN-cron")';
}
$probe->stop;

# ---- The recipe: background workers -----------------------------------
my $bgw = debian_node('cron_bgw');
$bgw->safe_psql('postgres', $block{app});
is( $bgw->safe_psql('app', q{SELECT string_agg(format('%s:%s', c.oid::regclass, c.relowner::regrole), ' ' ORDER BY c.oid::regclass::text)
  FROM pg_class c WHERE c.relname = 'posts' AND c.relkind = 'p'}),
	'shard_0001.posts:app shard_0002.posts:app',
	'the recipe\'s first step makes the database app and its two shard tables, owned by app');
if ($bgw->pg_version < 17)
{
	is( sql_error($bgw, q{ALTER SYSTEM SET cron.database_name = 'app'}),
		'42704: unrecognized configuration parameter "cron.database_name"',
		'before pg_cron is preloaded, ALTER SYSTEM SET cron.database_name is refused');
}
else
{
	# 17 takes an unknown setting with a prefix into postgresql.auto.conf;
	# the recipe's file does not need it
	is( sql_error($bgw, q{ALTER SYSTEM SET cron.database_name = 'app'}),
		'no error',
		'17 and later: ALTER SYSTEM SET cron.database_name is taken before pg_cron is preloaded');
	$bgw->safe_psql('postgres', q{ALTER SYSTEM RESET cron.database_name});
}
$bgw->safe_psql('postgres', $block{preload});
write_conf($bgw, $block{conf});
$bgw->restart;
is( $bgw->safe_psql(
		'postgres',
		q{SELECT current_setting('shared_preload_libraries') || ' | ' || current_setting('cron.database_name')
		  || ' | ' || current_setting('cron.use_background_workers')}),
	'shardid, pg_cron | app | on',
	'one restart: pg_cron preloaded, its settings read from conf.d/pg_cron.conf');
$bgw->safe_psql('app', local_text($bgw, $block{schedule}));
is( $bgw->safe_psql('app',
		q{SELECT jobname, schedule, database, username FROM cron.job}),
	'shardid-partitions|* * * * *|app|app',
	'the job runs in app as app, the tables\' owner');

# ---- The socket variant, and the job scheduled before it ---------------
my $sock = debian_node('cron_socket');
$sock->safe_psql('postgres', q{CREATE DATABASE app;});
my $superuser = $sock->safe_psql('postgres', 'SELECT current_user');
shard_tables($sock, $superuser);
my ($conf_first) = $block{conf} =~ /\A(.*?^cron\.database_name[^\n]*\n)/ms;
$sock->safe_psql('postgres', $block{preload});
write_conf($sock, $conf_first);
$sock->restart;
my ($schedule_again) = $block{reschedule} =~ /^(SELECT cron\.schedule\(.*?\);\n)/ms;
$sock->safe_psql('app', 'CREATE EXTENSION pg_cron;' . local_text($sock, $schedule_again));
my $tcp_err;
$sock->psql(
	'app', 'SELECT 1',
	connstr => 'host=127.0.0.1 port=' . $sock->port . ' dbname=app',
	extra_params => ['-w'],
	stderr => \$tcp_err);
like($tcp_err, qr/no password supplied/,
	'over TCP, Debian\'s rules ask for a password that pg_cron\'s connection does not have');
(my $conf_socket = $block{conf}) =~ s/^cron\.use_background_workers = on$/cron.host = '\/var\/run\/postgresql'/m
  or die 'no cron.use_background_workers line in the conf block';
write_conf($sock, local_text($sock, $conf_socket));
$sock->restart;
is($sock->safe_psql('app', q{SHOW cron.host}), $sock->host, 'cron.host is the socket directory');
is($sock->safe_psql('app', q{SELECT jobid, jobname, nodename FROM cron.job}),
	'1|shardid-partitions|localhost',
	'the job scheduled before keeps nodename localhost through the restart');
$sock->safe_psql('app', local_text($sock, $schedule_again));
is($sock->safe_psql('app', q{SELECT jobid, jobname, nodename FROM cron.job}),
	'1|shardid-partitions|localhost',
	'and when scheduled again under the same name');

# ---- The runs ----------------------------------------------------------
# Wait until $node's job $jobid has $n finished runs; return them
# (status|the first line of return_message, oldest first).
sub runs
{
	my ($node, $jobid, $n) = @_;
	my $where = "jobid = $jobid AND status IN ('succeeded', 'failed')";
	$node->poll_query_until('app', "SELECT count(*) >= $n FROM cron.job_run_details WHERE $where")
	  or die "job $jobid had no $n finished runs";
	return [
		split /\n/,
		$node->safe_psql(
			'app',
			"SELECT status || '|' || split_part(return_message, E'\\n', 1) FROM cron.job_run_details WHERE $where ORDER BY runid"
		) ];
}

sub status
{
	my ($node) = @_;
	return $node->safe_psql('app',
		q{SELECT parent, partitions, ahead > interval '7 days', last_result
		    FROM shardid_partition_status ORDER BY parent});
}

my $run = runs($bgw, 1, 1);
is($run->[0], 'succeeded|CALL', 'the recipe\'s first run succeeds');
is( status($bgw),
	"shard_0001.posts|8|t|ok\nshard_0002.posts|8|t|ok",
	'it made today\'s partition and 7 more of each table');

# Another session holds the first table's lock across the next minute:
# taken at once, well before the next minute's run starts (the other
# server's first run, which comes at that minute too, is waited for
# after it).
my $holder = $bgw->background_psql('app');
$holder->query_safe('BEGIN; LOCK TABLE ONLY shard_0001.posts IN SHARE UPDATE EXCLUSIVE MODE;');
my $stale = runs($sock, 1, 1);
is($stale->[-1], 'failed|connection failed',
	'the job from before cron.host was set fails: connection failed');
my $rescheduled = $sock->safe_psql('app', local_text($sock, $block{reschedule}));
is( (split /\n/, $rescheduled)[-1],
	'shardid-partitions|' . $sock->host,
	'unscheduled and scheduled anew, the job has the socket directory');
my ($new_jobid) = $sock->safe_psql('app', q{SELECT jobid FROM cron.job});

$run = runs($bgw, 1, 2);
like($run->[1], qr/^failed\|(ERROR: +)?partition maintenance left 1 of 2 tables busy$/,
	'the run while a table\'s lock is held fails: 1 of 2 tables busy');
note 'its message: ' . $bgw->safe_psql('app',
	q{SELECT return_message FROM cron.job_run_details WHERE status = 'failed'});
is( status($bgw),
	"shard_0001.posts|8|t|busy\nshard_0002.posts|8|t|ok",
	'the locked table is busy, the other ok');
$holder->query_safe('COMMIT');
$holder->quit;
is(runs($sock, $new_jobid, 1)->[0], 'succeeded|CALL',
	'the rescheduled job connects through the socket and succeeds');
is( $sock->safe_psql('app',
		q{SELECT parent, partitions, last_result FROM shardid_partition_status ORDER BY parent}),
	"shard_0001.posts|8|ok\nshard_0002.posts|8|ok",
	'and makes the partitions of the superuser\'s tables');

$run = runs($bgw, 1, 3);
is($run->[2], 'succeeded|CALL', 'the next run succeeds again');
is( status($bgw),
	"shard_0001.posts|8|t|ok\nshard_0002.posts|8|t|ok",
	'both tables ok');
# The doc's query, as the owner: its three runs, newest first.
my $as_app = $bgw->safe_psql('app', "SET ROLE app;\n" . $block{runs});
is( join(' ', $as_app =~ /^\d+\|(\w+)\|/mg),
	'succeeded failed succeeded',
	'the doc\'s query shows the owner its three runs, newest first');

$bgw->stop;
$sock->stop;
done_testing();
