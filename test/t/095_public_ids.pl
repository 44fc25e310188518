# Copyright: see the shardid LICENSE.
#
# 095_public_ids.pl: opaque public IDs and the setting that holds their
# keys, shardid.public_id_keys, on real servers, as docs/public-ids.md
# tells operators to run them:
#   - no keys: the functions refuse with SQLSTATE 55000 and name the
#     setting; shardid_public_keys() is empty;
#   - keys in a 0600 file included from postgresql.conf, then a reload:
#     the functions work, also in a session that was open before;
#   - a non-superuser calls them but cannot SHOW the setting, does not
#     find it in pg_settings, and cannot read pg_file_settings;
#   - rotation: IDs minted under version 1 still decode once version 2 is
#     added, new ones use version 2; removing version 1 revokes its links
#     (22P02);
#   - an invalid list is refused at use (55000, naming the entry), and no
#     key, valid or not, ever reaches the server log;
#   - ALTER SYSTEM is refused for the setting (nothing reaches
#     postgresql.auto.conf), and with every statement logged, a
#     superuser's ALTER SYSTEM or SET carrying a key leaves no key in the
#     log, while a plain role's statement that names the setting is
#     logged as any other;
#   - without shared_preload_libraries, the library loaded by a backend
#     picks the keys up from the configuration file.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

# The spec's test keys, and a recognisable bad one.
my $k1 = '000102030405060708090a0b0c0d0e0f';
my $k2 = '0f0e0d0c0b0a09080706050403020100';
my $bad = 'deadbeefcafebabe0123456789abcde';	# 31 digits

# Values from test/unit/public_ids_ref.py.
my $id = '4185136929178974185';
my $pub1 = 'BF_n6yo1ZGjZ';
my $pub2 = 'CEeMltPSEYGM';

my $node = shardid_node('public_ids');
my $keyfile = $node->basedir . '/shardid-keys.conf';
$node->append_conf('postgresql.conf', "include_if_exists = '$keyfile'\n");
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION shardid; CREATE ROLE app LOGIN;');

# Write the key file (0600) and reload; wait until a new session sees
# $want from $query.
sub set_keys
{
	my ($list, $query, $want) = @_;
	open my $fh, '>', $keyfile or die "$keyfile: $!";
	chmod 0600, $keyfile;
	print $fh "shardid.public_id_keys = '$list'\n";
	close $fh;
	$node->reload;
	return $node->poll_query_until('postgres', $query, $want);
}

# 1. No keys.
is( sql_error($node, 'SELECT shardid_public(1)'),
	'55000: no public ID keys are configured',
	'no keys: shardid_public refuses with 55000');
is(sql_error($node, "SELECT shardid_private('$pub1')"),
	'55000: no public ID keys are configured',
	'no keys: shardid_private refuses with 55000');
is(sql_error($node, 'SELECT shardid_public_bigint(1, 1)'),
	'55000: no public ID keys are configured',
	'no keys: shardid_public_bigint refuses with 55000');
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT shardid_public(1)');
like($err, qr/HINT:\s+Set "shardid.public_id_keys" in the server's configuration file/,
	'no keys: the hint names the setting');
is($node->safe_psql('postgres', 'SELECT count(*) FROM shardid_public_keys()'),
	'0', 'no keys: shardid_public_keys() is empty');

# 2. Keys from an included file, and a session opened before the reload.
my $session;
if ($node->can('background_psql'))
{
	$session = $node->background_psql('postgres');
	# this backend parses the (empty) list now, before the reload
	$session->query_safe('SELECT count(*) FROM shardid_public_keys()');
}
ok(set_keys("1:$k1", "SELECT shardid_public($id)", $pub1),
	'after a reload the included key file is used');
is($node->safe_psql('postgres', "SELECT shardid_private('$pub1')"),
	$id, 'and its IDs decode');
