#!/usr/bin/env bash
# test/matrix.sh: on every PostgreSQL major version shardid supports, what a
# new user runs on a fresh Debian machine: bash demo/run.sh, then the whole
# suite (bash test/run.sh: unit, fuzz, regress, isolation, TAP):
#
#   15  in a Debian 12 bookworm root
#   17  in a Debian 13 trixie root
#   18  in a Debian forky root
#   19  in a Debian sid root with experimental's postgresql-19 (19~rc1)
#       pinned in (test/roots.sh)
#
# Each version runs in a fresh overlay on a root that holds the base system
# only (mmdebstrap's default variant, cached: see test/roots.sh), so the
# two scripts install every package they need themselves, as they would on
# a new machine, and the host's packages cannot hide a missing install
# step.  Neither script is told PG_MAJOR: each finds the release's own
# version; but for 19, which sid has only from experimental (its own is
# 18): that leg sets PG_MAJOR=19.  A copy of this source tree (git's files, no build products)
# goes into the root; /proc, /dev/pts and a tmpfs on /dev/shm are mounted
# for it and everything is unmounted afterwards, also on failure or
# interrupt.  The host's apt sources and its PostgreSQL are left as they
# are; the host gets mmdebstrap and rsync.
#
# The versions run at once (--jobs, default all of them, and the package
# round with them), each in its own root; each one's output is printed
# whole when it ends, with its seconds.  The suites that do not depend on
# the server's version (unit, fuzz, fleet cli, clients) run on the first
# version only (test/run.sh --skip-common on the others), and so do the
# TAP tests marked "# versions: first" (a tool's own logic).  --long V
# runs the long tier (PG_TEST_EXTRA="shardid_load shardid_ha", or the
# words --extra names) on version V.  So that the
# machine is not overrun, each version runs 3 / (versions at once) TAP
# tests at once (SHARDID_TAP_JOBS, at least 1), and one more, at most 3,
# where it runs more than one group of them, or the fleet's (a version
# that ran every TAP test one at a time was CI's longest part);
# and the TAP tests that
# test/run.sh runs alone, after the others (they time calls and count
# waits), run when nothing else does but other versions' serial phases:
# every version's run, its demo and the package round hold a shared lock
# on $run/shared/tests.lock (mounted into each root), which that phase
# waits to take exclusively, then lets go of, so that the versions'
# serial phases (15's and 19's in CI, one test at a time each, mostly
# waiting) run at once instead of one after the other.  (With three
# versions of 3 TAP tests each at once, at loads of 18, 071 and 070
# failed on their timing.)
#
# Usage: bash test/matrix.sh [--versions "15 17 18"] [--cache DIR]
#                            [--rebuild] [--package] [--jobs N] [--long V]
#                            [--extra WORDS] [--tap "V=WHICH ..."]
#                            [--serial "V ..."]
#                            [--package-versions "V ..."]
#                            [--run-args ARGS]
#   --versions LIST  the major versions to run (default: "15 17 18"; 19,
#                    the release candidate, only when named; .ci/run:
#                    "15 17 18 19")
#   --cache DIR      where the roots and the .deb cache are kept (default:
#                    $SHARDID_MATRIX_CACHE, else /var/tmp/shardid-matrix;
#                    about 300 MB per root, 1 GB of .debs)
#   --rebuild        make the roots anew
#   --package        also build the Debian package for each version and
#                    test it in a clean root (bash test/package.sh), at the
#                    same time as the versions run
#   --jobs N         parts at once: the versions, the version-independent
#                    suites, the package round (default: all)
#   --long V         the long tier on version V (PG_TEST_EXTRA="shardid_load shardid_ha")
#   --extra WORDS    the PG_TEST_EXTRA of the --long version instead (.ci/run:
#                    "shardid_ha", Patroni's failovers without the long
#                    loads)
#   --package-versions LIST  the package round for these versions only
#                    (implies --package; .ci/run: "15 19", the first and
#                    the newest)
#   --tap MAP        which TAP tests each version runs, as V=WHICH words
#                    (a version not named runs all of them): all; none
#                    (--skip-tap: demo, regress and isolation only); or
#                    groups, comma-separated (test/run.sh --tap-groups):
#                    core, those of the C code itself; fleet, the fleet
#                    tool's against its servers; integrations, the others
#                    (SQL functions, partitions, pg_cron, monitoring, the
#                    clients' recipes); tools, fleet and integrations
#                    (.ci/run: "15=core,integrations 17=none 18=fleet
#                    19=core")
#   --serial LIST    only these versions run the TAP tests marked
#                    "# schedule: serial", after every other part (the
#                    others: test/run.sh --skip-serial; default: every
#                    version; .ci/run: 15 and 19, the first and the newest)
#   --run-args ARGS  more arguments for each version's test/run.sh, as
#                    --run-args "--tap test/t/074_sequence_fence.pl"
#
# Run as root.  Prints each version's result and seconds and closes with
# "matrix: N passed, N failed", the sums of the versions' test counts (the
# demo counts as one test).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

