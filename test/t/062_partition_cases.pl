# Copyright: see the shardid LICENSE.
#
# 062_partition_cases.pl: shardid_partition_run() in the cases where
# timing does not matter (061_partition_maintenance.pl has those where it
# does), on real servers:
#
#   C. A stray row dated day+5 in shard_0002's default, under one run over
#      3 shards while pgbench writes to all three (and rows dated day+5
#      into shard_0002): every shard gets its new partition, the stray
#      row's partition is made and the rows moved, the defaults are empty,
#      and every ID written (logged in the same transaction) is there once.
#      A row routed to the default just before its range is attached fails
#      with 23514, as PostgreSQL does (docs/partitions.md): the writer tries
#      it again once, and the retries are reported.
#   D. A parent that fails among 3 (its partition's name taken, 42P07; one
#      not owned by the caller, 42501): the others get their partitions,
#      the CALL ends in an ERROR, a WARNING names the parent and the
#      SQLSTATE, and the status says 'failed' for it and 'ok' for the rest
#      (a table the caller does not own is not recorded at all).
#   E. 400 parents with premake 7 on a stock max_locks_per_transaction (64);
#      8,192 with PG_TEST_EXTRA=shardid_scale (12 minutes and 2 GB; not
#      in CI).  The times are reported.
#   F. Faked clock (libfaketime): a stray row in the default, rows of a
#      past day and of the day the clock jumps to (3 days ahead) in the
#      default; one run puts every row in its day's partition.
#
# Daily steps are kept clear of UTC midnight.

use strict;
use warnings;

use POSIX qw(floor);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use PartitionTest;

my $tempdir = PostgreSQL::Test::Utils::tempdir();

# C's load: PG_TEST_EXTRA=shardid_load writes longer.
my $c_seconds = test_extra('shardid_load') ? 12 : 6;

my $node = shardid_node('maint', 'log_error_verbosity = verbose');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION shardid');
partition_functions($node);
my ($state, $err);

##########################################################################
# C. A stray row in one shard's default, 3 shards, concurrent inserts.
##########################################################################
clear_of_midnight(90);
$node->safe_psql(
	'postgres', q{
CREATE SCHEMA log;
CREATE TABLE log.written (id bigint PRIMARY KEY);	-- every ID the writers got
CREATE SEQUENCE log.future_seq;
});
three_shards($node);
my $shards = q{ARRAY['shard_0001.posts', 'shard_0002.posts', 'shard_0003.posts']::regclass[]};
($state, $err) = run_sql($node, "CALL shardid_partition_run($shards, '1 day', 1)");
is($state, 'ok', 'C: the first run over 3 shards succeeds') or diag $err;
$node->safe_psql(
	'postgres', q{
INSERT INTO shard_0002.posts VALUES (shardid_encode(now() + interval '5 days', 2, 0), 'stray');
});
is( $node->safe_psql(
		'postgres', q{SELECT tableoid::regclass FROM shard_0002.posts WHERE body = 'stray'}),
	'shard_0002.posts_default', 'C: the stray row dated day+5 is in shard_0002\'s default');

# Writers: a row into each shard's current partition, and one dated day+5
# into shard_0002 (into its default until its partition exists), each ID
# logged in the same transaction.  A row routed to the default partition
# before the attach of its range commits fails with 23514, as PostgreSQL
# does it (docs/partitions.md): it is tried again once, and counted.
$node->safe_psql(
	'postgres', q{
CREATE TABLE log.retried (id bigint PRIMARY KEY);
CREATE FUNCTION log.write() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	fid bigint := shardid_encode(clock_timestamp() + interval '5 days', 2,
								 (nextval('log.future_seq') % 1024)::int);
BEGIN
	WITH a AS (INSERT INTO shard_0001.posts (body) VALUES ('w') RETURNING id),
		 b AS (INSERT INTO shard_0002.posts (body) VALUES ('w') RETURNING id),
		 c AS (INSERT INTO shard_0003.posts (body) VALUES ('w') RETURNING id)
	INSERT INTO log.written SELECT id FROM a UNION ALL SELECT id FROM b UNION ALL SELECT id FROM c;
	BEGIN
		INSERT INTO shard_0002.posts (id, body) VALUES (fid, 'future');
	EXCEPTION WHEN check_violation THEN
		INSERT INTO shard_0002.posts (id, body) VALUES (fid, 'future');
		INSERT INTO log.retried VALUES (fid);
	END;
	INSERT INTO log.written VALUES (fid);
END
$$;
});
my $insert3_sql = "$tempdir/insert3.sql";
write_file($insert3_sql, "SELECT log.write();\n");
my $writers3 = start_pgbench($node, $insert3_sql, "$tempdir/insC", 'writers',
	'-c', '2', '-T', $c_seconds, '-R', '100');
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) > 50 FROM shard_0002.posts_default}),
	'C: rows dated day+5 pile up in shard_0002\'s default');
