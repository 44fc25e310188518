# Copyright: see the shardid LICENSE.
#
# 064_drop_hook_foreign.pl: the DROP hook (shardid_fence_before_drop)
# writes the fence only into sequences that a plain role cannot point it
# at.  mallory, a plain LOGIN role, makes a table whose column DEFAULT
# calls shardid_next naming, by OID (no privilege is checked when a
# default is made), the extension's own sequences (shardid_fence,
# shardid_epoch, shardid_fence_lead, in shardid_internal, which she may
# not use, but an OID needs no lookup) and bob's unrelated invoice
# sequence.  A superuser's DROP EXTENSION shardid (without CASCADE, which
# mallory's table makes fail) must leave every one of them as it was:
# setval is not undone by the failed statement's rollback.  The
# sequences that the defaults' tables' owners may take values from (the
# superuser's ids_seq, mallory's own msch.mine) still take the fence.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $node = shardid_node('drop_hook_foreign');
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
SELECT shardid_set_epoch('2020-01-01 00:00:00+00');
CREATE ROLE mallory LOGIN;
CREATE ROLE bob LOGIN;
GRANT CREATE ON DATABASE postgres TO mallory, bob;
SET ROLE bob;
CREATE SCHEMA bsch;
CREATE SEQUENCE bsch.invoice_no;
SELECT nextval('bsch.invoice_no');
RESET ROLE;
CREATE SEQUENCE ids_seq;
CREATE TABLE ids (id bigint DEFAULT shardid_next(1, 'ids_seq'::regclass));
INSERT INTO ids DEFAULT VALUES;
});

my $state = join " || ' ' || ", map { "(SELECT '$_=' || last_value || '/' || is_called FROM $_)" }
  qw(shardid_internal.shardid_fence shardid_internal.shardid_epoch shardid_internal.shardid_fence_lead bsch.invoice_no);
$state = "SELECT $state";
my $before = $node->safe_psql('postgres', $state);
my $oids = $node->safe_psql('postgres', q{
SELECT string_agg(oid::text, ' ' ORDER BY relname) FROM pg_class
WHERE relname IN ('shardid_fence', 'shardid_epoch', 'shardid_fence_lead', 'invoice_no')});
my @oid = split / /, $oids;
is(scalar @oid, 4, 'the four sequences exist');

# mallory, by OID: no privilege on them is checked when the default is made.
my $cols = join ', ', map { "c$_ bigint DEFAULT shardid_next(1, '$oid[$_]'::regclass)" } 0 .. $#oid;
$node->safe_psql('postgres',
	"SET ROLE mallory; CREATE SCHEMA msch; CREATE SEQUENCE msch.mine; CREATE TABLE msch.mtab ($cols, "
	  . "m bigint DEFAULT shardid_next(1, 'msch.mine'::regclass));");
my $carried = q{SELECT (SELECT last_value FROM ids_seq) > 1000000 AND (SELECT last_value FROM msch.mine) > 1000000};
is($node->safe_psql('postgres', $carried), 'f', 'ids_seq and msch.mine are not carried yet');

# mallory's own sequence, its owner's SELECT and USAGE revoked: on older
# releases (15, at least), reading it as her raised an error (permission
# denied for sequence blind) that failed every DROP EXTENSION.
$node->safe_psql('postgres', q{
SET ROLE mallory;
CREATE SEQUENCE msch.blind;
CREATE TABLE msch.btab (id bigint DEFAULT shardid_next(1, 'msch.blind'::regclass));
REVOKE SELECT, USAGE ON SEQUENCE msch.blind FROM mallory;
});

my ($rc, $out, $err) = $node->psql('postgres', 'DROP EXTENSION shardid');
isnt($rc, 0, 'DROP EXTENSION without CASCADE fails: objects depend on it');
like($err, qr/cannot drop extension shardid because other objects depend on it/,
	'it fails for its dependents, not in the hook');
like($err, qr/sequence "blind" cannot carry the durable fence/, 'the blind sequence is passed over with a warning');
my $after = $node->safe_psql('postgres', $state);
is($after, $before, "a failed DROP EXTENSION leaves the extension's sequences and bob's sequence as they were");
note "before: $before";
is($node->safe_psql('postgres', $carried), 't',
	"the sequences the tables' owners feed shardid_next from take the fence");
note "after:  $after";

# shardid still issues IDs in the database's epoch
my $ok = $node->safe_psql('postgres', q{
SELECT shardid_created_at(id, '2020-01-01 00:00:00+00') > now() - interval '1 hour'
   AND shardid_created_at(id, '2020-01-01 00:00:00+00') < now() + interval '1 hour'
FROM (SELECT shardid_next(1, 'ids_seq'::regclass) AS id) x});
is($ok, 't', 'IDs are still issued at the current time after the failed DROP');

$node->stop;
done_testing();
