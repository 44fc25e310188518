#!/usr/bin/env bash
# bench/compare.sh: the cost per ID of shardid_next before and after a
# change, measured in one run.
#
# Builds BASE (a git revision of this repository, default origin/main or
# main) and the working tree, each into a private copy of PostgreSQL, starts
# a throwaway cluster on each, and runs comparison 1 of bench/run.sh
# (bench/cost.sql: shardid_next and nextval over 16 sequences, net of an
# empty loop of the same shape) on the two clusters in turn: ROUNDS rounds
# of one repetition each, the order of the two alternating.  Prints, for
# each build, the median net cost of shardid_next and of nextval per ID
# and their ratio.  The clusters run one at a time, never at once.
#
# Usage: bench/compare.sh [--rounds N] [--n IDS] [BASE]
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/cluster.sh"

rounds=15
n=1000000
base=
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift 2 ;;
		--n) n=$2; shift 2 ;;
		-*) echo "usage: bench/compare.sh [--rounds N] [--n IDS] [BASE]" >&2; exit 2 ;;
		*) base=$1; shift ;;
	esac
done
if [ -z "$base" ]; then
	base=main
	git -C "$here" rev-parse -q --verify origin/main >/dev/null && base=origin/main
fi
base_rev=$(git -C "$here" rev-parse --short "$base")
tree_rev="$(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet HEAD -- src || echo '+changes')"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-compare.XXXXXX")
chmod 755 "$tmp"
cleanup() {
	for v in base tree; do cluster_stop "$tmp/$v/data"; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# Build both, each into its own copy of PostgreSQL.
for v in base tree; do
	mkdir -p "$tmp/$v/tree"
	if [ $v = base ]; then
		git -C "$here" archive "$base_rev" | tar -x -C "$tmp/$v/tree"
	else
		(cd "$here" && git ls-files -co --exclude-standard | tar -c -T - | tar -x -C "$tmp/$v/tree")
	fi
	(cd "$tmp/$v/tree" && private_install "$tmp/$v/pg" >/dev/null)
	eval "bindir_$v=$tmp/$v/pg/usr/lib/postgresql/$PG_MAJOR/bin"
done

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for v in base tree; do
	eval "PG_BINDIR=\$bindir_$v"
	for try in 1 2 3 4 5; do
		port=$((53000 + RANDOM % 1000))
		port_free "$port" || continue
		if cluster_start "$tmp/$v/data" "$port" "shared_buffers = 128MB" \
			"autovacuum = off" "jit = off" >/dev/null; then
			break
		fi
	done
	eval "port_$v=$PGPORT"
	"$PG_BINDIR/psql" -X -q -d postgres -c "CREATE DATABASE bench"
	"$PG_BINDIR/psql" -X -q -d bench -f "$here/bench/setup.sql"
	# one repetition, with its warm-up, defines bench.run_cost
	"$PG_BINDIR/psql" -X -q -d bench -v n="$n" -v reps=1 -f "$here/bench/cost.sql" >/dev/null
done

for r in $(seq 2 "$rounds"); do
	order="base tree"
	[ $((r % 2)) = 0 ] && order="tree base"
	for v in $order; do
		eval "PG_BINDIR=\$bindir_$v PGPORT=\$port_$v PGHOST=$tmp/$v/data"
		"$PG_BINDIR/psql" -X -q -d bench -c "SELECT bench.run_cost($n, 1, $r)" >/dev/null
	done
done

echo "cost per ID, median of $rounds repetitions of $n IDs, net of the empty loop"
echo
echo "| build | shardid_next ns | nextval ns | shardid_next / nextval |"
echo "|---|---|---|---|"
for v in base tree; do
	eval "PG_BINDIR=\$bindir_$v PGPORT=\$port_$v PGHOST=$tmp/$v/data"
	label=$base_rev
	[ $v = tree ] && label=$tree_rev
	"$PG_BINDIR/psql" -X -At -d bench -F ' | ' -c "
		WITH t AS (
			SELECT c.rep, c.method, (c.seconds - b.seconds) / c.n * 1e9 AS net_ns
			  FROM bench.cost c JOIN bench.cost b
			    ON b.rep = c.rep AND b.method = 'base_args'
			 WHERE c.method IN ('shardid_next', 'nextval')),
		m AS (
			SELECT method, percentile_cont(0.5) WITHIN GROUP (ORDER BY net_ns) AS ns
			  FROM t GROUP BY method),
		ratio AS (
			SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s.net_ns / v.net_ns) AS r
			  FROM t s JOIN t v ON v.rep = s.rep
			 WHERE s.method = 'shardid_next' AND v.method = 'nextval')
		SELECT '| $label ($v)', round(s.ns::numeric, 1), round(v.ns::numeric, 1),
		       round(ratio.r::numeric, 3) || ' |'
		  FROM m s, m v, ratio WHERE s.method = 'shardid_next' AND v.method = 'nextval'"
done
