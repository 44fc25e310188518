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
#   - operators' mistakes with every statement and debug2 messages logged,
#     in stderr, csvlog and jsonlog: key files that are not valid lists,
#     then a reload (the postmaster's and the backends' syntax errors);
#     mistyped ALTER SYSTEM, in a DO block too; SET, set_config(), ALTER
#     DATABASE; a misspelt setting name; RAISE of keys and of the setting;
#     a configured key pasted alone; auto_explain; bind parameters: no
#     key's digits in any log, the rest of each message there;
#   - who maps public IDs back: every role by default, the granted roles
#     only after the REVOKE that docs/public-ids.md gives;
#   - without shared_preload_libraries, the library loaded by a backend
#     picks the keys up from the configuration file.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
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

# 5c. Operators' mistakes, with everything logged: every statement and
# debug messages (the backends' reports of a reload too), in stderr,
# csvlog and jsonlog, bind parameters whole, and errors verbose.  None of
# them writes a key's digits into any of the logs.
$node->append_conf('postgresql.conf', q{
logging_collector = on
log_destination = 'stderr,csvlog,jsonlog'
log_directory = 'log'
log_filename = 'server.log'
log_min_messages = debug2
log_error_verbosity = verbose
log_parameter_max_length = -1
log_parameter_max_length_on_error = -1
});
$node->restart;
my $logdir = $node->data_dir . '/log';
sub all_logs
{
	opendir my $dh, $logdir or die "$logdir: $!";
	my $all = slurp_file($node->logfile);
	$all .= slurp_file("$logdir/$_") for sort grep { /^server\./ } readdir $dh;
	closedir $dh;
	return $all;
}
sub wait_for_log
{
	my ($re) = @_;
	for (1 .. 600)
	{
		return 1 if -e "$logdir/server.log" && slurp_file("$logdir/server.log") =~ $re;
		usleep(100_000);
	}
	return 0;
}

