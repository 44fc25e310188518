#!/usr/bin/env bash
# bench/sparse_latency.sh: the latency of single-row inserts into tables
# whose sequence is called once a second (the sparse case), shardid_next
# against a baseline build and against bigserial, in one run.
#
# From 1.3 on, each sequence carries its own fence, a lead (500 ms) ahead
# of its last ID: a sequence called once a second finds it passed at every
# call, and the call writes a new one and flushes it (and waits for any
# connected standby to receive it, shardid.standby_wait) before it
# returns.  1.2 kept one fence per database, which the calls of all its
# sequences share.  What does that cost an insert?
#
# Builds BASE (a directory holding a checkout, or a git revision; default
# 5154e4d, the last commit of 1.2) and this tree, each into a private copy
# of PostgreSQL, and starts a cluster on each with fsync and
# synchronous_commit on.  Each has SESSIONS tables with
# id bigint PRIMARY KEY DEFAULT shardid_next(i, its own sequence), and the
# tree's cluster as many with id bigserial PRIMARY KEY.  A phase is one
# method on one cluster: SESSIONS sessions at once, each inserting one row
# (INSERT ... DEFAULT VALUES, then COMMIT) into a table of its own once a
# second, the sessions spread evenly over the second, for SECS inserts
# each after one warm-up insert.  Each insert is timed in the server, from
# before the INSERT to after its COMMIT (a procedure's loop: no client
# round trip).  The phases take turns, the order rotating each round; then
# the same again with a streaming standby of each cluster on loopback
# (asynchronous: commits do not wait for it; 1.3's fence writes wait until
# it has received them).  Prints p50, p90, p99, max and mean per method,
# and the fence writes per insert as shardid_stats counts them (1.3) or
# shardid_fence_status (the database's fence, both).
#
# Usage: bench/sparse_latency.sh [--base BASE] [--rounds N] [--secs S]
#        [--sessions N] [--no-standby] [--quick]
#   defaults: 2 rounds of 15 inserts per session, 10 sessions (300
#   inserts per method and standby setting), about 4 minutes on 2 cores;
#   --quick: 1 round of 10, about 2 minutes.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/test/cluster.sh"
. "$here/bench/ab.sh"

rounds=2 secs=15 sessions=10 standby=1
ab_options "usage: bench/sparse_latency.sh [--base BASE] [--rounds N] [--secs S] [--sessions N] [--no-standby] [--quick]" \
	--sessions=sessions --no-standby:standby=0 "--quick:rounds=1 secs=10" -- "$@"

trap ab_cleanup EXIT
ab_build "$base"

conf=("fsync = on" "synchronous_commit = on" "autovacuum = off" "jit = off"
	"max_connections = $((sessions + 20))" "max_wal_senders = 4")
for v in base tree; do
	ab_start $v data "${conf[@]}"
	ab_use $v
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -v sessions="$sessions" -v kinds="$([ $v = tree ] && echo 'shardid,serial' || echo shardid)" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION shardid;
CREATE SCHEMA lat;
CREATE TABLE lat.samples (method text, sess int, k int, ms float8);
SELECT format('CREATE SEQUENCE lat.s%s', i) FROM generate_series(1, :sessions) AS i \gexec
SELECT CASE kind
       WHEN 'shardid' THEN format('CREATE TABLE lat.shardid_%s (id bigint PRIMARY KEY DEFAULT shardid_next(%s, %L))',
                                  i, i, 'lat.s' || i)
       ELSE format('CREATE TABLE lat.serial_%s (id bigserial PRIMARY KEY)', i) END
  FROM generate_series(1, :sessions) AS i, unnest(string_to_array(:'kinds', ',')) AS kind \gexec
-- one procedure per table, so that each INSERT is static SQL with a saved plan
SELECT format($f$
CREATE PROCEDURE lat.run_%1$s_%2$s(n int, period_ms int, start_unix float8)
LANGUAGE plpgsql AS $p$
DECLARE
	t_base	timestamptz := to_timestamp(start_unix);
	t0		timestamptz;
	ms		float8[] := '{}';
BEGIN
	FOR k IN 0 .. n LOOP
		PERFORM pg_sleep(greatest(0, extract(epoch FROM
			t_base + k * period_ms * interval '1 ms' - clock_timestamp())));
		t0 := clock_timestamp();
		INSERT INTO lat.%1$s_%2$s DEFAULT VALUES;
		COMMIT;
		ms := ms || extract(epoch FROM clock_timestamp() - t0) * 1000;
	END LOOP;
	-- the first insert, the warm-up, is left out
	INSERT INTO lat.samples SELECT %1$L, %2$s, k - 1, m FROM unnest(ms) WITH ORDINALITY AS u(m, k) WHERE k > 1;
	COMMIT;
END
$p$$f$, kind, i)
  FROM generate_series(1, :sessions) AS i, unnest(string_to_array(:'kinds', ',')) AS kind \gexec
SQL
done

# counters: the sequences' fence writes (1.3) and the database's
writes() {
	local fw=0
	"$PG_BINDIR/psql" -X -At -c "SELECT 1 FROM pg_proc WHERE proname = 'shardid_stats'
		AND 'fence_writes' = ANY (proargnames)" | grep -q 1 && fw=fence_writes
	"$PG_BINDIR/psql" -X -At -F ' ' -c "
		SELECT (SELECT coalesce(sum($fw), 0) FROM shardid_stats()),
		       (SELECT coalesce(sum(writes), 0) FROM shardid_fence_status())"
}

