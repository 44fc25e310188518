#!/usr/bin/env bash
# test/matrix.sh: the whole suite (bash test/run.sh: unit, fuzz, regress,
# isolation, TAP) on every PostgreSQL major version shardid supports:
#
#   15  on this host (Debian 12)
#   17  in a Debian 13 trixie root
#   18  in a Debian forky root
#
# The roots are made with mmdebstrap from the host's Debian mirror, with the
# packages the suites need, and cached between runs (see test/roots.sh):
# a run with the roots cached makes none.  Each version runs in a fresh
# overlay on its cached root, into which a copy of this source tree (git's
# files, no build products) goes; /proc, /dev/pts and a tmpfs on /dev/shm
# are mounted for it and everything is unmounted afterwards, also on
# failure or interrupt.  The host's apt sources and its PostgreSQL are left
# as they are.
#
# Usage: bash test/matrix.sh [--versions "15 17 18"] [--cache DIR]
#                            [--rebuild] [--package]
#   --versions LIST  the major versions to run (default: "15 17 18")
#   --cache DIR      where the roots are kept (default: $SHARDID_MATRIX_CACHE,
#                    else /var/tmp/shardid-matrix; about 1.6 GB per root)
#   --rebuild        make the roots anew
#   --package        afterwards build the Debian package for each version
#                    and test it in a clean root (bash test/package.sh)
#
# Run as root.  Prints each version's result and closes with
# "matrix: N passed, N failed", the sums of the versions' test counts.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

versions="15 17 18"
host_version=15
package=0
while [ $# -gt 0 ]; do
	case $1 in
		--versions) versions=$2; shift 2 ;;
		--cache) SHARDID_MATRIX_CACHE=$2; shift 2 ;;
		--rebuild) ROOTS_REBUILD=1; shift ;;
		--package) package=1; shift ;;
		*) sed -n '/^# Usage/,/^# *--package/p' "$0" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "test/matrix.sh: run as root (it makes roots and mounts)" >&2; exit 2; }
. test/roots.sh
. test/cluster.sh
export ROOTS_REBUILD=${ROOTS_REBUILD:-0}
install_packages mmdebstrap rsync

root_run_dir

total_passed=0
total_failed=0
summary=()

# count LOG RC: add the "shardid: N passed, N failed" line of LOG to the
# sums and set RESULT (a run that ended without one counts as one failure)
count() {
	local log=$1 rc=$2 line p f
	line=$(grep -E '^shardid: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
	p=$(echo "$line" | sed -nE 's/^shardid: ([0-9]+) passed.*/\1/p')
	f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	p=${p:-0} f=${f:-1}
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
	RESULT="$p passed, $f failed"
}

for v in $versions; do
	started=$SECONDS
	log=$run/pg$v.log
	rc=0
	if [ "$v" = "$host_version" ]; then
		echo "==== PostgreSQL $v on this host"
		PG_MAJOR=$v bash test/run.sh 2>&1 | tee "$log" || rc=$?
		where=host
	else
		where="$(root_suite "$v") root"
		echo "==== PostgreSQL $v in a $where"
		dir=$run/root-$v
		if root_enter "$v" "$dir"; then
			copy_tree "$here" "$dir/root/src/shardid"
			root_run "$dir" bash -c "cd /src/shardid && PG_MAJOR=$v bash test/run.sh" 2>&1 |
				tee "$log" || rc=$?
		else
			echo "could not make or enter the root for PostgreSQL $v" | tee "$log"
			rc=1
		fi
		root_leave "$dir" || rc=1
	fi
	count "$log" "$rc"
	summary+=("PostgreSQL $v ($where): $RESULT, $((SECONDS - started)) s")
done

if [ $package = 1 ]; then
	started=$SECONDS
	rc=0
	SHARDID_MATRIX_CACHE=$MATRIX_CACHE bash test/package.sh --versions "$versions" 2>&1 |
		tee "$run/package.log" || rc=$?
	line=$(grep -E '^package: [0-9]+ passed, [0-9]+ failed' "$run/package.log" | tail -n 1 || true)
	p=$(echo "$line" | sed -nE 's/^package: ([0-9]+) passed.*/\1/p')
	f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	p=${p:-0} f=${f:-1}
	[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
	summary+=("Debian package ($versions): $p passed, $f failed, $((SECONDS - started)) s")
fi

echo "==== matrix"
printf '%s\n' "${summary[@]}"
echo "matrix: $total_passed passed, $total_failed failed"
[ $total_failed -eq 0 ]