SKIP:
{
	skip 'this PostgreSQL::Test::Cluster has no background_psql', 1
	  unless $session;
	# a reload reaches an open session between two statements
	my $seen = '';
	for (1 .. 100)
	{
		$seen = $session->query_safe("SELECT shardid_public($id)");
		last if $seen eq $pub1;
		sleep 1;
	}
	is($seen, $pub1, 'a session open before the reload uses the new key');
	$session->quit;
}

# 3. What a non-superuser sees: the functions, not the keys.
is($node->safe_psql('postgres', "SELECT shardid_public($id)", extra_params => ['-U', 'app']),
	$pub1, 'a non-superuser mints public IDs');
is(sql_error($node, "SET ROLE app; SHOW shardid.public_id_keys") =~ /^42501: /
	  ? 'refused' : 'shown',
	'refused', 'a non-superuser cannot SHOW the setting');
is( $node->safe_psql(
		'postgres',
		"SET ROLE app; SELECT count(*) FROM pg_settings WHERE name = 'shardid.public_id_keys'"),
	'0',
	'nor find it in pg_settings');
like(sql_error($node, 'SET ROLE app; SELECT count(*) FROM pg_file_settings'),
	qr/^42501: /, 'nor read the configuration file through pg_file_settings');
is($node->safe_psql('postgres', 'SHOW shardid.public_id_keys'),
	"1:$k1", 'a superuser can SHOW it');

# 4. Rotation.
ok( set_keys(
		"1:$k1, 2:$k2", 'SELECT count(*) FROM shardid_public_keys()', '2'),
	'version 2 added');
is( $node->safe_psql('postgres',
		'SELECT key_version, fingerprint, newest FROM shardid_public_keys()'),
	"1|597006e9d03dca86|f\n2|9b6d6863bf2d36c8|t",
	'both versions listed with their fingerprints, version 2 the newest');
is($node->safe_psql('postgres', "SELECT shardid_public($id)"),
	$pub2, 'new public IDs use version 2');
is( $node->safe_psql(
		'postgres', "SELECT shardid_private('$pub1'), shardid_private('$pub2')"),
	"$id|$id",
	'links minted under version 1 still decode, as do the new ones');
ok( set_keys(
		"2:$k2", 'SELECT count(*) FROM shardid_public_keys()', '1'),
	'version 1 removed');
is(sql_error($node, "SELECT shardid_private('$pub1')"),
	"22P02: invalid public ID \"$pub1\"",
	'removing version 1 revokes its links: 22P02');
is($node->safe_psql('postgres', "SELECT shardid_private('$pub2')"),
	$id, 'version 2 links still decode');

# 5. An invalid list: refused at use, naming the entry, never the key.
ok( set_keys(
		"2:$k2, 3:$bad",
		"SELECT current_setting('shardid.public_id_keys') LIKE '%3:%'", 't'),
	'an invalid list reloaded');
