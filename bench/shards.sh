#!/usr/bin/env bash
# bench/shards.sh: the users' layout, side by side in one run: many shard
# schemas, each with one table and its own sequence, on bigserial, on the
# last release (BASE, default 5154e4d: 1.2) and on this tree.
#
# Each build gets a cluster of its own (bigserial runs on this tree's
# build, with shardid preloaded and unused), fsync on, synchronous_commit
# on, and SHARDS schemas laid out as the README's Getting started lays one
# out: shard_K.posts (id bigint PRIMARY KEY, user_id bigint, caption text)
# with shard_K.posts_id_seq OWNED BY its id, and DEFAULT
# shardid_next(K, 'shard_K.posts_id_seq'); bigserial's shard_K.posts has
# id bigserial instead.  The base build gets shardid.max_sequences =
# 16384, so that it is measured without evictions; this tree runs on its
# defaults.
#
# Then, in rounds, the three in turn (the order rotating from round to
# round), each run after a CHECKPOINT: pgbench, CLIENTS clients, each
# transaction one single-row INSERT into a random shard (simple protocol:
# the schema is interpolated), for SECS seconds, at full speed, or at
# RATE transactions a second with --rate (Poisson).  Measured per run:
# inserts a second, the latency's p50, p99 and maximum (pgbench's
# per-transaction log), and per insert the WAL bytes and flushes
# (pg_current_wal_lsn, pg_stat_wal.wal_sync) and shardid's fence writes
# (shardid_stats, shardid_fence_status).
#
# --slow-us US: every server runs under bench/slowsync.c, a library that
# adds US microseconds to each fsync and fdatasync: a slow disk.
# --standby: each cluster gets an asynchronous streaming standby on
# loopback (pg_basebackup), whose fences the primaries wait for.
# --relay-ms MS (implies --standby): each standby streams through
# bench/relay.py, which holds what goes each way for MS ms: a standby
# that far away.
# --stall S (with --standby): in each run, a third of the way in, the
# primary's walsender is stopped (SIGSTOP) for S seconds, then continued:
# the table adds the inserts a second during the stall as a share of
# those before it (pgbench's per-transaction log, by completion time).
#
# The table: per build the median over the rounds of each figure (lowest
# to highest in brackets), and each figure's ratio to bigserial's.
#
# Usage: bench/shards.sh [--base BASE] [--shards N] [--clients N]
#        [--secs S] [--rounds N] [--rate TPS] [--slow-us US] [--standby]
#        [--relay-ms MS] [--stall S]
#   defaults: 4,096 shards, 8 clients, 60 s, 3 rounds: about 12 minutes
#   on 2 cores, most of it the runs.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/cluster.sh"
. "$here/bench/ab.sh"

shards=4096 clients=8 secs=60 rounds=3 rate= slow_us=0 standby=0 relay_ms= stall=0
ab_options "usage: bench/shards.sh [--base BASE] [--shards N] [--clients N] [--secs S] [--rounds N] [--rate TPS] [--slow-us US] [--standby] [--relay-ms MS] [--stall S]" \
	--shards=shards --clients=clients --rate=rate --slow-us=slow_us --standby:standby=1 --relay-ms=relay_ms --stall=stall -- "$@"
[ "$shards" -ge 1 ] && [ "$shards" -le 8192 ] ||
	{ echo "bench/shards.sh: --shards must be 1 to 8192 (the shard field's range)" >&2; exit 2; }
if [ -n "$relay_ms" ]; then
	[[ "$relay_ms" =~ ^[0-9]+$ ]] ||
		{ echo "bench/shards.sh: --relay-ms must be a whole number of milliseconds" >&2; exit 2; }
	standby=1
fi
[ "$stall" -eq 0 ] || { [ "$standby" = 1 ] && [ $((stall + secs / 3 + 1)) -lt "$secs" ]; } ||
	{ echo "bench/shards.sh: --stall needs --standby and a run longer than a third of it plus the stall" >&2; exit 2; }

trap ab_cleanup EXIT
ab_build "$base"

# the slow disk
shim=$ab_tmp/slowsync.so
cc -shared -fPIC -O2 -o "$shim" "$here/bench/slowsync.c" -ldl
chmod 755 "$shim"

# bigserial runs on this tree's build, in a cluster of its own
ab_bindir_plain=$ab_bindir_tree
mkdir -p "$ab_tmp/plain"

