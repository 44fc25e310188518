# Copyright: see the shardid LICENSE.
#
# 080_upgrade.pl: ALTER EXTENSION shardid UPDATE from 1.0 to 1.1.
#
# A server that installed the 1.1 package runs the 1.1 library for every
# database, while each database's SQL stays at 1.0 until someone runs
# ALTER EXTENSION shardid UPDATE there.  This test is that server:
#   - a database created at 1.0 is used: tables with shardid_next
#     defaults, IDs issued, statistics; shardid_next warns that the
#     database has no durable fence yet;
#   - the state file the 1.0 library wrote at its last clean shutdown is
#     honoured by the 1.1 library until the database has a fence;
#   - ALTER EXTENSION shardid UPDATE brings it to 1.1, and its catalog then
#     equals that of a database where 1.1 was installed fresh: extension
#     members, function signatures and markings, grants and comments;
#   - the update writes a fence past the IDs issued under 1.0, so that a
#     kill -9 right after it, with the clock set back, repeats none of
#     them;
#   - IDs go on without a repeat across the update.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $have_faketime = defined libfaketime();
my $tmp = PostgreSQL::Test::Utils::tempdir();
my $clock = "$tmp/upgrade.faketime";

my $node = shardid_node('upgrade', 'shardid.max_clock_regression = 10s');
set_clock($clock, 0);
if ($have_faketime) { start_faked($node, $clock); }
else { $node->start; }

# The catalog of extension shardid in one database, as text: what is in
# it, every function's signature and markings, privileges and comments.
my $catalog_query = q{
SELECT pg_describe_object(d.classid, d.objid, 0)
       || coalesce(' comment=' || obj_description(d.objid, d.classid::regclass::text), '')
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'shardid')
   AND d.deptype = 'e'
UNION ALL
SELECT format('function %s returns %s %s strict=%s parallel=%s secdef=%s lang=%s src=%s bin=%s config=%s acl=%s',
              p.oid::regprocedure, pg_get_function_result(p.oid), p.provolatile,
              p.proisstrict, p.proparallel, p.prosecdef, l.lanname,
              md5(p.prosrc), p.probin, p.proconfig, p.proacl)
  FROM pg_proc p
  JOIN pg_language l ON l.oid = p.prolang
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'shardid'
UNION ALL
SELECT format('relation %s kind=%s acl=%s persistence=%s def=%s',
              c.oid::regclass, c.relkind, c.relacl, c.relpersistence,
              CASE c.relkind WHEN 'v' THEN md5(pg_get_viewdef(c.oid)) END)
  FROM pg_class c
  JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'shardid'
UNION ALL
SELECT format('column %s.%s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod))
  FROM pg_attribute a
  JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = a.attrelid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'shardid'
 WHERE a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT format('config %s %s', c::regclass, x)
  FROM pg_extension e, unnest(e.extconfig) WITH ORDINALITY AS u(c, i),
       LATERAL (SELECT (e.extcondition)[u.i] AS x) AS cond
 WHERE e.extname = 'shardid'
UNION ALL
SELECT format('extension %s schema %s relocatable %s', extversion, extnamespace::regnamespace, extrelocatable)
  FROM pg_extension WHERE extname = 'shardid'
ORDER BY 1};

# 1. A database at 1.0, in use.
$node->safe_psql('postgres', q{CREATE EXTENSION shardid VERSION '1.0'});
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'shardid'}),
	'1.0', 'the database starts at 1.0');
$node->safe_psql(
	'postgres', q{
CREATE SEQUENCE posts_id_seq;
CREATE TABLE posts (
	id bigint PRIMARY KEY DEFAULT shardid_next(7, 'posts_id_seq'),
	phase text NOT NULL
);
ALTER SEQUENCE posts_id_seq OWNED BY posts.id;
});
my ($out, $err) = ('', '');
$node->psql('postgres',
	q{INSERT INTO posts (phase) SELECT '1.0' FROM generate_series(1, 200000)},
	stdout => \$out, stderr => \$err);
like($err, qr/WARNING:  database "postgres" has no durable fence for shardid/,
	'1.0: shardid_next warns that the database has no durable fence');
is( $node->safe_psql(
		'postgres', q{SELECT ids_issued FROM shardid_stats WHERE sequence = 'posts_id_seq'::regclass}),
	'200000',
	'1.0: the 1.0 statistics view works with the 1.1 library');

