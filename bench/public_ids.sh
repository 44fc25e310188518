#!/usr/bin/env bash
# bench/public_ids.sh: what a public ID costs, in one run.
#   1. the cipher alone: bench/speck_bench.c, built against src/speck.c
#      with the server's optimisation flags; P and Q per second on one
#      core, net of a baseline loop that calls a do-nothing function over
#      the same values, and their time as a ratio to that baseline;
#   2. in SQL: SELECT count(f(i)) FROM generate_series(1, n) for
#      shardid_public(i), shardid_private(shardid_public(i)),
#      shardid_decode(i) and shardid_to_shortcode(i) (another function
#      that returns text), with count(i) as the empty loop, repetitions
#      interleaved in a rotating order; the net cost per call of each and
#      its ratio to shardid_decode's.
# Absolute times drift on a shared machine; the ratios of one run hold.
#
# It builds this tree into a private copy of PostgreSQL (test/cluster.sh)
# and starts a throwaway cluster with the spec's test keys.
#
# Usage: bench/public_ids.sh [N [REPS]]   (default 2,000,000 values, 5 reps)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/cluster.sh"

n=${1:-2000000}
reps=${2:-5}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-bench-public.XXXXXX")
chmod 755 "$tmp"
cleanup() {
	cluster_stop "$tmp/data"
	rm -rf "$tmp"
}
trap cleanup EXIT

cd "$here"
private_install "$tmp/pg" >/dev/null
PATH=$PG_BINDIR:$PATH

echo "== 1. the cipher alone ($(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1))"
# the server's own optimisation flags, as src/speck.o is built
cflags=$("$PG_CONFIG" --cflags | grep -oE -- '-O[0-9s]' | tail -n 1)
cc ${cflags:--O2} -Wall -Wextra -Werror -I"$here/src" -o "$tmp/speck_bench" \
	"$here/bench/speck_bench.c" "$here/src/speck.c"
"$tmp/speck_bench" "$((n * 10))" "$reps"

echo "== 2. in SQL: $reps x $n calls per function"
cluster_start "$tmp/data" "" "jit = off" \
	"shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100'" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -v n="$n" -v reps="$reps" <<'SQL'
SET work_mem = '512MB';
-- psql does not expand variables inside the DO block's dollar quotes
SELECT set_config('bench.n', :'n', false), set_config('bench.reps', :'reps', false) \g /dev/null
CREATE EXTENSION shardid;
CREATE TEMP TABLE t (method text, rep int, secs float8);
DO $do$
DECLARE
	methods text[] := ARRAY['base', 'shardid_decode', 'shardid_to_shortcode', 'shardid_public',
							'shardid_private(shardid_public)'];
	queries text[] := ARRAY[
		'SELECT count(i) FROM generate_series(1::bigint, $1) AS i',
		'SELECT count(shardid_decode(i)) FROM generate_series(1::bigint, $1) AS i',
		'SELECT count(shardid_to_shortcode(i)) FROM generate_series(1::bigint, $1) AS i',
		'SELECT count(shardid_public(i)) FROM generate_series(1::bigint, $1) AS i',
		'SELECT count(shardid_private(shardid_public(i))) FROM generate_series(1::bigint, $1) AS i'];
	t0 timestamptz;
	got bigint;
BEGIN
	FOR r IN 1 .. current_setting('bench.reps')::int LOOP
		FOR k IN 0 .. array_length(methods, 1) - 1 LOOP
			-- the order rotates each repetition
			DECLARE m int := (k + r) % array_length(methods, 1) + 1;
			BEGIN
				t0 := clock_timestamp();
				EXECUTE queries[m] INTO got USING current_setting('bench.n')::bigint;
				INSERT INTO t VALUES (methods[m], r,
					extract(epoch FROM clock_timestamp() - t0));
			END;
		END LOOP;
	END LOOP;
END
$do$;
WITH med AS (
	SELECT method, percentile_cont(0.5) WITHIN GROUP (ORDER BY secs) AS secs
	  FROM t GROUP BY method
), base AS (SELECT secs FROM med WHERE method = 'base')
SELECT method,
       round((med.secs * 1e9 / :n)::numeric, 1) AS ns_per_row,
       round(((med.secs - base.secs) * 1e9 / :n)::numeric, 1) AS net_ns_per_call,
       round(((med.secs - base.secs) /
              nullif((SELECT secs FROM med WHERE method = 'shardid_decode') - base.secs, 0))::numeric, 2)
         AS net_ratio_to_decode
  FROM med, base
 ORDER BY med.secs;
SQL
