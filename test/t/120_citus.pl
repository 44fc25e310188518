# Copyright: see the shardid LICENSE.
#
# 120_citus.pl: shardid under Citus's schema-based sharding (docs/citus.md),
# with the real Citus, built from ../shared/vendor into the test's
# PostgreSQL by test/run.sh (test/citus.sh; Debian packages no Citus).
# The long tier only: PG_TEST_EXTRA=shardid_citus.
#
# A coordinator and 2 workers on Unix sockets (citus.local_hostname),
# shared_preload_libraries = 'citus,shardid'.  8 tenant schemas
# shard_0001 .. shard_0008 made under citus.enable_schema_based_sharding,
# each with a table whose id is DEFAULT shardid_next(shardid_schema_shard(
# 'shard_000k'), its sequence), as docs/citus.md provisions them.  Checks:
#   - 20,000 inserts through the coordinator (pgbench, 4 clients) while
#     two tenants move between the workers with citus_schema_move, in
#     force_logical and in block_writes mode: no error, no ID twice,
#     every ID decodes to its tenant's shard;
#   - kill -9 of the coordinator during a load, a restart and another
#     load: no ID twice, every ID on its shard;
#   - an insert sent to either worker (Citus groups 1 and 2), and
#     shardid_next called there, get the one refusal (0A000, a hint to
#     insert through the coordinator, none to change the sequence), and
#     no clock_refusals is counted there;
#   - INSERT ... SELECT from a tenant table gets the same refusal (Citus
#     evaluates the DEFAULT on the worker), and the documented way,
#     through a temporary table on the coordinator, works;
#   - multi-row VALUES, a prepared statement and COPY through the
#     coordinator; shardid_next in a SELECT of a tenant table and ADD
#     COLUMN ... DEFAULT shardid_next on one get the refusal, ADD COLUMN
#     then SET DEFAULT works for new rows;
#   - adopt then distribute: a bigserial table adopted with shardid_adopt
#     and then distributed with citus_schema_distribute issues IDs on its
#     shard, past its old keys;
#   - shardid_schema_shard refuses a schema name provisioning does not
#     make (22023).
# Skips when Citus is not installed in the test's PostgreSQL.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

plan skip_all => 'Citus: PG_TEST_EXTRA does not name shardid_citus'
  unless test_extra('shardid_citus');
my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
plan skip_all => "Citus is not installed in this PostgreSQL ($libdir)"
  unless -e "$libdir/citus.so";

my $started = time;
my $tenants = 8;

