# Copyright: see the shardid LICENSE.
#
# 063_owner_reads.pl: no role's code runs with a more privileged role's
# rights, and a role's locks hold no reader of the views up (issue 31).
#
# mallory, a plain LOGIN role, owns a partitioned table whose default
# partition has an index WHERE msch.imm() and a CHECK (msch.imm()): an
# IMMUTABLE function that calls a VOLATILE one, which planning any query
# over the table runs.  The VOLATILE one, run as anyone but mallory,
# writes a marker file by COPY ... TO PROGRAM (a superuser's right) and
# reads the public ID keys into a session advisory lock's key (a
# pg_monitor reader's right, which a rollback does not undo), as the
# review's reproducer did.  A superuser and a pg_monitor reader then read
# every view; the superuser runs the maintenance (make, move, drop,
# retention) and shardid_adopt over mallory's tables.  The marker file is
# never written, the keys never reach a lock, and mallory gains no role.
#
# Then the locks: mallory holds ACCESS EXCLUSIVE on a partition, then on
# the default partition, of her table; the view answers within its
# bound, her table's row with default_rows null when its default is
# held.  And bob, who grants SELECT on his default partition to
# pg_monitor but keeps his schema to himself, fails no one's view.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $node = shardid_node('owner_reads',
	"shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f'");
$node->start;
my $marker = $node->basedir . '/marker';

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION shardid;
CREATE ROLE mallory LOGIN;
CREATE ROLE bob LOGIN;
CREATE ROLE mon LOGIN IN ROLE pg_monitor;
GRANT CREATE ON DATABASE postgres TO mallory, bob;
});

# mallory's trap: run as anyone else, it writes the marker file (if it
# may) and takes a session advisory lock on the first 4 bytes of the keys
# (if it may read them).  Either is caught, so that it never fails the
# query it hides in.
my $trap = <<"SQL";
CREATE SCHEMA msch;
GRANT USAGE ON SCHEMA msch TO PUBLIC;
CREATE FUNCTION msch.vol() RETURNS bool LANGUAGE plpgsql VOLATILE AS \$\$
DECLARE
	k text;
BEGIN
	IF current_user = 'mallory' THEN
		RETURN true;
	END IF;
	BEGIN
		EXECUTE 'COPY (SELECT current_user) TO PROGRAM ' || quote_literal('cat > $marker');
	EXCEPTION WHEN OTHERS THEN
		NULL;
	END;
	BEGIN
		k := current_setting('shardid.public_id_keys');
		PERFORM pg_advisory_lock(31, ('x' || substr(md5(k), 1, 8))::bit(32)::int);
	EXCEPTION WHEN OTHERS THEN
		NULL;
	END;
	BEGIN
		EXECUTE 'GRANT pg_monitor TO mallory';
	EXCEPTION WHEN OTHERS THEN
		NULL;
	END;
	RETURN true;
END \$\$;
CREATE FUNCTION msch.imm() RETURNS bool LANGUAGE plpgsql IMMUTABLE AS \$\$
BEGIN
	RETURN msch.vol();
END \$\$;
SQL
$node->safe_psql('postgres', $trap, extra_params => [ '-U', 'mallory' ]);
$node->safe_psql(
	'postgres', q{
CREATE TABLE msch.pv (id bigint NOT NULL, note text) PARTITION BY RANGE (id);
CREATE TABLE msch.pv_default PARTITION OF msch.pv DEFAULT;
CREATE INDEX ON msch.pv_default (id) WHERE msch.imm();
ALTER TABLE msch.pv_default ADD CHECK (msch.imm());
GRANT SELECT ON msch.pv, msch.pv_default TO PUBLIC;
CALL shardid_partition_run(ARRAY['msch.pv'::regclass], '1 day', 1);
-- rows in the default partition, old and new, for the superuser's run
INSERT INTO msch.pv VALUES (1, 'old'), (shardid_floor(now() + '10 days'), 'ahead');
CREATE TABLE msch.ad (id bigserial PRIMARY KEY);
CREATE INDEX ON msch.ad (id) WHERE msch.imm();
INSERT INTO msch.ad DEFAULT VALUES;
}, extra_params => [ '-U', 'mallory' ]);

# What mallory's trap achieved so far.
sub trap_fired
{
	my @fired;
	push @fired, 'marker file' if -e $marker;
	push @fired, 'keys in a lock'
	  if $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 31") ne '0';
	push @fired, 'a role'
	  if $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_auth_members WHERE member = 'mallory'::regrole") ne '0';
	return join(', ', @fired) || 'nothing';
}

# The trap is live: run as the superuser herself, the count that 1.2's
# view made writes the marker (in a session of its own, which then ends).
$node->safe_psql('postgres', 'BEGIN; SELECT count(*) FROM ONLY msch.pv_default; ROLLBACK;');
ok(-e $marker, 'the trap fires when a superuser plans a query over the table herself');
unlink $marker;
is(trap_fired(), 'nothing', 'and is reset');

