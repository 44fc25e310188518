#!/usr/bin/env bash
# test/run.sh: build shardid with -Wall -Wextra -Werror, install it into a
# private copy of the system's PostgreSQL (under /tmp, removed
# afterwards; the system's installation is not touched), and run every
# test suite against real servers:
#   unit      the pure codec and rule in C (test/unit)
#   model     the fence protocol's Promela model, its mutations and
#             exposures, checked by SPIN (test/model/run.sh)
#   fuzz      libFuzzer on the codec and the public IDs' cipher (2 x 20 s)
#   fleet cli shardid-fleet's options against its --help and manual page
#   fleet unit shardid-fleet's decisions, without a server (test/fleet_unit, pytest)
#   regress   pg_regress suites in test/sql and test/expected
#   isolation isolation specs in test/specs
#   clients   the JS and Python client libraries in clients/ (unit tests,
#             test vectors, npm pack, wheel and sdist)
#   tap       TAP tests in test/t (each starts the servers it needs)
# Each suite prints its count and its seconds; the run closes with the
# seconds of every suite and then "shardid: N passed, N failed".
# Exits non-zero if anything fails; prints regression.diffs when pg_regress
# or the isolation tester fails.  Stops every server it started.
#
# Tiers:
#   --quick   unit, model, fleet cli, fleet unit, regress and isolation, and
#             clients, on one
#             server: no fuzzing, no TAP (minutes; what every change runs)
#   (default) every suite, with the TAP tests' default loads
#   PG_TEST_EXTRA=shardid_load  (PostgreSQL's switch, a list of words) the
#             TAP tests run their long loads too (tens of minutes more);
#             shardid_model: the model's long tier too (bitstate, larger
#             bounds); shardid_ha: the Patroni test; shardid_node: npm
#             and node-postgres (installed by shardid_load too);
#             shardid_citus: Citus's schema-based sharding
#             (test/t/120_citus.pl), with Citus built once from
#             ../shared/vendor into /var/tmp/shardid-citus (test/citus.sh);
#             shardid_faults: the crash sweep (test/t/082_crash_points.pl),
#             for which shardid is built with its fault points
#             (make FAULTS=1, SHARDID_FAULTS=1: compiled in for every test
#             of the run, armed by none but that one)
#
# The TAP tests run in parallel, --jobs N at once (default 3, or
# SHARDID_TAP_JOBS: 3 measured faster than 2 on 2 cores, the tests mostly
# wait), slowest first as the last run measured them (prove
# --state=slow,save; the timings are kept in ~/.cache/shardid, or
# SHARDID_TEST_STATE); a test whose header has the line
# "# schedule: serial" measures waits or latencies and runs afterwards,
# alone.  Their clusters are copied from one initdb'd template
# (INITDB_TEMPLATE) instead of each running initdb (PostgreSQL 17's
# PostgreSQL::Test::Cluster does it; on 15 and 16, test/perl/ShardidTest.pm).
#
# What it changes on the machine: as root, it installs the Debian packages
# it needs and says which (the server and its headers, the build tools,
# and the test tools: see the lists below).  The third-party extensions the
# TAP tests use (PL/Proxy, pg_cron, and pg_partman on 15) are not
# installed: their .debs are unpacked into the private copy only, and
# node-postgres, from the npm registry, into the test directory only.
#
# PostgreSQL major version: PG_MAJOR (default: the newest server installed,
# else the Debian release's own: 15 on Debian 12, 17 on 13, 18 on forky;
# test/matrix.sh runs the suite on each supported version).  The regress
# server's port: SHARDID_PORT, else a free one.
#
# Usage: bash test/run.sh [--quick] [--tap test/t/NAME.pl ...] [--skip-tap]
#                         [--skip-common] [--skip-common-suites]
#                         [--tap-groups "G ..."] [--core-tap] [--tools-tap]
#                         [--skip-serial] [--jobs N]
#        bash test/run.sh --only NAME
#   --only NAME    one test, whatever its kind: a suite (unit, fuzz, model,
#                  fleet_cli, fleet_unit, clients), a regress file
#                  (owner_reads), an
#                  isolation spec, a TAP test (010_stress, or 010), a file
#                  of a client's tests; the private copy of PostgreSQL is
#                  kept and rebuilt only as far as the sources changed, so
#                  after the first run its set-up takes seconds
#                  (test/only.sh)
#   --tap FILE     run this TAP test (repeatable) instead of all of them
#   --skip-tap     no TAP tests
#   --skip-common  skip the suites that do not depend on the server's
#                  version (unit, model, fuzz, fleet cli, fleet unit,
#                  clients), and the
#                  TAP tests whose header has the line "# versions: first"
#                  (they test a tool's or a client's own logic, which is
#                  the same Python or JavaScript on every server; the
#                  server-facing steps they use are in the other tests):
#                  test/matrix.sh runs them on its first version only
#   --tap-groups "G ..."  of the TAP tests, only those of these groups:
#                  core (tap_core: the C code's own, the issue path, the
#                  fences, the hooks, the upgrade), fleet (tap_fleet: the
#                  fleet tool against its servers), integrations (the
#                  others: SQL functions, partitions, pg_cron, monitoring,
#                  the clients' recipes); default all three (.ci/run: 15
#                  core and integrations, 18 fleet, 19 core, 17 none)
#   --core-tap     --tap-groups core
#   --tools-tap    --tap-groups "fleet integrations"
#   --skip-serial  not the TAP tests marked "# schedule: serial" (they
#                  time waits and run alone on the machine: .ci/run runs
#                  them on 15 and 19 only)
#   --skip-common-suites  only the suites of --skip-common; the TAP tests
#                  marked "# versions: first" run (test/matrix.sh: its
#                  first version, whose suites run beside it)
#   --jobs N       TAP tests at once
# (SHARDID_TAP_LOGS=DIR: keep a copy of every TAP test's log there)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
. test/cluster.sh
. test/citus.sh
. test/only.sh

