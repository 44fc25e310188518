# Copyright: see the shardid LICENSE.
#
# 054_fleet_reads.pl: what the move reads of a shard, it reads without
# running its owner's code (the second review of 1.3, H3).  At the write
# fence the tool, a superuser, takes the largest id of every table of the
# shard on both servers, and each sequence's value.  appo owns the shard,
# as `move --owner appo` allows:
#   - her table as it should be: the largest id is read;
#   - its id changed to a composite type of hers with an IMPLICIT cast to
#     bigint, whose function makes her a superuser when it runs as anyone
#     else: refused before max() runs, and she is no superuser;
#   - the table renamed and a view of hers in its place, whose column
#     calls that function: refused the same way;
#   - a partial index of hers WHERE an IMMUTABLE function that calls that
#     one (planning max(id) runs it, issue 31): the largest id is read, as
#     appo, and she is no superuser;
#   - while the tool holds the shard's schema, her ALTER SCHEMA ... RENAME
#     waits for it: the name the tool reads by stays the schema's.
# The reader is tools/shardid_fleet/fence.py's checked_max_id, called as the move
# calls it, on a real server.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $tools = "$FindBin::RealBin/../../tools";
my $node = shardid_node('reads');
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE ROLE appo LOGIN;
GRANT CREATE ON DATABASE postgres TO appo;
CREATE SCHEMA shard_0042 AUTHORIZATION appo;
SET ROLE appo;
CREATE TABLE shard_0042.posts (id bigint PRIMARY KEY, body text);
INSERT INTO shard_0042.posts SELECT i, 'post ' || i FROM generate_series(1, 1000) i;
CREATE FUNCTION shard_0042.evil_int8(shard_0042.posts) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	IF current_user <> 'appo' THEN
		ALTER ROLE appo SUPERUSER;
	END IF;
	RETURN 0;
END $$;
});

# checked_max_id on shard_0042.$table as the superuser: "ok VALUE" or
# "refused: MESSAGE".
sub read_max
{
	my ($table) = @_;
	my $py = <<'PY';
import sys
sys.path.insert(0, sys.argv[1])
import psycopg
from shardid_fleet.common import FleetError
from shardid_fleet.fence import checked_max_id
conn = psycopg.connect(sys.argv[2], autocommit=True)
oid = conn.execute("SELECT oid FROM pg_namespace WHERE nspname = 'shard_0042'").fetchone()[0]
try:
    print("ok %s" % checked_max_id(conn, oid, "shard_0042", sys.argv[3]))
except FleetError as e:
    print("refused: %s" % e)
PY
	my ($out, $err) = ('', '');
	IPC::Run::run([ '/usr/bin/python3', '-c', $py, $tools, $node->connstr('postgres'), $table ],
		'>', \$out, '2>', \$err);
	note $err if $err ne '';
	chomp $out;
	return $out;
}

sub appo_super
{
	return $node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'appo'});
}

is(read_max('posts'), 'ok 1000', 'her table as it should be: the largest id is read');

# A partial index whose predicate runs her function when max(id) is
# planned.  The trap is live: the superuser's own max(id) would run it.
$node->safe_psql(
	'postgres', q{
SET ROLE appo;
CREATE FUNCTION shard_0042.imm() RETURNS bool LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	RETURN shard_0042.evil_int8(NULL::shard_0042.posts) = 0;
END $$;
CREATE INDEX posts_trap ON shard_0042.posts (id) WHERE shard_0042.imm();
});
is(read_max('posts'), 'ok 1000', 'her table with a partial index of hers: the largest id is read');
is(appo_super(), 'f', 'her partial index: appo is not a superuser');
$node->safe_psql('postgres', 'BEGIN; SELECT max(id) FROM shard_0042.posts; ROLLBACK');
is(appo_super(), 'f', 'the trap was undone with the transaction that ran it');
$node->safe_psql('postgres', q{SELECT max(id) FROM shard_0042.posts});
is(appo_super(), 't', 'the trap is live: the superuser\'s own max(id) runs it');
$node->safe_psql('postgres', q{ALTER ROLE appo NOSUPERUSER; DROP INDEX shard_0042.posts_trap});

# The id of a type of hers, with an implicit cast to bigint.
$node->safe_psql(
	'postgres', q{
SET ROLE appo;
CREATE TYPE shard_0042.evil AS (v bigint);
CREATE FUNCTION shard_0042.evil_to_int8(shard_0042.evil) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	IF current_user <> 'appo' THEN
		ALTER ROLE appo SUPERUSER;
	END IF;
	RETURN ($1).v;
END $$;
CREATE FUNCTION shard_0042.int8_to_evil(bigint) RETURNS shard_0042.evil LANGUAGE sql AS 'SELECT ROW($1)::shard_0042.evil';
CREATE CAST (shard_0042.evil AS bigint) WITH FUNCTION shard_0042.evil_to_int8(shard_0042.evil) AS IMPLICIT;
CREATE CAST (bigint AS shard_0042.evil) WITH FUNCTION shard_0042.int8_to_evil(bigint) AS ASSIGNMENT;
CREATE TABLE shard_0042.typed (id shard_0042.evil, body text);
INSERT INTO shard_0042.typed SELECT ROW(i)::shard_0042.evil, 'x' FROM generate_series(1, 10) i;
});
like(read_max('typed'), qr/^refused: shard_0042\.typed is not a table with a bigint id \(relkind r, id shard_0042\.evil/,
	'an id of her type with an implicit cast: refused');
is(appo_super(), 'f', 'an id of her type: appo is not a superuser');

# A view of hers where the table was.
$node->safe_psql(
	'postgres', q{
SET ROLE appo;
ALTER TABLE shard_0042.posts RENAME TO posts_old;
CREATE VIEW shard_0042.posts AS
SELECT shard_0042.evil_to_int8(ROW(1)::shard_0042.evil) AS id, 'x'::text AS body;
});
like(read_max('posts'), qr/^refused: shard_0042\.posts is not a table with a bigint id \(relkind v/,
	'a view in the table\'s place: refused');
is(appo_super(), 'f', 'a view in the table\'s place: appo is not a superuser');
$node->safe_psql('postgres', 'SET ROLE appo; DROP VIEW shard_0042.posts; ALTER TABLE shard_0042.posts_old RENAME TO posts');

# While the tool holds the schema (as it does from the check to the
# read), her rename of the schema waits.
my $tool = $node->background_psql('postgres', on_error_stop => 1);
$tool->query_safe(q{BEGIN; SELECT 1 FROM pg_namespace WHERE nspname = 'shard_0042' FOR SHARE});
my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $node->connstr('postgres') . ' user=appo', '-c', 'ALTER SCHEMA shard_0042 RENAME TO elsewhere' ],
	'>', \$out, '2>', \$err, IPC::Run::timeout(60));
ok( $node->poll_query_until(
		'postgres', q{
SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'ALTER SCHEMA%' AND wait_event_type = 'Lock'}),
	'her ALTER SCHEMA ... RENAME waits while the tool holds the schema');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0042'}),
	'1', 'and the schema keeps its name meanwhile');
$tool->query_safe('COMMIT');
$tool->quit;
$h->finish;
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_namespace WHERE nspname = 'elsewhere'}),
	'1', 'her rename goes through once the tool lets go');

$node->stop;
done_testing();
