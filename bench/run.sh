#!/usr/bin/env bash
# bench/run.sh: what an ID costs, shardid_next against its alternatives.
#
# Starts a throwaway cluster, runs every comparison in one run, and writes
# to the output directory:
#   results.md     the table of ratios, the machine and the command
#   cost.csv       1. time of each generator and empty loop, per repetition
#   ceiling.csv    2. one sequence under bulk demand: IDs per ms, duplicates
#   bulk.csv       3, 4. time of every chunk of the bulk inserts
#   bulk_size.csv  3. index and heap sizes after the bulk inserts
#   growth.csv     4. rows per ms against table size, one column per method
#   growth.png     4. the same as a figure
#   pgbench.csv    5. tps of single-row INSERTs, 1 and 2 clients
#   info.csv       counters of the guard (waits for the next millisecond)
#   machine.txt    where it ran
# Absolute times drift on a shared machine; the ratios of one run hold.
#
# The figure needs gnuplot (Debian gnuplot-nox), which this script installs
# when run as root; --no-plot leaves the figure out.
#
# It measures the shardid installed in PG_BINDIR's server, or, if there is
# none, builds this tree into a private copy of PostgreSQL first.
#
# Usage: bench/run.sh [--scale small|full|ROWS] [--out DIR] [--port PORT] [--no-plot]
#   small  200,000 rows, about a minute (the test suite runs this)
#   full   10,000,000 rows, about 20 minutes on 2 cores
#   ROWS   that many rows for comparisons 3 and 4, the rest as full
#          when ROWS >= 2,000,000 and as small below
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/cluster.sh"

scale=small
out=$here/bench/out
port=
plot=1
while [ $# -gt 0 ]; do
	case $1 in
		--scale) scale=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		--port) port=$2; shift 2 ;;
		--no-plot) plot=0; shift ;;
		*) echo "usage: bench/run.sh [--scale small|full|ROWS] [--out DIR] [--port PORT] [--no-plot]" >&2; exit 2 ;;
	esac
done
[ $plot = 0 ] || install_packages gnuplot-nox

case $scale in
	small) rows=200000 ;;
	full) rows=10000000 ;;
	*[!0-9]* | "") echo "bench/run.sh: --scale must be small, full or a row count" >&2; exit 2 ;;
	*) rows=$scale ;;
esac
chunk=$((rows / 10))
[ "$chunk" -ge 1 ] || { echo "bench/run.sh: at least 10 rows" >&2; exit 2; }
if [ "$rows" -ge 2000000 ]; then
	cost_n=1000000 cost_reps=15 ceil_n=5000000 pgb_secs=8 pgb_reps=9
else
	cost_n=200000 cost_reps=3 ceil_n=500000 pgb_secs=2 pgb_reps=2
fi
# Small enough that the 10M-row bigserial index (about 215 MB) is several
# times larger.
shared_buffers=32MB

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.csv "$out"/results.md "$out"/growth.png "$out"/machine.txt

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-bench.XXXXXX")
chmod 755 "$tmp"
data=$tmp/data
cleanup() {
	cluster_stop "$data"
	rm -rf "$tmp"
}
trap cleanup EXIT

# The server to measure: PG_BINDIR's if shardid is installed there (as in
# the test suite), else a private copy of PostgreSQL with this tree built
# into it.
if [ ! -f "$("$PG_BINDIR/pg_config" --pkglibdir)/shardid.so" ]; then
	(cd "$here" && private_install "$tmp/pg" >/dev/null)
	PG_BINDIR=$tmp/pg/usr/lib/postgresql/$PG_MAJOR/bin
fi
PATH=$PG_BINDIR:$PATH

started=$(date +%s)
say() { echo "[$(($(date +%s) - started))s] $*"; }