usage() {
	sed -n '/^# Usage/,/^# (SHARDID_TAP_LOGS/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}
tap_tests=""
only=""
skip_tap=0
quick=0
skip_common=0
first_only_tap=1
tap_groups="core fleet integrations"
skip_serial=0
jobs=${SHARDID_TAP_JOBS:-3}
while [ $# -gt 0 ]; do
	case $1 in
		--tap) [ $# -ge 2 ] || usage; tap_tests="$tap_tests $2"; shift 2 ;;
		--skip-tap) skip_tap=1; shift ;;
		--quick) quick=1; skip_tap=1; shift ;;
		--skip-common) skip_common=1; first_only_tap=0; shift ;;
		--skip-common-suites) skip_common=1; shift ;;
		--tap-groups) [ $# -ge 2 ] || usage; tap_groups=$2; shift 2 ;;
		--core-tap) tap_groups=core; shift ;;
		--tools-tap) tap_groups="fleet integrations"; shift ;;
		--skip-serial) skip_serial=1; shift ;;
		--jobs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; jobs=$2; shift 2 ;;
		--only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
		*) usage ;;
	esac
done
[ $quick = 1 ] && [ -n "$tap_tests" ] && { echo "test/run.sh: --quick runs no TAP test; --tap asks for one" >&2; exit 2; }
for g in $tap_groups; do
	case $g in core|fleet|integrations) ;; *) echo "test/run.sh: --tap-groups: $g is not core, fleet or integrations" >&2; exit 2 ;; esac
done
[ -n "$tap_groups" ] || { echo "test/run.sh: --tap-groups names no group: use --skip-tap" >&2; exit 2; }
[ $quick = 1 ] && [ $skip_common = 1 ] && { echo "test/run.sh: --quick and --skip-common leave only regress and isolation: use neither, or --skip-tap --skip-common" >&2; exit 2; }

