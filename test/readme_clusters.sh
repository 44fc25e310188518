#!/usr/bin/env bash
# test/readme_clusters.sh V: the README's first steps as a new user pastes
# them, on Debian's own clusters with pg_wrapper and without systemd, in a
# root where postgresql-V-shardid is installed (test/package.sh runs it
# after the installed package's tests; as root, from the source tree):
#   - a fresh cluster V/main (port 5432), then the README's "Getting
#     started" commands, their text read from README.md: sudo's ALTER
#     SYSTEM, the restart with the README's no-systemd command
#     (pg_ctlcluster, in place of systemctl), and the README's SQL blocks
#     of "Getting started" and "Adopting existing tables", fed to its
#     "sudo -u postgres psql" line, which must end without an error;
#   - the README's note on a second cluster: with V/second beside main,
#     plain psql still reaches main (5432); with main gone and a third
#     cluster, none on 5432, plain psql fails with "No existing cluster is
#     suitable as a default target", and --cluster V/second and -p 5433
#     connect.
# Drops every cluster it made.  Prints "ok - ..." per check and exits
# non-zero at the first failure.
set -euo pipefail
v=$1
cd "$(dirname "$0")/.."

fail() { echo "not ok - $*"; exit 1; }
ok() { echo "ok - $*"; }
cleanup() {
	local c
	for c in main second third; do
		pg_dropcluster --stop "$v" "$c" 2>/dev/null || true
	done
}
trap cleanup EXIT

# block HEADING LANG N: the Nth (from 1) fenced LANG block of README.md
# under "## HEADING", without its fences
block() {
	awk -v h="## $1" -v lang="$2" -v n="$3" '
		/^## / { in_h = ($0 == h) }
		in_h && !inb && $0 == "```" lang { k++; if (k == n) { inb = 1; next } }
		inb && $0 == "```" { exit }
		inb { print }' README.md
}

command -v sudo >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q sudo >/dev/null

pg_createcluster "$v" main --start >/dev/null
[ "$(sudo -u postgres psql -XAtc 'SHOW port')" = 5432 ] || fail "cluster $v/main is not on 5432"

steps=$(block 'Getting started' sh 1)
[ "$(echo "$steps" | wc -l)" = 3 ] || fail "README's Getting started has not its three commands: $steps"
preload=$(echo "$steps" | sed -n 1p)
restart=$(echo "$steps" | sed -n 2p)
connect=$(echo "$steps" | sed -n 3p)
[ "$restart" = "systemctl restart postgresql@15-main" ] || fail "the restart line is $restart"
[ "$connect" = "sudo -u postgres psql" ] || fail "the connection line is $connect"
# the no-systemd restart the README gives, for this version
nosystemd=$(grep -o 'Without systemd (a container), `pg_ctlcluster 15 main restart`' README.md | grep -o 'pg_ctlcluster 15 main restart') ||
	fail "the README gives no restart without systemd"
bash -euc "${preload//15/$v}"
bash -euc "${nosystemd//15/$v}"
[ "$(sudo -u postgres psql -XAtc 'SHOW shared_preload_libraries')" = shardid ] ||
	fail "shardid is not preloaded after the README's restart"
ok "README: ALTER SYSTEM, then $nosystemd (for $v): shardid preloaded"

sql=$(block 'Getting started' sql 1; block 'Adopting existing tables' sql 1)
out=$(echo "$sql" | bash -euc "$connect -X -v ON_ERROR_STOP=1" 2>&1) ||
	fail "README's SQL, pasted into $connect: $out"
echo "$out" | grep -q '2026-10-23 09:20:00+00 |  1341 | 1001' ||
	fail "shardid_decode's row is not the README's: $out"
ok "README's SQL of Getting started and Adopting existing tables runs as pasted into '$connect'"

# a second cluster: plain psql keeps to 5432
pg_createcluster "$v" second --start >/dev/null
[ "$(sudo -u postgres psql -XAtc 'SHOW port')" = 5432 ] || fail "with two clusters, psql left 5432"
ok "with $v/second beside $v/main, '$connect' reaches main on 5432"
# none on 5432
pg_dropcluster --stop "$v" main
pg_createcluster "$v" third -p 5434 --start >/dev/null
if err=$(sudo -u postgres psql -XAtc 'SELECT 1' 2>&1); then
	fail "with no cluster on 5432, plain psql connected: $err"
fi
echo "$err" | grep -q 'No existing cluster is suitable as a default target' ||
	fail "plain psql failed otherwise: $err"
grep -q 'sudo -u postgres psql --cluster 15/main' README.md || fail "the README does not name --cluster"
[ "$(sudo -u postgres psql --cluster "$v/second" -XAtc 'SELECT current_setting($$cluster_name$$)')" = "$v/second" ] ||
	fail "--cluster $v/second"
[ "$(sudo -u postgres psql -p 5433 -XAtc 'SELECT current_setting($$cluster_name$$)')" = "$v/second" ] ||
	fail "-p 5433"
ok "with no cluster on 5432: '$err'; --cluster $v/second and -p 5433 connect"