# phase VARIANT METHOD LABEL: SESSIONS sessions at once, SECS inserts each
phase() {
	local v=$1 method=$2 label=$3 i pids=() sw0 dw0 sw1 dw1 start
	ab_use $v
	read -r sw0 dw0 < <(writes)
	# the sessions' first inserts a second from now, 1 / SESSIONS s apart
	start=$(date +%s.%N)
	for i in $(seq 1 "$sessions"); do
		"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -c "CALL lat.run_${method}_$i($secs, 1000,
			$(awk -v s="$start" -v i="$i" -v n="$sessions" 'BEGIN { printf "%.3f", s + 1 + (i - 1) / n }'))" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	read -r sw1 dw1 < <(writes)
	# the phase's samples, labelled, into the base cluster's table of all
	"$PG_BINDIR/psql" -X -At -F $'\t' -c "
		SELECT '$label', $phase_no, $(( sw1 - sw0 )), $(( dw1 - dw0 )), sess, k, ms FROM lat.samples" \
		>>"$ab_tmp/samples.tsv"
	"$PG_BINDIR/psql" -X -q -c "TRUNCATE lat.samples"
	phase_no=$((phase_no + 1))
	echo "$label: $(( sw1 - sw0 )) sequence fence writes, $(( dw1 - dw0 )) database fence writes, load $(uptime | sed 's/.*load average: //')" >&2
}

: >"$ab_tmp/samples.tsv"
phase_no=1
echo "$(date -u '+%F %T') UTC, load: $(uptime | sed 's/.*load average: //'); $rounds rounds of $secs inserts by each of $sessions sessions" >&2
phases="base:shardid tree:shardid tree:serial"
for sb in 0 1; do
	[ $sb = 1 ] && [ $standby = 0 ] && break
	if [ $sb = 1 ]; then
		for v in base tree; do ab_standby $v standby; done
	fi
	for r in $(seq 1 "$rounds"); do
		set -- $phases
		# rotate the order by the round
		for _ in $(seq 2 "$r"); do set -- "${@:2}" "$1"; done
		for p in "$@"; do
			v=${p%%:*} method=${p#*:}
			label="$([ $sb = 1 ] && echo standby || echo none)|$method|$v"
			phase "$v" "$method" "$label"
		done
	done
done
echo "$(date -u '+%F %T') UTC, load: $(uptime | sed 's/.*load average: //')" >&2

ab_use base
"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -c "CREATE TABLE lat.all (label text, phase int, seq_writes int, db_writes int, sess int, k int, ms float8)" \
	-c "\\copy lat.all FROM '$ab_tmp/samples.tsv'"
"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -v lbase="$ab_label_base" -v ltree="$ab_label_tree" <<'SQL'
CREATE TEMP VIEW s AS
SELECT split_part(label, '|', 1) AS standby, split_part(label, '|', 2) AS method,
       split_part(label, '|', 3) AS build, ms FROM lat.all;
-- fence writes per insert: each phase's counts once, over its inserts
-- with the warm-up's (one per session)
CREATE TEMP VIEW w AS
SELECT split_part(label, '|', 1) AS standby, split_part(label, '|', 2) AS method,
       split_part(label, '|', 3) AS build, sum(seq_writes) AS seq_writes, sum(db_writes) AS db_writes,
       sum(inserts) AS inserts
  FROM (SELECT label, phase, min(seq_writes) AS seq_writes, min(db_writes) AS db_writes,
               count(*) + count(DISTINCT sess) AS inserts
          FROM lat.all GROUP BY label, phase) AS d
 GROUP BY 1, 2, 3;
CREATE TEMP VIEW q AS
SELECT standby, method, build, count(*) AS n,
       percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY ms) AS p, max(ms) AS max, avg(ms) AS mean
  FROM s GROUP BY 1, 2, 3;
\pset format unaligned
\pset tuples_only on
SELECT '| standby | method | build | inserts | p50 ms | p90 ms | p99 ms | max ms | mean ms | fence writes per insert, sequence + database |';
SELECT '|---|---|---|---|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |', q.standby,
              CASE q.method WHEN 'serial' THEN 'bigserial' ELSE 'shardid_next' END,
              CASE q.build WHEN 'base' THEN :'lbase' ELSE :'ltree' END || ' (' || q.build || ')',
              q.n, round(p[1]::numeric, 2), round(p[2]::numeric, 2), round(p[3]::numeric, 2),
              round(max::numeric, 2), round(mean::numeric, 2),
              CASE q.method WHEN 'serial' THEN '' ELSE
              round(w.seq_writes::numeric / w.inserts, 2) || ' + ' || round(w.db_writes::numeric / w.inserts, 2) END)
  FROM q JOIN w USING (standby, method, build)
 ORDER BY q.standby, q.method DESC, q.build;
SELECT '';
SELECT '| standby | p50, tree / base | p99, tree / base | p50, tree / bigserial | p99, tree / bigserial |';
SELECT '|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s |', t.standby,
              round((t.p[1] / b.p[1])::numeric, 2), round((t.p[3] / b.p[3])::numeric, 2),
              round((t.p[1] / g.p[1])::numeric, 2), round((t.p[3] / g.p[3])::numeric, 2))
  FROM q t
  JOIN q b ON b.standby = t.standby AND b.method = 'shardid' AND b.build = 'base'
  JOIN q g ON g.standby = t.standby AND g.method = 'serial'
 WHERE t.method = 'shardid' AND t.build = 'tree'
 ORDER BY t.standby;
SQL
