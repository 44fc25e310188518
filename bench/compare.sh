#!/usr/bin/env bash
# bench/compare.sh: the cost per ID of shardid_next before and after a
# change, measured in one run.
#
# Builds BASE (a git revision of this repository, default origin/main or
# main, or a directory holding a checkout) and the working tree, each into a private copy of PostgreSQL, starts
# a throwaway cluster on each, and runs comparison 1 of bench/run.sh
# (bench/cost.sql: shardid_next and nextval over 16 sequences, net of an
# empty loop of the same shape) on the two clusters in turn: ROUNDS rounds
# of one repetition each, the order of the two alternating.  Prints, for
# each build, the median net cost of shardid_next and of nextval per ID
# and their ratio, with the ratio's spread over the rounds (the lower and
# upper quartile, and the lowest and highest).  Both clusters are up, but
# only one runs a repetition at a time.
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
. "$here/bench/ab.sh"
trap ab_cleanup EXIT

# Build both, each into its own copy of PostgreSQL, and start a cluster on
# each.
ab_build "$base"
for v in base tree; do
	ab_start $v data "shared_buffers = 128MB" "autovacuum = off" "jit = off"
	ab_use $v
	"$PG_BINDIR/psql" -X -q -d postgres -c "CREATE DATABASE bench"
	"$PG_BINDIR/psql" -X -q -d bench -f "$here/bench/setup.sql"
	# one repetition, with its warm-up, defines bench.run_cost
	"$PG_BINDIR/psql" -X -q -d bench -v n="$n" -v reps=1 -f "$here/bench/cost.sql" >/dev/null
done

for r in $(seq 2 "$rounds"); do
	order="base tree"
	[ $((r % 2)) = 0 ] && order="tree base"
	for v in $order; do
		ab_use $v
		"$PG_BINDIR/psql" -X -q -d bench -c "SELECT bench.run_cost($n, 1, $r)" >/dev/null
	done
done

echo "cost per ID, median of $rounds repetitions of $n IDs, net of the empty loop"
echo
echo "| build | shardid_next ns | nextval ns | shardid_next / nextval | quartiles | range |"
echo "|---|---|---|---|---|---|"
for v in base tree; do
	ab_use $v
	label=$ab_label_base
	[ $v = tree ] && label=$ab_label_tree
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
			SELECT percentile_cont(ARRAY[0, 0.25, 0.5, 0.75, 1])
			           WITHIN GROUP (ORDER BY s.net_ns / v.net_ns) AS r
			  FROM t s JOIN t v ON v.rep = s.rep
			 WHERE s.method = 'shardid_next' AND v.method = 'nextval')
		SELECT '| $label ($v)', round(s.ns::numeric, 1), round(v.ns::numeric, 1),
		       round(ratio.r[3]::numeric, 3),
		       round(ratio.r[2]::numeric, 3) || ' to ' || round(ratio.r[4]::numeric, 3),
		       round(ratio.r[1]::numeric, 3) || ' to ' || round(ratio.r[5]::numeric, 3) || ' |'
		  FROM m s, m v, ratio WHERE s.method = 'shardid_next' AND v.method = 'nextval'"
done