if [ $quick = 1 ]; then
	tier="quick: unit, model, fleet cli, fleet unit, regress and isolation, clients"
else
	tier="default"
	[ -n "${PG_TEST_EXTRA:-}" ] && tier="$tier, and PG_TEST_EXTRA=\"$PG_TEST_EXTRA\""
	[ $skip_common = 1 ] && tier="$tier; skipping the suites that do not depend on the server (unit, model, fuzz, fleet cli, fleet unit, clients)"
	[ $skip_tap = 1 ] && tier="$tier; no TAP"
fi
# the crash sweep's fault points (src/fault.h): in this run's build only
if [[ " ${PG_TEST_EXTRA:-} " == *" shardid_faults "* ]]; then
	export SHARDID_FAULTS=${SHARDID_FAULTS-1}
fi
[ -z "$only" ] || only_setup
echo "== tier: $tier"

# SHARDID_TEST_LOCK (test/matrix.sh sets it, for the versions it runs at
# once): a lock file that every run on the machine holds shared, but for
# its serial TAP phase, which waits to hold it alone (test_lock) and then
# lets go of it: once one serial phase has held it alone, every other
# part is done but other versions' serial phases, which run beside it
# (two at most in CI, each one test at a time, mostly waiting).
if [ -n "${SHARDID_TEST_LOCK:-}" ]; then
	exec 8>>"$SHARDID_TEST_LOCK"
	flock -s 8
fi
test_lock() {	# shared | exclusive | none
	[ -n "${SHARDID_TEST_LOCK:-}" ] || return 0
	case $1 in
		shared) flock -s 8 ;;
		exclusive) flock -x 8 ;;
		none) flock -u 8 ;;
	esac
}

# Each suite's seconds, printed with its count and again at the end.
times=()
suite_started=$SECONDS
suite_start() { suite_started=$SECONDS; }
suite_time() {	# NAME: record the seconds since suite_start
	times+=("$1 $((SECONDS - suite_started)) s")
}

# The Debian packages each part needs, installed when missing.  A TAP
# test's own tools go into tap_packages.
packages=(make gcc rsync postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR)
# the fleet tool, its manual page and its unit tests (fleet cli, fleet
# unit); the fuzzers (libFuzzer)
common_packages=(python3-psycopg groff-base python3-pytest)
fuzz_packages=(clang libclang-rt-dev)
tap_packages=(libipc-run-perl faketime python3-psycopg)
# the tools' and integrations' TAP tests' own (not with --core-tap: the
# C code's tests need none of them)
tools_tap_packages=(
	# ORM recipes (test/t/100_orm.pl, docs/orm.md): Django, SQLAlchemy with
	# psycopg2, Node.js for the JS client's server-side recipe (npm, for
	# node-postgres: below)
	python3-django python3-sqlalchemy python3-psycopg2 nodejs
	# the tools shardid's docs set up beside it: postgres_exporter
	# (test/t/110_postgres_exporter.pl)
	prometheus-postgres-exporter)

suite_start
echo "== packages (PostgreSQL $PG_MAJOR)"
[ $skip_common = 0 ] && packages+=("${common_packages[@]}")
[ $skip_common = 0 ] && [ $quick = 0 ] && packages+=("${fuzz_packages[@]}")
[ $skip_tap = 0 ] && packages+=("${tap_packages[@]}")
[ $skip_tap = 0 ] && [ "$tap_groups" != core ] && packages+=("${tools_tap_packages[@]}")
# for the long tier's HA test (test/t/111_patroni.pl, PG_TEST_EXTRA=shardid_ha)
if [ $skip_tap = 0 ] && [[ " ${PG_TEST_EXTRA:-} " == *" shardid_ha "* ]]; then
	packages+=(patroni etcd-server)