# (1) The key file lacks a comma, then a reload: the postmaster, and every
# backend at debug2, reports the syntax error near the second entry.  The
# other ways to get a list wrong, too.  pg_file_settings, read before the
# reload, names the file and the line, not the token.
my $n_errors = 0;
my ($postmaster) = slurp_file($node->data_dir . '/postmaster.pid') =~ /^(\d+)/;
for my $wrong ("'1:$k1' '2:$k2'", "1:$k1, 2:$k2", "'1:$k1', 2:$k2'", "'1:$k1, 2:$k2")
{
	open my $fh, '>', $keyfile or die "$keyfile: $!";
	print $fh "shardid.public_id_keys = $wrong\n";
	close $fh;
	is( $node->safe_psql('postgres', qq{
			SELECT sourceline || ': ' || error FROM pg_file_settings
			 WHERE sourcefile = '$keyfile' AND error IS NOT NULL}),
		'1: syntax error',
		"pg_file_settings reports a syntax error of list " . ($n_errors + 1) . " by its line, without the token");
	$node->reload;
	$n_errors++;
	# the postmaster's own line (the backends' DEBUG lines say the same):
	# the next list is written only once the postmaster has read this one
	ok(wait_for_log(qr/(\[$postmaster\] LOG:  F0000: configuration file "[^"]*" contains errors.*){$n_errors}/s),
		"the reload of list $n_errors is refused");
}
like(all_logs(), qr/LOG:  42601: syntax error in file "\Q$keyfile\E" line 1, near token "'2:<32 hex digits hidden>'"/,
	"the postmaster's syntax error leaves the key out, and says where");
like(all_logs(), qr/DEBUG:  42601: syntax error in file "\Q$keyfile\E" line 1, near token "'2:<32 hex digits hidden>'"/,
	"and so does each backend's");
is($node->safe_psql('postgres', 'SELECT key_version FROM shardid_public_keys()'),
	'2', 'the keys in use are still the last valid ones');

# (2) to (6): statements, a superuser's and a plain role's
my @superuser = (
	# (2) a mistyped ALTER SYSTEM: the syntax error quotes the token
	"ALTER SYSTEM SET shardid.public_id_keys = '1:$k1' '2:$k2'",
	# (3) a DO block running ALTER SYSTEM: the CONTEXT line quotes it
	"DO \$\$ BEGIN EXECUTE 'ALTER SYSTEM SET shardid.public_id_keys = ''1:$k1'''; END \$\$",
	"DO \$\$ BEGIN ALTER SYSTEM SET shardid.public_id_keys = '1:$k1, 2:$k2'; END \$\$",
	"BEGIN; ALTER SYSTEM SET shardid.public_id_keys = '1:$k1'; COMMIT",
	# SET, set_config, per database
	"SET shardid.public_id_keys = '1:$k1, 2:$k2'",
	"SELECT set_config('shardid.public_id_keys', '1:$k1', false)",
	"ALTER DATABASE postgres SET shardid.public_id_keys = '2:$k2'",
	# the setting's name mistyped, or the version left out
	"ALTER SYSTEM SET shardid.public_id_kyes = '1:$k1, 2:$k2'",
	"SET shardid.public_id_key = '2:$k2'",
	"ALTER SYSTEM SET shardid.public_id_keys = '$k1'",
	# RAISE, of a key and of the setting, in a DO block and in a function
	"DO \$\$ BEGIN RAISE NOTICE 'the keys: %', '1:$k1, 2:$k2'; END \$\$",
	"DO \$\$ BEGIN RAISE EXCEPTION 'not this one: %', '2:$k2'; END \$\$",
	"CREATE FUNCTION leak_keys() RETURNS text LANGUAGE plpgsql AS \$\$ BEGIN "
	  . "RAISE WARNING 'keys: %', current_setting('shardid.public_id_keys'); RETURN 'done'; END \$\$",
	"SELECT leak_keys()",
	# a key in a value that fails, and the configured key pasted alone
	"SELECT ('1:' || '$k2')::int",
	"SELECT '$k2'::int",
	$k2,
	# auto_explain, which logs the text of every statement it explains
	"LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; "
	  . "SELECT '1:$k1' AS explained; DO \$\$ BEGIN PERFORM '2:$k2'; END \$\$",
);
$node->psql('postgres', $_) for @superuser;
my @plain = (
	"SET shardid.public_id_kyes = '1:$k1'",
	"ALTER SYSTEM SET shardid.public_id_keys = '1:$k1, 2:$k2'",
	"SELECT '1:$k1, 2:$k2' AS pasted, 'plain_role_rest' AS rest",
	# what looks like a key hides no more than a key (issue 31): a short
	# "key" hides nothing, a key-shaped one its 32 digits only, and an
	# error's statement stays in the log
	"SELECT 'plain_audit' AS a, 12345678 AS b, 'c0ffee0123456789' AS c /* 1:00000000 */, 1/0",
	"SELECT 'plain_fake' AS a, 'c0ffee0123456789' AS c /* 1:" . ('0' x 32) . " */, 1/0",
);
$node->psql('postgres', $_, extra_params => [ '-U', 'app' ]) for @plain;
# bind parameters, by psycopg (the extended protocol): in the log line of
# each statement and in the context of an error
my $py = q{
import sys, psycopg
for user in ("postgres", "app"):
    with psycopg.connect(sys.argv[1], user=user, autocommit=True) as c:
        for q, p in (("SELECT set_config(%s, %s, false)", ("shardid.public_id_keys", "1:" + sys.argv[2])),
                     ("SELECT %s::int", ("2:" + sys.argv[3],)),
                     ("SELECT %s::text AS bound", ("1:" + sys.argv[2],))):
            try:
                c.execute(q, p)
            except psycopg.Error:
                pass
};
my ($pyout, $pyerr) = ('', '');
IPC::Run::run([ '/usr/bin/python3', '-c', $py, $node->connstr('postgres'), $k1, $k2 ],
	'>', \$pyout, '2>', \$pyerr);
is($pyerr, '', 'the statements with bind parameters ran') or diag $pyerr;
$node->safe_psql('postgres', "SELECT 'end of the mistakes'");
ok(wait_for_log(qr/end of the mistakes/), 'the log has every mistake');

my $all = all_logs();
unlike($all, qr/$k1|$k2/i, 'no key is in the stderr log, the csvlog or the jsonlog');
ok(-s "$logdir/server.csv" && -s "$logdir/server.json", 'csvlog and jsonlog were written');
like(slurp_file("$logdir/server.json"), qr/hex digits hidden/, 'the jsonlog holds the rewritten messages');
like($all, qr/CONTEXT:  SQL statement "ALTER SYSTEM SET shardid.public_id_keys = '1:<32 hex digits hidden>'"/,
	"the DO block's CONTEXT line is there, without the key");
like($all, qr/ERROR:  42601: syntax error at or near "'2:<32 hex digits hidden>'"/,
	"the mistyped ALTER SYSTEM's error is there, without the key");
like($all, qr/NOTICE:  00000: the keys: 1:<32 hex digits hidden>, 2:<32 hex digits hidden>/,
	'a RAISE of the keys is there, without them');
like($all, qr/WARNING:  01000: keys: 2:<32 hex digits hidden>/,
	'a RAISE of the setting in a function too');
like($all, qr/statement: SELECT '1:<32 hex digits hidden>, 2:<32 hex digits hidden>' AS pasted, 'plain_role_rest' AS rest/,
	"a plain role's statement is logged, its keys hidden and the rest whole");
like($all, qr/DETAIL:  [Pp]arameters: \$1 = 'shardid.public_id_keys', \$2 = '1:<32 hex digits hidden>'/,
	'bind parameters are logged, the key hidden');
like($all, qr/Query Text: SELECT '1:<32 hex digits hidden>' AS explained/,
	"auto_explain's query text too");
unlike($all, qr/STATEMENT:  [^\n]*(hex digits hidden|\Q$k2\E)/i,
	'no STATEMENT line of a statement with a key');
like($all, qr{statement: SELECT 'plain_audit' AS a, 12345678 AS b, 'c0ffee0123456789' AS c /\* 1:00000000 \*/, 1/0$}m,
	"a plain role's statement with a short \"key\" is logged whole");
like($all, qr{STATEMENT:  SELECT 'plain_audit' AS a, 12345678 AS b, 'c0ffee0123456789' AS c /\* 1:00000000 \*/, 1/0$}m,
	'and so is its error\'s STATEMENT line');
like($all, qr{statement: SELECT 'plain_fake' AS a, 'c0ffee0123456789' AS c /\* 1:<32 hex digits hidden> \*/, 1/0$}m,
	"a plain role's statement with a key-shaped text: the 32 digits hidden, the rest whole");
like($all, qr{QUERY:  SELECT 'plain_fake' AS a, 'c0ffee0123456789' AS c /\* 1:<32 hex digits hidden> \*/, 1/0$}m,
	'and its error keeps the statement, as the QUERY line, the 32 digits hidden');

# a valid key file again
ok(set_keys("2:$k2", 'SELECT count(*) FROM shardid_public_keys()', '1'),
	'the corrected key file is loaded');

# 7. Who maps public IDs back: every role by default; after the REVOKE of
# docs/public-ids.md, the roles granted the functions only.
$node->safe_psql('postgres', 'CREATE ROLE reporting LOGIN');
is( $node->safe_psql('postgres', "SELECT shardid_private('$pub2')", extra_params => [ '-U', 'reporting' ]),
	$id, 'by default every role maps a public ID back to its ID');
$node->safe_psql('postgres', q{
	REVOKE EXECUTE ON FUNCTION shardid_private(text), shardid_private_bigint(bigint, integer),
	    shardid_public(bigint), shardid_public(bigint, integer), shardid_public_bigint(bigint, integer)
	  FROM PUBLIC;
	GRANT EXECUTE ON FUNCTION shardid_private(text), shardid_public(bigint) TO app;});
for my $call ("shardid_private('$pub2')", "shardid_private_bigint(1, 2)", "shardid_public($id)",
	"shardid_public($id, 2)", "shardid_public_bigint($id, 2)")
{
	like(sql_error($node, "SET ROLE reporting; SELECT $call"), qr/^42501: permission denied for function/,
		"after the REVOKE, another role may not call $call");
}
is( $node->safe_psql('postgres', "SELECT shardid_private('$pub2'), shardid_public($id)",
		extra_params => [ '-U', 'app' ]),
	"$id|$pub2", 'the role granted them maps public IDs both ways');
is( $node->safe_psql('postgres', 'SELECT count(*) FROM shardid_public_keys()', extra_params => [ '-U', 'reporting' ]),
	'1', 'and shardid_public_keys() (fingerprints only) stays open to every role');
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