($rc, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT shardid_public($id)");
like($err, qr/ERROR:\s+55000: setting "shardid.public_id_keys" is invalid/,
	'an invalid list: 55000 at use');
like($err, qr/DETAIL:\s+Entry 2 has a key that is not 32 hexadecimal digits\./,
	'the detail names the entry');
unlike($err, qr/deadbeef|0f0e0d0c/, 'and the error shows no key');
is(sql_error($node, "SELECT shardid_private('$pub2')"),
	'55000: setting "shardid.public_id_keys" is invalid',
	'decoding refuses too, with 55000');
($rc, $out, $err) = $node->psql('postgres',
	'SELECT * FROM shardid_public_keys()');
like($err, qr/55000|is invalid/, 'and so does shardid_public_keys()');
ok(set_keys("2:$k2", "SELECT shardid_private('$pub2')", $id),
	'a corrected list works again');

# 5b. ALTER SYSTEM and SET, with every statement logged (the test
# cluster's log_statement = 'all'), then with durations instead.
is(sql_error($node, "ALTER SYSTEM SET shardid.public_id_keys = '1:$k1'"),
	'55P02: parameter "shardid.public_id_keys" cannot be changed',
	'ALTER SYSTEM SET of the keys is refused with 55P02');
is(sql_error($node, "ALTER SYSTEM SET SHARDID.PUBLIC_ID_KEYS = '2:$k2'"),
	'55P02: parameter "shardid.public_id_keys" cannot be changed',
	'in capitals too');
my $auto = slurp_file($node->data_dir . '/postgresql.auto.conf');
unlike($auto, qr/public_id_keys|$k1|$k2/i,
	'postgresql.auto.conf holds no key');
is(sql_error($node, "SET shardid.public_id_keys = '1:$k1'"),
	'55P02: parameter "shardid.public_id_keys" cannot be changed now',
	'SET of the keys is refused with 55P02');
is(sql_error($node, "SELECT 'key $k2' AS pasted_by_mistake -- shardid.public_id_keys"),
	'no error', "a superuser's statement naming the setting runs");
is( $node->safe_psql(
		'postgres', "SELECT 'plain_role_marker' -- names public_id_keys",
		extra_params => [ '-U', 'app' ]),
	'plain_role_marker',
	"a plain role's statement naming the setting runs");
$node->append_conf('postgresql.conf',
	"log_statement = 'none'\nlog_min_duration_statement = 0\n");
$node->reload;
$node->poll_query_until('postgres', 'SHOW log_statement', 'none')
  or die 'log_statement was not reloaded';
is(sql_error($node, "SELECT 'key $k1' AS timed -- shardid.public_id_keys"),
	'no error', 'and again with only durations logged');
is(sql_error($node, "ALTER SYSTEM SET shardid.public_id_keys = '1:$k1'"),
	'55P02: parameter "shardid.public_id_keys" cannot be changed',
	'ALTER SYSTEM SET of the keys is refused then too');
$node->append_conf('postgresql.conf',
	"log_statement = 'all'\nlog_min_duration_statement = -1\n");
$node->reload;
$node->poll_query_until('postgres', 'SHOW log_statement', 'all')
  or die 'log_statement was not reloaded';

my $log = slurp_file($node->logfile);
my $hidden = qr/statement: \(text hidden: it names shardid\.public_id_keys\)$/m;
like($log, qr/LOG:  $hidden/,
	"log_statement's line of a superuser's statement naming the setting leaves the text out");
like($log, qr/LOG:  duration: [0-9.]+ ms  $hidden/,
	"log_min_duration_statement's line keeps the duration, not the text");
like($log, qr/ERROR:  parameter "shardid.public_id_keys" cannot be changed$/m,
	'the refusal is logged');
unlike($log, qr/STATEMENT:.*(ALTER SYSTEM|SET shardid|pasted_by_mistake|timed)/i,
	'with no STATEMENT line');
like($log, qr/statement: SELECT 'plain_role_marker' -- names public_id_keys$/m,
	"a plain role's statement naming the setting is logged whole (nothing hides it from an auditor)");
like($log, qr/statement: SHOW log_statement$/m,
	'other statements are logged whole');
like($log, qr/parameter "shardid.public_id_keys" changed$/m,
	'the log says the setting changed');
unlike($log, qr/$k1|$k2|$bad|deadbeef/i,
	'no key, valid or not, is in the server log');
$node->stop;

# 6. Not preloaded: the library, loaded by a backend, finds the keys the
# configuration file set before it was loaded.
my $plain = PostgreSQL::Test::Cluster->new('public_ids_plain');
$plain->init;
$plain->append_conf('postgresql.conf',
	"timezone = 'UTC'\nfsync = off\nshardid.public_id_keys = '1:$k1'\n");
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION shardid');
is( $plain->safe_psql(
		'postgres', "SELECT shardid_public($id), shardid_private('$pub1')"),
	"$pub1|$id",
	'not preloaded: the keys from the configuration file are used');
$plain->stop;

done_testing();
