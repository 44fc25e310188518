# Copyright: see the shardid LICENSE.
#
# 067_adopt_retention.pl: issue 23, item 1.  Adoption, then retention,
# deleted every row a table had before it was adopted: the old keys 1 to
# 1,000 decode to the epoch, and retention took them for 15-year-old rows.
#
# The issue's steps, under a clock 100 days ahead of the real one
# (libfaketime), on a table partitioned BY RANGE (id) with only a DEFAULT
# partition and on a plain table, each with 1,000 rows from bigserial:
# shardid_adopt on shard 9, one new row, then three runs of
# shardid_partition_run with a retention of 1 day.  Checks:
#   - shardid_adopt's result says what the old keys are: not shardid IDs,
#     decoding to the epoch on shard 0, not to be routed by their bits;
#     and names the first ID retention deletes (kept_below), the first of
#     the millisecond after the (faked) time of the adoption;
#   - before and after the three runs both tables hold 1,001 rows, the
#     1,000 old ones with their keys; the new row of the partitioned one
#     is in a partition of its day, the old ones in the default
#     partition; each run says with a WARNING that it kept them, and the
#     status names that ID (kept_below) with nothing pruned; the
#     plain table is refused (42809), as it is not partitioned;
#   - retention still works for the IDs shardid issued: 3 days later the
#     new row, now older than the retention, goes with its partition, and
#     the 1,000 old rows stay;
#   - the boundary goes with the table: a pg_dump -t of it, restored into
#     a new database, keeps the old rows through a run there; so does the
#     table after DROP EXTENSION ... CASCADE and CREATE EXTENSION, with
#     its default set again by hand.

use strict;
use warnings;

use POSIX qw(floor);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

plan skip_all => 'libfaketime is not installed (Debian package "faketime")'
  unless defined libfaketime();

my $tempdir = PostgreSQL::Test::Utils::tempdir();
my $clock_file = "$tempdir/faketime.rc";
my $day = 86400;
# noon UTC of the real day, 100 days on, so that no step straddles a
# midnight
my $ahead = floor(time() / $day) * $day + 43200 + 100 * $day - time();
set_clock($clock_file, $ahead);

my $node = shardid_node('adopt');
start_faked($node, $clock_file);
ok(wait_for_clock($node, $ahead), 'the server\'s clock runs 100 days ahead');
$node->safe_psql('postgres', 'CREATE EXTENSION shardid');

# The issue's steps: 1,000 rows, shardid_adopt, one new row.
$node->safe_psql(
	'postgres', q{
CREATE TABLE legacy (id bigserial PRIMARY KEY, v text) PARTITION BY RANGE (id);
CREATE TABLE legacy_default PARTITION OF legacy DEFAULT;
INSERT INTO legacy (v) SELECT 'old ' || g FROM generate_series(1, 1000) AS g;
CREATE TABLE legacy_plain (id bigserial PRIMARY KEY, v text);
INSERT INTO legacy_plain (v) SELECT 'old ' || g FROM generate_series(1, 1000) AS g;
});

my %kept_below;
for my $t ('legacy', 'legacy_plain')
{
	# the whole row as JSON, whatever columns this version's result has
	my ($row, $at) = split /\|/, $node->safe_psql('postgres',
		"SELECT to_jsonb(a), extract(epoch FROM clock_timestamp()) FROM shardid_adopt('$t', 9) AS a");
	like($row, qr/"action": "adopted"/, "$t: adopted");
	like(
		$row,
		qr/"old_keys": "keys 1 to 1000 are not shardid IDs: they decode to the epoch \([^)]*2011[^)]*\) on shard 0, so never route them by their bits/,
		"$t: the result says the old keys are not shardid IDs, decode to the epoch on shard 0, and must not be routed by their bits"
	);
	$kept_below{$t} = $row =~ /"kept_below": (\d+)/ ? $1 : 'none';
	my $first_at = $kept_below{$t} eq 'none' ? 0 : $node->safe_psql('postgres',
		"SELECT extract(epoch FROM shardid_created_at($kept_below{$t}) - interval '1 ms')");
	ok( $first_at > time() + 99 * $day && $first_at <= $at,
		"$t: kept_below is the first ID after the moment of the adoption, on the server's clock");
	# the new row in a later millisecond than the adoption (the IDs of its
	# very millisecond are below kept_below, and are kept)
	my $later = $kept_below{$t} eq 'none' ? 'clock_timestamp()' : "shardid_created_at($kept_below{$t}) + interval '1 ms'";
	$node->safe_psql(
		'postgres', qq{
DO \$\$ BEGIN
  WHILE clock_timestamp() < $later LOOP
    PERFORM pg_sleep(0.001);
  END LOOP;
END \$\$;
INSERT INTO $t (v) VALUES ('new')});
}

# What each table holds: the count, the old keys as they were, and where
# the new row is.
sub holds
{
	my ($db, $t) = @_;
	return $node->safe_psql(
		$db, qq{
SELECT count(*),
       count(*) FILTER (WHERE v = 'old ' || id AND id BETWEEN 1 AND 1000),
       string_agg(tableoid::regclass::text, ',') FILTER (WHERE v = 'new')
  FROM $t});
}
is(holds('postgres', 'legacy'), '1001|1000|legacy_default', 'legacy: 1,001 rows before the runs');
is(holds('postgres', 'legacy_plain'), '1001|1000|legacy_plain', 'legacy_plain: 1,001 rows before the runs');