fi
# npm: Debian's npm package brings about 500 packages with it, for the
# npm client round trip (npm pack, npm install of the .tgz: the clients
# suite).  Only PG_TEST_EXTRA=shardid_node (or the long tier,
# shardid_load) installs it; the other tiers use an npm that is already
# there, and skip that check where there is none.  node-postgres
# (test/t/100_orm.pl) needs no npm: test/orm/fetch_node_pg.py fetches it
# from the npm registry, checked against test/orm/node-pg.lock.  (A nodejs that ships its own npm, as NodeSource's does,
# conflicts with Debian's npm package: keep that one.)
want_npm=0
[[ " ${PG_TEST_EXTRA:-} " == *" shardid_load "* ]] && want_npm=1
[[ " ${PG_TEST_EXTRA:-} " == *" shardid_node "* ]] && want_npm=1
if [ $want_npm = 1 ] && [ $skip_common = 0 ]; then
	command -v npm >/dev/null || packages+=(npm)
fi
install_packages "${packages[@]}"
command -v npm >/dev/null ||
	echo "no npm, which only PG_TEST_EXTRA=shardid_node or shardid_load installs: the npm pack round trip is skipped"
suite_time packages

# Each suite adds how many of its tests passed and failed; a suite that
# fails without saying which test failed counts as one failed test.
passed=0
failed=0
count() {	# NAME RC PASSED FAILED: also the suite's seconds
	local name=$1 rc=$2 p=${3:-0} f=${4:-0}
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	echo "== $name: $p passed, $f failed ($((SECONDS - suite_started)) s)"
	suite_time "$name"
	passed=$((passed + p))
	failed=$((failed + f))
}

if [ -n "$only" ]; then
	only_workdir
else
	work=$(mktemp -d /tmp/shardid-test.XXXXXX)
	chmod 755 "$work"
fi
cleanup() {
	cluster_stop "$work/data"
	if [ -n "$only" ]; then
		echo "test files in $work (kept for the next --only)"
	elif [ "$failed" -eq 0 ]; then
		rm -rf "$work"
	else
		echo "test files kept in $work"
	fi
}
trap cleanup EXIT

