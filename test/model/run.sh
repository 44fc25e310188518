#!/usr/bin/env bash
# test/model/run.sh: check the model of shardid's fence protocol
# (test/model/fence.pml) with SPIN.
#
#   1. The model, exhaustively, at the CI bounds: a set of scenarios, each
#      a set of events small enough to search in full (the issue path, the
#      fence writes and the clock are in every one).  Each must report
#      errors 0 with its search completed.
#   2. Every mutation (a deliberate protocol mistake, MUT_...): SPIN must
#      find an assertion violation, with a trail.
#   3. Every exposure (what docs/design.md says cannot be covered, EXP_...):
#      SPIN must find the duplicate.
#   4. docs/design.md's table "model step -> C function": every function
#      it names is defined in src/.
#
# Prints the states each run explored, then "model: errors 0",
# "mutations: K of K caught", "exposures: J of J found"; exits non-zero
# otherwise.  With PG_TEST_EXTRA containing shardid_model, also the long
# tier: every event at once, larger bounds, bitstate search (states
# explored and the hash factor reported).
#
# Installs spin (apt-get) if missing, as root.  One core; pan's memory is
# bounded (MODEL_MEMLIM MB, default 1024).  Temporary files in a mktemp
# directory, removed.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
model=$here/test/model/fence.pml
memlim=${MODEL_MEMLIM:-1024}
pan_timeout=

if ! command -v spin >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		echo "model: installing spin"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin >/dev/null
	else
		echo "model: spin is not installed (apt-get install spin, as root)" >&2
		exit 1
	fi
fi
command -v gcc >/dev/null || { echo "model: gcc is not installed" >&2; exit 1; }

work=$(mktemp -d /tmp/shardid-model.XXXXXX)
trap 'rm -rf "$work"' EXIT
started=$SECONDS

# run NAME "DEFINES" [PAN_CFLAGS] [PAN_ARGS]: build and run pan for the
# model with DEFINES; leaves its output in $work/NAME/out and the trail,
# if any, in $work/NAME/fence.pml.trail.  Sets errors, states, complete.
run() {
	local name=$1 defines=$2 cflags=${3:--DSAFETY -DCOLLAPSE} args=${4:-}
	local d=$work/$name
	errors=-1 states=? complete=0 secs=0
	mkdir -p "$d"
	cp "$model" "$d/fence.pml"
	(cd "$d" && spin $defines -a fence.pml >spin.log 2>&1) || { cat "$d/spin.log"; errors=-1; return; }
	(cd "$d" && gcc -O1 -w $cflags -DMEMLIM=$memlim -o pan pan.c) || { errors=-1; return; }
	local t=$SECONDS
	(cd "$d" && ${pan_timeout:+timeout -s INT $pan_timeout} ./pan -m1000000 $args >out 2>&1) || true
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$d/out" | head -1)
	[ -n "$errors" ] || { tail -5 "$d/out"; errors=-1; }
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$d/out" | head -1)
	complete=1
	grep -q 'Search not completed\|reached -DMEMLIM' "$d/out" && complete=0
	secs=$((SECONDS - t))
	: "${errors:=-1}" "${states:=?}"
}

# the events of a trail, as the model prints them
trail() {	# NAME DEFINES
	(cd "$work/$1" && spin $2 -t fence.pml 2>&1 | grep -E '^ +[a-zA-Z]' | tail -25)
}