# Three runs with a retention of 1 day.
my $today = $node->safe_psql('postgres', q{SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')});
for my $run (1 .. 3)
{
	my ($rc, $out, $err) = $node->psql('postgres',
		q{CALL shardid_partition_run(ARRAY['legacy'::regclass], '1 day', 7, '1 day')});
	is($rc, 0, "legacy, run $run: the run succeeds");
	like(
		$err,
		qr/WARNING:  partition maintenance keeps rows of its default partition of table public\.legacy past the retention: their keys are below \d+, its first shardid ID/,
		"legacy, run $run: a WARNING says the old keys were kept");
	($rc, $out, $err) = $node->psql('postgres',
		q{CALL shardid_partition_run(ARRAY['legacy_plain'::regclass], '1 day', 7, '1 day')});
	like($err, qr/WARNING:  partition maintenance of table public\.legacy_plain failed: 42809: /,
		"legacy_plain, run $run: not a partitioned table (42809)");
}
is(holds('postgres', 'legacy'), "1001|1000|legacy_p$today",
	'legacy: 1,001 rows after 3 runs, the new one moved into its day\'s partition');
is($node->safe_psql('postgres', 'SELECT count(*) FROM legacy_default'), '1000',
	'legacy: the 1,000 old rows are in the default partition still');
is(holds('postgres', 'legacy_plain'), '1001|1000|legacy_plain', 'legacy_plain: 1,001 rows after 3 runs');
is( $node->safe_psql(
		'postgres', qq{
SELECT last_result, made, dropped, pruned, kept_below = $kept_below{legacy}, partitions
  FROM shardid_partition_status WHERE parent = 'legacy'::regclass}),
	'ok|0|0|0|t|8',
	'legacy: the status of the last run: ok, nothing pruned, kept below the ID shardid_adopt named');

# Retention still deletes the IDs shardid issued: 3 days on, the new row
# is older than the retention.
set_clock($clock_file, $ahead + 3 * $day);
ok(wait_for_clock($node, $ahead + 3 * $day), 'the clock moves 3 days on');
my ($rc, $out, $err) = $node->psql('postgres',
	q{CALL shardid_partition_run(ARRAY['legacy'::regclass], '1 day', 7, '1 day')});
is($rc, 0, 'legacy, 3 days later: the run succeeds');
is(holds('postgres', 'legacy'), '1000|1000|', 'legacy: the new row went with its partition, the old rows stayed');
is( $node->safe_psql(
		'postgres',
		qq{SELECT to_regclass('legacy_p$today') IS NULL, dropped FROM shardid_partition_status
			WHERE parent = 'legacy'::regclass}),
	't|2', 'legacy: its day\'s partition and the next were dropped');

# The boundary is in the table's own sequence: pg_dump -t carries it.
my $dump = "$tempdir/legacy.sql";
command_ok([ 'pg_dump', '-t', 'legacy*', '-f', $dump, '-d', $node->connstr('postgres') ],
	'pg_dump -t legacy*');
my $dumped = slurp_file($dump);
like($dumped, qr/CREATE SEQUENCE public\.legacy_id_seq\n    START WITH \d{15}\n/,
	'the dump gives the sequence its START, the time of the adoption');
$node->safe_psql('postgres', 'CREATE DATABASE copy');
$node->safe_psql('copy', 'CREATE EXTENSION shardid');
command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $dump, '-d', $node->connstr('copy') ],
	'restored into a new database');
($rc, $out, $err) = $node->psql('copy',
	q{CALL shardid_partition_run(ARRAY['legacy'::regclass], '1 day', 7, '1 day')});
is($rc, 0, 'copy: the run succeeds');
like($err, qr/WARNING:  partition maintenance keeps rows of its default partition of table public\.legacy past/,
	'copy: the old keys are kept, with a WARNING');
is(holds('copy', 'legacy'), '1000|1000|', 'copy: the 1,000 old rows are there after the run');

# And DROP EXTENSION, which drops the column's default, leaves it.
$node->safe_psql('postgres', 'DROP EXTENSION shardid CASCADE');
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
ALTER TABLE legacy ALTER COLUMN id SET DEFAULT shardid_next(9, 'legacy_id_seq');
INSERT INTO legacy (v) VALUES ('new again');
});
($rc, $out, $err) = $node->psql('postgres',
	q{CALL shardid_partition_run(ARRAY['legacy'::regclass], '1 day', 7, '1 day')});
is($rc, 0, 'after DROP and CREATE EXTENSION: the run succeeds');
like($err, qr/WARNING:  partition maintenance keeps rows of its default partition of table public\.legacy past/,
	'after DROP and CREATE EXTENSION: the old keys are kept, with a WARNING');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*), count(*) FILTER (WHERE v = 'old ' || id AND id BETWEEN 1 AND 1000) FROM legacy}),
	'1001|1000',
	'after DROP and CREATE EXTENSION: the 1,000 old rows and the new one are there');

$node->stop;
done_testing();