# The views, as the superuser and as pg_monitor, in sessions that stay
# open (a session advisory lock lasts as long as its session).
my %reader = (
	superuser => $node->background_psql('postgres'),
	pg_monitor => $node->background_psql('postgres', extra_params => [ '-U', 'mon' ]));
for my $who (sort keys %reader)
{
	my $s = $reader{$who};
	is( $s->query_safe(
			"SELECT default_rows FROM shardid_partition_status WHERE parent = 'msch.pv'::regclass"),
		'2', "$who: the status view counts the default partition's rows");
	$s->query_safe('SELECT count(*) FROM shardid_fence_status');
	$s->query_safe('SELECT count(*) FROM shardid_stats');
	is(trap_fired(), 'nothing', "$who: reading every view runs mallory's code as mallory only");
}

# The superuser's maintenance of mallory's table: make reads the default
# (and attaches, which plans its CHECK), drop reads it for retention.  The
# moves and deletes themselves are mallory's to run: refused, with the rest
# of the run.
my $run = sql_outcome($node, 'postgres',
	"CALL shardid_partition_run(ARRAY['msch.pv'::regclass], '1 day', 3, '30 days')");
is($run->{code}, '42501', 'a superuser\'s maintenance refuses to move or delete mallory\'s rows');
is(trap_fired(), 'nothing', 'and runs none of her code as the superuser');

my $adopt = sql_outcome($node, 'postgres', "SELECT action FROM shardid_adopt('msch.ad', 3)");
is($adopt->{code} . ' ' . $adopt->{out}, 'none adopted', 'a superuser adopts mallory\'s table');
is(trap_fired(), 'nothing', 'reading its keys\' bounds as mallory');

# Provisioning from a template mallory owns is refused before anything is
# made; one that names her function in its index is hers to answer for
# only if a superuser made it so.
$node->safe_psql('postgres', q{
CREATE SCHEMA mtmpl;
CREATE TABLE mtmpl.t (id bigint NOT NULL);
CREATE INDEX ON mtmpl.t (id) WHERE msch.imm();
}, extra_params => [ '-U', 'mallory' ]);
like(sql_error($node, "SELECT * FROM shardid_provision_shard(5, 'mtmpl')"),
	qr/^42501: template schema "mtmpl" is owned by role "mallory"/,
	'a superuser\'s provisioning refuses mallory\'s template');
is(trap_fired(), 'nothing', 'before planning anything of it');

# Locks: a partition (not the default) held ACCESS EXCLUSIVE by mallory,
# then the default partition.  The view answers within its second of
# lock_timeout, her table shown. mallory holds her lock until the check
# is over: a wait for it would end at the session's timeout (180 s), so
# 20 s tells the two apart even on a loaded machine.
my $holder = $node->background_psql('postgres', extra_params => [ '-U', 'mallory' ]);
my $part = $node->safe_psql('postgres',
	"SELECT c.oid::regclass FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	  WHERE i.inhparent = 'msch.pv'::regclass AND pg_get_expr(c.relpartbound, 0) <> 'DEFAULT' LIMIT 1");
for my $held ($part, 'msch.pv_default')
{
	$holder->query_safe("BEGIN; LOCK TABLE $held IN ACCESS EXCLUSIVE MODE");
	for my $who (sort keys %reader)
	{
		my $t0 = time;
		my $rows = $reader{$who}->query_safe(
			"SELECT coalesce(default_rows::text, 'null') FROM shardid_partition_status
			  WHERE parent = 'msch.pv'::regclass");
		my $took = time - $t0;
		cmp_ok($took, '<', 20, "$who: the view answers within its bound while mallory holds $held");
		is($rows, $held eq 'msch.pv_default' ? 'null' : '2',
			"$who: her table is shown, its default_rows " . ($held eq 'msch.pv_default' ? 'unknown' : 'counted'));
	}
	$holder->query_safe('ROLLBACK');
}
$holder->quit;

# bob: SELECT on his default partition for pg_monitor, his schema private.
$node->safe_psql('postgres', q{
CREATE SCHEMA bsch;
CREATE TABLE bsch.t (id bigint NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE bsch.t_default PARTITION OF bsch.t DEFAULT;
INSERT INTO bsch.t VALUES (1);
CALL shardid_partition_run(ARRAY['bsch.t'::regclass], '1 day', 1);
INSERT INTO bsch.t VALUES (shardid_floor(now() + '10 days'));
GRANT SELECT ON bsch.t_default TO pg_monitor;
}, extra_params => [ '-U', 'bob' ]);
is( $reader{pg_monitor}->query_safe(
		"SELECT string_agg(parent::text || '=' || coalesce(default_rows::text, 'null'), ',' ORDER BY parent::text)
		   FROM shardid_partition_status"),
	'bsch.t=1,msch.pv=2',
	'pg_monitor: a private schema fails no one\'s view');

$_->quit for values %reader;
is(trap_fired(), 'nothing', 'in the end, mallory\'s code never ran as anyone else');

$node->stop;
done_testing();