# The CI bounds: the clock 0..2 (fields 0..3), 2 values a block, one
# sequence (the sequences are symmetric; two with a crash and the clock
# 0..1, and in the long tier), two backends (one on the eviction and
# extension paths), the log at most 4 records ahead of the standby, one
# disaster (crash, promotion or restore) and one other event (two on the
# eviction and extension paths) a path.
base="-DSCENARIO -DNS=1 -DTMAX=2 -DDISASTERS=1 -DCHAOS=1"
declare -A scenario=(
	[crash]="$base -DE_CRASH=1 -DE_SETBACK=1"
	[failover]="$base -DE_PROMOTE=1 -DE_PMDIE=1"
	[restore]="$base -DE_RESTORE=1 -DE_UNLOGGED=1 -DE_SETBACK=1"
	[extension]="-DSCENARIO -DNS=1 -DNB=1 -DTMAX=2 -DDISASTERS=1 -DCHAOS=2 -DE_EXT=1 -DE_CRASH=1 -DE_SETBACK=1"
	[eviction]="-DSCENARIO -DNS=1 -DNB=1 -DTMAX=2 -DDISASTERS=1 -DCHAOS=2 -DE_EVICT=1 -DE_SETBACK=1 -DE_CRASH=1 -DE_RESTORE=1"
	[lower]="$base -DE_LOWER=1 -DE_RESTORE=1 -DE_CRASH=1"
	[failover-sync]="$base -DSYNC -DE_PROMOTE=1 -DE_PMDIE=1"
	[two-sequences]="-DSCENARIO -DNS=2 -DNB=2 -DTMAX=1 -DDISASTERS=1 -DCHAOS=0 -DE_CRASH=1"
	# COVER: issue 29's protocol (the cover kept ahead, the sequences' fences not waited for)
	[cover-crash]="-DCOVER $base -DE_CRASH=1 -DE_SETBACK=1"
	[cover-failover]="-DCOVER $base -DE_PROMOTE=1 -DE_PMDIE=1"
	[cover-failover-sync]="-DCOVER $base -DSYNC -DE_PROMOTE=1 -DE_PMDIE=1"
	[cover-restore]="-DCOVER $base -DE_RESTORE=1 -DE_UNLOGGED=1 -DE_SETBACK=1"
	[cover-extension]="-DCOVER -DSCENARIO -DNS=1 -DNB=1 -DTMAX=2 -DDISASTERS=1 -DCHAOS=1 -DE_EXT=1 -DE_CRASH=1 -DE_SETBACK=1"
	[cover-eviction]="-DCOVER -DSCENARIO -DNS=1 -DNB=1 -DTMAX=2 -DDISASTERS=1 -DCHAOS=2 -DE_EVICT=1 -DE_SETBACK=1 -DE_CRASH=1 -DE_RESTORE=1"
	[cover-crash-dump]="-DCOVER -DSCENARIO -DNS=1 -DTMAX=2 -DDISASTERS=2 -DCHAOS=0 -DE_CRASH=1 -DE_RESTORE=1"
	# the clock past a fence: a call takes its value from its fence's setval
	[cover-first]="-DCOVER -DSCENARIO -DNS=1 -DTMAX=3 -DDISASTERS=1 -DCHAOS=1 -DE_CRASH=1 -DE_RESTORE=1 -DE_SETBACK=1"
	# ALTER SEQUENCE in an open transaction: no fence written into its new file
	[cover-rewrite]="-DCOVER -DSCENARIO -DNS=1 -DTMAX=2 -DDISASTERS=1 -DCHAOS=1 -DE_REWRITE=1 -DE_RESTORE=1 -DE_CRASH=1"
	[cover-committed]="-DCOVER -DSCENARIO -DNS=1 -DTMAX=2 -DDISASTERS=2 -DCHAOS=0 -DE_CRASH=1 -DE_RESTORE=1 -DEXP_UNCOMMITTED_DUMP -DCOMMITTED_ONLY"
)
order=(crash failover failover-sync restore extension eviction lower two-sequences
	cover-crash cover-failover cover-failover-sync cover-restore cover-extension cover-eviction cover-crash-dump cover-committed cover-first cover-rewrite)

model_errors=0
echo "== the model, exhaustive at the CI bounds"
for sc in "${order[@]}"; do
	run "model-$sc" "${scenario[$sc]}"
	printf '  %-20s %10s states  errors %s  %s  (%d s)\n' "$sc" "$states" "$errors" \
		"$([ $complete = 1 ] && echo complete || echo INCOMPLETE)" "$secs"
	if [ "$errors" != 0 ] || [ $complete = 0 ]; then
		model_errors=$((model_errors + 1))
		[ "$errors" != 0 ] && [ "$errors" != -1 ] && { echo "  trail:"; trail "model-$sc" "${scenario[$sc]}"; }
	fi
done
echo "model: errors $model_errors"

# Each mutation, and the scenario whose events expose it.
mutations=(
	"MUT_PUBLISH_BEFORE_FLUSH crash"	# publish before the flush
	"MUT_NO_STANDBY_WAIT failover"		# skip the standby wait
	"MUT_START_BELOW_COVER crash"		# a slot starts below the database's cover
	"MUT_NO_COVER crash"				# a sequence's fence without the database's cover
	"MUT_JUDGE_BY_LEAD crash"			# a start judged by the lead, not the reach
	"MUT_ROLLBACK_UNDO crash"			# a rollback undoes a fence write
	"MUT_EVICT_NO_GHOST eviction"		# eviction forgets, no ghost, no floor
	"MUT_LOWER_BELOW_ISSUED lower"		# a fence lowered below an ID issued since the start
	"MUT_ORPHAN_ISSUES failover"		# issue and publish after the postmaster died
	"MUT_ACCEPT_UNLOGGED restore"		# an unlogged sequence accepted
	"MUT_DROP_NO_COVER extension"		# DROP EXTENSION leaves sequences below the cover
	"MUT_GHOST_NO_START eviction"		# the ghost keeps the last field issued, not the start
	"MUT_COVER_PUBLISH_BEFORE_FLUSH cover-crash"	# COVER: the cover published before its flush
	"MUT_COVER_NO_STANDBY_WAIT cover-failover-sync"	# COVER: the cover published before the standby wait
	"MUT_ISSUE_PAST_COVER cover-crash"				# COVER: a backend issues past C
	"MUT_SETVAL_AFTER_ISSUE cover-restore"			# COVER: the sequence's setval after the ID
	"MUT_COVER_LAG cover-crash"						# COVER: the last write's duration feeds the target
	"MUT_START_BELOW_COVER cover-crash"				# COVER: a restart's slot starts below D
	"MUT_FIRST_SETVAL_AFTER cover-first"			# COVER: the value from the setval, its record after the ID
	"MUT_REWRITE_WRITES cover-rewrite"				# COVER: a fence written into a file a rollback drops
)
exposures=(
	"EXP_NOSEQ restore"					# a table restored without its sequence
	"EXP_STANDBY failover"				# a standby not connected, or timed out
	"EXP_FASTCLOCK lower"				# a fast clock, the fences lowered after a restart
	"EXP_SETBACK_DUMP restore"			# a sequence set back, then dumped
	"EXP_UNCOMMITTED_DUMP cover-crash-dump"	# COVER: an uncommitted ID, a crash, a dump
)

