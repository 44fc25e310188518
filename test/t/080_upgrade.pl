# Copyright: see the shardid LICENSE.
#
# 080_upgrade.pl: ALTER EXTENSION shardid UPDATE from 1.0 to 1.1 to 1.2.
#
# A server that installed a new package runs the new library for every
# database, while each database's SQL stays at its version until someone
# runs ALTER EXTENSION shardid UPDATE there.  This test is that server:
#   - a database created at 1.0 is used: tables with shardid_next
#     defaults, IDs issued, statistics; shardid_next warns that the
#     database has no durable fence yet;
#   - the state file the 1.0 library wrote at its last clean shutdown is
#     honoured by the new library until the database has a fence;
#   - ALTER EXTENSION shardid UPDATE TO '1.1' brings it to 1.1, and its
#     catalog then equals that of a database where 1.1 was installed
#     fresh;
#   - the update writes a fence past the IDs issued under 1.0, so that a
#     kill -9 right after it, with the clock set back, repeats none of
#     them;
#   - IDs go on without a repeat across the update;
#   - ALTER EXTENSION shardid UPDATE TO '1.2', from 1.0 by way of 1.1 and
#     from a fresh 1.1, gives the catalog of a fresh 1.2 install (the
#     released script): members, full function definitions, markings,
#     settings, sequence parameters, grants and comments, compared as
#     text;
#   - ALTER EXTENSION shardid UPDATE TO '1.3' from each of those, and from
#     a fresh 1.2, gives the catalog of a fresh 1.3 install (whose scripts
#     the Makefile makes from sql/);
#   - a 1.2 partition log that holds rows no run wrote (a plain role's,
#     for its own table, one with an epoch of 'infinity' that stops
#     shardid_partition_status for every reader) is updated to 1.3: those
#     rows go, the run it recorded stays, and the status works;
#   - the update to 1.3 moves the extension's sequences into the schema
#     shardid_internal as they are (the same relations, the fence's value
#     kept); a schema of that name that is not the extension's stops
#     CREATE EXTENSION and the update (42P06), and until then the library
#     ignores it, and a sequence a plain role put in it; the update run by
#     another superuser gives the schema to the extension's owner, as a
#     fresh install does; default privileges give the schema to no role;
#   - a transaction that holds one of those sequences stops the update's
#     move (55P03, tries of 100 ms for 5 s), which leaves the database at
#     1.2, and the update goes through once it ended;
#   - a dump made at 1.2 restored as docs/upgrading.md says (1.2 created
#     first, then updated) keeps its epoch.

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

my $node = shardid_node('upgrade', 'shardid.max_clock_regression = 30s');
set_clock($clock, 0);
if ($have_faketime) { start_faked($node, $clock); }
else { $node->start; }

# The catalog of extension shardid in one database, as text, one line (or
# one function definition) per row, sorted: its members and their comments,
# every function's full definition (pg_get_functiondef: arguments, result,
# language, markings, settings, body) with its markings again and its
# privileges, every relation's kind, privileges and view definition, the
# sequences' parameters (not their values), the columns, and what pg_dump
# carries as configuration.
my $catalog_query = q{
WITH member AS (
	SELECT d.classid, d.objid
	  FROM pg_depend d
	 WHERE d.refclassid = 'pg_extension'::regclass
	   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'shardid')
	   AND d.deptype = 'e')
SELECT pg_describe_object(m.classid, m.objid, 0)
       || coalesce(' comment=' || obj_description(m.objid, m.classid::regclass::text), '')
  FROM member m
UNION ALL
SELECT format('function %s volatile=%s strict=%s parallel=%s config=%s acl=%s%s',
              p.oid::regprocedure, p.provolatile, p.proisstrict, p.proparallel,
              p.proconfig, p.proacl, E'\n' || pg_get_functiondef(p.oid))
  FROM pg_proc p
  JOIN member m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
UNION ALL
SELECT format('relation %s kind=%s acl=%s persistence=%s rls=%s/%s%s',
              c.oid::regclass, c.relkind, c.relacl, c.relpersistence,
              c.relrowsecurity, c.relforcerowsecurity,
              CASE c.relkind WHEN 'v' THEN E'\n' || pg_get_viewdef(c.oid) END)
  FROM pg_class c
  JOIN member m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
