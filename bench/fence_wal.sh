#!/usr/bin/env bash
# bench/fence_wal.sh: what the fences cost in WAL, against a baseline in
# the same run.
#
# From 1.3 on, each sequence carries its own fence, written (a setval and
# its flush) about every 375 ms while the sequence is busy (at the default
# shardid.fence_lead of 500 ms), and on nearly every call of a sequence
# called less often than that; 1.2 writes one fence per database.  This
# measures the WAL that costs: bytes, records and flushes per second, for
# one, a hundred and many active sequences.
#
# Builds BASE (a directory holding a checkout, or a git revision; default
# 5154e4d, the last commit of 1.2) and this tree, each into a private copy
# of PostgreSQL, and starts a cluster on each with fsync on and
# synchronous_commit on (what is measured is mostly flushes).  Both get
# SEQS sequences and shardid.max_sequences = 16384.  Then, for each load
# below, the two builds in turn (the order alternating from round to
# round): a CHECKPOINT, each sequence called 0 to 31 times so that
# nextval's own logs fall as in a server that has run a while (phase,
# below), a warm-up (every sequence's first change after the
# checkpoint writes its page whole; that is left out), and a measured run
# of pgbench at a fixed rate (-R, Poisson), each transaction one
# SELECT count(shardid_next(0, s)) over K IDs from each of a group of
# sequences, the groups taken in turn.  Measured between the snapshots
# before and after the measured run (its clients have exited, so their
# counters are in): WAL bytes (pg_current_wal_lsn), records, whole-page
# images, writes and flushes (pg_stat_wal's wal_write and wal_sync), the
# records by type (pg_waldump --stats=record), IDs issued (shardid_stats)
# and fence writes (shardid_stats' fence_writes where the build has it;
# shardid_fence_status' writes for the database's).
#
# The loads (each sequence's rate is what the clients ask; IDs/s says what
# the server did):
#   1,000 IDs/s per sequence: 1 sequence; 100 sequences (100,000 IDs/s);
#     SEQS sequences at 4 IDs/s each (1,000 each would be 10 M IDs/s for
#     10,000, beyond this machine; 4 calls a second keep every sequence
#     busy, within its fence's lead, so the fence writes are those of any
#     busier sequence; what 1,000 IDs/s would add is nextval's own WAL,
#     one record per 32 values, the same in both builds);
#   10,000 IDs/s in all: 1 sequence; 100 sequences at 100/s; SEQS
#     sequences at 10,000 / SEQS each (1/s for 10,000: each call finds its
#     fence passed, the sparse case).
# Only IDs are made, no rows: the WAL is the generator's alone.  Rows add
# their own WAL, the same in both builds.
#
# Usage: bench/fence_wal.sh [--base BASE] [--rounds N] [--secs S] [--warm S]
#        [--seqs N] [--clients N] [--quick]
#   defaults: 2 rounds, 10 s measured after 4 s of warm-up, 10,000
#   sequences, 32 clients: about 9 minutes on 2 cores.  --quick: 1 round,
#   5 s after 3 s, about 4 minutes.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/cluster.sh"
. "$here/bench/ab.sh"

rounds=2 secs=10 warm=4 seqs=10000 clients=32
ab_options "usage: bench/fence_wal.sh [--base BASE] [--rounds N] [--secs S] [--warm S] [--seqs N] [--clients N] [--quick]" \
	--warm=warm --seqs=seqs --clients=clients "--quick:rounds=1 secs=5 warm=3" -- "$@"
case $seqs in
	100 | 200 | 500 | 1000 | 2000 | 2500 | 5000 | 10000) ;;
	*) echo "bench/fence_wal.sh: --seqs must be a multiple of 100 that divides 10,000" >&2; exit 2 ;;
esac

trap ab_cleanup EXIT
ab_build "$base"

# The loads: name, sequences, sequences per transaction, IDs per sequence
# per transaction, transactions per second.
many_per_s=$((10000 / seqs))
many_tps=$((seqs / 100 * many_per_s))
loads="
per_seq_1000/1 1 1 10 100
per_seq_1000/100 100 1 100 1000
per_seq_1000/$seqs@4 $seqs 100 1 $((seqs / 100 * 4))
total_10000/1 1 1 100 100
total_10000/100 100 1 10 1000
total_10000/$seqs@$many_per_s $seqs 100 1 $many_tps
"

conf=("fsync = on" "synchronous_commit = on" "autovacuum = off" "jit = off"
	"shared_buffers = 256MB" "max_wal_size = 16GB" "checkpoint_timeout = 1h"
	"max_locks_per_transaction = 512" "max_connections = $((clients + 20))"
	"shardid.max_sequences = 16384" "track_wal_io_timing = on")