($state, $err) = run_sql($node, "CALL shardid_partition_run($shards, '1 day', 2)");
is($state, 'ok', 'C: the run over 3 shards with rows in one default succeeds') or diag $err;
my $day5 = $node->safe_psql('postgres',
	q{SELECT 'shard_0002.posts_p' || to_char(now() + interval '5 days', 'YYYYMMDD')});
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(concat_ws('|', parent, last_result, made >= 1, moved > 0), ',' ORDER BY parent::text)
  FROM shardid_partition_status WHERE parent::text LIKE 'shard_000_.posts'}),
	'shard_0001.posts|ok|t|f,shard_0002.posts|ok|t|t,shard_0003.posts|ok|t|f',
	'C: every shard made its new partition; shard_0002 moved rows out of its default');
is( $node->safe_psql(
		'postgres', q{SELECT tableoid::regclass FROM shard_0002.posts WHERE body = 'stray'}),
	$day5, 'C: the stray row is in its day\'s new partition');
ok(finish_pgbench($writers3), 'C: pgbench ended without error') or diag $writers3->{err};
like($writers3->{out}, qr/number of failed transactions: 0 /, 'C: no insert failed')
  or diag $writers3->{out};
note 'C: inserts tried again after 23514: '
  . $node->safe_psql('postgres', 'SELECT count(*) FROM log.retried');
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM shard_0001.posts_default),
       (SELECT count(*) FROM shard_0002.posts_default),
       (SELECT count(*) FROM shard_0003.posts_default),
       (SELECT sum(default_rows) FROM shardid_partition_status WHERE parent::text LIKE 'shard_000_.posts')}),
	'0|0|0|0', 'C: every default is empty');
is( $node->safe_psql(
		'postgres', q{
SELECT partitions_of('shard_0001.posts') = days('posts', 0, 2),
       partitions_of('shard_0002.posts') = days('posts', 0, 2) || ',' || days('posts', 5, 5),
       partitions_of('shard_0003.posts') = days('posts', 0, 2)}),
	't|t|t', 'C: each shard has today and 2 days ahead, shard_0002 day+5 too');
is( $node->safe_psql(
		'postgres', q{
WITH p AS (SELECT id, body FROM shard_0001.posts UNION ALL SELECT id, body FROM shard_0002.posts
           UNION ALL SELECT id, body FROM shard_0003.posts)
SELECT (SELECT count(*) FROM log.written),
       (SELECT count(*) FROM log.written WHERE shardid_created_at(id) > now() + interval '4 days') > 0,
       (SELECT count(*) FROM log.written w WHERE NOT EXISTS (SELECT FROM p WHERE p.id = w.id)),
       (SELECT count(*) FROM p WHERE body <> 'stray' AND NOT EXISTS (SELECT FROM log.written w WHERE w.id = p.id)),
       (SELECT count(*) - count(DISTINCT id) FROM p),
       (SELECT count(*) FROM p WHERE body = 'stray')}),
	$node->safe_psql('postgres', 'SELECT count(*) FROM log.written') . '|t|0|0|0|1',
	'C: 0 rows lost: every ID written is in its shard once, and nothing else but the stray row');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
	SELECT tableoid::regclass::text AS part, id FROM shard_0001.posts UNION ALL
	SELECT tableoid::regclass::text, id FROM shard_0002.posts UNION ALL
	SELECT tableoid::regclass::text, id FROM shard_0003.posts) AS r
 WHERE right(part, 8) <> to_char(shardid_created_at(id), 'YYYYMMDD')}),
	'0', 'C: every row is in the partition of its day');