UNION ALL
SELECT format('sequence %s owner=%s type=%s start=%s min=%s max=%s increment=%s cycle=%s cache=%s',
              c.oid::regclass, s.sequenceowner, s.data_type, s.start_value, s.min_value,
              s.max_value, s.increment_by, s.cycle, s.cache_size)
  FROM pg_sequences s
  JOIN pg_class c ON c.relname = s.sequencename AND c.relnamespace = s.schemaname::regnamespace
  JOIN member m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
UNION ALL
SELECT format('column %s.%s %s notnull=%s default=%s', a.attrelid::regclass, a.attname,
              format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
  FROM pg_attribute a
  JOIN member m ON m.classid = 'pg_class'::regclass AND m.objid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT format('constraint %s %s', k.conrelid::regclass, pg_get_constraintdef(k.oid))
  FROM pg_constraint k
  JOIN member m ON m.classid = 'pg_class'::regclass AND m.objid = k.conrelid
UNION ALL
SELECT format('index %s', pg_get_indexdef(i.indexrelid))
  FROM pg_index i
  JOIN member m ON m.classid = 'pg_class'::regclass AND m.objid = i.indrelid
UNION ALL
SELECT format('policy %s on %s cmd=%s roles=%s permissive=%s using=%s check=%s',
              pol.polname, pol.polrelid::regclass, pol.polcmd, pol.polroles::regrole[],
              pol.polpermissive, pg_get_expr(pol.polqual, pol.polrelid),
              pg_get_expr(pol.polwithcheck, pol.polrelid))
  FROM pg_policy pol
  JOIN member m ON m.classid = 'pg_class'::regclass AND m.objid = pol.polrelid
UNION ALL
SELECT format('schema %s owner=%s acl=%s', n.nspname, n.nspowner::regrole, n.nspacl)
  FROM pg_namespace n
  JOIN member m ON m.classid = 'pg_namespace'::regclass AND m.objid = n.oid
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
	'1.0: the 1.0 statistics view works with the new library');

# 1b. The restart that installs the new library reads the state file the
#     1.0 library wrote at its clean shutdown: 1.0 kept uniqueness across
#     restarts with that file alone, and the database has no fence yet.
#     Write such a file, for posts_id_seq, 20 s past its last ID, as if
#     the clock had been 20 s ahead when 1.0 last issued: the next ID
#     waits (for what is left of the 20 s after the restart: on a loaded
#     machine the stop and start took more than 8).
my ($dbid, $seqid, $last_unix_ms) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT oid FROM pg_database WHERE datname = current_database()),
       'posts_id_seq'::regclass::oid,
       (extract(epoch FROM max(shardid_created_at(id))) * 1000)::bigint FROM posts});
my $v1_last_ms = $last_unix_ms + 20000;
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
	'1.0: the new library keeps where the 1.0 state file left each sequence, and its counters');

# 2. The update, and a fresh 1.1 install to compare it with.
$node->safe_psql('postgres', q{ALTER EXTENSION shardid UPDATE TO '1.1'});
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'shardid'}),
	'1.1', q{ALTER EXTENSION shardid UPDATE TO '1.1' brings it to 1.1});
$node->safe_psql('postgres', 'CREATE DATABASE fresh11');
$node->safe_psql('fresh11', q{CREATE EXTENSION shardid VERSION '1.1'});
my $updated = $node->safe_psql('postgres', $catalog_query);
my $fresh = $node->safe_psql('fresh11', $catalog_query);
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
	skip 'libfaketime is not installed (Debian package "faketime")', 1
	  unless $have_faketime;
	kill9_and_reap($node);
	# 20 s: the kill, the start and the wait for the clock take some of
	# it on a loaded machine (more than 8 s at a load of 14), and the
	# first ID must still find the clock behind the last one
	set_clock($clock, -20);
	start_faked($node, $clock);
	ok(wait_for_clock($node, -20), 'restarted after kill -9 with the clock 20 s back');
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

# 5. 1.2.  The database above, made at 1.0 and updated to 1.1, is updated
#    to 1.2, and so is the database made at 1.1; both must then have the
#    catalog of a database where 1.2 was installed fresh, from the released
#    1.2 script (released/shardid--1.2.sql).
$node->safe_psql('postgres', q{ALTER EXTENSION shardid UPDATE TO '1.2'});
$node->safe_psql('fresh11', q{ALTER EXTENSION shardid UPDATE TO '1.2'});
$node->safe_psql('postgres', 'CREATE DATABASE fresh12');
$node->safe_psql('fresh12', q{CREATE EXTENSION shardid VERSION '1.2'});
my $fresh12 = $node->safe_psql('fresh12', $catalog_query);
like($fresh12, qr/^extension 1\.2 /m, q{CREATE EXTENSION shardid VERSION '1.2' installs 1.2});
is($node->safe_psql('postgres', $catalog_query), $fresh12,
	'1.0 updated to 1.1 and then to 1.2 has the catalog of a fresh 1.2 install');
