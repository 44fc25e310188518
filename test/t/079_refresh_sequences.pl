# Copyright: see the shardid LICENSE.
#
# 079_refresh_sequences.pl: the logical-replication failover on
# PostgreSQL 19, whose subscribers copy sequences (CREATE PUBLICATION
# ... FOR ALL SEQUENCES, ALTER SUBSCRIPTION ... REFRESH SEQUENCES): the
# copy is one-off, taken when asked, and it carries each sequence's fence,
# which shardid keeps in the sequence's value.  Skipped below 19.
#
# A publishes its two shard tables (no unique index on id: a repeated ID
# shows as a second row) and all its sequences; its clock runs 20 s ahead
# of the real one.  B subscribes in two databases, which both copy the
# sequences at once (REFRESH SEQUENCES after the tables' initial sync):
#   fresh  runs REFRESH SEQUENCES again at the failover, once A has
#          stopped issuing: the recipe of docs/ha.md;
#   stale  does not: its copy is the one taken long before the failover.
# A issues 100,000 IDs per table, spread over 3 s, after that first copy;
# B receives every row; A stops; B's clock is the real one, 20 s behind
# A's last ID.
#   fresh: B's sequences hold A's last values; every ID B is asked for
#          with its clock 20 s behind is refused (55000) or waits out its
#          statement_timeout (57014), and nothing is written; with the
#          clock past A's last ID, B issues; 0 duplicates, every ID of B
#          above every ID of A.
#   stale: its sequences still hold the values of the early copy at the
#          failover (the copy is one-off), whose fence is from before A's
#          load; with B's clock set into the stretch of A's load, nothing
#          covers A's later IDs: whether B repeats some depends on where
#          its clock and counters fall, so the count is reported as a
#          TODO test, not relied on (docs/ha.md: refresh at the failover,
#          not before).  On 19~rc1: 7,926 duplicates in one run, 0 in
#          another.

use strict;
use warnings;

use List::Util qw(max min);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;
use Time::HiRes ();

my $probe = PostgreSQL::Test::Cluster->new('probe');
plan skip_all => 'sequence synchronization (REFRESH SEQUENCES) is PostgreSQL 19\'s'
  unless $probe->pg_version->major >= 19;    # 19rc1 sorts below 19
plan skip_all => 'libfaketime is not installed (Debian package "faketime")'
  unless defined libfaketime();

my $tmp = PostgreSQL::Test::Utils::tempdir();
my $epoch_ms = 1293840000000;
my ($clock_a, $clock_b) = ("$tmp/clock-a", "$tmp/clock-b");
set_clock($clock_a, 20);
set_clock($clock_b, 0);

my $pub = shardid_node('publisher', 'wal_level = logical', 'max_wal_senders = 10', 'max_replication_slots = 10');
start_faked($pub, $clock_a);
my $sub = shardid_node('subscriber');
start_faked($sub, $clock_b);
ok(wait_for_clock($pub, 20), 'A\'s clock runs 20 s ahead');

# Two shard tables, each fed by a sequence of its own (OWNED BY its id
# column) through the column's DEFAULT.
my @tables = ([ posts => 1 ], [ comments => 2 ]);
my $schema = "CREATE EXTENSION shardid;\n" . join '', map {
	my ($t, $shard) = @$_;
	"CREATE TABLE $t (id bigint NOT NULL, made timestamptz NOT NULL DEFAULT clock_timestamp(), phase text NOT NULL);
CREATE SEQUENCE ${t}_id_seq OWNED BY $t.id;
ALTER TABLE $t ALTER COLUMN id SET DEFAULT shardid_next($shard, '${t}_id_seq');\n"
} @tables;

$pub->safe_psql('postgres', 'CREATE DATABASE app');
$pub->safe_psql('app', $schema . q{
CREATE PUBLICATION app_tables FOR TABLE posts, comments;
CREATE PUBLICATION app_sequences FOR ALL SEQUENCES;
INSERT INTO posts (phase) VALUES ('a0');
INSERT INTO comments (phase) VALUES ('a0');});

