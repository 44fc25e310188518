#!/usr/bin/env bash
# bench/instructions.sh: instructions per ID of shardid_next and of nextval,
# counted by callgrind in a single-user backend.  Unlike time, the counts
# are the same on every run of the same build, however busy the machine:
# a fair before-and-after for a change to the hot path.  (They leave out
# what the kernel and the vDSO clock read cost.)
#
# Builds TREE (default: this tree) into a private copy of PostgreSQL, makes
# IDS IDs over 16 sequences with each function, and prints the inclusive
# instruction count per call of each and their difference.  Needs valgrind.
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
mkdir "$tmp/data"
[ "$(id -u)" = 0 ] && chown postgres: "$tmp" "$tmp/data"
as_owner "$PG_BINDIR/initdb" -D "$tmp/data" -A trust --no-sync >/dev/null

seqs=$(seq -s, -f 'cs%g' 0 15)
{
	echo "CREATE EXTENSION shardid;"
	for i in $(seq 0 15); do echo "CREATE SEQUENCE cs$i;"; done
	echo "SELECT count(shardid_next(i % 16, ('{$seqs}'::regclass[])[i % 16 + 1])) FROM generate_series(1, $ids) i;"
	echo "SELECT count(nextval(('{$seqs}'::regclass[])[i % 16 + 1])) FROM generate_series(1, $ids) i;"
} >"$tmp/script.sql"
chmod 644 "$tmp/script.sql"

as_owner valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
	"$PG_BINDIR/postgres" --single -D "$tmp/data" \
	-c shared_preload_libraries=shardid -c fsync=off postgres \
	<"$tmp/script.sql" >"$tmp/out.txt" 2>"$tmp/valgrind.txt" ||
	{ tail "$tmp/valgrind.txt" >&2; exit 1; }

callgrind_annotate --inclusive=yes --auto=no "$tmp/cg.out" 2>/dev/null |
	awk -v n="$ids" '
		/:shardid_next \[/ { gsub(",", "", $1); s = $1 / n }
		/:nextval_oid \[/ { gsub(",", "", $1); v = $1 / n }
		END {
			if (!s || !v) { print "bench/instructions.sh: no counts found" > "/dev/stderr"; exit 1 }
			printf "instructions per ID: shardid_next %.0f, nextval %.0f, difference %.0f\n", s, v, s - v
		}'