# check KIND LIST...: each switch must give a violation with a trail
check() {
	local kind=$1; shift
	local entry sw sc
	caught=0 total=0
	for entry in "$@"; do
		sw=${entry% *}
		sc=${entry#* }
		total=$((total + 1))
		run "$sw-$sc" "${scenario[$sc]} -D$sw" "-DSAFETY -DCOLLAPSE" "-E"
		if [ "$errors" != 0 ] && [ "$errors" != -1 ] && [ -s "$work/$sw-$sc/fence.pml.trail" ]; then
			caught=$((caught + 1))
			printf '  %-26s %-10s caught: %s, %s states (%d s)\n' "$sw" "$sc" \
				"$(grep -m1 -o 'assertion violated.*(at depth [0-9]*)' "$work/$sw-$sc/out" | sed 's/assertion violated //; s/(duplicate==0)/a duplicate/; s/(refused_correct_clock==0)/a correct clock refused/; s/(over_reach==0)/the cover past the reach/')" "$states" "$secs"
			if [ -n "${MODEL_TRAILS:-}" ]; then trail "$sw-$sc" "${scenario[$sc]} -D$sw"; fi
		else
			printf '  %-26s %-10s SURVIVED (errors %s, %s states)\n' "$sw" "$sc" "$errors" "$states"
		fi
	done
}

echo "== mutations"
check mutation "${mutations[@]}"
mut_caught=$caught mut_total=$total
echo "mutations: $mut_caught of $mut_total caught"

echo "== exposures (off by default)"
check exposure "${exposures[@]}"
exp_caught=$caught exp_total=$total
echo "exposures: $exp_caught of $exp_total found"

# docs/design.md's table: every C function it names is defined in src/.
echo "== docs/design.md: model step -> C function"
table_missing=0
funcs=$(sed -n '/^## The model/,/^## Files/p' "$here/docs/design.md" |
	awk -F'|' '/^\| / && NF >= 4 { print $3 }' | grep -o '`[a-z_0-9]*`' | tr -d '`' | sort -u)
nfuncs=0
for f in $funcs; do
	nfuncs=$((nfuncs + 1))
	# src/ puts a definition's name at the start of its line
	if ! grep -q "^$f(" "$here"/src/*.c "$here"/src/*.h; then
		echo "  $f: not defined in src/"
		table_missing=$((table_missing + 1))
	fi
done
[ "$nfuncs" -gt 0 ] || { echo "  no table found"; table_missing=1; }
echo "table: $nfuncs functions, $table_missing missing"

# The same table's fault points (the crash sweep's, src/fault.h): each
# of SHARDID_FAULT_POINTS is on the row of the function whose
# SHARDID_FAULT() names it, and the table names no other.
points_missing=0
points=$(sed -n '/^#define SHARDID_FAULT_POINTS/,/[^\\]$/p' "$here/src/fault.h" | grep -o '"[a-z_]*"' | tr -d '"')
rows=$(sed -n '/^## The model/,/^## Files/p' "$here/docs/design.md" | awk -F'|' '/^\| / && NF >= 5 { print $3 "|" $4 }')
npoints=0
for p in $points; do
	npoints=$((npoints + 1))
	# the function whose body calls SHARDID_FAULT("p"): the last line
	# before the call that starts with a name and "("
	where=$(awk -v P="SHARDID_FAULT(\"$p\")" '/^[a-z_0-9]+\(/ { f = $0; sub(/\(.*/, "", f) } index($0, P) { print f; exit }' "$here"/src/*.c)
	if [ -z "$where" ] || ! printf '%s\n' "$rows" | grep -q "\`$where\`.*|.*\`$p\`"; then
		echo "  fault point $p (in ${where:-no function}): not on that function's row"
		points_missing=$((points_missing + 1))
	fi
