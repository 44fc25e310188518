#!/usr/bin/env bash
# test/run.sh: build shardid with -Wall -Wextra -Werror, install it into a
# private copy of the system's PostgreSQL (under /tmp, removed
# afterwards; the system's installation is not touched), and run every
# test suite against real servers:
#   unit      the pure codec and rule in C (test/unit)
#   fleet cli shardid-fleet's options against its --help and manual page
#   regress   pg_regress suites in sql/ and expected/
#   isolation isolation specs in specs/
#   tap       TAP tests in test/t (each starts the servers it needs)
# Exits non-zero if anything fails; prints regression.diffs when pg_regress
# or the isolation tester fails.  Stops every server it started.
#
# What it changes on the machine: as root, it installs the Debian packages
# it needs and says which (the server and its headers, the build tools,
# and the test tools: see the list below).  The third-party extensions the
# TAP tests use (PL/Proxy, and pg_partman on 15) are not installed: their
# .debs are unpacked into the private copy only.
#
# PostgreSQL major version: PG_MAJOR (default: the newest server installed,
# else the Debian release's own: 15 on Debian 12, 17 on 13, 18 on forky;
# test/matrix.sh runs the suite on each supported version).  The regress
# server's port: SHARDID_PORT, else a free one.
#
# Usage: bash test/run.sh [--tap test/t/NAME.pl ...] [--skip-tap]
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
. test/cluster.sh

tap_tests=""
skip_tap=0
while [ $# -gt 0 ]; do
	case $1 in
		--tap) tap_tests="$tap_tests $2"; shift 2 ;;
		--skip-tap) skip_tap=1; shift ;;
		*) echo "usage: bash test/run.sh [--tap test/t/NAME.pl ...] [--skip-tap]" >&2; exit 2 ;;
	esac
done

echo "== packages (PostgreSQL $PG_MAJOR)"
install_packages make gcc rsync postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR \
	libipc-run-perl faketime python3-psycopg clang libclang-rt-dev groff-base

# Each suite adds how many of its tests passed and failed; a suite that
# fails without saying which test failed counts as one failed test.
passed=0
failed=0
count() {	# NAME RC PASSED FAILED
	local name=$1 rc=$2 p=${3:-0} f=${4:-0}
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	echo "== $name: $p passed, $f failed"
	passed=$((passed + p))
	failed=$((failed + f))
}

work=$(mktemp -d /tmp/shardid-test.XXXXXX)
chmod 755 "$work"
cleanup() {
	cluster_stop "$work/data"
	if [ "$failed" -eq 0 ]; then
		rm -rf "$work"
	else
		echo "test files kept in $work"
	fi
}
trap cleanup EXIT

# A private copy of PostgreSQL to install into: the system's stays as it is.
echo "== build and install into $work/pg (a private copy of PostgreSQL $PG_MAJOR)"
private_install "$work/pg"
# Third-party extensions for the TAP tests, unpacked into the private copy.
# pg_partman: the 4.x series the recipes in docs/partitions.md are for is
# Debian's for PostgreSQL 15; test/t/065_partman.pl skips without it.
extras=(postgresql-$PG_MAJOR-plproxy)
[ "$PG_MAJOR" = 15 ] && extras+=(postgresql-15-partman)
private_add_debs "$work/pg" "${extras[@]}"

# Tests run in a copy of the tree that the cluster owner may write to.
rsync -a --exclude .git "$here"/ "$work"/src-tree/
[ "$(id -u)" = 0 ] && chown -R postgres: "$work/src-tree"

log=$work/suite.log

rc=0
make -s -C test/unit check 2>&1 | tee "$log" || rc=$?
read -r p f < <(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
count unit $rc "${p:-0}" "${f:-0}"

rc=0
make -s -C test/unit fuzz FUZZ_SECONDS=20 || rc=$?
count fuzz $rc $((rc == 0)) $((rc != 0))

# shardid-fleet's command line against its --help and its manual page
rc=0
/usr/bin/python3 test/fleet_cli.py 2>&1 | tee "$log" || rc=$?
read -r p f < <(sed -n 's/^fleet-cli: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
count "fleet cli" $rc "${p:-0}" "${f:-0}"

run_regress() {
	cluster_start "$work/data" || return 1
	local rc=0
	as_owner env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER=postgres \
		make -s -C "$work/src-tree" installcheck PG_CONFIG="$PG_CONFIG" TAP_TESTS= || rc=$?
	cluster_stop "$work/data"
	if [ $rc -ne 0 ]; then
		for f in "$work/src-tree/regression.diffs" "$work/src-tree/output_iso/regression.diffs"; do
			[ -s "$f" ] && { echo "---- $f"; cat "$f"; }
		done
	fi
	return $rc
}
rc=0
run_regress 2>&1 | tee "$log" || rc=$?
# pg_regress prints "test NAME ... ok" up to PostgreSQL 15, TAP's "ok N - NAME" since 16
count "regress and isolation" $rc \
	"$(grep -Ec '^(test .* \.\.\. ok|ok [0-9]+ )' "$log")" \
	"$(grep -Ec '^(test .* \.\.\. (FAILED|failed)|not ok [0-9]+ )' "$log")"

# TAP: every test's "ok" or "not ok" is in its script's log; a "not ok"
# marked TODO is a known limit that prove passes, not a failure
run_tap() {
	local tests=${tap_tests:-test/t/*.pl}
	as_owner make -s -C "$work/src-tree" tapcheck \
		PG_CONFIG="$PG_CONFIG" PROVE_TESTS="$tests" PROVE_FLAGS="--timer"
}
if [ $skip_tap = 0 ]; then
	rc=0
	run_tap || rc=$?
	tap_logs=("$work"/src-tree/tmp_check/log/regress_log_*)
	count tap $rc "$(cat "${tap_logs[@]}" 2>/dev/null | grep -Ec '^(\[[^]]*\]\([^)]*\) )?ok [0-9]+')" \
		"$(cat "${tap_logs[@]}" 2>/dev/null | grep -E '^(\[[^]]*\]\([^)]*\) )?not ok [0-9]+' |
			grep -vc ' # TODO ')"
fi

echo "shardid: $passed passed, $failed failed"
[ $failed -eq 0 ]
