# bench/ab.sh: two builds side by side, for the benchmarks that measure a
# change against a baseline in one run (compare.sh, fence_wal.sh,
# sparse_latency.sh).  Sourced after test/cluster.sh.
#
# ab_build BASE builds BASE and this tree, each into its own private copy
# of PostgreSQL under a temporary directory.  BASE is a directory (a
# checkout: its tracked and untracked files, as they are) or a git
# revision of this repository.  Afterwards:
#   ab_tmp            the temporary directory; ab_cleanup removes it
#   ab_label_base     BASE's short commit ("+changes" if its files differ)
#   ab_label_tree     the same for this tree
#   ab_bindir_VARIANT the private copy's bin directory (VARIANT base, tree)
# ab_use VARIANT [NODE] points PG_BINDIR, PGHOST and PGPORT at that
# variant's cluster NODE (default data), started by ab_start VARIANT [NODE]
# [CONF_LINE...] (as cluster_start, which it calls) or ab_standby.
# ab_cleanup stops every cluster they started and removes ab_tmp: the
# caller's EXIT trap calls it.

ab_tmp=
ab_label_base=
ab_label_tree=
ab_bindir_base=
ab_bindir_tree=

# ab_options USAGE SPEC... -- ARG...: the command line of a benchmark
# (fence_wal.sh, shards.sh, sparse_latency.sh) into the shell variables
# whose defaults the caller set.  Every one takes --base BASE (base,
# default 5154e4d: the last commit of 1.2), --rounds N (rounds) and
# --secs S (secs); a SPEC adds an option: "--name=var" takes a value into
# var, "--name:var=value ..." is a switch that makes those assignments.
# Values other than BASE are whole numbers.  Anything else prints USAGE
# and exits 2.
ab_options() {
	local ab_usage=$1 ab_specs=(--base=base --rounds=rounds --secs=secs) ab_spec ab_set
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		ab_specs+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	: "${base:=5154e4d}"
	while [ $# -gt 0 ]; do
		for ab_spec in "${ab_specs[@]}"; do
			case $ab_spec in
				"$1="*)
					[ $# -ge 2 ] && { [ "$1" = --base ] || [[ $2 =~ ^[0-9]+$ ]]; } || break
					printf -v "${ab_spec#*=}" '%s' "$2"
					shift 2
					continue 2 ;;
				"$1:"*)
					for ab_set in ${ab_spec#*:}; do
						printf -v "${ab_set%%=*}" '%s' "${ab_set#*=}"
					done
					shift
					continue 2 ;;
			esac
		done
		echo "$ab_usage" >&2
		exit 2
	done
}

# ab_label DIR_OR_REV: its short commit, "+changes" when src/ or sql/ of a
# checkout differ from it
ab_label() {
	local src=$1
	if [ -d "$src" ]; then
		echo "$(git -C "$src" rev-parse --short HEAD)$(git -C "$src" diff --quiet HEAD -- src sql 2>/dev/null || echo '+changes')"
	else
		git -C "$here" rev-parse --short "$src"
	fi
}

# ab_copy DIR_OR_REV DEST: the files to build
ab_copy() {
	local src=$1 dest=$2
	mkdir -p "$dest"
	if [ -d "$src" ]; then
		(cd "$src" && git ls-files -co --exclude-standard | tar -c -T - | tar -x -C "$dest")
	else
		git -C "$here" archive "$(git -C "$here" rev-parse --verify "$src^{commit}")" |
			tar -x -C "$dest"
	fi
}

ab_build() {
	local base=$1 v src
	ab_tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-ab.XXXXXX")
	chmod 755 "$ab_tmp"
	ab_label_base=$(ab_label "$base")
	ab_label_tree=$(ab_label "$here")
	for v in base tree; do
		src=$here
		[ $v = base ] && src=$base
		ab_copy "$src" "$ab_tmp/$v/tree"
		(cd "$ab_tmp/$v/tree" && private_install "$ab_tmp/$v/pg" >/dev/null)
		eval "ab_bindir_$v=\$ab_tmp/\$v/pg/usr/lib/postgresql/\$PG_MAJOR/bin"
	done
}

ab_use() {
	local v=$1 node=${2:-data}
	eval "PG_BINDIR=\$ab_bindir_$v"
	PGHOST=$ab_tmp/$v/$node
	PGPORT=$(cat "$ab_tmp/$v/$node.port")
	export PG_BINDIR PGHOST PGPORT PGUSER=postgres PGDATABASE=postgres
}

ab_start() {
	local v=$1 node=${2:-data}
	shift $(($# < 2 ? $# : 2))
	eval "PG_BINDIR=\$ab_bindir_$v"
	cluster_start "$ab_tmp/$v/$node" "" "$@" >/dev/null
	echo "$PGPORT" >"$ab_tmp/$v/$node.port"
}

# ab_standby VARIANT NODE [RELAY_MS]: a streaming standby of VARIANT's
# cluster "data" on loopback, made by pg_basebackup, started, and caught
# up; with RELAY_MS, it streams through bench/relay.py, which holds what
# goes each way for RELAY_MS ms (ab_cleanup stops it)
ab_standby() {
	local v=$1 node=$2 relay_ms=${3:-} dir try port relay_port
	dir=$ab_tmp/$v/$node
	ab_use "$v"
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	chmod 700 "$dir"
	# (it warns of the server's socket in the data directory, which it skips)
	as_owner "$PG_BINDIR/pg_basebackup" -h "$PGHOST" -p "$PGPORT" -U postgres \
		-D "$dir" -R -X stream -c fast >"$dir.basebackup.log" 2>&1 ||
		{ cat "$dir.basebackup.log" >&2; return 1; }
	echo "unix_socket_directories = '$dir'" >>"$dir/postgresql.conf"
	if [ -n "$relay_ms" ]; then
		python3 "$(dirname "${BASH_SOURCE[0]}")/relay.py" --to "$PGPORT" --delay-ms "$relay_ms" \
			>"$dir.relay.out" 2>&1 &
		echo $! >"$dir.relay.pid"
		for try in $(seq 1 50); do
			relay_port=$(head -1 "$dir.relay.out" 2>/dev/null)
			[ -n "$relay_port" ] && break
			sleep 0.1
		done
		[ -n "$relay_port" ] || { cat "$dir.relay.out" >&2; cluster_die "the relay did not start."; return 1; }
		# the last primary_conninfo counts: pg_basebackup -R wrote one above it
		echo "primary_conninfo = 'host=127.0.0.1 port=$relay_port user=postgres application_name=$node'" \
			>>"$dir/postgresql.auto.conf"
	fi
	for try in 1 2 3 4 5 6 7 8 9 10; do
		port=$((20000 + RANDOM % 10000))
		port_free "$port" || continue
		echo "port = $port" >>"$dir/postgresql.conf"
		if as_owner "$PG_BINDIR/pg_ctl" -D "$dir" -l "$dir/server.log" -w start >/dev/null 2>&1; then
			echo "$port" >"$dir.port"
			break
		fi
	done
	[ -f "$dir.port" ] || { cat "$dir/server.log" >&2; cluster_die "the standby $node did not start."; return 1; }
	# streaming, and caught up with the primary
	for try in $(seq 1 300); do
		[ "$("$PG_BINDIR/psql" -X -At -d postgres -c "SELECT count(*) FROM pg_stat_replication
			WHERE state = 'streaming' AND write_lsn >= pg_current_wal_lsn()")" = 1 ] && return 0
		sleep 0.1
	done
	cluster_die "the standby $node did not catch up in 30 s."
}

# ab_stop VARIANT [NODE]: stop that cluster
ab_stop() {
	eval "PG_BINDIR=\$ab_bindir_$1"
	cluster_stop "$ab_tmp/$1/${2:-data}"
}

ab_cleanup() {
	local f v node
	[ -n "$ab_tmp" ] && [ -d "$ab_tmp" ] || return 0
	for f in "$ab_tmp"/*/*.port; do
		[ -e "$f" ] || continue
		v=$(basename "$(dirname "$f")")
		node=$(basename "$f" .port)
		ab_stop "$v" "$node"
	done
	for f in "$ab_tmp"/*/*.relay.pid; do
		[ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	rm -rf "$ab_tmp"
}

# ab_shards KIND N: in the current cluster (ab_use), N shard schemas laid
# out as the README's Getting started lays one out: shard_K.posts (id
# bigint PRIMARY KEY, user_id bigint, caption text) with its own sequence
# shard_K.posts_id_seq OWNED BY its id and DEFAULT shardid_next(K, that
# sequence) (KIND shardid: the extension is created first), or with id
# bigserial (KIND bigserial).  For bench/shards.sh and
# bench/first_after_crash.sh.
ab_shards() {
	local kind=$1 n=$2 ddl
	if [ "$kind" = bigserial ]; then
		ddl="CREATE TABLE shard_%1\$s.posts (id bigserial PRIMARY KEY, user_id bigint NOT NULL, caption text)"
	else
		"$PG_BINDIR/psql" -X -q -c 'CREATE EXTENSION shardid'
		ddl="CREATE TABLE shard_%1\$s.posts (id bigint PRIMARY KEY, user_id bigint NOT NULL, caption text);
CREATE SEQUENCE shard_%1\$s.posts_id_seq OWNED BY shard_%1\$s.posts.id;
ALTER TABLE shard_%1\$s.posts ALTER COLUMN id SET DEFAULT shardid_next(%1\$s, 'shard_%1\$s.posts_id_seq')"
	fi
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -v shards="$n" -v ddl="$ddl" <<'SQL'
SET synchronous_commit = off;
SELECT format('CREATE SCHEMA shard_%s', k) FROM generate_series(0, :shards - 1) AS k \gexec
SELECT format(:'ddl', k) FROM generate_series(0, :shards - 1) AS k \gexec
SQL
}