# The two sequences of $db on $node: name => "last_value/is_called", read
# from the sequences themselves (pg_sequences shows no last_value while
# is_called is false, as shardid's fence writes leave it).
sub seq_values
{
	my ($node, $db) = @_;
	return { map { split /\|/ } split /\n/, $node->safe_psql($db,
		join ' UNION ALL ', map { "SELECT '$_->[0]_id_seq', last_value || '/' || is_called FROM $_->[0]_id_seq" } @tables) };
}

# Wait until every relation of $db's subscription is ready, and its
# sequences hold A's values of %$want.
sub synced
{
	my ($db, $want, $what) = @_;
	my $cond = join ' AND ', map { "(SELECT last_value || '/' || is_called FROM $_) = '$want->{$_}'" } sort keys %$want;
	ok( $sub->poll_query_until($db,
			"SELECT bool_and(srsubstate = 'r') AND $cond FROM pg_subscription_rel"),
		"$what: B's sequences hold A's values")
	  or diag explain [ $want, seq_values($sub, $db) ];
	return;
}

my $a0 = seq_values($pub, 'app');
for my $db ('fresh', 'stale')
{
	$sub->safe_psql('postgres', "CREATE DATABASE $db");
	$sub->safe_psql($db, $schema . "CREATE SUBSCRIPTION sub_$db CONNECTION '" . $pub->connstr . ' dbname=app'
		  . "' PUBLICATION app_tables, app_sequences");
	ok($sub->poll_query_until($db, q{SELECT count(*) = 2 AND bool_and(srsubstate = 'r')
  FROM pg_subscription_rel WHERE srrelid::regclass::text IN ('posts', 'comments')}),
		"$db: B has A's tables");
	# the copy taken long before the failover
	$sub->safe_psql($db, "ALTER SUBSCRIPTION sub_$db REFRESH SEQUENCES");
	synced($db, { map { ("${_}_id_seq" => $a0->{"${_}_id_seq"}) } map { $_->[0] } @tables },
		"$db, the early copy");
}

# A's load: 100,000 IDs per table in batches of 5,000, paced over 3 s.
my $load = join "\n", map { "INSERT INTO $_->[0] (phase) SELECT 'a1' FROM generate_series(1, 5000);" } @tables;
my $e = sql_outcome($pub, 'app', qq{
DO \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	FOR i IN 1 .. 20 LOOP
		$load
		PERFORM pg_sleep(extract(epoch FROM t0 + interval '0.15 s' * i - clock_timestamp()));
	END LOOP;
END \$\$}, timeout => 180);
is($e->{code}, 'none', 'A issues 100,000 IDs per table') or diag explain $e;
$pub->wait_for_catchup("sub_$_") for ('fresh', 'stale');
my $total = $pub->safe_psql('app', 'SELECT (SELECT count(*) FROM posts) + (SELECT count(*) FROM comments)');
is($total, 2 + 200000, 'A holds its rows');
is($sub->safe_psql($_, 'SELECT (SELECT count(*) FROM posts) + (SELECT count(*) FROM comments)'),
	$total, "$_: every row of A arrived") for ('fresh', 'stale');

# The failover: A is fenced off (it issues no more), B copies the
# sequences in fresh, A stops, B leaves its subscriptions.
my %a_last = %{ seq_values($pub, 'app') };
my %stale_at_failover = %{ seq_values($sub, 'stale') };
note 'at the failover, A\'s sequences: ' . join(', ', map { "$_ $a_last{$_}" } sort keys %a_last)
  . '; stale\'s, copied at the start: ' . join(', ', map { "$_ $stale_at_failover{$_}" } sort keys %stale_at_failover)
  . '; at the start A\'s were: ' . join(', ', map { "$_ $a0->{$_}" } sort keys %$a0);
is_deeply(\%stale_at_failover, $a0,
	'stale: the copy is one-off: its sequences still hold A\'s values of the start, not its last ones');