is($node->safe_psql('fresh11', $catalog_query), $fresh12,
	'1.1 updated to 1.2 has the catalog of a fresh 1.2 install');
like($fresh12, qr/^function shardid_fence_lower\(timestamp with time zone\) volatile=v strict=t parallel=u /m,
	'the comparison covers the 1.2 functions');
like($fresh12, qr/^policy shardid_partition_log_add on shardid_partition_log cmd=a .* check=\(EXISTS/m,
	'the comparison covers the partition log\'s policies');
like($fresh12, qr/^index CREATE INDEX shardid_partition_log_parent ON \S+ USING btree \(parent, ran_at\)$/m,
	'the comparison covers the partition log\'s index');
like($fresh12, qr/^relation shardid_partition_log kind=r acl=\{[^}]*=ar\/[^}]*\} persistence=p rls=t\/f$/m,
	'the comparison covers the partition log\'s grants and row security');
like($fresh12, qr/^CREATE OR REPLACE PROCEDURE \S+\.shardid_partition_run\(IN parents regclass\[\], /m,
	'the comparison covers the maintenance procedure');
is(join(' ', sort $fresh12 =~ /^config (\S+) $/mg), 'shardid_epoch shardid_fence shardid_fence_lead',
	'the epoch and the fence\'s lead are extension configuration too (pg_dump carries them)');

$node->safe_psql('postgres',
	q{INSERT INTO posts (phase) SELECT '1.2' FROM generate_series(1, 100000)});
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) = count(DISTINCT id) FROM posts;
SELECT min(id) > (SELECT max(id) FROM posts WHERE phase <> '1.2') FROM posts WHERE phase = '1.2'}),
	"t\nt",
	'1.2: IDs go on after the update, above every earlier one, without a repeat');

# 6. 1.3.  The three databases at 1.2 (made at 1.0, at 1.1 and at 1.2)
#    are updated to 1.3, by the update script the Makefile makes from
#    sql/updates/ and sql/, and must have the catalog of a fresh install
#    of 1.3, the script the Makefile makes from sql/.  Before, the database
#    made at 1.0 gets two sequences that a DEFAULT feeds to shardid_next
#    and that issued nothing under this library, as after a restore of a
#    1.2 dump: a bigint one at 5000, and an integer one.  The update gives
#    the first the database's fence (its value moves forward to the first
#    value of the block after the fence) and warns of the second.
$node->safe_psql(
	'postgres', q{
CREATE SEQUENCE restored_seq;
SELECT setval('restored_seq', 5000);
CREATE TABLE restored (id bigint DEFAULT shardid_next(8, 'restored_seq'));
CREATE SEQUENCE narrow_seq AS integer;
CREATE TABLE narrow (id bigint DEFAULT shardid_next(8, 'narrow_seq'));
});
my $fence12 = $node->safe_psql('postgres',
	q{SELECT 'shardid_fence'::regclass::oid || ' ' || last_value FROM shardid_fence});
my ($upd_out, $upd_err) = ('', '');
$node->psql('postgres', q{ALTER EXTENSION shardid UPDATE TO '1.3'},
	stdout => \$upd_out, stderr => \$upd_err, on_error_die => 1);
my ($fence12_oid, $fence12_value) = split / /, $fence12;
is( $node->safe_psql(
		'postgres', qq{
SELECT 'shardid_internal.shardid_fence'::regclass::oid = $fence12_oid,
       (SELECT last_value FROM shardid_internal.shardid_fence) >= $fence12_value,
       to_regclass('public.shardid_fence') IS NULL}),
	't|t|t',
	'the update moved the fence to shardid_internal as it was: the same sequence, its value kept');
like($upd_err, qr/WARNING:  sequence narrow_seq cannot carry the durable fence of its IDs/,
	'the update warns of a sequence that cannot carry a fence');
is( $node->safe_psql(
		'postgres', q{
SELECT last_value = ((SELECT last_value FROM shardid_internal.shardid_fence) + 1) << 10, NOT is_called
  FROM restored_seq;
SELECT last_value, is_called FROM narrow_seq}),
	"t|t\n1|f",
	'the update writes the database\'s fence into a sequence that issued nothing, and leaves one that cannot carry it');
