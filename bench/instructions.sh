#!/usr/bin/env bash
# bench/instructions.sh: instructions per ID of shardid_next and of nextval,
# counted by callgrind in a single-user backend.  Unlike time, the counts
# are the same on every run of the same build, however busy the machine:
# a fair before-and-after for a change to the hot path.  (They leave out
# what the kernel and the vDSO clock read cost.)
#
# Builds TREE (default: this tree) into a private copy of PostgreSQL, makes
# IDS IDs over 16 sequences with each function, and prints the inclusive
# instruction count per call of each and their difference, two ways:
#   - per ID: the marginal cost, from two runs in fresh clusters, of IDS
#     and of 3 x IDS IDs: (count(3 IDS) - count(IDS)) / (2 IDS).  What is
#     paid once per run (the first call's fence read, each sequence's first
#     open and slot, the sequences' first opens by nextval, which the
#     shardid_next loop pays for both since it runs first) cancels out;
#   - on average over the first run, one-time costs included, as this
#     script printed before 1.2.
# The fence's lead is 60 s here: a fence is written once per lead of
# time, not per ID, and under callgrind an ID takes some fifty times as
# long, so the default lead would count fifty times the writes a real
# second has (docs/performance.md measures the writes on their own).
# Needs valgrind.
#
# Usage: bench/instructions.sh [--ids N] [TREE]   (as root, or as a user
#        who may run initdb)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/cluster.sh"

ids=20000
tree=$here
while [ $# -gt 0 ]; do
	case $1 in
		--ids) ids=$2; shift 2 ;;
		-*) echo "usage: bench/instructions.sh [--ids N] [TREE]" >&2; exit 2 ;;
		*) tree=$(cd "$1" && pwd); shift ;;
	esac
done
install_packages valgrind

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-instructions.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
(cd "$tree" && private_install "$tmp/pg" >/dev/null)
PG_BINDIR=$tmp/pg/usr/lib/postgresql/$PG_MAJOR/bin
seqs=$(seq -s, -f 'cs%g' 0 15)

# run N: a fresh cluster, N IDs with each function under callgrind; prints
# the inclusive counts of shardid_next and nextval_oid
run() {
	local n=$1 dir=$tmp/run$1
	mkdir "$dir" "$dir/data"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir" "$dir/data"
	as_owner "$PG_BINDIR/initdb" -D "$dir/data" -A trust --no-sync >/dev/null
	{
		echo "CREATE EXTENSION shardid;"
		for i in $(seq 0 15); do echo "CREATE SEQUENCE cs$i;"; done
		echo "SELECT count(shardid_next(i % 16, ('{$seqs}'::regclass[])[i % 16 + 1])) FROM generate_series(1, $n) i;"
		echo "SELECT count(nextval(('{$seqs}'::regclass[])[i % 16 + 1])) FROM generate_series(1, $n) i;"
	} >"$dir/script.sql"
	chmod 644 "$dir/script.sql"
	as_owner valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" \
		"$PG_BINDIR/postgres" --single -D "$dir/data" \
		-c shared_preload_libraries=shardid -c fsync=off -c shardid.fence_lead=60s postgres \
		<"$dir/script.sql" >"$dir/out.txt" 2>"$dir/valgrind.txt" ||
		{ tail "$dir/valgrind.txt" >&2; exit 1; }
	callgrind_annotate --inclusive=yes --auto=no "$dir/cg.out" 2>/dev/null |
		awk '
			/:shardid_next \[/ { gsub(",", "", $1); s = $1 }
			/:nextval_oid \[/ { gsub(",", "", $1); v = $1 }
			END {
				if (!s || !v) { print "bench/instructions.sh: no counts found" > "/dev/stderr"; exit 1 }
				print s, v
			}'
}

read -r s1 v1 < <(run "$ids")
read -r s3 v3 < <(run $((3 * ids)))
awk -v n="$ids" -v s1="$s1" -v v1="$v1" -v s3="$s3" -v v3="$v3" 'BEGIN {
	s = (s3 - s1) / (2 * n); v = (v3 - v1) / (2 * n)
	printf "instructions per ID: shardid_next %.0f, nextval %.0f, difference %.0f\n", s, v, s - v
	printf "on average over %d IDs, one-time costs included: shardid_next %.0f, nextval %.0f, difference %.0f\n", n, s1 / n, v1 / n, (s1 - v1) / n
}'
