#!/usr/bin/env bash
# test/matrix.sh: on every PostgreSQL major version shardid supports, what a
# new user runs on a fresh Debian machine: bash demo/run.sh, then the whole
# suite (bash test/run.sh: unit, fuzz, regress, isolation, TAP):
#
#   15  in a Debian 12 bookworm root
#   17  in a Debian 13 trixie root
#   18  in a Debian forky root
#
# Each version runs in a fresh overlay on a root that holds the base system
# only (mmdebstrap's default variant, cached: see test/roots.sh), so the
# two scripts install every package they need themselves, as they would on
# a new machine, and the host's packages cannot hide a missing install
# step.  Neither script is told PG_MAJOR: each finds the release's own
# version.  A copy of this source tree (git's files, no build products)
# goes into the root; /proc, /dev/pts and a tmpfs on /dev/shm are mounted
# for it and everything is unmounted afterwards, also on failure or
# interrupt.  The host's apt sources and its PostgreSQL are left as they
# are; the host gets mmdebstrap and rsync.
#
# Usage: bash test/matrix.sh [--versions "15 17 18"] [--cache DIR]
#                            [--rebuild] [--package]
#   --versions LIST  the major versions to run (default: "15 17 18")
#   --cache DIR      where the roots and the .deb cache are kept (default:
#                    $SHARDID_MATRIX_CACHE, else /var/tmp/shardid-matrix;
#                    about 300 MB per root, 1 GB of .debs)
#   --rebuild        make the roots anew
#   --package        afterwards build the Debian package for each version
#                    and test it in a clean root (bash test/package.sh)
#
# Run as root.  Prints each version's result and closes with
# "matrix: N passed, N failed", the sums of the versions' test counts (the
# demo counts as one test).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

versions="15 17 18"
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
# the host needs no PostgreSQL of its own: the versions run in the roots
PG_MAJOR=${PG_MAJOR:-none}
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
	where="$(root_suite "$v") root"
	echo "==== PostgreSQL $v in a $where: bash demo/run.sh, then bash test/run.sh"
	dir=$run/root-$v
	demo=failed
	if root_enter "$v" "$dir"; then
		copy_tree "$here" "$dir/root/src/shardid"
		if root_run "$dir" bash -c "cd /src/shardid && bash demo/run.sh" >"$run/demo-$v.log" 2>&1; then
			demo=ok
			sed -n '1,/^cluster started/p' "$run/demo-$v.log"
			echo "demo: ran to the end in $((SECONDS - started)) s"
		else
			cat "$run/demo-$v.log"
		fi
		root_run "$dir" bash -c "cd /src/shardid && bash test/run.sh" 2>&1 | tee "$log" || rc=$?
		# the version the scripts chose must be the one this root is for
		grep -qx "== packages (PostgreSQL $v)" "$log" ||
			{ echo "test/run.sh did not choose PostgreSQL $v" | tee -a "$log"; rc=1; }
	else
		echo "could not make or enter the root for PostgreSQL $v" | tee "$log"
		rc=1
	fi
	root_leave "$dir" || rc=1
	count "$log" "$rc"
	if [ $demo = ok ]; then
		total_passed=$((total_passed + 1))
	else
		total_failed=$((total_failed + 1))
	fi
	summary+=("PostgreSQL $v ($where): demo $demo; suite $RESULT; $((SECONDS - started)) s")
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
