# Copyright: see the shardid LICENSE.
#
# 100_orm.pl: the ORM recipes of docs/orm.md, each run against a real
# server.  Each recipe's script (test/orm/) makes its table with the key
# "id bigint PRIMARY KEY DEFAULT shardid_next(shard, seq)", inserts through
# its ORM and prints "name=value" lines; this test checks them against the
# database:
#   - the insert is one statement, and the key comes back from it
#     (RETURNING): no second query;
#   - the key returned is the row's key, of the recipe's shard, > 2^53;
#   - the JSON the recipe writes carries the key as a string equal to the
#     database's text of it, and the naive way (a JSON number read as a
#     double, or Number() in JavaScript) would have changed it.  The first
#     key of a fresh sequence has seq 1: its lowest bit is set, and a
#     double beyond 2^61 has no bit below 2^9, so the rounding is certain.
# Then the JavaScript client library (clients/js) against the server
# through node-postgres: 5,000 IDs that shardid_next made, read back as
# text, decoded, shortcoded, made public under the spec's test keys and
# sent through the library's JSON, all as the server's own functions say.
# Then the backfill recipe (SQL): IDs minted at past times in a shard kept
# for backfills sort by their times and never equal a live ID, while the
# same backfill in the live shard would have minted every live ID again.
#
# node-postgres comes from the npm registry: where node is, test/run.sh
# fetches pg at the versions of test/orm/node-pg.lock (no npm needed) and
# names its node_modules in SHARDID_NODE_MODULES, and a failed fetch fails
# the node-postgres checks; with SHARDID_NODE_MODULES unset (no node) they
# are skipped.
#
# versions: first (the ORMs' and the clients' own logic, the same on every
# server; what they call, shardid_next and the codec, is tested on every
# version by the regress suite)

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use IPC::Run;
use JSON::PP;
use Math::BigInt;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my $orm = "$root/test/orm";

my $node = shardid_node('orm');
# the spec's test keys of public IDs, for the client library's check
my $test_keys = '1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100';
$node->append_conf('postgresql.conf', "shardid.public_id_keys = '$test_keys'");
$node->start;
my $superuser = $node->safe_psql('postgres', 'SELECT current_user');
my $two53 = '9007199254740992';

# Run a recipe's script in a new database of its own (with the extension);
# return its "name=value" lines as a hash, and its exit status.
sub run_recipe
{
	my ($db, @cmd) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION shardid');
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGUSER} = $superuser;
	local $ENV{PGDATABASE} = $db;
	local $ENV{PYTHONDONTWRITEBYTECODE} = '1';
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '<', \undef, '>', \$out, '2>', \$err);
	my $rc = $? >> 8;
	note("$db: $cmd[-1] exited with $rc\n$out$err");
	my %r = map { /^([a-z_]+)=(.*)$/ ? ($1 => $2) : () } split /\n/, $out;
	return ($rc, \%r);
}

# The result of $sql in $db, or '' on an error: a recipe that failed may
# have left no table, and its checks then fail rather than end the test.
sub query
{
	my ($db, $sql) = @_;
	my ($out, $err) = ('', '');
	$node->psql($db, $sql, stdout => \$out, stderr => \$err);
	return $out;
}

# $value is what the naive way made of the key $id: another integer, the
# double nearest to $id (doubles are 512 apart between 2^61 and 2^62,
# 1024 from 2^62 to 2^63: the nearest is at most 512 away).
sub rounded
{
	my ($value, $id) = @_;
	return 0 unless defined $value && $value =~ /^\d+$/ && $id =~ /^\d+$/;
	my $diff = Math::BigInt->new($value)->bsub($id)->babs;
	return $value ne $id && $diff->ble(512);
}