done
for p in $(printf '%s\n' "$rows" | cut -d'|' -f2 | grep -o '`[a-z_0-9]*`' | tr -d '`'); do
	case " $(echo $points) " in *" $p "*) ;; *) echo "  fault point $p: not in src/fault.h"; points_missing=$((points_missing + 1)) ;; esac
done
[ "$npoints" -gt 0 ] || { echo "  no fault point found in src/fault.h"; points_missing=1; }
echo "table: $npoints fault points, $points_missing not at their step"
table_missing=$((table_missing + points_missing))

# The table's transitions are src/slot.c's: no other file changes a
# slot's state (an assignment to a field through a pointer named slot,
# the counters excepted, which decide nothing).
fields=$(sed -n '/^typedef struct GuardSlot$/,/^} GuardSlot;/p' "$here/src/shmem.h" |
	awk '$1 == "struct" { $1 = ""; $0 = $0 } $1 != "slock_t" && $1 != "GuardCounters" && $2 ~ /^\*?[a-z_]+(\[.*\])?;$/ { f = $2; sub(/^\*/, "", f); sub(/[[;].*/, "", f); print f }')
nfields=$(echo $fields | wc -w)
outside=$(grep -nE "slot->($(echo $fields | tr ' ' '|'))(\[[^]]*\])? *([-+|&]?=[^=]|\+\+|--)|(memset|memcpy)\(&slot->($(echo $fields | tr ' ' '|'))\b" \
	"$here"/src/*.c "$here"/src/*.h | grep -vE '^[^:]*/src/slot\.[ch]:' || true)
if [ "$nfields" -lt 10 ]; then
	echo "  GuardSlot's fields not found in src/shmem.h"
	table_missing=$((table_missing + 1))
elif [ -n "$outside" ]; then
	echo "  a slot's state changed outside src/slot.c:"
	echo "$outside" | sed "s|^$here/|    |"
	table_missing=$((table_missing + 1))
fi
echo "transitions: $nfields fields of a slot, changed in src/slot.c alone: $([ -z "$outside" ] && [ "$nfields" -ge 10 ] && echo yes || echo no)"

# Model and code in step: say so when the protocol's files changed in a
# commit after the model's last change (a notice, not a failure: a change
# may leave the protocol as it was).
if git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
	protocol="src/fence.c src/fence.h src/fence_int.h src/seqio.c src/standby.c src/fence_admin.c src/shmem.c src/shmem.h src/slot.c src/slot.h src/guard.c src/rule.h"
	model_commit=$(git -C "$here" log -1 --format=%H -- test/model/fence.pml 2>/dev/null || true)
	if [ -n "$model_commit" ]; then
		since=$(git -C "$here" log --max-count=5 --format='%h %s' "$model_commit"..HEAD -- $protocol 2>/dev/null || true)
		if [ -n "$since" ]; then
			echo "== notice: the protocol's files changed after the model's last change; does the model still say what src/ does?"
			echo "$since" | sed 's/^/  /'
		fi
	fi
fi

# The long tier: every event at once, two sequences, two backends, the
# clock 0..3, two disasters and two other events a path, by bitstate
# search (128 MB of bits: it may miss states, the hash factor says how
# likely; over 100 is good) for at most MODEL_LONG_SECONDS (default 900),
# then stopped and reported as it stands.
long_rc=0
if [[ " ${PG_TEST_EXTRA:-} " == *" shardid_model "* ]]; then
	long="-DNS=2 -DNB=2 -DTMAX=3 -DDISASTERS=2 -DCHAOS=2"
	echo "== long tier: every event, 2 sequences, 2 backends, clock 0..3, bitstate, at most ${MODEL_LONG_SECONDS:-900} s"
	pan_timeout=${MODEL_LONG_SECONDS:-900}
	run long "$long" "-DSAFETY -DBITSTATE" "-w30"
	pan_timeout=
	printf '  %s states explored, errors %s, hash factor %s, %s, %d s\n' "$states" "$errors" \
		"$(sed -n 's/.*hash factor: \([0-9.e+]*\).*/\1/p' "$work/long/out" | head -1)" \
		"$([ $complete = 1 ] && echo complete || echo 'stopped at the time limit')" "$secs"
	[ "$errors" = 0 ] || { long_rc=1; trail long "$long"; }
	echo "long: errors $errors"
fi

echo "model: $((SECONDS - started)) s"
[ $model_errors = 0 ] && [ $mut_caught = $mut_total ] && [ $exp_caught = $exp_total ] &&
	[ $table_missing = 0 ] && [ $long_rc = 0 ]