versions="15 17 18"
package=0
jobs=0
long=""
extra="shardid_load shardid_ha"
tap_map=""
serial="all"
package_versions=""
run_args=""
while [ $# -gt 0 ]; do
	case $1 in
		--versions) versions=$2; shift 2 ;;
		--cache) SHARDID_MATRIX_CACHE=$2; shift 2 ;;
		--rebuild) ROOTS_REBUILD=1; shift ;;
		--package) package=1; shift ;;
		--jobs) jobs=$2; shift 2 ;;
		--long) long=$2; shift 2 ;;
		--extra) extra=$2; shift 2 ;;
		--tap) tap_map=$2; shift 2 ;;
		--serial) serial=$2; shift 2 ;;
		--package-versions) package=1; package_versions=$2; shift 2 ;;
		--run-args) run_args=$2; shift 2 ;;
		*) sed -n '/^# Usage/,/^# *--run-args/p' "$0" >&2; exit 2 ;;
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
first=${versions%% *}
package_versions=${package_versions:-$versions}
# in_list WORD LIST: is WORD one of LIST's words
in_list() { [[ " $2 " == *" $1 "* ]]; }
# tap_of V: which TAP tests version V runs (--tap)
tap_of() {
	local pair
	for pair in $tap_map; do
		[ "${pair%%=*}" != "$1" ] || { echo "${pair#*=}"; return; }
	done
	echo all
}
# skips_serial V: version V runs TAP tests, but not those marked
# "# schedule: serial" (--serial)
skips_serial() {
	! { [ "$serial" = all ] || in_list "$1" "$serial" || [ "$(tap_of "$1")" = none ]; }
}
[ -z "$long" ] || in_list "$long" "$versions" ||
	{ echo "test/matrix.sh: --long $long: not one of the versions ($versions)" >&2; exit 2; }