for v in base tree; do
	ab_start $v data "${conf[@]}"
	ab_use $v
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -v seqs="$seqs" <<'SQL'
SET synchronous_commit = off;
SET client_min_messages = warning;
CREATE EXTENSION shardid;
CREATE SCHEMA fw;
CREATE TABLE fw.seqs (i int PRIMARY KEY, s regclass NOT NULL);
SELECT format('CREATE SEQUENCE fw.s%s', i) FROM generate_series(0, :seqs - 1) AS i \gexec
INSERT INTO fw.seqs SELECT i, format('fw.s%s', i)::regclass FROM generate_series(0, :seqs - 1) AS i;
VACUUM ANALYZE fw.seqs;
SQL
done

cat >"$ab_tmp/load.pgb" <<'PGB'
\set n (:n + 1)
\set lo ((:n * :nclients + :client_id) % :ngroups) * :gs
\set hi :lo + :gs
SELECT count(shardid_next(0, m.s)) FROM fw.seqs m, generate_series(1, :k) AS k
 WHERE m.i >= :lo AND m.i < :hi;
PGB

# snapshot: one line of the counters, tab-separated
snapshot() {
	local fw=0
	# 1.2 has no fence_writes per sequence
	"$PG_BINDIR/psql" -X -At -c "SELECT 1 FROM pg_proc WHERE proname = 'shardid_stats'
		AND 'fence_writes' = ANY (proargnames)" | grep -q 1 && fw=fence_writes
	"$PG_BINDIR/psql" -X -At -F $'\t' -c "
		SELECT extract(epoch FROM clock_timestamp()), pg_current_wal_lsn(),
		       pg_current_wal_lsn() - '0/0'::pg_lsn, w.wal_records, w.wal_fpi, w.wal_write, w.wal_sync,
		       w.wal_sync_time,
		       (SELECT coalesce(sum(ids_issued), 0) FROM shardid_stats()),
		       (SELECT coalesce(sum($fw), 0) FROM shardid_stats()),
		       (SELECT coalesce(sum(writes), 0) FROM shardid_fence_status())
		  FROM pg_stat_wal w"
}

# records LSN0 LSN1 TYPE: how many records of TYPE (rmgr/record) lie
# between the two
records() {
	as_owner "$PG_BINDIR/pg_waldump" -p "$PGHOST/pg_wal" -s "$1" -e "$2" --stats=record 2>/dev/null |
		awk -v t="$3" '$1 == t { n = $2 } END { print n + 0 }'
}

# phase NSEQ: after a checkpoint, every sequence's next nextval logs, and
# then logs once per 32 calls: left so, a load's sequences would log
# together, and a window shorter than 32 calls of each would see none of
# their logs (the sparse loads' 1.2 figures until 2026-12-04: 4 flushes a
# second at 1 call a second, where a server that has run a while makes
# about one per transaction).  So before the warm-up, sequence i is
# called i * 7 % 32 times (the same calls in both builds), which spreads
# its logs over the 32 calls as a server's are.
phase() {
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -v nseq="$1" <<'SQL' >/dev/null
SELECT count(shardid_next(0, m.s)) FROM fw.seqs m, generate_series(1, m.i * 7 % 32) AS k
 WHERE m.i < :nseq;
SQL
}

run_pgbench() {
	local secs=$1 nseq=$2 gs=$3 k=$4 tps=$5
	# a transaction that cannot finish ends the run, not the script
	PGOPTIONS="-c statement_timeout=60s" "$PG_BINDIR/pgbench" -n -M prepared -c "$clients" -j 2 -R "$tps" -T "$secs" \
		-D n=-1 -D nclients="$clients" -D ngroups=$((nseq / gs)) -D gs="$gs" -D k="$k" \
		-f "$ab_tmp/load.pgb" postgres 2>&1 || { echo "pgbench failed" >&2; return 1; }
}