##########################################################################
# D. A parent that fails, among 3.
##########################################################################
clear_of_midnight(60);
$node->safe_psql(
	'postgres', q{
CREATE TABLE fail_a (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE fail_b (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE fail_c (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE fail_a_default PARTITION OF fail_a DEFAULT;
CREATE TABLE fail_b_default PARTITION OF fail_b DEFAULT;
CREATE TABLE fail_c_default PARTITION OF fail_c DEFAULT;
-- an unrelated table with the name of fail_b's partition for today
DO $$
BEGIN
	EXECUTE format('CREATE TABLE %I (x int)', 'fail_b_p' || to_char(now(), 'YYYYMMDD'));
END $$;
});
($state, $err) = run_sql($node,
	q{CALL shardid_partition_run(ARRAY['fail_a', 'fail_b', 'fail_c']::regclass[], '1 day', 1)});
is($state, '42P07', 'D: the CALL ends in an ERROR with the SQLSTATE of the failure');
like($err, qr/ERROR:\s+42P07: partition maintenance failed for 1 of 3 tables/,
	'D: the ERROR says 1 of 3 tables failed');
like($err, qr/WARNING:[^\n]*fail_b[^\n]*/, 'D: a WARNING names the failed parent');
my ($warning) = $err =~ /(WARNING:[^\n]*fail_b[^\n]*)/;
like($warning // '', qr/42P07/, 'D: the WARNING carries the SQLSTATE')
  or diag $err;
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(concat_ws('|', parent, last_result, coalesce(last_sqlstate, '-'),
                            coalesce(last_message, '-') LIKE '%fail_b_p% already exists'),
                  ',' ORDER BY parent::text)
  FROM shardid_partition_status WHERE parent::text LIKE 'fail__'}),
	'fail_a|ok|-|f,fail_b|failed|42P07|t,fail_c|ok|-|f',
	'D: the status says failed with 42P07 for fail_b, ok for the others');
is( $node->safe_psql(
		'postgres', q{
SELECT partitions_of('fail_a') = days('fail_a', 0, 1), partitions_of('fail_b'),
       partitions_of('fail_c') = days('fail_c', 0, 1)}),
	't||t', 'D: the other two have their partitions; fail_b has none');

# A parent the caller does not own, last among 3.
$node->safe_psql(
	'postgres', q{
CREATE ROLE maint;
CREATE SCHEMA own AUTHORIZATION maint;
SET ROLE maint;
CREATE TABLE own.x (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE own.y (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
RESET ROLE;
CREATE TABLE own.z (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
});
($state, $err) = run_sql($node, q{SET ROLE maint;
CALL shardid_partition_run(ARRAY['own.x', 'own.y', 'own.z']::regclass[], '1 day', 1);});
is($state, '42501', 'D: a parent not owned by the caller: the CALL ends with 42501');
like($err, qr/WARNING:[^\n]*own\.z[^\n]*42501|WARNING:\s+42501:[^\n]*own\.z/,
	'D: the WARNING names own.z and 42501');
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(concat_ws('|', parent, last_result, coalesce(last_sqlstate, '-')), ',' ORDER BY parent::text)
  FROM shardid_partition_status WHERE parent::text LIKE 'own._'}),
	'own.x|ok|-,own.y|ok|-',
	'D: the status says ok for the caller\'s tables, and records nothing for one it does not own');
is( $node->safe_psql(
		'postgres', q{
SELECT partitions_of('own.x') = days('x', 0, 1), partitions_of('own.y') = days('y', 0, 1),
       partitions_of('own.z')}),
	't|t|', 'D: the caller\'s own tables have their partitions');

$node->stop;

##########################################################################
# E. 400 (and 8,192) parents on a stock max_locks_per_transaction.
##########################################################################
my $many = shardid_node('many', 'max_locks_per_transaction = 64',
	'log_statement = none');
$many->start;

# Make $n parents p0001... (a primary key and a text column each) in
# database $db, 100 to a transaction, and run the maintenance on them all
# with premake 7; check and report.
sub many_parents
{
	my ($db, $n) = @_;
	$many->safe_psql(
		$db, qq{
CREATE EXTENSION shardid;
DO \$\$
BEGIN
	FOR i IN 1 .. $n LOOP
		EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id)',
					   'p' || lpad(i::text, 4, '0'));
		IF i % 100 = 0 THEN
			COMMIT;
		END IF;
	END LOOP;
END \$\$;
});
	my ($st, $e, $s) = run_sql(
		$many, q{
SELECT array_agg(c.oid::regclass ORDER BY c.relname)::text AS parents
  FROM pg_class c WHERE c.relkind = 'p' AND c.relname ~ '^p[0-9]{4}$' \gset
CALL shardid_partition_run(:'parents'::regclass[], '1 day', 7);
}, $db);
	is($st, 'ok', "E: $n parents with premake 7 on max_locks_per_transaction 64: the CALL completes")
	  or diag $e;
	diag sprintf('E: %d parents, premake 7: %.1f s', $n, $s);
	is( $many->safe_psql(
			$db, q{
SELECT count(*), count(*) FILTER (WHERE last_result = 'ok' AND partitions = 8
                                  AND covered_until >= date_trunc('day', last_run) + interval '8 days')
  FROM shardid_partition_status}),
		"$n|$n", "E: all $n parents have their day and 7 after it");
	return;
}