# tap_groups_of WHICH: test/run.sh's --tap-groups for WHICH, a comma list
# of core, fleet, integrations and tools (fleet and integrations); empty
# if a word is none of them
tap_groups_of() {
	local w groups=""
	for w in ${1//,/ }; do
		case $w in
			core|fleet|integrations) groups="$groups $w" ;;
			tools) groups="$groups fleet integrations" ;;
			*) return ;;
		esac
	done
	echo "${groups# }"
}
for pair in $tap_map; do
	which=${pair#*=}
	in_list "${pair%%=*}" "$versions" && { in_list "$which" "all none" || [ -n "$(tap_groups_of "$which")" ]; } ||
		{ echo "test/matrix.sh: --tap $pair: not V=all, none, or groups (core, fleet, integrations, tools: comma-separated) for one of the versions ($versions)" >&2; exit 2; }
done

# The lock that keeps test/run.sh's serial TAP phases from the other
# parts (see the header), and the timings prove keeps between runs, to start
# the slowest TAP tests first ($MATRIX_CACHE/prove-state, copied into each
# root and back).
mkdir -p "$run/shared" "$MATRIX_CACHE/prove-state"
: >"$run/shared/tests.lock"

# count LOG RC [WORD]: add the "WORD: N passed, N failed" line of LOG
# (WORD: shardid by default) to the sums and set RESULT (a run that ended
# without one counts as one failure)
count() {
	local log=$1 rc=$2 word=${3:-shardid} line p f
	line=$(grep -E "^$word: [0-9]+ passed, [0-9]+ failed" "$log" | tail -n 1 || true)
	p=$(echo "$line" | sed -nE "s/^$word: ([0-9]+) passed.*/\\1/p")
	f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	p=${p:-0} f=${f:-1}
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
	RESULT="$p passed, $f failed"
}

# cpu_enter NAME: this shell, and all it starts from now on (the servers
# too, which pg_ctl leaves to init), into a cgroup of its own, so that
# cpu_seconds NAME can tell the CPU time the part used: what decides
# CI's time on a machine that the parts keep busy.  A cgroup v2 directory
# (its cpu.stat) or v1's cpuacct controller, whichever this machine lets
# root make; without either, the seconds are "?".
cpu_dir() {
	echo "$1/shardid-matrix-$$-$2"
}
cpu_enter() {
	local base d
	for base in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/cpuacct; do
		[ -e "$base/cgroup.procs" ] || continue
		d=$(cpu_dir "$base" "$1")
		mkdir -p "$d" 2>/dev/null || continue
		if echo $BASHPID >"$d/cgroup.procs" 2>/dev/null; then
			[ -r "$d/cpu.stat" ] || [ -r "$d/cpuacct.usage" ] || continue
			echo "$d" >"$run/cpu-$1"
			return 0
		fi
		rmdir "$d" 2>/dev/null || true
	done
	return 0
}
cpu_seconds() {
	local d
	d=$(cat "$run/cpu-$1" 2>/dev/null) || { echo "?"; return 0; }
	if [ -r "$d/cpu.stat" ]; then
		awk '$1 == "usage_usec" { printf "%d", $2 / 1000000 }' "$d/cpu.stat"
	else
		awk '{ printf "%d", $1 / 1000000000 }' "$d/cpuacct.usage"
	fi
}
cpu_leave() {
	local d
	d=$(cat "$run/cpu-$1" 2>/dev/null) || return 0
	# back to the parent's group, then remove this one (once empty)
	echo $BASHPID >"$(dirname "$d")/cgroup.procs" 2>/dev/null || true
	rmdir "$d" 2>/dev/null || true
}

# leg V: bash demo/run.sh, then bash test/run.sh, for PostgreSQL V in a
# fresh root.  leg common: the suites that do not depend on the server's
# version (test/run.sh --skip-tap: unit, model, fuzz, fleet cli, clients,
# and regress and isolation again), with the first version, in a root of
# its own, at the same time as that version's leg runs the rest.  Its
# output goes to $run/leg-V.out, the suite's to $run/pgV.log; it ends
# with the line "leg: RC DEMO SECONDS".
leg() {
	local part=$1 v=$1 started=$SECONDS log=$run/pg$1.log rc=0 dir=$run/root-$1 demo=failed
	cpu_enter "$part"
	local where args="" tier=""
	[ "$part" != common ] || v=$first
	local env=(SHARDID_TEST_STATE=/run/shardid-state SHARDID_TEST_LOCK=/run/shardid/tests.lock
		SHARDID_TAP_JOBS=$tap_jobs)
	where="$(root_suite "$v") root"
	# sid's own PostgreSQL is 18; 19 is experimental's, pinned in
	local pgenv=()
	[ "$v" != 19 ] || { pgenv=(PG_MAJOR=19); env+=(PG_MAJOR=19); where="sid root with experimental's PostgreSQL 19"; }
	if [ "$part" = common ]; then
		args=" --skip-tap"
	elif [ "$v" != "$first" ]; then
		args=" --skip-common"
	elif [ $common_part = 1 ]; then
		args=" --skip-common-suites"
	fi
	if [ "$part" != common ]; then
		local which groups
		which=$(tap_of "$v")
		groups=$(tap_groups_of "$which")
		case $which in
			all) ;;
			none) args="$args --skip-tap" ;;
			*) args="$args --tap-groups \"$groups\"" ;;
		esac
		# one more TAP test at once where a version runs more than one
		# group, or the fleet's (its tests wait on their servers and time
		# nothing; one at a time, they made 18's the longest leg)
		[ "$which" = none ] || { [ "$(echo $groups | wc -w)" = 1 ] && [ "$groups" != fleet ]; } ||
			env+=(SHARDID_TAP_JOBS=$((tap_jobs < 3 ? tap_jobs + 1 : tap_jobs)))
		! skips_serial "$v" || args="$args --skip-serial"
	fi
	[ -z "$run_args" ] || args="$args $run_args"
	if [ "$v" = "$long" ]; then
		tier="PG_TEST_EXTRA=\"$extra\" "
		env+=("PG_TEST_EXTRA=$extra")
	fi
	if [ "$part" = common ]; then
		echo "==== the version-independent suites, with PostgreSQL $v in a $where: ${tier}bash test/run.sh$args"
	else
		echo "==== PostgreSQL $v in a $where: bash demo/run.sh, then ${tier}bash test/run.sh$args"
	fi
	[ "$v" = "$first" ] ||
		echo "(the suites that do not depend on the server's version ran with PostgreSQL $first)"
	[ "$v" = "$long" ] && echo "(PG_TEST_EXTRA=\"$extra\" on this version only)"
	# the common part's root is of the first version's release too: a
	# .deb cache of its own (apt fails on a cache another apt holds)
	local cache=${ROOTS_APT_CACHE:-apt}
	[ "$part" != common ] || cache=apt-common
	if ROOTS_APT_CACHE=$cache root_enter "$v" "$dir"; then
		copy_tree "$here" "$dir/root/src/shardid"
		mkdir -p "$dir/root/run/shardid" "$dir/root/run/shardid-state"
		mount --bind "$run/shared" "$dir/root/run/shardid"
		cp -a "$MATRIX_CACHE/prove-state/." "$dir/root/run/shardid-state/"
		if [ "$part" = common ]; then
			demo=-
		elif (flock -s 8 && root_run "$dir" env "${pgenv[@]}" bash -c "cd /src/shardid && bash demo/run.sh") \
			8>>"$run/shared/tests.lock" >"$run/demo-$v.log" 2>&1; then
			demo=ok
			sed -n '1,/^cluster started/p' "$run/demo-$v.log"
			echo "demo: ran to the end in $((SECONDS - started)) s"
		else
			cat "$run/demo-$v.log"
		fi
		root_run "$dir" env "${env[@]}" bash -c "cd /src/shardid && bash test/run.sh$args" \
			>"$log" 2>&1 || rc=$?
		cat "$log"
		# the version the scripts chose must be the one this root is for
		grep -qx "== packages (PostgreSQL $v)" "$log" ||
			{ echo "test/run.sh did not choose PostgreSQL $v" | tee -a "$log"; rc=1; }
		[ "$part" = common ] ||
			cp -a "$dir/root/run/shardid-state/." "$MATRIX_CACHE/prove-state/" 2>/dev/null || true
	else
		echo "could not make or enter the root for PostgreSQL $v" | tee "$log"
		rc=1
	fi
	root_leave "$dir" || rc=1
	echo "leg: $rc $demo $((SECONDS - started)) $(cpu_seconds "$part")"
	cpu_leave "$part"
}

