# Copyright: see the shardid LICENSE.
#
# 085_stats_visibility.pl: who sees what in shardid_stats and
# shardid_fence_status, as pg_stat_statements does it.  Two databases,
# each with sequences that issued IDs, and three roles:
#   nobody    no privilege at all: sees no sequence, and only the fence of
#             the database it is connected to;
#   reader    SELECT on one sequence in each database: sees that sequence
#             of the database it is connected to, never the other's;
#   stats     member of pg_read_all_stats: sees every sequence of every
#             database, and every fence.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $node = shardid_node('visibility');
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE ROLE nobody LOGIN;
CREATE ROLE reader LOGIN;
CREATE ROLE stats LOGIN IN ROLE pg_read_all_stats;
CREATE DATABASE alpha;
CREATE DATABASE beta;
});
for my $db ('alpha', 'beta')
{
	$node->safe_psql(
		$db, qq{
CREATE EXTENSION shardid;
CREATE SEQUENCE ${db}_open;
CREATE SEQUENCE ${db}_closed;
GRANT SELECT ON ${db}_open TO reader;
SELECT shardid_next(1, '${db}_open') FROM generate_series(1, 10);
SELECT shardid_next(2, '${db}_closed') FROM generate_series(1, 20);
});
}

# What $role sees in $db: the sequences (with their database), and the
# databases of the fences.
sub seen
{
	my ($db, $role) = @_;
	return $node->safe_psql(
		$db, qq{
SET ROLE $role;
SELECT coalesce(string_agg(datname || '.' || coalesce(sequence::text, seqid::text) || '=' || ids_issued,
                           ',' ORDER BY datname, ids_issued), '-')
  FROM shardid_stats WHERE datname IN ('alpha', 'beta');
SELECT coalesce(string_agg(datname || ':' || state, ',' ORDER BY datname), '-')
  FROM shardid_fence_status WHERE datname IN ('alpha', 'beta');
});
}

is(seen('alpha', 'nobody'), "-\nalpha:loaded",
	'nobody sees no sequence, and only the fence of its own database');
is(seen('alpha', 'reader'), "alpha.alpha_open=10\nalpha:loaded",
	'reader sees the sequence it may read, in its own database only');
is(seen('beta', 'reader'), "beta.beta_open=10\nbeta:loaded",
	'reader sees the other database\'s readable sequence only from there');
like(seen('alpha', 'stats'),
	qr/^alpha\.alpha_open=10,alpha\.alpha_closed=20,beta\.\d+=10,beta\.\d+=20\nalpha:loaded,beta:loaded$/,
	'pg_read_all_stats sees every sequence of every database, and every fence');
is( $node->safe_psql(
		'alpha', q{
SET ROLE reader;
SELECT count(*) FROM shardid_stats() WHERE datid <> (SELECT oid FROM pg_database WHERE datname = 'alpha')}),
	'0', 'the function behind the view filters as the view does');

$node->stop;
done_testing();