# The key's checks, shared by the recipes: $r is the script's output, $db
# its database, $row_sql selects the inserted row's "id::text,
# shardid_shard(id), id > 2^53".
sub check_key
{
	my ($name, $r, $db, $row_sql, $shard) = @_;
	my ($id, $row_shard, $big) = split /\|/, query($db, $row_sql);
	$id //= 'no row';
	is($r->{id}, $id, "$name: the key returned is the row's key");
	is("$row_shard $big", "$shard t",
		"$name: the key is of shard $shard and beyond 2^53");

	my ($json_id) = ($r->{json} // '') =~ /"id":\s*"(\d+)"/;
	is($json_id, $id, "$name: the JSON has the key as a string, exact");
	my $decoded = eval { decode_json($r->{json} // '') } // {};
	is($decoded->{id}, $id, "$name: the JSON parses, and its id is the key");
	return $id;
}

# ---- Django (Debian's python3-django: 3.2 on Debian 12)
{
	my ($rc, $r) = run_recipe('django', '/usr/bin/python3', "$orm/django_recipe.py");
	is($rc, 0, 'Django: the recipe runs (migrate, create, bulk_create)');
	note("Django $r->{django_version}") if $r->{django_version};
	is($r->{create_statements}, 1,
		'Django: create() sends one statement (BEGIN and COMMIT aside)');
	is($r->{create_returning}, 1, 'Django: ... an INSERT ... RETURNING');
	my $id = check_key('Django', $r, 'django',
		q{SELECT id::text, shardid_shard(id), id > 2^53 FROM djshop_item WHERE name = 'first'},
		7);
	ok(rounded($r->{naive_as_javascript_reads_it}, $id),
		'Django: the key as a JSON number would reach JavaScript rounded');
	is(($r->{bulk_statements} // '') . ' ' . ($r->{bulk_returning} // ''), '1 1',
		'Django: bulk_create() of 3 sends one statement, an INSERT ... RETURNING');
	is($r->{bulk_ids},
		query('django',
			q{SELECT string_agg(id::text, ',' ORDER BY name) FROM djshop_item WHERE name LIKE 'bulk%'}),
		'Django: bulk_create() sets every key, as the rows have them');
}

# ---- SQLAlchemy (Debian's python3-sqlalchemy, with psycopg2)
{
	my ($rc, $r) = run_recipe('sqlalchemy', '/usr/bin/python3', "$orm/sqlalchemy_recipe.py");
	is($rc, 0, 'SQLAlchemy: the recipe runs (create_all, add, flush)');
	note("SQLAlchemy $r->{sqlalchemy_version}") if $r->{sqlalchemy_version};
	is($r->{insert_statements}, 1,
		'SQLAlchemy: flush and reading the key send one statement');
	is($r->{insert_returning}, 1, 'SQLAlchemy: ... an INSERT ... RETURNING');
	my $id = check_key('SQLAlchemy', $r, 'sqlalchemy',
		q{SELECT id::text, shardid_shard(id), id > 2^53 FROM orders WHERE item = 'first'},
		5);
	ok(rounded($r->{naive_as_javascript_reads_it}, $id),
		'SQLAlchemy: the key as a JSON number would reach JavaScript rounded');
}

# ---- node-postgres (pg from the npm registry, installed by test/run.sh)
SKIP:
{
	skip 'node-postgres: SHARDID_NODE_MODULES unset (test/run.sh sets it where node is)', 1
	  unless defined $ENV{SHARDID_NODE_MODULES};
	my $modules = $ENV{SHARDID_NODE_MODULES};
	ok($modules ne '' && -f "$modules/pg/package.json",
		'node-postgres: pg is installed (SHARDID_NODE_MODULES names its node_modules)');
	# the script's copy beside a link to node_modules, where "import pg
	# from 'pg'" finds it
	my $dir = PostgreSQL::Test::Utils::tempdir();
	PostgreSQL::Test::Utils::append_to_file("$dir/node_pg_recipe.mjs",
		slurp_file("$orm/node_pg_recipe.mjs"));
	symlink($modules, "$dir/node_modules") if $modules ne '';
	my ($rc, $r) = run_recipe('nodepg', 'node', "$dir/node_pg_recipe.mjs");
	is($rc, 0, 'node-postgres: the recipe runs (DDL, INSERT ... RETURNING)');
	is($r->{insert_queries}, 1, 'node-postgres: the insert is one query');
	is($r->{id_type}, 'bigint', 'node-postgres: the key arrives as a BigInt');
	my $id = check_key('node-postgres', $r, 'nodepg',
		q{SELECT id::text, shardid_shard(id), id > 2^53 FROM events WHERE kind = 'signup'},
		3);
	is($r->{naive_stringify_error}, 'TypeError',
		'node-postgres: JSON.stringify without the replacer throws a TypeError');
	ok(rounded($r->{naive_number}, $id), 'node-postgres: Number(id) rounds the key');
	is($r->{naive_number_exact}, 'false',
		'node-postgres: ... and the rounded value is not the key');
}

# ---- The JavaScript client library (clients/js) against the server,
# through node-postgres: 5,000 IDs made by shardid_next, each decoded,
# shortcoded, made public (the server has the spec's test keys) and sent
# through the library's JSON, agree with the server's own functions.  It
# needs node-postgres too: without it, it is skipped, as the recipe above
# is.
SKIP:
{
	skip 'clients/js against the server: no node-postgres, SHARDID_NODE_MODULES unset (test/run.sh sets it where node is)', 9
	  unless defined $ENV{SHARDID_NODE_MODULES};
	my $modules = $ENV{SHARDID_NODE_MODULES};
	my $dir = PostgreSQL::Test::Utils::tempdir();
	PostgreSQL::Test::Utils::append_to_file("$dir/clients_js_server.mjs",
		slurp_file("$orm/clients_js_server.mjs"));
	symlink($modules, "$dir/node_modules") if $modules ne '';
	local $ENV{SHARDID_CLIENT_JS} = "$root/clients/js/index.js";
	local $ENV{SHARDID_TEST_KEYS} = $test_keys;
	my ($rc, $r) = run_recipe('clientsjs', 'node', "$dir/clients_js_server.mjs");
	is($rc, 0, 'clients/js: runs against the server through node-postgres');
	is($r->{rows}, '5000', 'clients/js: 5,000 IDs read back');
	is($r->{decode_mismatches}, '0', 'clients/js: decode() agrees with the server on every ID');
	is($r->{shortcode_mismatches}, '0', 'clients/js: shortcodes agree, both ways');
	is($r->{public_mismatches}, '0', 'clients/js: public IDs agree with shardid_public()');
	is($r->{private_mismatches}, '0', 'clients/js: and decode back to the ID');
	is($r->{json_mismatches}, '0', 'clients/js: stringify/parse keep every ID exact');
	cmp_ok($r->{number_rounded} // 0, '>', 0, 'clients/js: where Number() would have rounded IDs');
	is($r->{json_found}, '1', 'clients/js: the server finds the row by the ID the library wrote');
}

# ---- Backfill (docs/orm.md): live posts on shard 1; old posts imported at
# their own times on shard 8191, kept for backfills, with their own
# sequence.  Half of the old posts are from 2015, three to a millisecond;
# the other half carry exactly the milliseconds of the live posts, the
# worst case.
$node->safe_psql('postgres', 'CREATE DATABASE backfill');
$node->safe_psql(
	'backfill', q{
CREATE EXTENSION shardid;
CREATE SEQUENCE posts_id_seq;
CREATE TABLE posts (
    id bigint PRIMARY KEY DEFAULT shardid_next(1, 'posts_id_seq'::regclass),
    posted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    body text NOT NULL
);
INSERT INTO posts (body) SELECT 'live ' || i FROM generate_series(1, 2000) i;
CREATE TABLE old_posts (posted_at timestamptz NOT NULL, body text NOT NULL);
INSERT INTO old_posts
SELECT timestamptz '2015-06-01 00:00:00+00' + (i / 3) * interval '1 ms', 'old ' || i
FROM generate_series(1, 2000) i;
INSERT INTO old_posts SELECT shardid_created_at(id), 'late ' || id FROM posts;
});

# What a backfill on the live shard would mint: the live posts' own
# milliseconds, seq from a new sequence (as the live one started).  All
# but a few of the live IDs: the live sequence's values jump to a new
# block at each of its fence writes (since 1.3), the new one's do not.
my $again = $node->safe_psql(
		'backfill', q{
CREATE TEMP SEQUENCE wrong_seq;
SELECT count(*) FROM posts
JOIN (SELECT shardid_encode(posted_at, 1, (nextval('wrong_seq') % 1024)::int,
                            shardid_epoch()) AS id
      FROM (SELECT posted_at FROM old_posts WHERE body LIKE 'late %'
            ORDER BY posted_at, substr(body, 6)::bigint) o) w USING (id);
});
cmp_ok($again, '>=', 1000,
	"backfill on the live shard: most of the 2000 live IDs minted again ($again)");

# The recipe.
$node->safe_psql(
	'backfill', q{
CREATE SEQUENCE posts_backfill_seq;
CREATE TABLE posts_backfill AS
SELECT shardid_encode(posted_at, 8191,
                      (nextval('posts_backfill_seq') % 1024)::int,
                      shardid_epoch()) AS id,
       posted_at, body
FROM (SELECT posted_at, body FROM old_posts ORDER BY posted_at) o;
});
is( $node->safe_psql(
		'backfill', q{
SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE shardid_shard(id) = 8191),
       count(*) FILTER (WHERE shardid_created_at(id) = date_trunc('milliseconds', posted_at))
FROM posts_backfill}),
	'4000|4000|4000|4000',
	'backfill: 4000 distinct IDs of shard 8191, each made at its post\'s millisecond');
is($node->safe_psql('backfill', q{SELECT count(*) FROM posts JOIN posts_backfill USING (id)}),
	'0', 'backfill: no backfilled ID equals a live ID');
is( $node->safe_psql(
		'backfill', q{
SELECT count(*) FROM (
    SELECT posted_at, lag(posted_at) OVER (ORDER BY id) AS before FROM posts_backfill) s
WHERE date_trunc('milliseconds', before) > date_trunc('milliseconds', posted_at)}),
	'0',
	'backfill: the backfilled IDs sort by their posts\' times');
is( $node->safe_psql(
		'backfill', q{
SELECT (SELECT max(id) FROM posts_backfill WHERE body LIKE 'old %')
       < (SELECT min(id) FROM posts)}),
	't',
	'backfill: the 2015 posts sort before every live post');
is( $node->safe_psql(
		'backfill', q{
INSERT INTO posts (id, posted_at, body) SELECT id, posted_at, body FROM posts_backfill;
INSERT INTO posts (body) VALUES ('live after');
SELECT count(*), count(*) FILTER (WHERE shardid_shard(id) = 1) FROM posts}),
	'6001|2001',
	'backfill: the rows go in beside the live ones, and live inserts go on');

$node->stop;
done_testing();