out=$ab_tmp/results.tsv
: >"$out"
echo "$(date -u '+%F %T') UTC, load: $(uptime | sed 's/.*load average: //'); $rounds rounds of ${secs} s after ${warm} s of warm-up, $clients clients" >&2
for r in $(seq 1 "$rounds"); do
	order="base tree"
	[ $((r % 2)) = 0 ] && order="tree base"
	while read -r name nseq gs k tps; do
		[ -n "$name" ] || continue
		for v in $order; do
			ab_use $v
			"$PG_BINDIR/psql" -X -q -c CHECKPOINT
			phase "$nseq"
			run_pgbench "$warm" "$nseq" "$gs" "$k" "$tps" >"$ab_tmp/warm.log" || { cat "$ab_tmp/warm.log" >&2; exit 1; }
			sleep 0.3
			read -r t0 l0 b0 rec0 fpi0 wr0 sy0 syt0 ids0 sfw0 dfw0 < <(snapshot)
			pgb=$(run_pgbench "$secs" "$nseq" "$gs" "$k" "$tps")
			sleep 0.3
			read -r t1 l1 b1 rec1 fpi1 wr1 sy1 syt1 ids1 sfw1 dfw1 < <(snapshot)
			seqrec=$(records "$l0" "$l1" Sequence/LOG)
			commits=$(records "$l0" "$l1" Transaction/COMMIT)
			lag=$(echo "$pgb" | sed -n 's/^rate limit schedule lag: avg \([0-9.]*\).*/\1/p')
			lat=$(echo "$pgb" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
				"$name" "$v" "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" $((ids1 - ids0)) $((b1 - b0)) \
				$((rec1 - rec0)) $((fpi1 - fpi0)) $((wr1 - wr0)) $((sy1 - sy0)) \
				"$seqrec" "$commits" $((sfw1 - sfw0)) $((dfw1 - dfw0)) "${lag:-0}|${lat:-0}|$(awk -v a="$syt0" -v b="$syt1" 'BEGIN { print b - a }')" >>"$out"
			echo "round $r, $name, $v: $(tail -n 1 "$out" | cut -f 4-)" >&2
		done
	done <<<"$loads"
done
echo "$(date -u '+%F %T') UTC, load: $(uptime | sed 's/.*load average: //')" >&2

# The table: per load and build, the median over the rounds of each rate
# (lowest to highest in brackets when there is more than one round), and
# the tree's ratio to the base.
ab_use base
"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -c "CREATE TABLE fw.r (load text, build text, round int,
	secs float8, ids bigint, bytes bigint, records bigint, fpi bigint, writes bigint, syncs bigint,
	seq_records bigint, commits bigint, seq_fence_writes bigint, db_fence_writes bigint, extra text)" \
	-c "\\copy fw.r FROM '$out'"
"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -v lbase="$ab_label_base" -v ltree="$ab_label_tree" <<'SQL'
CREATE TEMP VIEW rate AS
SELECT load, build, round, ids / secs AS ids, bytes / secs / 1024 AS kib, records / secs AS records,
       fpi / secs AS fpi, writes / secs AS writes, syncs / secs AS syncs,
       seq_records / secs AS seq_records, commits / secs AS commits,
       seq_fence_writes / secs AS seq_fw, db_fence_writes / secs AS db_fw,
       split_part(extra, '|', 1)::float8 AS lag_ms,
       split_part(extra, '|', 3)::float8 / nullif(syncs, 0) AS sync_ms
  FROM fw.r;
CREATE TEMP VIEW med AS
SELECT load, build, count(*) AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY ids) AS ids,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY kib) AS kib, min(kib) AS kib_lo, max(kib) AS kib_hi,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY records) AS records,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY seq_records) AS seq_records,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY commits) AS commits,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY syncs) AS syncs, min(syncs) AS syncs_lo, max(syncs) AS syncs_hi,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY writes) AS writes,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY seq_fw) AS seq_fw,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY db_fw) AS db_fw,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY fpi) AS fpi,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_ms) AS lag_ms,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY sync_ms) AS sync_ms
  FROM rate GROUP BY load, build;
\pset format unaligned
\pset tuples_only on
SELECT '| load | build | IDs/s | WAL KiB/s | records/s | Sequence/LOG/s | COMMIT/s | flushes/s (wal_sync) | wal_write/s | fence writes/s, sequences + database | FPI/s | ms per flush | pgbench lag ms |';
SELECT '|---|---|---|---|---|---|---|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s%s | %s | %s | %s | %s%s | %s | %s + %s | %s | %s | %s |',
              load, CASE build WHEN 'base' THEN :'lbase' ELSE :'ltree' END || ' (' || build || ')',
              round(ids), round(kib::numeric, 1),
              CASE WHEN n > 1 THEN format(' (%s–%s)', round(kib_lo::numeric, 1), round(kib_hi::numeric, 1)) ELSE '' END,
              round(records), round(seq_records), round(commits), round(syncs),
              CASE WHEN n > 1 THEN format(' (%s–%s)', round(syncs_lo), round(syncs_hi)) ELSE '' END,
              round(writes), round(seq_fw::numeric, 1), round(db_fw::numeric, 1), round(fpi::numeric, 1),
              round(sync_ms::numeric, 2), round(lag_ms::numeric, 1))
  FROM med ORDER BY load, build;
SELECT '';
SELECT '| load | WAL bytes, ' || :'ltree' || ' / ' || :'lbase' || ' | flushes | bytes per ID, base | bytes per ID, tree | IDs/s, tree / base |';
SELECT '|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s |', b.load,
              round((t.kib / nullif(b.kib, 0))::numeric, 2), round((t.syncs / nullif(b.syncs, 0))::numeric, 2),
              round((b.kib * 1024 / nullif(b.ids, 0))::numeric, 2), round((t.kib * 1024 / nullif(t.ids, 0))::numeric, 2),
              round((t.ids / nullif(b.ids, 0))::numeric, 3))
  FROM med b JOIN med t ON t.load = b.load AND t.build = 'tree' WHERE b.build = 'base'
 ORDER BY b.load;
SQL