# 1b. The restart that installs the 1.1 library reads the state file the
#     1.0 library wrote at its clean shutdown: 1.0 kept uniqueness across
#     restarts with that file alone, and the database has no fence yet.
#     Write such a file, for posts_id_seq, 4 s past its last ID, as if the
#     clock had been 4 s ahead when 1.0 last issued: the next ID waits.
my ($dbid, $seqid, $last_unix_ms) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT oid FROM pg_database WHERE datname = current_database()),
       'posts_id_seq'::regclass::oid,
       (extract(epoch FROM max(shardid_created_at(id))) * 1000)::bigint FROM posts});
my $v1_last_ms = $last_unix_ms + 4000;
$node->stop;
{
	my $file = $node->data_dir . '/pg_stat/shardid.state';
	open my $fh, '>:raw', $file or die "could not write \"$file\": $!";
	# magic "SHID", version 1, floor_ms, evictions, one slot: key, last_ms,
	# last_block, and the counters issued, exhausted, clock waits, refusals
	print $fh pack('L L q q l', 0x53484944, 1, 0, 0, 1);
	print $fh pack('L L q q q q q q', $dbid, $seqid, $v1_last_ms, 5, 200000, 0, 0, 0);
	close $fh or die "could not write \"$file\": $!";
}
$node->start;
$node->safe_psql('postgres',
	q{INSERT INTO posts (phase) SELECT '1.0 after restart' FROM generate_series(1, 1000)});
is( $node->safe_psql(
		'postgres', qq{
SELECT min(extract(epoch FROM shardid_created_at(id)) * 1000) > $v1_last_ms
  FROM posts WHERE phase = '1.0 after restart';
SELECT ids_issued, clock_waits >= 1 FROM shardid_stats WHERE sequence = 'posts_id_seq'::regclass}),
	"t\n201000|t",
	'1.0: the 1.1 library keeps where the 1.0 state file left each sequence, and its counters');

# 2. The update, and a fresh 1.1 install to compare it with.
$node->safe_psql('postgres', 'ALTER EXTENSION shardid UPDATE');
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'shardid'}),
	'1.1', 'ALTER EXTENSION shardid UPDATE brings it to 1.1');
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION shardid');
my $updated = $node->safe_psql('postgres', $catalog_query);
my $fresh = $node->safe_psql('fresh', $catalog_query);
is($updated, $fresh,
	'the updated catalog equals a fresh 1.1 install: members, signatures, markings, grants, comments');
like($fresh, qr/^sequence shardid_fence/m, 'the comparison covers the 1.1 objects');
like($fresh, qr/^config shardid_fence /m, 'the fence is extension configuration (pg_dump carries it)');

# 3. The update wrote a fence past the IDs issued under 1.0.
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT last_value FROM shardid_fence) >= (SELECT max(id >> 23) FROM posts)}),
	't',
	'the update wrote a fence past every ID issued under 1.0');

# 4. IDs go on, also after a crash right after the update with the clock
#    set back.
$node->safe_psql('postgres',
	q{INSERT INTO posts (phase) SELECT '1.1' FROM generate_series(1, 100000)});
SKIP:
{
	skip 'libfaketime is not installed (Debian package "faketime")', 3
	  unless $have_faketime;
	kill9_and_reap($node);
	set_clock($clock, -5);
	start_faked($node, $clock);
	ok(wait_for_clock($node, -5), 'restarted after kill -9 with the clock 5 s back');
	$node->safe_psql('postgres',
		q{INSERT INTO posts (phase) SELECT 'after crash' FROM generate_series(1, 100000)});
}
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT id) FROM posts;
SELECT count(*) FROM
  (SELECT phase, min(id) AS lo, max(id) AS hi FROM posts GROUP BY phase) a,
  (SELECT phase, min(id) AS lo, max(id) AS hi FROM posts GROUP BY phase) b
 WHERE a.phase <> b.phase AND a.lo <= b.hi AND b.lo <= a.hi}),
	($have_faketime ? "401000|401000" : "301000|301000") . "\n0",
	'no ID repeats across the update (and the crash); the phases do not overlap');
is( $node->safe_psql(
		'postgres', q{
SELECT fence_waits IS NOT NULL, clock_waits + fence_waits >= 1
  FROM shardid_stats WHERE sequence = 'posts_id_seq'::regclass}),
	$have_faketime ? 't|t' : 't|f',
	'1.1: the statistics view has fence_waits; the restart behind the fence waited');

$node->stop;
done_testing();