conf=("fsync = on" "synchronous_commit = on" "autovacuum = off" "jit = off"
	"shared_buffers = 512MB" "max_wal_size = 16GB" "checkpoint_timeout = 1h"
	"max_connections = $((clients + 20))" "max_locks_per_transaction = 256"
	"track_wal_io_timing = on" "wal_level = replica" "max_wal_senders = 4")
variants="plain base tree"
for v in $variants; do
	extra=()
	[ $v = base ] && extra=("shardid.max_sequences = 16384")
	ab_start $v data "${conf[@]}" "${extra[@]}"
	ab_use $v
	if [ "$slow_us" -gt 0 ]; then
		# restart under the slow disk
		as_owner "$PG_BINDIR/pg_ctl" -D "$PGHOST" -w stop -m fast >/dev/null
		LD_PRELOAD=$shim SLOWSYNC_US=$slow_us as_owner "$PG_BINDIR/pg_ctl" -D "$PGHOST" \
			-l "$PGHOST/server.log" -w start >/dev/null
	fi
	if [ $v = plain ]; then
		ab_shards bigserial "$shards"
	else
		ab_shards shardid "$shards"
	fi
	if [ $standby = 1 ]; then
		ab_standby $v standby $relay_ms
	fi
done

cat >"$ab_tmp/insert.pgb" <<PGB
\\set k random(0, $((shards - 1)))
\\set u random(1, 1000000)
INSERT INTO shard_:k.posts (user_id, caption) VALUES (:u, 'hello');
PGB

# snapshot: WAL position, flushes and fence writes
snapshot() {
	local fw="0" dw="0"
	if [ "$1" != plain ]; then
		"$PG_BINDIR/psql" -X -At -c "SELECT 1 FROM pg_proc WHERE proname = 'shardid_stats'
			AND 'fence_writes' = ANY (proargnames)" | grep -q 1 &&
			fw="(SELECT coalesce(sum(fence_writes), 0) FROM shardid_stats())"
		dw="(SELECT coalesce(sum(writes), 0) FROM shardid_fence_status())"
	fi
	"$PG_BINDIR/psql" -X -At -F ' ' -c "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, wal_sync, $fw, $dw FROM pg_stat_wal"
}

