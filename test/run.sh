#!/usr/bin/env bash
# test/run.sh: build shardid with -Wall -Wextra -Werror, install it into a
# private copy of the system's PostgreSQL (under /tmp, removed
# afterwards; the system's installation is not touched), and run every
# test suite against real servers:
#   unit      the pure codec and rule in C (test/unit)
#   fleet cli shardid-fleet's options against its --help and manual page
#   regress   pg_regress suites in test/sql and test/expected
#   isolation isolation specs in test/specs
#   clients   the JS and Python client libraries in clients/ (unit tests,
#             test vectors, npm pack, wheel and sdist)
#   tap       TAP tests in test/t (each starts the servers it needs)
# Exits non-zero if anything fails; prints regression.diffs when pg_regress
# or the isolation tester fails.  Stops every server it started.
#
# What it changes on the machine: as root, it installs the Debian packages
# it needs and says which (the server and its headers, the build tools,
# and the test tools: see the list below).  The third-party extensions the
# TAP tests use (PL/Proxy, pg_cron, and pg_partman on 15) are not
# installed: their .debs are unpacked into the private copy only, and
# node-postgres, from the npm registry, into the test directory only.
#
# PostgreSQL major version: PG_MAJOR (default: the newest server installed,
# else the Debian release's own: 15 on Debian 12, 17 on 13, 18 on forky;
# test/matrix.sh runs the suite on each supported version).  The regress
# server's port: SHARDID_PORT, else a free one.
#
# Usage: bash test/run.sh [--tap test/t/NAME.pl ...] [--skip-tap]
# (SHARDID_TAP_LOGS=DIR: keep a copy of every TAP test's log there)
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
# the tools shardid's docs set up beside it: postgres_exporter
# (test/t/110_postgres_exporter.pl); for the long tier's HA test
# (test/t/111_patroni.pl, PG_TEST_EXTRA=shardid_ha) Patroni and etcd
install_packages prometheus-postgres-exporter
if [[ " ${PG_TEST_EXTRA:-} " == *" shardid_ha "* ]]; then
	install_packages patroni etcd-server
fi
# ORM recipes (test/t/100_orm.pl, docs/orm.md): Django, SQLAlchemy with
# psycopg2, Node.js and npm (a nodejs that ships its own npm, as
# NodeSource's does, conflicts with Debian's npm package: keep that one)
install_packages python3-django python3-sqlalchemy python3-psycopg2 nodejs
command -v npm >/dev/null || install_packages npm

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
# The tests run with shardid's Assert()s compiled in (the invariants of
# src/guard.c), unless SHARDID_ASSERTS is set empty; the benchmarks and
# the packages build without them.
echo "== build and install into $work/pg (a private copy of PostgreSQL $PG_MAJOR)"
SHARDID_ASSERTS=${SHARDID_ASSERTS-1} private_install "$work/pg"
# Third-party extensions for the TAP tests, unpacked into the private copy.
# pg_partman: the 4.x series the recipes in docs/partitions.md are for is
# Debian's for PostgreSQL 15; test/t/065_partman.pl skips without it.
extras=(postgresql-$PG_MAJOR-plproxy)
[ "$PG_MAJOR" = 15 ] && extras+=(postgresql-15-partman)
# pg_cron for test/t/066_pg_cron.pl, which skips where Debian has none
if apt-cache policy "postgresql-$PG_MAJOR-cron" 2>/dev/null | grep '^ *Candidate: [0-9]' >/dev/null; then
	extras+=(postgresql-$PG_MAJOR-cron)
else
	echo "no postgresql-$PG_MAJOR-cron in apt: test/t/066_pg_cron.pl will skip"
fi
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