# A free port in 52000-52999 unless one was given.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
start_cluster() {
	local try
	for try in 1 2 3 4 5; do
		[ -n "$port" ] || { port=$((52000 + RANDOM % 1000)); port_free "$port" || { port=; continue; }; }
		rm -rf "$data"
		if cluster_start "$data" "$port" \
			"shared_buffers = $shared_buffers" \
			"max_wal_size = 16GB" \
			"checkpoint_timeout = 1h" \
			"autovacuum = off" \
			"jit = off" >/dev/null; then
			return 0
		fi
		cluster_stop "$data"
		port=
	done
	echo "bench/run.sh: could not start a cluster" >&2
	return 1
}

# what is measured: the library the cluster preloads at start
if version=$(cd "$here" && git rev-parse --short HEAD 2>/dev/null); then
	(cd "$here" && git diff --quiet HEAD -- src) || version="$version (src modified)"
else
	version="unknown (not a git checkout)"
fi
library_md5=$(md5sum "$($PG_BINDIR/pg_config --pkglibdir)/shardid.so" | cut -c1-12)

say "starting a cluster (shared_buffers = $shared_buffers)"
start_cluster
export PGDATABASE=bench
psql -X -q -d postgres -c "CREATE DATABASE bench"

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

q -f "$here/bench/setup.sql"

say "1. cost per ID: $cost_reps x $cost_n IDs per method"
q -v n="$cost_n" -v reps="$cost_reps" -f "$here/bench/cost.sql" >/dev/null

say "2. the ceiling: $ceil_n IDs from one sequence per method"
q -v n="$ceil_n" -f "$here/bench/ceiling.sql" >/dev/null

say "3, 4. bulk inserts: $rows rows per table in chunks of $chunk"
q -v total="$rows" -v chunk="$chunk" -f "$here/bench/bulk.sql" >/dev/null