out=$ab_tmp/results.tsv
: >"$out"
echo "$(date -u '+%F %T') UTC, load: $(uptime | sed 's/.*load average: //'); $shards shards, $clients clients, $rounds rounds of ${secs} s${rate:+ at $rate inserts/s}$([ "$slow_us" -gt 0 ] && echo ", fsync +$slow_us us")$([ $standby = 1 ] && echo ", a streaming standby each${relay_ms:+ behind a ${relay_ms} ms relay}")" >&2
for r in $(seq 1 "$rounds"); do
	case $((r % 3)) in
		1) order="plain base tree" ;;
		2) order="base tree plain" ;;
		0) order="tree plain base" ;;
	esac
	for v in $order; do
		ab_use $v
		"$PG_BINDIR/psql" -X -q -c CHECKPOINT
		read -r b0 s0 fw0 dw0 < <(snapshot $v)
		rm -rf "$ab_tmp/log" && mkdir -p "$ab_tmp/log"
		rm -f "$ab_tmp/stall.t"
		staller=
		if [ "$stall" -gt 0 ]; then
			# the walsender stopped a third of the way in, for $stall s
			(
				sleep $((secs / 3))
				ws=$("$PG_BINDIR/psql" -X -At -c "SELECT pid FROM pg_stat_replication LIMIT 1")
				[ -n "$ws" ] || exit 0
				t0=$(date +%s.%N)
				kill -STOP "$ws"
				sleep "$stall"
				kill -CONT "$ws"
				echo "$t0 $(date +%s.%N)" >"$ab_tmp/stall.t"
			) &
			staller=$!
		fi
		(cd "$ab_tmp/log" && "$PG_BINDIR/pgbench" -n -M simple -c "$clients" -j 2 -T "$secs" \
			${rate:+-R "$rate"} -l -f "$ab_tmp/insert.pgb" postgres >"$ab_tmp/pgbench.out" 2>&1) ||
			{ cat "$ab_tmp/pgbench.out" >&2; exit 1; }
		[ -z "$staller" ] || wait "$staller" || true
		share=0
		if [ -s "$ab_tmp/stall.t" ]; then
			# inserts/s during the stall over inserts/s before it (its
			# first second left out: the clients connecting)
			read -r t0 t1 <"$ab_tmp/stall.t"
			share=$(cat "$ab_tmp"/log/pgbench_log.* | awk -v t0="$t0" -v t1="$t1" '
				{ t = $5 + $6 / 1e6; if (first == "" || t < first) first = t; ts[NR] = t }
				END { for (i in ts) { if (ts[i] >= first + 1 && ts[i] < t0) b++; else if (ts[i] >= t0 && ts[i] < t1) d++ }
					if (b == 0 || t0 <= first + 1) { print 0; exit }
					printf "%.3f\n", (d / (t1 - t0)) / (b / (t0 - first - 1)) }')
		fi
		read -r b1 s1 fw1 dw1 < <(snapshot $v)
		tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$ab_tmp/pgbench.out" | head -n 1)
		n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$ab_tmp/pgbench.out")
		# per-transaction latencies, in microseconds: the log's third field
		read -r p50 p99 pmax < <(cat "$ab_tmp"/log/pgbench_log.* | awk '{ print $3 }' | sort -n |
			awk '{ a[NR] = $1 } END { if (NR == 0) { print 0, 0, 0; exit }
				i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
				i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
				print a[i50], a[i99], a[NR] }')
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$r" "$tps" "$n" "$p50" "$p99" "$pmax" \
			$((b1 - b0)) $((s1 - s0)) $((fw1 - fw0 + dw1 - dw0)) "$share" >>"$out"
		echo "round $r, $v: $(tail -n 1 "$out" | cut -f 3-)" >&2
	done
done
echo "$(date -u '+%F %T') UTC, load: $(uptime | sed 's/.*load average: //')" >&2

ab_use plain
"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -c "CREATE TEMP TABLE r (build text, round int, tps float8, n bigint,
	p50 float8, p99 float8, pmax float8, wal bigint, syncs bigint, fences bigint, stall float8)" \
	-c "\\copy r FROM '$out'" \
	-v lbase="$ab_label_base" -v ltree="$ab_label_tree" -f - <<'SQL'
CREATE TEMP VIEW per AS
SELECT build, round, tps, p50 / 1000 AS p50_ms, p99 / 1000 AS p99_ms, pmax / 1000 AS max_ms,
       wal::float8 / nullif(n, 0) AS wal_b, syncs::float8 / nullif(n, 0) AS syncs, fences::float8 / nullif(n, 0) AS fences,
       stall
  FROM r;
CREATE TEMP VIEW med AS
SELECT build,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS tps, min(tps) AS tps_lo, max(tps) AS tps_hi,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY p50_ms) AS p50,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY p99_ms) AS p99, min(p99_ms) AS p99_lo, max(p99_ms) AS p99_hi,
       max(max_ms) AS max_ms,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY wal_b) AS wal_b,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY syncs) AS syncs,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY fences) AS fences,
       min(stall) AS stall_lo, max(stall) AS stall_hi
  FROM per GROUP BY build;
\pset footer off
SELECT CASE build WHEN 'plain' THEN 'bigserial' WHEN 'base' THEN :'lbase' ELSE :'ltree' END AS build,
       format('%s [%s-%s]', round(tps::numeric, 1), round(tps_lo::numeric, 1), round(tps_hi::numeric, 1)) AS "inserts/s",
       round(p50::numeric, 2) AS "p50 ms",
       format('%s [%s-%s]', round(p99::numeric, 2), round(p99_lo::numeric, 2), round(p99_hi::numeric, 2)) AS "p99 ms",
       round(max_ms::numeric, 1) AS "longest ms",
       round(wal_b::numeric) AS "WAL B/insert",
       round(syncs::numeric, 3) AS "flushes/insert",
       round(fences::numeric, 3) AS "fence writes/insert",
       CASE WHEN stall_hi > 0 THEN format('%s-%s', round(stall_lo::numeric, 2), round(stall_hi::numeric, 2)) END
         AS "inserts/s in the stall, share of before"
  FROM med ORDER BY array_position(ARRAY['plain', 'base', 'tree'], build);
SELECT CASE m.build WHEN 'base' THEN :'lbase' ELSE :'ltree' END AS "against bigserial",
       round((m.tps / p.tps)::numeric, 3) AS "inserts/s",
       round((m.p99 / p.p99)::numeric, 3) AS p99,
       round((m.max_ms / p.max_ms)::numeric, 3) AS longest,
       round((m.wal_b / p.wal_b)::numeric, 3) AS "WAL bytes",
       round((m.syncs / nullif(p.syncs, 0))::numeric, 3) AS flushes
  FROM med m, med p WHERE p.build = 'plain' AND m.build <> 'plain'
 ORDER BY array_position(ARRAY['base', 'tree'], m.build);
SQL
