# test/cluster.sh: a private PostgreSQL installation to test in, and
# throwaway clusters on it.  Sourced by test/run.sh, demo/run.sh and
# bench/run.sh.
#
# Nothing is installed into the system's PostgreSQL: private_install copies
# the server's binaries, libraries and share directory (about 50 MB) into a
# directory of the caller's and installs shardid there.  PostgreSQL finds
# its share and library directories relative to its binaries, so the copy
# is a complete installation of its own.
#
# initdb and postgres refuse to run as root, so as root the cluster belongs
# to the postgres OS user; as anyone else it belongs to that user.  Servers
# listen on a Unix socket in the cluster's directory and on 127.0.0.1 only.

# PG_MAJOR: the PostgreSQL major version to use; by default the newest one
# whose server is installed (on Debian 12, 15), else the Debian release's
# default version.
if [ -z "${PG_MAJOR:-}" ]; then
	PG_MAJOR=$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null |
		sed -E 's,^/usr/lib/postgresql/([0-9]+)/.*,\1,' | sort -n | tail -n 1)
	[ -n "$PG_MAJOR" ] || PG_MAJOR=$(apt-cache depends postgresql 2>/dev/null |
		sed -nE 's/^ *Depends: postgresql-([0-9]+)$/\1/p' | head -n 1)
	[ -n "$PG_MAJOR" ] || { echo "no PostgreSQL server found: set PG_MAJOR" >&2; return 1; }
fi
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/$PG_MAJOR/bin}

# private_install DIR: copy the system's PostgreSQL $PG_MAJOR into DIR,
# build shardid from the current directory with -Werror and install it
# there.  Afterwards PG_BINDIR and PG_CONFIG point into DIR.
private_install() {
	local dir=$1 sys_bindir=/usr/lib/postgresql/$PG_MAJOR/bin
	rm -rf "$dir"
	mkdir -p "$dir/usr/lib/postgresql" "$dir/usr/share/postgresql"
	cp -a "/usr/lib/postgresql/$PG_MAJOR" "$dir/usr/lib/postgresql/"
	cp -a "/usr/share/postgresql/$PG_MAJOR" "$dir/usr/share/postgresql/"
	# headers are only read: share the system's
	ln -s /usr/include "$dir/usr/include"
	PG_BINDIR=$dir/usr/lib/postgresql/$PG_MAJOR/bin
	PG_CONFIG=$PG_BINDIR/pg_config
	export PG_BINDIR PG_CONFIG
	[ -x "$PG_CONFIG" ] || { echo "no PostgreSQL $PG_MAJOR in $sys_bindir" >&2; return 1; }
	make -s clean PG_CONFIG="$PG_CONFIG"
	make -s WERROR=1 PG_CONFIG="$PG_CONFIG"
	make -s install PG_CONFIG="$PG_CONFIG"
}

# run a command as the cluster owner
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# cluster_start DIR PORT [CONF_LINE...]: initdb DIR, start it on PORT with
# shardid preloaded; extra arguments are appended to postgresql.conf.
# Afterwards PGHOST, PGPORT, PGUSER and PGDATABASE point at it.
cluster_start() {
	local dir=$1 port=$2 line
	shift 2
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	chmod 700 "$dir"
	as_owner "$PG_BINDIR/initdb" -D "$dir" -U postgres -A trust \
		--no-sync -E UTF8 --locale=C >"$dir.initdb.log" 2>&1 ||
		{ cat "$dir.initdb.log"; return 1; }
	{
		echo "port = $port"
		echo "listen_addresses = '127.0.0.1'"
		echo "unix_socket_directories = '$dir'"
		echo "shared_preload_libraries = 'shardid'"
		echo "timezone = 'UTC'"
		echo "fsync = off"
		for line in "$@"; do echo "$line"; done
	} >>"$dir/postgresql.conf"
	as_owner "$PG_BINDIR/pg_ctl" -D "$dir" -l "$dir/server.log" -w start >/dev/null ||
		{ cat "$dir/server.log"; return 1; }
	export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres
}

# cluster_stop DIR: stop the cluster if it runs
cluster_stop() {
	local dir=$1
	if [ -f "$dir/postmaster.pid" ]; then
		as_owner "$PG_BINDIR/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
	fi
}

# install_packages PKG...: apt-get install what is missing (root only)
install_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "missing Debian packages: ${missing[*]} (install them as root)" >&2
		return 1
	fi
	echo "installing Debian packages: ${missing[*]}"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