# Third-party extensions for the TAP tests, unpacked into the private copy.
# pg_partman: the 4.x series the recipes in docs/partitions.md are for is
# Debian's for PostgreSQL 15; test/t/065_partman.pl skips without it.
# PL/Proxy for the fleet tests (test/t/05[0-3]_*.pl) and pg_cron for
# test/t/066_pg_cron.pl, which skip where Debian has none (PostgreSQL 19's
# release candidate has neither yet).
tap_extras() {	# DIR: the private copy
	local p extras=()
	[ "$PG_MAJOR" = 15 ] && extras+=(postgresql-15-partman)
	for p in "postgresql-$PG_MAJOR-plproxy:the fleet tests" "postgresql-$PG_MAJOR-cron:test/t/066_pg_cron.pl"; do
		if apt-cache policy "${p%%:*}" 2>/dev/null | grep '^ *Candidate: [0-9]' >/dev/null; then
			extras+=("${p%%:*}")
		else
			echo "no ${p%%:*} in apt: ${p#*:} will skip"
		fi
	done
	[ ${#extras[@]} -eq 0 ] || private_add_debs "$1" "${extras[@]}"
	# Citus for test/t/120_citus.pl, built from ../shared/vendor (Debian
	# has none): only in its tier, PG_TEST_EXTRA=shardid_citus
	if [[ " ${PG_TEST_EXTRA:-} " == *" shardid_citus "* ]]; then
		citus_add "$1" || echo "Citus could not be built: test/t/120_citus.pl will skip"
	fi
}

# A private copy of PostgreSQL to install into: the system's stays as it is.
suite_start
if [ -n "$only" ]; then
	only_build
else
	# The tests run with shardid's Assert()s compiled in (the invariants of
	# src/guard.c), unless SHARDID_ASSERTS is set empty; the benchmarks and
	# the packages build without them.
	echo "== build and install into $work/pg (a private copy of PostgreSQL $PG_MAJOR)"
	SHARDID_ASSERTS=${SHARDID_ASSERTS-1} private_install "$work/pg"
	[ $skip_tap = 1 ] || [ "$tap_groups" = core ] || tap_extras "$work/pg"

	# Tests run in a copy of the tree that the cluster owner may write to.
	rsync -a --exclude .git "$here"/ "$work"/src-tree/
	[ "$(id -u)" = 0 ] && chown -R postgres: "$work/src-tree"
fi
suite_time build

log=$work/suite.log

if [ $skip_common = 0 ]; then
	suite_start
	rc=0
	make -s -C test/unit check 2>&1 | tee "$log" || rc=$?
	read -r p f < <(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
	count unit $rc "${p:-0}" "${f:-0}"

	# the fence protocol's model, checked by SPIN (test/model): the model
	# (all its scenarios) counts one test, each mutation and each exposure
	# one more
	suite_start
	rc=0
	bash test/model/run.sh 2>&1 | tee "$log" || rc=$?
	m=1
	grep -q '^model: errors 0$' "$log" && m=0
	read -r mk mn < <(sed -n 's/^mutations: \([0-9]*\) of \([0-9]*\) caught$/\1 \2/p' "$log") || true
	read -r ek en < <(sed -n 's/^exposures: \([0-9]*\) of \([0-9]*\) found$/\1 \2/p' "$log") || true
	count model $rc $((1 - m + ${mk:-0} + ${ek:-0})) $((m + ${mn:-0} - ${mk:-0} + ${en:-0} - ${ek:-0}))

	if [ $quick = 0 ]; then
		suite_start
		rc=0
		# the two fuzzers at once, one a core
		make -s -C test/unit -j2 fuzz FUZZ_SECONDS=20 || rc=$?
		count fuzz $rc $((rc == 0)) $((rc != 0))
	fi

	# shardid-fleet's command line against its --help and its manual page
	suite_start
	rc=0
	/usr/bin/python3 test/fleet_cli.py 2>&1 | tee "$log" || rc=$?
	read -r p f < <(sed -n 's/^fleet-cli: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
	count "fleet cli" $rc "${p:-0}" "${f:-0}"

	# shardid-fleet's decisions, without a server (test/fleet_unit, pytest)
	suite_start
	rc=0
	PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest test/fleet_unit 2>&1 | tee "$log" || rc=$?
	read -r p f < <(sed -n 's/^fleet-unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
	count "fleet unit" $rc "${p:-0}" "${f:-0}"
fi

# The regress server has the spec's two test keys of public IDs
# (test/sql/public.sql): a PGC_SIGHUP setting, so in its configuration file.
public_id_test_keys="shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100'"
run_regress() {	# [MAKE_VARIABLE=VALUE...]: REGRESS=, ISOLATION= for fewer
	# a lead long enough that no isolation permutation writes a fence twice
	cluster_start "$work/data" "" "$public_id_test_keys" "shardid.fence_lead = 10s" || return 1
	local rc=0
	as_owner env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER=postgres \
		make -s -C "$work/src-tree" installcheck PG_CONFIG="$PG_CONFIG" TAP_TESTS= "$@" || rc=$?
	cluster_stop "$work/data"
	if [ $rc -ne 0 ]; then
		for f in "$work/src-tree/regression.diffs" "$work/src-tree/output_iso/regression.diffs"; do
			[ -s "$f" ] && { echo "---- $f"; cat "$f"; }
		done
	fi
	return $rc
}
if [ -z "$only" ]; then
	suite_start
	rc=0
	run_regress 2>&1 | tee "$log" || rc=$?
	# pg_regress prints "test NAME ... ok" up to PostgreSQL 15, TAP's "ok N - NAME" since 16
	count "regress and isolation" $rc \
		"$(grep -Ec '^(test .* \.\.\. ok|ok [0-9]+ )' "$log")" \
		"$(grep -Ec '^(test .* \.\.\. (FAILED|failed)|not ok [0-9]+ )' "$log")"
fi

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
	install_packages "${pkgs[@]}" python3-build python3-setuptools python3-wheel python3-venv || return 1
	mkdir -p "$out"
	echo "node $(node --version), npm $(npm --version 2>/dev/null || echo none), $(/usr/bin/python3 --version)"

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
	if ! command -v npm >/dev/null; then
		echo "skip - npm pack: no npm (PG_TEST_EXTRA=shardid_node or shardid_load installs it)"
	else
	got=$(cd "$dir/js" && npm_config_update_notifier=false npm pack --pack-destination "$out" --json 2>"$out/npm.log" |
		node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);const r=Array.isArray(j)?j[0]:Object.values(j)[0];console.log(r.files.map(x=>x.path).sort().join(" "))})') || got="npm pack failed: $(cat "$out/npm.log")"
	tgz=$(ls "$out"/shardid-*.tgz 2>/dev/null || true)
	if [ "$got" = "$wanted" ] && [ -n "$tgz" ] &&
		[ "$(tar tzf "$tgz" | sed 's,^package/,,' | sort | tr '\n' ' ')" = "$wanted " ]; then
		echo "ok - npm pack: $(basename "$tgz"): $got"; p=$((p + 1))
	else
		echo "not ok - npm pack: $got (wanted $wanted)"; f=$((f + 1))
	fi
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
if [ $skip_common = 0 ]; then
	suite_start
	rc=0
	run_clients 2>&1 | tee "$log" || rc=$?
	read -r p f < <(sed -n 's/^clients: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
	count clients $rc "${p:-0}" "${f:-0}"
fi
# ---- end of client libraries ------------------------------------------

# ---- TAP tests -------------------------------------------------------------
# Before prove has timings of its own (kept in $tap_state_dir), the tests
# start in this order, the slowest first as measured on a 2-core machine;
# a test not named here starts after these.
tap_slow_first="074 066 070 050 072 051 090 052 062 067 100 075 010 053 060 080 020 030 061 071 073"
# The TAP tests of the C code itself (the issue path, the clock, the
# fences, crashes and standbys, the owner's reads and the DROP hook, the
# upgrade, statistics, public IDs), which --core-tap runs: the rest test
# SQL, tools and integrations whose server-facing side does not change
# between the versions the matrix runs them on.
tap_core="010 020 030 040 063 064 070 071 072 073 074 075 076 077 078 079 080 081 082 083 084 085 086 095"
# The fleet tool's tests against its servers (--tap-groups fleet); every
# other TAP test is of the integrations group.
tap_fleet="050 051 052 053 054"
# tap_group TEST: the group of a TAP test file
tap_group() {
	local n
	n=$(basename "$1" | cut -c1-3)
	if [[ " $tap_core " == *" $n "* ]]; then
		echo core
	elif [[ " $tap_fleet " == *" $n "* ]]; then
		echo fleet
	else
		echo integrations
	fi
}
tap_state_dir=${SHARDID_TEST_STATE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/shardid}

# tap_order TEST...: the tests, those that tap_slow_first names first
tap_order() {
	local n t
	for n in $tap_slow_first; do
		for t in "$@"; do
			[[ $(basename "$t") == "${n}"_* ]] && echo "$t"
		done
	done
	for t in "$@"; do
		for n in $tap_slow_first; do
			[[ $(basename "$t") == "${n}"_* ]] && continue 2
		done
		echo "$t"
	done
}

# tap_phase NAME JOBS TEST...: prove the tests, JOBS at once; with no
# --tap, slowest first by the timings of the last run of the same tests on
# this version (prove --state=slow,save).  The logs go to $work/tap-NAME.
tap_phase() {
	local name=$1 jobs=$2 state="" flags started=$SECONDS rc=0
	shift 2
	flags="--timer -j $jobs${SHARDID_PROVE_VERBOSE:+ -v}"
	if [ -z "$tap_tests" ]; then
		state=prove-$PG_MAJOR-$name-$(printf '%s\n' "$@" | sort | md5sum | cut -c1-12)
		rm -f "$work/src-tree/.prove-$name"
		if cp "$tap_state_dir/$state" "$work/src-tree/.prove-$name" 2>/dev/null; then
			[ "$(id -u)" = 0 ] && chown postgres: "$work/src-tree/.prove-$name"
			echo "== tap, $name: $# tests, $jobs at once, slowest first by the timings in $tap_state_dir/$state"
		else
			echo "== tap, $name: $# tests, $jobs at once, in the order of test/run.sh's tap_slow_first (no timings yet)"
		fi
		flags="$flags --state=slow,save --statefile=$work/src-tree/.prove-$name"
	else
		echo "== tap, $name: $# tests, $jobs at once"
	fi
	as_owner make -s -C "$work/src-tree" tapcheck \
		PG_CONFIG="$PG_CONFIG" PROVE_TESTS="$*" PROVE_FLAGS="$flags" 2>&1 |
		sed -u '/^No saved state, selection will be empty$/d' || rc=$?
	# the next phase's make starts with an empty tmp_check
	[ -d "$work/src-tree/tmp_check" ] && mv "$work/src-tree/tmp_check" "$work/tap-$name"
	if [ -n "$state" ] && [ -s "$work/src-tree/.prove-$name" ]; then
		{ mkdir -p "$tap_state_dir" && cp "$work/src-tree/.prove-$name" "$tap_state_dir/$state"; } 2>/dev/null ||
			echo "(could not keep prove's timings in $tap_state_dir)"
	fi
	echo "== tap, $name: $((SECONDS - started)) s"
	return $rc
}

# run_tap: the tests without the line "# schedule: serial" in their header,
# --jobs at once, then those with it one at a time and alone (they count
# waits or latencies).  TAP clusters are copies of one template: from
# PostgreSQL 17 on, PostgreSQL::Test::Cluster copies INITDB_TEMPLATE (made
# as its init would make a cluster: initdb -A trust -N) instead of running
# initdb, unless a test passes initdb options; before 17,
# test/perl/ShardidTest.pm makes its init do the same.
run_tap() {
	local t rc=0 parallel=() serial=()
	for t in $(tap_order ${tap_tests:-test/t/*.pl}); do
		if [ -z "$tap_tests" ] && ! [[ " $tap_groups " == *" $(tap_group "$t") "* ]]; then
			echo "== tap: $(basename "$t") is of the group $(tap_group "$t"): not with --tap-groups \"$tap_groups\""
			continue
		fi
		if [ $first_only_tap = 0 ] && [ -z "$tap_tests" ] && grep -q '^# versions: first' "$t"; then
			echo "== tap: $(basename "$t") tests the tool's own logic, the same on every server (# versions: first): not with --skip-common"
			continue
		fi
		if grep -q '^# schedule: serial' "$t"; then
			if [ $skip_serial = 1 ] && [ -z "$tap_tests" ]; then
				echo "== tap: $(basename "$t") times waits alone on the machine (# schedule: serial): not with --skip-serial"
				continue
			fi
			serial+=("$t")
		else
			parallel+=("$t")
		fi
	done
	mkdir -p "$work/initdb-template"
	[ "$(id -u)" = 0 ] && chown postgres: "$work/initdb-template"
	chmod 700 "$work/initdb-template"
	as_owner "$PG_BINDIR/initdb" -D "$work/initdb-template" -A trust -N \
		>"$work/initdb-template.log" 2>&1 || { cat "$work/initdb-template.log"; return 1; }
	export INITDB_TEMPLATE=$work/initdb-template
	echo "TAP clusters: copies of $INITDB_TEMPLATE (INITDB_TEMPLATE)"
	if [ ${#parallel[@]} -gt 0 ]; then
		tap_phase parallel "$jobs" "${parallel[@]}" || rc=1
	fi
	if [ ${#serial[@]} -gt 0 ]; then
		if [ -n "${SHARDID_TEST_LOCK:-}" ]; then
			echo "== tap, serial: waiting for the other runs on this machine to leave $SHARDID_TEST_LOCK"
			local waited=$SECONDS
			test_lock exclusive
			test_lock none
			echo "== tap, serial: the other runs' tests done after $((SECONDS - waited)) s (other versions' serial phases may run beside this one)"
		fi
		tap_phase serial 1 "${serial[@]}" || rc=1
		test_lock shared
	fi
	return $rc
}
# ---- ORM recipes: node-postgres for test/t/100_orm.pl --------------------
# pg and what it depends on, from the npm registry at the versions and
# sha512s of test/orm/node-pg.lock (test/orm/fetch_node_pg.py, no npm),
# into $work, which the cluster owner may read; SHARDID_NODE_MODULES tells
# the test where.  Where there is node, a failed fetch fails the test's
# node-postgres checks; without node it is not set, and the test skips
# them.  (100_orm is marked versions: first: not with --skip-common.)
orm_node_modules() {
	local dir=$work/orm-npm
	mkdir -p "$dir"
	if ! /usr/bin/python3 test/orm/fetch_node_pg.py "$dir" >"$work/orm-npm.log" 2>&1; then
		cat "$work/orm-npm.log" >&2
		echo "fetching node-postgres failed (above): test/t/100_orm.pl will fail" >&2
	fi
	chmod -R a+rX "$dir"
	echo "node-postgres for test/t/100_orm.pl: pg" \
		"$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$dir/node_modules/pg/package.json" 2>/dev/null)" \
		"in $dir/node_modules"
	export SHARDID_NODE_MODULES=$dir/node_modules
}
if [ $skip_tap = 0 ] && command -v node >/dev/null && { [ -z "$tap_tests" ] || [[ $tap_tests == *100_orm* ]]; } &&
	{ [ $first_only_tap = 1 ] || [ -n "$tap_tests" ]; }; then
	suite_start
	orm_node_modules
	suite_time "node-postgres"
fi
# ---- end of ORM recipes ----------------------------------------------------

if [ $skip_tap = 0 ]; then
	suite_start
	rc=0
	run_tap || rc=$?
	# TAP: every test's "ok" or "not ok" is in its script's log; a "not ok"
	# marked TODO is a known limit that prove passes, not a failure
	tap_logs=("$work"/tap-*/log/regress_log_*)
	# SHARDID_TAP_LOGS=DIR keeps a copy of every TAP log (notes included)
	if [ -n "${SHARDID_TAP_LOGS:-}" ]; then
		mkdir -p "$SHARDID_TAP_LOGS" && cp "${tap_logs[@]}" "$SHARDID_TAP_LOGS"/ 2>/dev/null || true
	fi
	count tap $rc "$(cat "${tap_logs[@]}" 2>/dev/null | grep -Ec '^(\[[^]]*\]\([^)]*\) )?ok [0-9]+')" \
		"$(cat "${tap_logs[@]}" 2>/dev/null | grep -E '^(\[[^]]*\]\([^)]*\) )?not ok [0-9]+' |
			grep -vc ' # TODO ')"
fi

# --only NAME: that test alone (test/only.sh)
[ -z "$only" ] || only_run

test_lock none
echo "== seconds: $(printf '%s, ' "${times[@]}" | sed 's/, $//'); in all $SECONDS s"
echo "shardid: $passed passed, $failed failed"
[ $failed -eq 0 ]