say "5. pgbench: $pgb_reps x ${pgb_secs}s per method and client count"
q -f "$here/bench/pgbench-setup.sql" >/dev/null
# Each client runs in a pgbench process of its own, pinned to a CPU
# together with its backend (backends inherit the postmaster's CPU
# affinity when they are forked, so the postmaster is pinned to the CPU
# before each client connects).  Unpinned, the scheduler's placement of
# client and backend moved tps by a factor of 3 between identical runs.
postmaster=$(head -1 "$data/postmaster.pid")
ncpu=$(nproc)
all_cpus=0-$((ncpu - 1))
pin=1
taskset -p -c "$all_cpus" "$postmaster" >/dev/null 2>&1 || pin=0
pgb_start() {	# CPU TABLE LOGFILE: one client, connected when this returns
	local cpu=$1 table=$2 log=$3 want i connected=0
	want=$(($(psql -X -At -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'shardid_bench'") + 1))
	if [ $pin = 1 ]; then
		taskset -p -c "$cpu" "$postmaster" >/dev/null
		PGAPPNAME=shardid_bench taskset -c "$cpu" pgbench -n -M simple -f "$here/bench/insert.pgbench" \
			-D tab="$table" -c 1 -j 1 -T "$pgb_secs" >"$log" 2>&1 &
	else
		PGAPPNAME=shardid_bench pgbench -n -M simple -f "$here/bench/insert.pgbench" \
			-D tab="$table" -c 1 -j 1 -T "$pgb_secs" >"$log" 2>&1 &
	fi
	local pid=$!
	for i in $(seq 1 200); do
		[ "$(psql -X -At -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'shardid_bench'")" -ge "$want" ] &&
			{ connected=1; break; }
		# on a loaded machine a short run may be over before it is seen
		if ! kill -0 "$pid" 2>/dev/null; then
			grep -q '^tps = ' "$log" && connected=1
			break
		fi
		sleep 0.05
	done
	[ $pin = 1 ] && taskset -p -c "$all_cpus" "$postmaster" >/dev/null
	if [ $connected = 0 ]; then
		cat "$log" >&2
		echo "bench/run.sh: pgbench did not connect within 10 s" >&2
		return 1
	fi
	return 0
}
pgb_tps() {	# LOGFILE
	sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$1"
}
for rep in $(seq 1 "$pgb_reps"); do
	for cfg in "1 one" "2 one" "2 separate"; do
		set -- $cfg
		clients=$1 layout=$2
		for method in bigserial shardid uuid; do
			q -c "TRUNCATE pg_${method}_0, pg_${method}_1" -c "CHECKPOINT"
			pgb_start 0 "pg_${method}_0" "$tmp/pgbench.0"
			if [ "$clients" = 2 ]; then
				second=pg_${method}_0
				[ "$layout" = separate ] && second=pg_${method}_1
				pgb_start $((1 % ncpu)) "$second" "$tmp/pgbench.1"
			fi
			wait
			tps=0
			for c in $(seq 0 $((clients - 1))); do
				t=$(pgb_tps "$tmp/pgbench.$c")
				[ -n "$t" ] || { cat "$tmp/pgbench.$c" >&2; echo "bench/run.sh: pgbench failed for $method" >&2; exit 1; }
				tps=$(awk -v a="$tps" -v b="$t" 'BEGIN { printf "%.3f", a + b }')
			done
			q -c "INSERT INTO bench.pgbench VALUES ($rep, '$method', $clients, '$layout', $tps)"
		done
	done
done
[ $pin = 1 ] || echo "bench/run.sh: taskset failed; pgbench clients ran unpinned" >&2

say "writing $out"
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "command: bench/run.sh --scale $scale"
	echo "cpu: $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "memory: $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo)"
	echo "kernel: $(uname -sr)"
	echo "server: $(psql -X -At -c 'SHOW server_version')," \
		"shared_buffers = $shared_buffers, fsync = off, jit = off, autovacuum = off"
	[ $pin = 1 ] && echo "pgbench: each client and its backend pinned to one CPU (taskset)"
	echo "shardid: tree $version, shardid.so md5 $library_md5"
} >"$out/machine.txt"

for t in cost ceiling bulk bulk_size pgbench info; do
	psql -X -q -c "\\copy (SELECT * FROM bench.$t ORDER BY 1, 2) TO '$out/$t.csv' WITH (FORMAT csv, HEADER)"
done
psql -X -q -c "\\copy (SELECT round(rows_after / 1e6, 3) AS rows_millions,
		round(avg(added / seconds / 1000) FILTER (WHERE method = 'bigserial')::numeric, 1) AS bigserial,
		round(avg(added / seconds / 1000) FILTER (WHERE method = 'shardid')::numeric, 1) AS shardid,
		round(avg(added / seconds / 1000) FILTER (WHERE method = 'uuid')::numeric, 1) AS uuid,
		round(avg(added / seconds / 1000) FILTER (WHERE method = 'plpgsql')::numeric, 1) AS plpgsql
	FROM (SELECT *, rows_after - rows_before AS added FROM bench.bulk WHERE status = 'ok') b
	GROUP BY rows_after ORDER BY rows_after) TO '$out/growth.csv' WITH (FORMAT csv, HEADER)"

if [ $plot = 1 ]; then
	gnuplot -e "in='$out/growth.csv'; out='$out/growth.png'; subtitle='$(nproc) cores, shared\\_buffers $shared_buffers, $(date -u +%Y-%m-%d)'" \
		"$here/bench/growth.gp"
	figure="figure: growth.png."
else
	figure="figure: not drawn (--no-plot)."
fi

{
	echo "# shardid benchmark"
	echo
	sed 's/^/    /' "$out/machine.txt"
	echo
	q -f "$here/bench/summary.sql"
	echo
	echo "shardid_next waited for the next millisecond (shardid_stats.exhausted_waits):"
	psql -X -At -c "SELECT format('%s in comparison %s', value,
		CASE key WHEN 'cost_exhausted_waits' THEN '1 (16 sequences)'
				 WHEN 'ceiling_exhausted_waits' THEN '2 (the ceiling)'
				 ELSE '3 (bulk insert)' END)
		FROM bench.info WHERE key LIKE '%exhausted_waits' ORDER BY key DESC" | sed 's/^/- /'
	echo
	echo "Raw numbers: cost.csv, ceiling.csv, bulk.csv, bulk_size.csv, pgbench.csv, info.csv;"
	echo "$figure  Run time: $(($(date +%s) - started)) s."
} >"$out/results.md"

say "done"
cat "$out/results.md"