# package_round V: test/package.sh for version V of --package-versions,
# each version a part of its own, at the same time as the others (the
# roots of different Debian releases have .deb caches of their own, and
# each version's lintian root its own; the installed package's test
# starts Debian's clusters on ports 5432 and 5433, which the roots'
# shared network has once: SHARDID_PORTS_LOCK keeps two such tests
# apart); its output goes to $run/package-V.log, and it ends with the
# line "leg: RC - SECONDS CPU".
package_round() {
	local v=$1 started=$SECONDS rc=0
	cpu_enter "package-$v"
	echo "==== the Debian package for PostgreSQL $v: bash test/package.sh --versions $v"
	(flock -s 8 && SHARDID_MATRIX_CACHE=$MATRIX_CACHE SHARDID_PORTS_LOCK=$run/shared/ports.lock \
		bash test/package.sh --versions "$v") \
		8>>"$run/shared/tests.lock" >"$run/package-$v.log" 2>&1 || rc=$?
	cat "$run/package-$v.log"
	echo "leg: $rc - $((SECONDS - started)) $(cpu_seconds "package-$v")"
	cpu_leave "package-$v"
}

# The versions' legs, the version-independent suites and the package
# round, --jobs at once (default: all at once); each one's output is
# printed whole when it ends, in order.
# the version-independent suites as a part of their own, beside the
# first version's leg (not when --run-args chooses the tests)
common_part=0
[ -n "$run_args" ] || common_part=1
parts="$versions"
[ $common_part = 0 ] || parts="$parts common"
if [ $package = 1 ]; then
	for v in $package_versions; do parts="$parts package-$v"; done