# The regress server has the spec's two test keys of public IDs
# (test/sql/public.sql): a PGC_SIGHUP setting, so in its configuration file.
public_id_test_keys="shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100'"
run_regress() {
	# a lead long enough that no isolation permutation writes a fence twice
	cluster_start "$work/data" "" "$public_id_test_keys" "shardid.fence_lead = 10s" || return 1
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

# ---- client libraries (clients/js, clients/python) --------------------
# Their unit tests and every vector of test/vectors/vectors.json (which
# the regress suite vectors checks against the extension), the npm package's
# file list, and the Python wheel and sdist, built offline from Debian's
# build packages.  Runs in the copy of the tree; installs what it needs:
# nodejs and npm unless their commands are already there (a NodeSource
# nodejs carries its own npm, which Debian's npm package would clash with).
run_clients() {
	local dir=$work/src-tree/clients out=$work/clients p=0 f=0 n rc wanted got wheel sdist tgz
	local pkgs=()
	command -v node >/dev/null || pkgs+=(nodejs)
	command -v npm >/dev/null || pkgs+=(npm)
	install_packages "${pkgs[@]}" python3-build python3-setuptools python3-wheel python3-venv || return 1
	mkdir -p "$out"
	echo "node $(node --version), npm $(npm --version), $(/usr/bin/python3 --version)"

	# JavaScript: node --test (TAP: "# pass N", "# fail N")
	rc=0
	(cd "$dir/js" && node --test --test-reporter=tap) >"$out/js.log" 2>&1 || rc=$?
	grep -E '^not ok|^# (pass|fail) ' "$out/js.log" || true
	[ $rc -ne 0 ] && grep -A15 '^not ok' "$out/js.log" | head -60
	n=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$out/js.log" | tail -n 1); p=$((p + ${n:-0}))
	n=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$out/js.log" | tail -n 1); f=$((f + ${n:-0}))
	[ $rc -ne 0 ] && [ "${n:-0}" -eq 0 ] && f=$((f + 1))

	# npm pack makes the package, which holds exactly these files.  Its
	# --json report is an array of packages up to npm 11, an object keyed
	# by package name from npm 12 (Debian forky's).
	wanted="README.md index.d.ts index.js package.json"
	got=$(cd "$dir/js" && npm_config_update_notifier=false npm pack --pack-destination "$out" --json 2>"$out/npm.log" |
		node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);const r=Array.isArray(j)?j[0]:Object.values(j)[0];console.log(r.files.map(x=>x.path).sort().join(" "))})') || got="npm pack failed: $(cat "$out/npm.log")"
	tgz=$(ls "$out"/shardid-*.tgz 2>/dev/null || true)
	if [ "$got" = "$wanted" ] && [ -n "$tgz" ] &&
		[ "$(tar tzf "$tgz" | sed 's,^package/,,' | sort | tr '\n' ' ')" = "$wanted " ]; then
		echo "ok - npm pack: $(basename "$tgz"): $got"; p=$((p + 1))
	else
		echo "not ok - npm pack: $got (wanted $wanted)"; f=$((f + 1))
	fi

	# Python: unittest ("Ran N tests", "FAILED (failures=A, errors=B)")
	rc=0
	/usr/bin/python3 -m unittest discover -s "$dir/python/tests" >"$out/py.log" 2>&1 || rc=$?
	tail -n 3 "$out/py.log"
	[ $rc -ne 0 ] && cat "$out/py.log"
	n=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$out/py.log")
	got=$(( $(sed -n 's/^FAILED (\(.*\))$/\1/p' "$out/py.log" | grep -oE '(failures|errors)=[0-9]+' |
		sed 's/.*=//' | paste -sd+ -)+0 ))
	n=$((${n:-0} - got)); p=$((p + (n > 0 ? n : 0))); f=$((f + got))
	[ $rc -ne 0 ] && [ "$got" -eq 0 ] && f=$((f + 1))

	# the wheel and the sdist build offline; the wheel imports and works
	rc=0
	(cd "$dir/python" && /usr/bin/python3 -m build --no-isolation --outdir "$out/dist" .) >"$out/build.log" 2>&1 || rc=$?
	wheel=$(ls "$out"/dist/shardid-*-py3-none-any.whl 2>/dev/null || true)
	sdist=$(ls "$out"/dist/shardid-*.tar.gz 2>/dev/null || true)
	# (from $out: the tree's top directory holds the extension's shardid.so)
	if [ $rc -eq 0 ] && [ -n "$wheel" ] && (cd "$out" && PYTHONPATH=$wheel /usr/bin/python3 -c '
import shardid, sys
assert shardid.__file__.startswith(sys.argv[1]), shardid.__file__
assert shardid.to_shortcode(4185136929178974185) == "DoUl90AFPfp"' "$wheel"); then
		echo "ok - python wheel: $(basename "$wheel")"; p=$((p + 1))
	else
		cat "$out/build.log"; echo "not ok - python wheel"; f=$((f + 1))
	fi
	got=$( [ -n "$sdist" ] && tar tzf "$sdist" | sed 's,^[^/]*/,,' | grep -E '^(README\.md|pyproject\.toml|shardid/.*\.py)$' | sort | tr '\n' ' ')
	if [ "$got" = "README.md pyproject.toml shardid/__init__.py shardid/_codec.py shardid/_errors.py shardid/_json.py shardid/_public.py " ]; then
		echo "ok - python sdist: $(basename "$sdist")"; p=$((p + 1))
	else
		echo "not ok - python sdist: $got"; f=$((f + 1))
	fi
	echo "clients: $p passed, $f failed"
	[ $f -eq 0 ]
}
rc=0
run_clients 2>&1 | tee "$log" || rc=$?
read -r p f < <(sed -n 's/^clients: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
count clients $rc "${p:-0}" "${f:-0}"
# ---- end of client libraries ------------------------------------------

# TAP: every test's "ok" or "not ok" is in its script's log; a "not ok"
# marked TODO is a known limit that prove passes, not a failure
run_tap() {
	local tests=${tap_tests:-test/t/*.pl}
	as_owner make -s -C "$work/src-tree" tapcheck \
		PG_CONFIG="$PG_CONFIG" PROVE_TESTS="$tests" PROVE_FLAGS="--timer"
}
# ---- ORM recipes: node-postgres for test/t/100_orm.pl --------------------
# pg from the npm registry, installed (as root, if root) into $work, which
# the cluster owner may read; SHARDID_NODE_MODULES tells the test where.
# If npm cannot install it, the test's node-postgres checks fail: they are
# never skipped.
orm_node_modules() {
	local dir=$work/orm-npm
	mkdir -p "$dir"
	if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
		pg@8 >"$work/orm-npm.log" 2>&1; then
		cat "$work/orm-npm.log" >&2
		echo "npm install pg failed (above): test/t/100_orm.pl will fail" >&2
	fi
	chmod -R a+rX "$dir"
	echo "node-postgres for test/t/100_orm.pl: pg" \
		"$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$dir/node_modules/pg/package.json" 2>/dev/null)" \
		"in $dir/node_modules"
	export SHARDID_NODE_MODULES=$dir/node_modules
}
if [ $skip_tap = 0 ] && { [ -z "$tap_tests" ] || [[ $tap_tests == *100_orm* ]]; }; then
	orm_node_modules
fi
# ---- end of ORM recipes ----------------------------------------------------

if [ $skip_tap = 0 ]; then
	rc=0
	run_tap || rc=$?
	tap_logs=("$work"/src-tree/tmp_check/log/regress_log_*)
	# SHARDID_TAP_LOGS=DIR keeps a copy of every TAP log (notes included)
	if [ -n "${SHARDID_TAP_LOGS:-}" ]; then
		mkdir -p "$SHARDID_TAP_LOGS" && cp "${tap_logs[@]}" "$SHARDID_TAP_LOGS"/ 2>/dev/null || true
	fi
	count tap $rc "$(cat "${tap_logs[@]}" 2>/dev/null | grep -Ec '^(\[[^]]*\]\([^)]*\) )?ok [0-9]+')" \
		"$(cat "${tap_logs[@]}" 2>/dev/null | grep -E '^(\[[^]]*\]\([^)]*\) )?not ok [0-9]+' |
			grep -vc ' # TODO ')"
fi

echo "shardid: $passed passed, $failed failed"
[ $failed -eq 0 ]
