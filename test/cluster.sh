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

# What the scripts support: Debian (or a derivative with apt), the release
# deciding the default PostgreSQL version.  Anything they cannot do, they
# say in one sentence, and stop.
cluster_die() {
	echo "$0: $*" >&2
	return 1
}

# debian_pg_major: the PostgreSQL version of this Debian release's
# "postgresql" package: 15 on Debian 12 bookworm, 17 on 13 trixie, 18 on
# forky (testing) and sid.
debian_pg_major() {
	local codename=
	[ -r /etc/os-release ] && codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
	case $codename in
		bookworm) echo 15 ;;
		trixie) echo 17 ;;
		forky|sid) echo 18 ;;
		*)
			cluster_die "this system is ${codename:-not Debian} (from /etc/os-release)," \
				"and shardid's scripts know the PostgreSQL version of Debian 12 bookworm (15)," \
				"13 trixie (17) and forky (18) only: set PG_MAJOR to a version apt can install here" \
				"(PG_MAJOR=15 bash $0), or run on one of those releases."
			;;
	esac
}

# PG_MAJOR: the PostgreSQL major version to use; by default the newest one
# whose server is installed, else the Debian release's default version.
if [ -z "${PG_MAJOR:-}" ]; then
	PG_MAJOR=$(for f in /usr/lib/postgresql/*/bin/postgres; do
			if [ -x "$f" ]; then echo "$f"; fi
		done | sed -E 's,^/usr/lib/postgresql/([0-9]+)/.*,\1,' | sort -n | tail -n 1)
	[ -n "$PG_MAJOR" ] || PG_MAJOR=$(debian_pg_major) || return 1
fi
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/$PG_MAJOR/bin}

# private_install DIR: copy the system's PostgreSQL $PG_MAJOR into DIR,
# remove every shardid file the copy holds (an earlier `make install` into
# the system's PostgreSQL, or a package, may have left some), build shardid
# from the current directory with -Werror (and with shardid's Assert()s
# when SHARDID_ASSERTS=1) and install it there.
# Afterwards PG_BINDIR and PG_CONFIG point into DIR.
private_install() {
	private_copy "$1" || return 1
	make -s clean PG_CONFIG="$PG_CONFIG"
	private_build
}

# private_copy DIR: the copy of the system's PostgreSQL $PG_MAJOR in DIR,
# made anew, without shardid's files; then private_use DIR.
private_copy() {
	local dir=$1 sys_bindir=/usr/lib/postgresql/$PG_MAJOR/bin
	[ -x "$sys_bindir/postgres" ] && [ -x "$sys_bindir/pg_config" ] ||
		cluster_die "PostgreSQL $PG_MAJOR's server or pg_config is not in $sys_bindir:" \
			"install postgresql-$PG_MAJOR and postgresql-server-dev-$PG_MAJOR." || return 1
	rm -rf "$dir"
	mkdir -p "$dir/usr/lib/postgresql" "$dir/usr/share/postgresql"
	cp -a "/usr/lib/postgresql/$PG_MAJOR" "$dir/usr/lib/postgresql/"
	cp -a "/usr/share/postgresql/$PG_MAJOR" "$dir/usr/share/postgresql/"
	# headers are only read: share the system's
	ln -s /usr/include "$dir/usr/include"
	private_use "$dir"
}

# private_use DIR: PG_BINDIR and PG_CONFIG point into the private copy at
# DIR, which holds no file of shardid's until private_build installs them
# (an earlier install's are removed)
private_use() {
	local dir=$1 lib share
	lib=$dir/usr/lib/postgresql/$PG_MAJOR/lib
	share=$dir/usr/share/postgresql/$PG_MAJOR
	rm -rf "$lib/shardid.so" "$lib/bitcode/shardid" "$lib/bitcode/shardid.index.bc" \
		"$share"/extension/shardid.control "$share"/extension/shardid--*.sql
	PG_BINDIR=$dir/usr/lib/postgresql/$PG_MAJOR/bin
	PG_CONFIG=$PG_BINDIR/pg_config
	export PG_BINDIR PG_CONFIG
}

# private_build: build shardid from the current directory with -Werror
# (and its Assert()s when SHARDID_ASSERTS=1, its fault points when
# SHARDID_FAULTS=1), as far as make finds it out of date, and install it
# into the private copy PG_CONFIG names.
private_build() {
	make -s WERROR=1 ASSERTS="${SHARDID_ASSERTS:-}" FAULTS="${SHARDID_FAULTS:-}" PG_CONFIG="$PG_CONFIG"
	make -s install PG_CONFIG="$PG_CONFIG"
}

# private_add_debs DIR PKG...: unpack Debian packages of PostgreSQL
# extensions (postgresql-NN-plproxy, say) into the private copy at DIR,
# where they land in its lib and share directories as they would in the
# system's: nothing is installed into the system.  apt-get download
# fetches them into a temporary directory (no root needed, but the package
# lists must be there: apt-get update, which install_packages runs).
private_add_debs() {
	local dir=$1 tmp deb
	shift
	tmp=$(mktemp -d)
	if ! (cd "$tmp" && apt-get download -q "$@" >"$tmp/log" 2>&1); then
		cat "$tmp/log" >&2
		rm -rf "$tmp"
		cluster_die "could not download $* with apt-get download" \
			"(run apt-get update as root, then try again)."
		return 1
	fi
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$dir"
		echo "unpacked into $dir: $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"
	done
	rm -rf "$tmp"
}

# run a command as the cluster owner, from /, which the owner may enter
# (so that no tool complains of a checkout it cannot read)
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

# port_free PORT: nothing listens on 127.0.0.1:PORT
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# cluster_start DIR [PORT [CONF_LINE...]]: initdb DIR, start it with
# shardid preloaded; extra arguments are appended to postgresql.conf.
# The port: PORT if given and not empty, else $SHARDID_PORT if set, else a
# free one from 20000-29999, tried anew (up to 10 times) when another
# server takes it first.  Afterwards PGHOST, PGPORT, PGUSER and PGDATABASE
# point at it.
cluster_start() {
	local dir=$1 port=${2:-${SHARDID_PORT:-}} line try fixed=1
	shift $(($# < 2 ? $# : 2))
	[ -n "$port" ] || fixed=0
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	chmod 700 "$dir"
	as_owner "$PG_BINDIR/initdb" -D "$dir" -U postgres -A trust \
		--no-sync -E UTF8 --locale=C >"$dir.initdb.log" 2>&1 ||
		{ cat "$dir.initdb.log"; return 1; }
	{
		echo "listen_addresses = '127.0.0.1'"
		echo "unix_socket_directories = '$dir'"
		echo "shared_preload_libraries = 'shardid'"
		echo "timezone = 'UTC'"
		echo "fsync = off"
		for line in "$@"; do echo "$line"; done
	} >>"$dir/postgresql.conf"
	for try in 1 2 3 4 5 6 7 8 9 10; do
		if [ $fixed = 0 ]; then
			port=$((20000 + RANDOM % 10000))
			port_free "$port" || continue
		fi
		# the last "port" line counts
		echo "port = $port" >>"$dir/postgresql.conf"
		rm -f "$dir/server.log"
		if as_owner "$PG_BINDIR/pg_ctl" -D "$dir" -l "$dir/server.log" -w start \
			>/dev/null 2>"$dir.start.log"; then
			export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres
			return 0
		fi
		if [ $fixed = 1 ] || ! grep -qE 'could not (bind|create any TCP/IP)' "$dir/server.log"; then
			cat "$dir.start.log" "$dir/server.log"
			return 1
		fi
		echo "port $port was taken; trying another" >&2
	done
	cat "$dir/server.log"
	cluster_die "found no free port to start a server on: set SHARDID_PORT to one."
}

# cluster_stop DIR: stop the cluster if it runs
cluster_stop() {
	local dir=$1
	if [ -f "$dir/postmaster.pid" ]; then
		as_owner "$PG_BINDIR/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
	fi
}

# install_packages PKG...: install the Debian packages of the list that are
# missing, saying which, with apt-get (as root); stop with a sentence that
# says what to do when that cannot be done.
install_packages() {
	local missing=() p log
	command -v dpkg-query >/dev/null && command -v apt-get >/dev/null ||
		cluster_die "this system has no dpkg or apt-get: shardid's scripts install" \
			"what they need from Debian's packages (Debian 12, 13 or forky)." \
			"Elsewhere, build by hand as README.md's \"From source\" says." || return 1
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		cluster_die "these Debian packages are missing: ${missing[*]}." \
			"Run this script as root, which installs them, or install them first:" \
			"sudo apt-get install ${missing[*]}"
		return 1
	fi
	log=$(mktemp)
	if ! apt-get update -q >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		cluster_die "apt-get update failed (above): check /etc/apt/sources.list and the network."
		return 1
	fi
	for p in "${missing[@]}"; do
		if [ -z "$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)')" ]; then
			rm -f "$log"
			cluster_die "apt has no package $p on this system:" \
				"PostgreSQL $PG_MAJOR may not be in this Debian release" \
				"(15 is in Debian 12, 17 in 13, 18 in forky, 19 in experimental);" \
				"set PG_MAJOR to one that is."
			return 1
		fi
	done
	echo "installing Debian packages: ${missing[*]} (and what they depend on)"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		"${missing[@]}" >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		cluster_die "apt-get install failed (above)."
		return 1
	fi
	echo "installed: $(sed -nE 's/^Setting up ([^ :]+).*/\1/p' "$log" | sort | tr '\n' ' ')"
	rm -f "$log"
}