$node->safe_psql('postgres', q{DROP TABLE restored, narrow; DROP SEQUENCE restored_seq, narrow_seq});
#    And before that, in fresh12, a plain role writes into the 1.2 log of fresh12, for its own table,
#    one row a run could have written and four none could.
$node->safe_psql(
	'fresh12', q{
CREATE ROLE forger;
GRANT CREATE ON SCHEMA public TO forger;
SET ROLE forger;
CREATE TABLE forged (id bigint) PARTITION BY RANGE (id);
CREATE TABLE forged_p PARTITION OF forged FOR VALUES FROM (0) TO (1000);
INSERT INTO shardid_partition_log (parent, ran_at, step, premake, epoch, result, sqlstate, made, dropped, moved, pruned)
VALUES ('forged'::regclass, now() - interval '1 hour', '1 day', 3, '2011-01-01+00', 'ok', NULL, 2, 0, 0, 0),
       ('forged'::regclass, now(), '1 day', 3, 'infinity', 'ok', NULL, 0, 0, 0, 0),
       ('forged'::regclass, now() - interval '1 minute', '-1 day', 3, '2011-01-01+00', 'ok', NULL, 0, 0, 0, 0),
       ('forged'::regclass, now() - interval '1 minute', '1 day', -5, '2011-01-01+00', 'ok', NULL, 0, 0, 0, 0),
       ('forged'::regclass, now() - interval '1 minute', '1 day', 3, '2011-01-01+00', 'busy', NULL, 0, -1, 0, 0);
RESET ROLE;
});
is(sql_error($node, 'SELECT * FROM shardid_partition_status', 'fresh12'),
	'22023: epoch infinity is not finite',
	'1.2: a plain role\'s row with an infinite epoch stops the status for a superuser');
#    And in fresh11 a plain role holds an ALTER SEQUENCE open on its own
#    sequence, which a DEFAULT feeds to shardid_next, the whole time the
#    update runs (issue 31): the update waits a bounded time, then goes on
#    and names the sequence it left as it was.
$node->safe_psql(
	'fresh11', q{
CREATE ROLE seqholder LOGIN;
GRANT CREATE ON SCHEMA public TO seqholder;
SET ROLE seqholder;
CREATE SEQUENCE held_seq;
CREATE TABLE held (id bigint DEFAULT shardid_next(9, 'held_seq'));
INSERT INTO held DEFAULT VALUES;
RESET ROLE;
});
my $seq_holder = $node->background_psql('fresh11', extra_params => [ '-U', 'seqholder' ]);
$seq_holder->query_safe('BEGIN; ALTER SEQUENCE held_seq CACHE 1');
my $t0 = time;
($upd_out, $upd_err) = ('', '');
$node->psql('fresh11', q{ALTER EXTENSION shardid UPDATE TO '1.3'},
	stdout => \$upd_out, stderr => \$upd_err, on_error_die => 1, timeout => 60);
my $took = time - $t0;
$seq_holder->query_safe('ROLLBACK');
$seq_holder->quit;
cmp_ok($took, '<', 15, 'the update waits a bounded time for a sequence another role holds');
like($upd_err,
	qr/WARNING:  the update did not write the durable fence into 1 sequences: other sessions held their locks\nDETAIL:  Sequences held_seq were locked/,
	'and names the sequence it left as it was');
is($node->safe_psql('fresh11', q{INSERT INTO held DEFAULT VALUES RETURNING shardid_shard(id)}),
	'9', 'which issues IDs once its lock is free');
$node->safe_psql('fresh11', q{DROP TABLE held; DROP SEQUENCE held_seq});
$node->safe_psql('fresh12', q{ALTER EXTENSION shardid UPDATE TO '1.3'});
is( $node->safe_psql(
		'fresh12', q{
SELECT count(*), min(made) FROM shardid_partition_log;
SELECT last_result, made, partitions FROM shardid_partition_status WHERE parent = 'forged'::regclass}),
	"1|2\nok|2|1",
	'1.3: the update deleted the four rows no run could write, kept the run, and the status works');
$node->safe_psql('postgres', 'CREATE DATABASE fresh13');
$node->safe_psql('fresh13', 'CREATE EXTENSION shardid');
my $fresh13 = $node->safe_psql('fresh13', $catalog_query);
like($fresh13, qr/^extension 1\.3 /m, 'CREATE EXTENSION shardid installs 1.3');
is($node->safe_psql('postgres', $catalog_query), $fresh13,
	'1.0 updated to 1.1, 1.2 and 1.3 has the catalog of a fresh 1.3 install');