fi
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=$(echo $parts | wc -w)
# TAP tests at once in each version's run: 3 in all
legs=$(echo $versions | wc -w)
[ "$legs" -gt "$jobs" ] && legs=$jobs
parts_at_once=$(echo $parts | wc -w)
[ "$parts_at_once" -gt "$jobs" ] && parts_at_once=$jobs
tap_jobs=$((3 / legs))
[ $tap_jobs -ge 1 ] || tap_jobs=1
echo "==== $(echo $parts | sed 's/ /, /g;s/package-\([0-9]*\)/the package round for \1/g;s/common/the version-independent suites/'): $parts_at_once at once, $tap_jobs TAP tests at once in each version's run"
legs_started=$SECONDS
# the machine's busy and idle CPU time (/proc/stat, in clock ticks), for
# the summary: how much of the run the parts kept every core busy
proc_cpu() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
read -r busy_started idle_started < <(proc_cpu)
declare -A leg_pid
# on an interrupt, each part's shell and what it runs (whose own traps
# tear their roots down), then the EXIT trap for the legs' roots
stop_parts() {
	local p
	for p in "${leg_pid[@]}"; do
		pkill -TERM -P "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
	done
}
trap 'stop_parts; exit 130' INT TERM
running=0
for v in $parts; do
	if [ $running -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	if [[ $v == package-* ]]; then
		package_round "${v#package-}" >"$run/leg-$v.out" 2>&1 &
	else
		# root_leave_all (the EXIT trap) tears down a leg's root too
		ROOTS_ENTERED+=("$run/root-$v")
		leg "$v" >"$run/leg-$v.out" 2>&1 &
	fi
	leg_pid[$v]=$!
	running=$((running + 1))
done
for v in $parts; do
	wait "${leg_pid[$v]}" || true
	grep -v '^leg: ' "$run/leg-$v.out" || true
	read -r _ rc demo secs cpu < <(grep '^leg: ' "$run/leg-$v.out" || echo "leg: 1 failed ? ?")
	secs="$secs s, CPU ${cpu:-?} s"
	if [[ $v == package-* ]]; then
		count "$run/$v.log" "$rc" package
		summary+=("Debian package for PostgreSQL ${v#package-}: $RESULT, $secs")
		echo "==== the Debian package for PostgreSQL ${v#package-}: $RESULT, $secs"
		continue
	fi
	count "$run/pg$v.log" "$rc"
	if [ "$v" = common ]; then
		summary+=("the version-independent suites (PostgreSQL $first, $(root_suite "$first") root): $RESULT; $secs")
		echo "==== the version-independent suites: $RESULT, $secs"
		continue
	fi
	if [ "$demo" = ok ]; then
		total_passed=$((total_passed + 1))
	else
		total_failed=$((total_failed + 1))
	fi
	what="suite"
	[ "$v" = "$first" ] || what="suite less the version-independent ones"
	case $(tap_of "$v") in
		all) ;;
		none) what="$what, no TAP test" ;;
		*) what="$what, the TAP tests of the groups $(tap_groups_of "$(tap_of "$v")")" ;;
	esac
	! skips_serial "$v" || what="$what, no serial TAP tests"
	[ "$v" = "$long" ] && what="$what, PG_TEST_EXTRA=\"$extra\""
	summary+=("PostgreSQL $v ($(root_suite "$v") root): demo $demo; $what $RESULT; $secs")
	echo "==== PostgreSQL $v: $RESULT, demo $demo, $secs"
done
read -r busy_ended idle_ended < <(proc_cpu)
ticks=$(getconf CLK_TCK)
summary+=("all of them took $((SECONDS - legs_started)) s, $parts_at_once at once; the machine's $(nproc) cores were busy $(((busy_ended - busy_started) / ticks)) s and idle $(((idle_ended - idle_started) / ticks)) s")

echo "==== matrix"
printf '%s\n' "${summary[@]}"
echo "matrix: $total_passed passed, $total_failed failed"
[ $total_failed -eq 0 ]
