# Copyright: see the shardid LICENSE.
#
# 083_cover.pl: the cover's edges (issue 29).  Since the cover, a
# sequence's own fence is written without a flush: the database's cover,
# durable before any ID goes past it, holds what a crash cuts.  Where there
# is no cover, or where it is new in the transaction, the old rule must
# hold, and a review found both broken in the first version:
#
#   A. A database without a fence (shardid 1.0, the extension never
#      updated) has no cover: each sequence's fence must be flushed before
#      an ID goes past it.  1,024 IDs taken in a transaction that never
#      commits, every process killed at once (what sat in the WAL buffers
#      is lost), a start with the clock 4 s back, then a dense load through
#      the same milliseconds: none of the 1,024 is issued again.  The same
#      in a database at this version (the cover).  The first version gave
#      1,024 of 1,024 again in the 1.0 database.
#   B. A transaction that made the database's fence anew (DROP and CREATE
#      EXTENSION) takes an ID of a sequence whose slot another backend
#      left with its own fence past the cover: its first ID does not spin
#      until the clock passes the sequence's fence (the first version
#      spun, deaf to statement_timeout, up to the lead: 15 s at a lead of
#      20 s): the call is answered within a statement_timeout of 3 s.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use ShardidTest;
use Test::More;
use Time::HiRes qw(usleep time);

# =====================================================================
# A. No cover: the sequences' fences are flushed.
# =====================================================================
SKIP:
{
	skip 'libfaketime is not installed', 7 unless defined libfaketime();

	my $tmp = PostgreSQL::Test::Utils::tempdir();
	my $clock = "$tmp/clock";
	set_clock($clock, 0);
	my $node = shardid_node('nocover',
		'shardid.max_clock_regression = 20s',
		'wal_level = minimal', 'max_wal_senders = 0',
		'autovacuum = off', 'checkpoint_timeout = 1h',
		'restart_after_crash = on', 'wal_writer_delay = 10s');
	start_faked($node, $clock);
	ok(wait_for_clock($node, 0), 'A: the clock is at 0');

	for my $db (qw(v10 cur))
	{
		$node->safe_psql('postgres', "CREATE DATABASE $db");
		$node->safe_psql($db,
			$db eq 'v10'
			? q{CREATE EXTENSION shardid VERSION '1.0'}
			: q{CREATE EXTENSION shardid});
		$node->safe_psql($db,
			q{CREATE SEQUENCE s1; CREATE TABLE t (id bigint); CREATE TABLE unc (id bigint);});
	}

	my $offset = 0;
	for my $db (qw(v10 cur))
	{
		$node->safe_psql($db, q{INSERT INTO t SELECT shardid_next(1, 's1') FROM generate_series(1, 200)});
		usleep(2_000_000);

		# the uncommitted burst, its IDs written to a file by the server
		my $file = "$tmp/unc_$db.txt";
		my $bg = $node->background_psql($db);
		$bg->query_safe('BEGIN');
		$bg->query_safe(
			"COPY (SELECT shardid_next(1, 's1') FROM generate_series(1, 1024)) TO '$file'");
		my $burst_t = time();

		# every process killed at once: a power loss (fsync is off: what
		# was written survives, what sat in the WAL buffers does not)
		my $pm = $node->{_pid};
		kill 'KILL', $pm, children_of($pm);
		for (1 .. 200) { last unless -e "/proc/$pm"; usleep(50_000); }
		usleep(500_000);
		$node->{_pid} = undef;
		eval { $bg->quit; };

		# 4 s back, started, and a dense load through the burst's
		# milliseconds (to 300 ms past it)
		$offset -= 4;
		set_clock($clock, $offset);
		start_faked($node, $clock);
		ok(wait_for_clock($node, $offset), "A, $db: restarted with the clock 4 s back");
		my $until = $burst_t + $offset + 4 + 0.3;
		$node->safe_psql($db, "COPY unc FROM '$file'");
		$node->safe_psql($db, qq{
DO \$\$
BEGIN
	WHILE extract(epoch FROM clock_timestamp()) < $until LOOP
		INSERT INTO t SELECT shardid_next(1, 's1') FROM generate_series(1, 2000);
	END LOOP;
END
\$\$;}, timeout => 120);
		my ($n, $again, $dups) = split /\|/, $node->safe_psql($db, q{
SELECT (SELECT count(*) FROM unc),
       (SELECT count(*) FROM unc JOIN t USING (id)),
       (SELECT count(*) - count(DISTINCT id) FROM t)});
		is($n, '1024', "A, $db: the 1,024 uncommitted IDs are on file");
		is($again . '|' . $dups, '0|0',
			"A, $db: none of them issued again after the crash, none twice in the table");
	}
	$node->stop;
}

# =====================================================================
# B. A fence new in the transaction: the first ID does not spin.
# =====================================================================
{
	my $node = shardid_node('mine', 'shardid.fence_lead = 20s');
	$node->start;
	$node->safe_psql('postgres', q{CREATE EXTENSION shardid; CREATE SEQUENCE s;});

	# the sequence's own fence (20 s ahead) past the cover, as the cover
	# stands at the early write 16.5 s later
	my $t0 = time();
	$node->safe_psql('postgres', q{SELECT shardid_next(1, 's')});
	usleep(int(($t0 + 16.5 - time()) * 1e6));
	$node->safe_psql('postgres', q{SELECT shardid_next(1, 's')});
	usleep(int(($t0 + 21.5 - time()) * 1e6));

	my $start = time();
	my $o = sql_outcome($node, 'postgres', q{
SET statement_timeout = '3s';
BEGIN;
DROP EXTENSION shardid;
CREATE EXTENSION shardid;
SELECT shardid_next(1, 's') > 0;
COMMIT;}, timeout => 60);
	my $took = time() - $start;
	note sprintf('B: the transaction took %.1f s', $took);
	# a spin until the clock passes the sequence's fence (20 s) ends in
	# 57014 at the 3 s statement_timeout
	is($o->{code} . $o->{message}, 'none',
		'B: the first ID in a transaction that made the fence anew is issued within statement_timeout');
	$node->stop;
}

done_testing();