is($node->safe_psql('fresh11', $catalog_query), $fresh13,
	'1.1 updated to 1.2 and 1.3 has the catalog of a fresh 1.3 install');
is($node->safe_psql('fresh12', $catalog_query), $fresh13,
	'1.2 updated to 1.3 has the catalog of a fresh 1.3 install');
unlike($fresh13, qr/shardid_library_probe/, 'the library probe leaves nothing behind');
is(join(' ', sort $fresh13 =~ /^config (\S+) $/mg), 'shardid_internal.shardid_epoch',
	'1.3: only the epoch is extension configuration: no dump carries the fence, no restore sets it');
like($fresh13, qr/^function shardid_sequence_lower\(regclass,timestamp with time zone\) volatile=v strict=t parallel=u /m,
	'the comparison covers the 1.3 functions');
like($fresh13, qr/^constraint shardid_partition_log CHECK \(\(isfinite\(epoch\) AND /m,
	'the comparison covers the partition log\'s checks');
like($fresh13, qr/^schema shardid_internal owner=\S+ acl=$/m,
	'1.3: the schema shardid_internal is the extension\'s, with no grant to any role');
like($fresh13, qr/^sequence shardid_internal\.shardid_fence owner=/m,
	'1.3: the fence is in shardid_internal');

# 7. The name shardid_internal taken by a schema that is not the
#    extension's: CREATE EXTENSION and the update from 1.2 stop (42P06),
#    and until the update the library goes by the extension's schema,
#    ignoring a sequence a plain role put in that schema under the
#    fence's name.  The update then, run by another superuser than the
#    extension's owner, gives the schema to the owner.
$node->safe_psql('postgres', q{
CREATE DATABASE clash13;
CREATE DATABASE clash12;
CREATE ROLE squatter LOGIN;
GRANT CREATE ON DATABASE clash13, clash12 TO squatter;
CREATE ROLE admin2 SUPERUSER LOGIN;
});
$node->safe_psql('clash13', 'CREATE SCHEMA shardid_internal', extra_params => [ '-U', 'squatter' ]);
is(sql_error($node, 'CREATE EXTENSION shardid', 'clash13'),
	'42P06: schema "shardid_internal" already exists',
	'CREATE EXTENSION stops at a schema shardid_internal it did not make (42P06)');
$node->safe_psql('clash12', q{
CREATE EXTENSION shardid VERSION '1.2';
CREATE SEQUENCE ids_seq;
SELECT shardid_next(1, 'ids_seq');
});
$node->safe_psql('clash12', q{
CREATE SCHEMA shardid_internal;
CREATE SEQUENCE shardid_internal.shardid_fence AS bigint MINVALUE -1 START WITH -1;
}, extra_params => [ '-U', 'squatter' ]);
is(sql_error($node, q{ALTER EXTENSION shardid UPDATE TO '1.3'}, 'clash12'),
	'42P06: schema "shardid_internal" already exists',
	'the update from 1.2 stops at a schema shardid_internal it did not make (42P06)');
$node->safe_psql('clash12', q{SELECT shardid_fence_reload(); SELECT count(shardid_next(1, 'ids_seq')) FROM generate_series(1, 10000)});
is( $node->safe_psql(
		'clash12', q{
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT last_value, is_called FROM shardid_internal.shardid_fence;
SELECT last_value > 0 FROM public.shardid_fence}),
	"1.2\n-1|f\nt",
	'at 1.2, the library writes the extension\'s fence, not the plain role\'s sequence of its name');
$node->safe_psql('clash12', 'DROP SCHEMA shardid_internal CASCADE');
$node->safe_psql('clash12', q{ALTER EXTENSION shardid UPDATE TO '1.3'}, extra_params => [ '-U', 'admin2' ]);
# Default privileges that grant every new schema to PUBLIC and to a role
# give shardid_internal to neither.
$node->safe_psql('postgres', q{CREATE DATABASE defpriv; CREATE ROLE reader});
$node->safe_psql('defpriv', q{
ALTER DEFAULT PRIVILEGES GRANT USAGE, CREATE ON SCHEMAS TO PUBLIC, reader;
CREATE EXTENSION shardid;
});
is( $node->safe_psql(
		'defpriv', q{
SELECT has_schema_privilege('public', 'shardid_internal', 'USAGE'),
       has_schema_privilege('reader', 'shardid_internal', 'USAGE'),
       has_schema_privilege('reader', 'shardid_internal', 'CREATE')}),
	'f|f|f', 'default privileges on schemas give shardid_internal to no role');
# (the objects the update makes are the updater's, as PostgreSQL makes
# them: only the schema's line is compared)
my ($schema13) = $fresh13 =~ /^(schema shardid_internal owner=.*)$/m;
my ($schema_admin2) = $node->safe_psql('clash12', $catalog_query) =~ /^(schema shardid_internal owner=.*)$/m;
is($schema_admin2, $schema13,
	'1.2 updated to 1.3 by another superuser: the schema is the extension\'s owner\'s, as in a fresh install');

# 8. A transaction that holds one of the extension's sequences (a plain
#    role's BEGIN; SELECT shardid_epoch(), left open) stops the update's
#    move of them: it tries in steps of 100 ms for 5 s, then fails
#    (55P03) and leaves the database at 1.2, its sequences where they
#    were; once that transaction ends, the update goes through.
$node->safe_psql('postgres', q{CREATE DATABASE held12; CREATE ROLE epochreader LOGIN});
$node->safe_psql('held12', q{CREATE EXTENSION shardid VERSION '1.2'});
my $epoch_holder = $node->background_psql('held12', extra_params => [ '-U', 'epochreader' ]);
$epoch_holder->query_safe('BEGIN');
$epoch_holder->query_safe('SELECT shardid_epoch()');
is(sql_error($node, q{ALTER EXTENSION shardid UPDATE TO '1.3'}, 'held12'),
	'55P03: the update could not lock the sequences of extension shardid',
	'the update stops (55P03) while another transaction holds the epoch');
is( $node->safe_psql(
		'held12', q{
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace
   AND relname IN ('shardid_fence', 'shardid_epoch', 'shardid_fence_lead');
SELECT count(*) FROM pg_namespace WHERE nspname = 'shardid_internal'}),
	"1.2\n3\n0", 'and leaves the database at 1.2, its sequences where they were');
$epoch_holder->query_safe('ROLLBACK');
$epoch_holder->quit;
$node->safe_psql('held12', q{ALTER EXTENSION shardid UPDATE TO '1.3'});
is($node->safe_psql('held12', q{SELECT extversion FROM pg_extension WHERE extname = 'shardid'; SELECT 'shardid_internal.shardid_epoch'::regclass IS NOT NULL}),
	"1.3\nt", 'once that transaction ended, the update goes through');

# 9. A dump made at 1.2, restored as docs/upgrading.md says: into a
#    database where 1.2 was created first, then updated. The epoch set
#    at 1.2 is the restored database's, in shardid_internal.
$node->safe_psql('postgres', q{CREATE DATABASE dump12; CREATE DATABASE restored12});
$node->safe_psql('dump12', q{
CREATE EXTENSION shardid VERSION '1.2';
SELECT shardid_set_epoch('2020-01-01');
CREATE SEQUENCE posts_id_seq;
CREATE TABLE posts (id bigint PRIMARY KEY DEFAULT shardid_next(3, 'posts_id_seq'));
INSERT INTO posts SELECT FROM generate_series(1, 1000);
});
my $dump12 = $node->basedir . '/dump12.sql';
command_ok([ 'pg_dump', '-f', $dump12, '-d', $node->connstr('dump12') ], 'pg_dump of a database at 1.2');
$node->safe_psql('restored12', q{CREATE EXTENSION shardid VERSION '1.2'});
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('restored12'), '-f', $dump12 ],
	'the 1.2 dump restores into a database where 1.2 was created first, without an error');
$node->safe_psql('restored12', q{ALTER EXTENSION shardid UPDATE});
is( $node->safe_psql(
		'restored12', q{
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT shardid_epoch() = '2020-01-01'::timestamptz;
INSERT INTO posts DEFAULT VALUES;
SELECT count(*), count(DISTINCT id), bool_and(shardid_created_at(id, shardid_epoch()) > now() - interval '1 hour') FROM posts}),
	"1.3\nt\n1001|1001|t",
	'updated after the restore: the epoch set at 1.2, 1,001 distinct IDs decoded at their time');

$node->safe_psql('postgres',
	q{INSERT INTO posts (phase) SELECT '1.3' FROM generate_series(1, 100000)});
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) = count(DISTINCT id) FROM posts;
SELECT min(id) > (SELECT max(id) FROM posts WHERE phase <> '1.3') FROM posts WHERE phase = '1.3'}),
	"t\nt",
	'1.3: IDs go on after the update, above every earlier one, without a repeat');

$node->stop;
done_testing();