is($many->safe_psql('postgres', 'SHOW max_locks_per_transaction'),
	'64', 'E: max_locks_per_transaction is 64');
clear_of_midnight(300);
many_parents('postgres', 400);
SKIP:
{
	skip 'E: 8,192 parents only with PG_TEST_EXTRA=shardid_scale (they take long and about 2 GB)', 2
	  unless test_extra('shardid_scale');
	$many->safe_psql('postgres', 'CREATE DATABASE long');
	many_parents('long', 8192);
}
$many->stop;

##########################################################################
# F. Faked clock: a stray row, and the clock 3 days ahead.
##########################################################################
SKIP:
{
	skip 'F: libfaketime is not installed (Debian package "faketime")', 7
	  unless defined libfaketime();

	my $clock_file = "$tempdir/faketime.rc";
	# noon UTC of the real day, so that nothing straddles a midnight
	my $noon = floor(time() / 86400) * 86400 + 43200;
	my $offset = $noon - time();
	set_clock($clock_file, $offset);
	my $faked = shardid_node('faked');
	start_faked($faked, $clock_file);
	ok(wait_for_clock($faked, $offset), 'F: the server\'s clock reads noon of the real day');
	$faked->safe_psql(
		'postgres', qq{
CREATE EXTENSION shardid;
CREATE SEQUENCE d_seq;
CREATE TABLE d (id bigint PRIMARY KEY DEFAULT shardid_next(4, 'd_seq'), body text)
	PARTITION BY RANGE (id);
CREATE TABLE d_default PARTITION OF d DEFAULT;
});
	partition_functions($faked);
	($state, $err) = run_sql($faked,
		q{CALL shardid_partition_run(ARRAY['d']::regclass[], '1 day', 1)});
	is($state, 'ok', 'F: the first run succeeds') or diag $err;
	$faked->safe_psql(
		'postgres', q{
INSERT INTO d (body) SELECT 'day 0' FROM generate_series(1, 100);
INSERT INTO d VALUES (shardid_encode(now() + interval '5 days', 4, 0), 'stray day+5'),
                     (shardid_encode(now() + interval '2 days', 4, 0), 'stray day+2');
});

	$offset += 3 * 86400;
	set_clock($clock_file, $offset);
	ok(wait_for_clock($faked, $offset), 'F: the server\'s clock jumped 3 days ahead');
	$faked->safe_psql('postgres',
		q{INSERT INTO d (body) SELECT 'day 3' FROM generate_series(1, 100);});
	is( $faked->safe_psql(
			'postgres', q{SELECT count(*) FROM d_default}),
		'102', 'F: before the run, 102 rows are in the default');
	($state, $err) = run_sql($faked,
		q{CALL shardid_partition_run(ARRAY['d']::regclass[], '1 day', 1)});
	is($state, 'ok', 'F: one run after the jump succeeds') or diag $err;
	is( $faked->safe_psql(
			'postgres', q{
SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM d_default),
       (SELECT count(*) FROM d WHERE right(tableoid::regclass::text, 8)
                                     <> to_char(shardid_created_at(id), 'YYYYMMDD'))}),
		'202|0|0', 'F: every row is in its day\'s partition; the default is empty');
	is( $faked->safe_psql(
			'postgres', q{
SELECT partitions_of('d') = days('d', -3, 2), last_result, moved, default_rows
  FROM shardid_partition_status WHERE parent = 'd'::regclass}),
		't|ok|102|0',
		'F: partitions for days -3 to +2, the status counts 102 rows moved');
	$faked->stop;
}

done_testing();