# Three nodes on the test's socket directory
my @nodes;
for my $name ('coordinator', 'worker1', 'worker2')
{
	my $node = shardid_node(
		$name,
		"shared_preload_libraries = 'citus,shardid'",
		'wal_level = logical',
		'max_wal_senders = 10',
		'max_replication_slots = 10',
		'max_prepared_transactions = 50',
		'max_connections = 100',
		'max_worker_processes = 20');
	$node->append_conf('postgresql.conf',
		"citus.local_hostname = '" . $node->host . "'\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	push @nodes, $node;
}
my ($coord, $w1, $w2) = @nodes;
my $host = $coord->host;

$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('$host', " . $coord->port . ')');
for my $w ($w1, $w2)
{
	$coord->safe_psql('postgres',
		"SELECT citus_add_node('$host', " . $w->port . ')');
}
$coord->safe_psql('postgres', 'CREATE EXTENSION shardid');
for my $w ($w1, $w2)
{
	is($w->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'shardid'"),
		'1', $w->name . ': CREATE EXTENSION shardid reached it');
}
is( join(',', map { $_->safe_psql('postgres', 'SELECT groupid FROM pg_dist_local_group') } @nodes),
	'0,1,2', 'the coordinator is group 0, the workers groups 1 and 2');

# shardid_schema_shard: k from the schema provisioning names
is($coord->safe_psql('postgres', "SELECT shardid_schema_shard('shard_0042')"),
	'42', 'shardid_schema_shard(shard_0042) is 42');
for my $bad ('shard_42', 'shard_9000', 'tenant_0042', 'shard_0042x')
{
	like(sql_error($coord, "SELECT shardid_schema_shard('$bad')"),
		qr/^22023: /, "shardid_schema_shard refuses $bad (22023)");
}

# The tenants, as docs/citus.md provisions them
for my $k (1 .. $tenants)
{
	my $s = sprintf 'shard_%04d', $k;
	$coord->safe_psql(
		'postgres', qq{
SET citus.enable_schema_based_sharding = on;
CREATE SCHEMA $s;
CREATE SEQUENCE $s.posts_id_seq;
CREATE TABLE $s.posts (
	id bigint NOT NULL DEFAULT shardid_next(shardid_schema_shard('$s'), '$s.posts_id_seq'),
	body text);
});
}
is( $coord->safe_psql('postgres',
		"SELECT count(*) FROM citus_shards WHERE citus_table_type = 'schema' AND table_name::text LIKE 'shard\\_000_.posts'"),
	$tenants, "$tenants tenant tables, distributed by schema");

# Where a tenant is, and the other worker
sub placement
{
	my ($schema) = @_;
	return $coord->safe_psql('postgres',
		"SELECT nodeport FROM citus_shards WHERE table_name = '$schema.posts'::regclass");
}

sub other_worker
{
	my ($port) = @_;
	return $port == $w1->port ? $w2->port : $w1->port;
}

# Every tenant's rows: duplicates across all, and IDs not on their shard
sub check_ids
{
	my ($what) = @_;
	my $union = join ' UNION ALL ',
	  map { sprintf "SELECT id, %d AS k FROM shard_%04d.posts", $_, $_ } 1 .. $tenants;
	my ($dups, $rows, $wrong) = split /\|/,
	  $coord->safe_psql('postgres',
		"SELECT count(*) - count(DISTINCT id), count(*), count(*) FILTER (WHERE (shardid_decode(id)).shard <> k) FROM ($union) t");
	is($dups, '0', "$what: no ID twice ($rows rows)");
	is($wrong, '0', "$what: every ID on its tenant's shard");
	return $rows;
}

my $script = PostgreSQL::Test::Utils::tempdir() . '/insert.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"\\set k random(1, $tenants)\nINSERT INTO shard_000:k.posts (body) VALUES ('p');\n");

# pgbench through the coordinator: 4 clients, $per inserts each
sub load_start
{
	my ($per, $out, $err) = @_;
	return IPC::Run::start(
		[
			'pgbench', '-n', '-h', $host, '-p', $coord->port,
			'-c', 4, '-j', 2, '-t', $per, '-f', $script, 'postgres'
		],
		'>', $out, '2>', $err);
}

# 1. Moves under load, in both modes
{
	my ($out, $err) = ('', '');
	my $h = load_start(5000, \$out, \$err);
	my $moves = 0;
	for my $mode ('force_logical', 'block_writes', 'force_logical', 'block_writes')
	{
		my $s = $moves % 2 ? 'shard_0002' : 'shard_0001';
		my $from = placement($s);
		my $to = other_worker($from);
		$coord->safe_psql('postgres',
			"SELECT citus_schema_move('$s', '$host', $to, shard_transfer_mode => '$mode')");
		is(placement($s), $to, "$s moved from $from to $to ($mode)");
		$moves++;
	}
	my $running = $h->pumpable ? 'still running' : 'done';
	note "the load was $running when the last move ended";
	$h->finish;
	is($h->result(0), 0, 'the load under the moves: pgbench exits 0')
	  or diag $err;
	like($out, qr/number of transactions actually processed: 20000\/20000/,
		'the load under the moves: 20000 inserts');
	unlike($err, qr/ERROR/, 'the load under the moves: no error');
	is(check_ids('after the moves'), 20000, 'after the moves: 20000 rows');
}

# 2. kill -9 of the coordinator mid-load
{
	my ($out, $err) = ('', '');
	my $before = $coord->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM shard_0003.posts) + (SELECT count(*) FROM shard_0004.posts)');
	my $h = load_start(5000, \$out, \$err);
	# until some of this load's rows are there
	for (1 .. 600)
	{
		last if $coord->safe_psql('postgres',
			'SELECT (SELECT count(*) FROM shard_0003.posts) + (SELECT count(*) FROM shard_0004.posts)')
		  > $before + 500;
		usleep(50_000);
	}
	kill9_and_reap($coord);
	$h->finish;
	$coord->start;
	($out, $err) = ('', '');
	$h = load_start(1000, \$out, \$err);
	$h->finish;
	is($h->result(0), 0, 'the load after the restart: pgbench exits 0')
	  or diag $err;
	check_ids('after kill -9 of the coordinator');
}

# 3. On a worker: the one refusal, not the clock's fault
for my $w ($w1, $w2)
{
	my $group = $w->safe_psql('postgres', 'SELECT groupid FROM pg_dist_local_group');
	for my $sql ("INSERT INTO shard_0005.posts (body) VALUES ('w')",
		"SELECT shardid_next(5, 'shard_0005.posts_id_seq')")
	{
		my $o = sql_outcome($w, 'postgres', $sql);
		is($o->{code}, '0A000', $w->name . " (group $group): $sql is refused (0A000)");
		like($o->{message}, qr/issues no IDs on a Citus worker/,
			$w->name . ': the message names the Citus worker');
		like($o->{hint}, qr/through the Citus coordinator/,
			$w->name . ': the hint says to insert through the coordinator');
		unlike("$o->{hint} $o->{detail}", qr/MAXVALUE|ALTER SEQUENCE|clock/i,
			$w->name . ': nothing about the sequence\'s range or the clock');
	}
	is($w->safe_psql('postgres',
		'SELECT coalesce(sum(clock_refusals), 0) FROM shardid_stats'),
		'0', $w->name . ': no clock_refusals counted');
}

# 4. INSERT ... SELECT: refused from a tenant table, works through a
# temporary table on the coordinator
{
	my $o = sql_outcome($coord, 'postgres',
		'INSERT INTO shard_0006.posts (body) SELECT body FROM shard_0006.posts LIMIT 10');
	is($o->{code}, '0A000',
		'INSERT ... SELECT from a tenant table: the worker\'s refusal (0A000)');
	my $n = $coord->safe_psql('postgres', 'SELECT count(*) FROM shard_0006.posts');
	$coord->safe_psql(
		'postgres', q{
CREATE TEMP TABLE stage AS SELECT body FROM shard_0006.posts LIMIT 100;
INSERT INTO shard_0006.posts (body) SELECT body FROM stage;
});
	is($coord->safe_psql('postgres', 'SELECT count(*) FROM shard_0006.posts'),
		$n + 100, 'INSERT ... SELECT through a temporary table: 100 rows');
	check_ids('after INSERT ... SELECT');
}

# 5. The other kinds of insert through the coordinator: multi-row
# VALUES, a prepared statement (past its custom plans), COPY
{
	my $n = $coord->safe_psql('postgres', 'SELECT count(*) FROM shard_0007.posts');
	$coord->safe_psql(
		'postgres', q{
INSERT INTO shard_0007.posts (body) VALUES ('a'), ('b'), ('c');
PREPARE ins(text) AS INSERT INTO shard_0007.posts (body) VALUES ($1);
EXECUTE ins('p1'); EXECUTE ins('p2'); EXECUTE ins('p3');
EXECUTE ins('p4'); EXECUTE ins('p5'); EXECUTE ins('p6'); EXECUTE ins('p7');
COPY shard_0007.posts (body) FROM stdin;
c1
c2
c3
\.
});
	is($coord->safe_psql('postgres', 'SELECT count(*) FROM shard_0007.posts'),
		$n + 13, 'multi-row VALUES, a prepared statement and COPY: 13 rows');
	check_ids('after VALUES, EXECUTE and COPY');
}

# 6. What else Citus evaluates on a worker: the same refusal
{
	my $o = sql_outcome($coord, 'postgres',
		"SELECT shardid_next(8, 'shard_0008.posts_id_seq') FROM shard_0008.posts LIMIT 1");
	is($o->{code}, '0A000', 'shardid_next in a SELECT of a tenant table: 0A000');
	$o = sql_outcome($coord, 'postgres',
		"ALTER TABLE shard_0008.posts ADD COLUMN ref bigint DEFAULT shardid_next(8, 'shard_0008.posts_id_seq')");
	is($o->{code}, '0A000',
		'ADD COLUMN ... DEFAULT shardid_next on a tenant table with rows: 0A000');
	$coord->safe_psql(
		'postgres', q{
ALTER TABLE shard_0008.posts ADD COLUMN ref bigint;
ALTER TABLE shard_0008.posts ALTER COLUMN ref SET DEFAULT shardid_next(8, 'shard_0008.posts_id_seq');
INSERT INTO shard_0008.posts (body) VALUES ('r1'), ('r2');
});
	is( $coord->safe_psql('postgres',
			"SELECT count(DISTINCT ref), count(*) FILTER (WHERE (shardid_decode(ref)).shard <> 8) FROM shard_0008.posts WHERE body IN ('r1', 'r2')"),
		'2|0', 'ADD COLUMN, then SET DEFAULT: new rows get IDs through the coordinator');
}

# 7. adopt, then distribute
{
	$coord->safe_psql(
		'postgres', q{
CREATE SCHEMA shard_0009;
CREATE TABLE shard_0009.posts (id bigserial, body text);
INSERT INTO shard_0009.posts (body) SELECT 'old' FROM generate_series(1, 100);
});
	my $kept = $coord->safe_psql('postgres',
		"SELECT kept_below FROM shardid_adopt('shard_0009.posts', shardid_schema_shard('shard_0009'))");
	$coord->safe_psql('postgres', "SELECT citus_schema_distribute('shard_0009')");
	is( $coord->safe_psql('postgres',
			"SELECT citus_table_type FROM citus_tables WHERE table_name = 'shard_0009.posts'::regclass"),
		'schema', 'the adopted table is distributed by schema');
	$coord->safe_psql('postgres',
		"INSERT INTO shard_0009.posts (body) SELECT 'new' FROM generate_series(1, 100)");
	is( $coord->safe_psql('postgres',
			"SELECT count(*) - count(DISTINCT id), count(*) FILTER (WHERE body = 'new' AND (id < $kept OR (shardid_decode(id)).shard <> 9)) FROM shard_0009.posts"),
		'0|0', 'adopted then distributed: no ID twice, new IDs past the old keys on shard 9');
}

note sprintf 'Citus tier: %.0f s', time - $started;
$_->stop for @nodes;
done_testing();