isnt($a_last{posts_id_seq}, $a0->{posts_id_seq}, 'A\'s sequences moved on after the early copy');
$sub->safe_psql('fresh', 'ALTER SUBSCRIPTION sub_fresh REFRESH SEQUENCES');
synced('fresh', \%a_last, 'fresh, at the failover');
my ($a_first, $a_last_ms, $a_max) = split /\|/, $pub->safe_psql('app', qq{
SELECT ((min(id) >> 23) + $epoch_ms) / 1000.0, ((max(id) >> 23) + $epoch_ms) / 1000.0, max(id)
  FROM (SELECT id, phase FROM posts UNION ALL SELECT id, phase FROM comments) x WHERE phase = 'a1'});
$pub->stop;
for my $db ('fresh', 'stale')
{
	$sub->safe_psql($db, "ALTER SUBSCRIPTION sub_$db DISABLE;
ALTER SUBSCRIPTION sub_$db SET (slot_name = NONE);
DROP SUBSCRIPTION sub_$db;");
}

# B issues with its clock 20 s behind A's last ID.
ok(defined clock_to($sub, $clock_b, $a_last_ms - 20), 'B\'s clock is 20 s behind A\'s last ID');
my $b_load = join "\n", map { "INSERT INTO $_->[0] (phase) SELECT 'b' FROM generate_series(1, 20000);" } @tables;
$e = sql_outcome($sub, 'fresh', "SET statement_timeout = '5s';\n$b_load", timeout => 60);
ok($e->{code} eq '55000' || $e->{code} eq '57014',
	"fresh: with the clock 20 s behind, B's IDs are refused or wait out the timeout ($e->{code})")
  or diag explain $e;
is($sub->safe_psql('fresh', q{SELECT count(*) FROM posts WHERE phase = 'b'}), '0', 'fresh: nothing was written');

my $check = q{
SELECT count(*) - count(DISTINCT id), count(*) FILTER (WHERE phase = 'b'),
       count(*) FILTER (WHERE phase = 'b' AND id <= %s)
  FROM (SELECT id, phase FROM posts UNION ALL SELECT id, phase FROM comments) x};


# stale: the early copy.  B's clock in the stretch of A's load (forward
# from where it is: the clock only moves forward in this test).
ok(defined clock_to($sub, $clock_b, $a_first), 'B\'s clock at A\'s first ID of the load');
$e = sql_outcome($sub, 'stale', qq{
SET statement_timeout = '20s';
DO \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	FOR i IN 1 .. 4 LOOP
		$b_load
		PERFORM pg_sleep(extract(epoch FROM t0 + interval '0.5 s' * i - clock_timestamp()));
	END LOOP;
END \$\$}, timeout => 120);
note "stale: B's load: $e->{code} $e->{message}";
my ($dups) = split /\|/, $sub->safe_psql('stale', sprintf($check, $a_max));
TODO:
{
	local $TODO = 'known limit: REFRESH SEQUENCES copies once; IDs the publisher issued after the copy are '
	  . 'not covered: refresh at the failover, after the publisher stopped (docs/ha.md)';
	is($dups, '0', "stale: 0 duplicates (found $dups)");
}
note "stale: a copy taken before A's last 200,000 IDs: $dups duplicates";

# Past A's last ID, B issues; no ID twice, all of B's above A's.
ok(defined clock_to($sub, $clock_b, $a_last_ms + 1.5), 'B\'s clock passes A\'s last ID');
$e = sql_outcome($sub, 'fresh', "SET statement_timeout = '20s';\n$b_load", timeout => 60);
is($e->{code}, 'none', 'fresh: B issues once its clock is past A\'s last ID') or diag explain $e;
is($sub->safe_psql('fresh', sprintf($check, $a_max)), '0|40000|0',
	'fresh: 0 duplicates in 40,000 IDs of B after 200,002 of A; every one of B above A\'s');

$sub->stop;
done_testing();
