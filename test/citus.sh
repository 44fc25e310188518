# test/citus.sh: Citus, built from the source archive in ../shared/vendor
# (Debian packages no Citus), for the long tier's test/t/120_citus.pl
# (PG_TEST_EXTRA=shardid_citus).  Sourced by test/run.sh after
# test/cluster.sh.
#
# citus_add DIR: build Citus against the system's PostgreSQL $PG_MAJOR
# (once: the build is cached in $SHARDID_CITUS_CACHE, default
# /var/tmp/shardid-citus, as <version>-pg<major>-<first 12 hex digits of
# the archive's sha256>, so a changed archive builds anew) and copy its
# library and extension files into the private copy of PostgreSQL at DIR.
# Nothing is installed into the system's PostgreSQL.  Built without the
# LLVM bitcode for JIT (with_llvm=no: half the build's time, and the
# test's queries are too small to be compiled).  The first build
# takes 4-8 min on 2 cores (under nice); later runs copy in seconds.
#
# The archive: SHARDID_CITUS_TARBALL, else the newest citus-*.tar.gz in
# ../shared/vendor (next to the checkout's parent) that builds against
# PG_MAJOR: 13.2.2 for 15-17, 14.0.1 for 16-18.

CITUS_CACHE=${SHARDID_CITUS_CACHE:-/var/tmp/shardid-citus}
# what the build needs besides postgresql-server-dev-NN
citus_build_packages=(liblz4-dev libzstd-dev libkrb5-dev flex bison make gcc)

# citus_tarball: print the archive to build for PG_MAJOR, or fail
citus_tarball() {
	local vendor t
	if [ -n "${SHARDID_CITUS_TARBALL:-}" ]; then
		echo "$SHARDID_CITUS_TARBALL"
		return 0
	fi
	vendor=${SHARDID_VENDOR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../shared/vendor" 2>/dev/null && pwd)}
	for t in $(ls -1 "$vendor"/citus-*.tar.gz 2>/dev/null | sort -rV); do
		case "$(basename "$t"):$PG_MAJOR" in
			citus-13.*:1[5-7]|citus-14.*:1[6-8]) echo "$t"; return 0 ;;
		esac
	done
	cluster_die "no Citus source archive for PostgreSQL $PG_MAJOR in ${vendor:-../shared/vendor}" \
		"(set SHARDID_CITUS_TARBALL to one)"
}

# citus_build: print the cached build's root (its usr/ holds Citus's
# files as `make install DESTDIR=` put them), building it first if missing
citus_build() {
	local tarball sum version key dest src log
	tarball=$(citus_tarball) || return 1
	sum=$(sha256sum "$tarball" | cut -c1-12)
	version=$(basename "$tarball" .tar.gz)
	key=$version-pg$PG_MAJOR-$sum
	dest=$CITUS_CACHE/$key
	mkdir -p "$CITUS_CACHE"
	(
		flock 9
		[ -f "$dest/done" ] && exit 0
		install_packages "${citus_build_packages[@]}" "postgresql-server-dev-$PG_MAJOR" >&2 || exit 1
		echo "== building $version for PostgreSQL $PG_MAJOR into $dest (once; 4-8 min)" >&2
		rm -rf "$dest" "$dest.src"
		mkdir -p "$dest.src"
		tar -xzf "$tarball" -C "$dest.src" --strip-components=1 || exit 1
		src=$dest.src
		# PostgreSQL 15.20 declares have_createdb_privilege() in
		# commands/dbcommands.h, which Citus 13's compatibility header
		# defines as a static function of its own: rename Citus's
		if grep -q 'have_createdb_privilege' /usr/include/postgresql/$PG_MAJOR/server/commands/dbcommands.h 2>/dev/null &&
			grep -q '^have_createdb_privilege\|static.*have_createdb_privilege' "$src/src/include/pg_version_compat.h"; then
			sed -i 's/\bhave_createdb_privilege\b/citus_have_createdb_privilege/g' \
				$(grep -rl 'have_createdb_privilege' "$src/src") || exit 1
			# (where the server's own is used, the macro names it)
			sed -i 's/^#define citus_have_createdb_privilege() citus_have_createdb_privilege()/#define citus_have_createdb_privilege() have_createdb_privilege()/' \
				"$src/src/include/pg_version_compat.h" || exit 1
		fi
		log=$dest.log
		local sys_config=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
		(cd "$src" && nice -n 10 ./configure --without-libcurl PG_CONFIG="$sys_config" &&
			nice -n 10 make -j2 with_llvm=no &&
			make install with_llvm=no DESTDIR="$dest") >"$log" 2>&1 ||
			{ tail -n 40 "$log" >&2; rm -rf "$dest"; exit 1; }
		rm -rf "$src"
		touch "$dest/done"
	) 9>"$CITUS_CACHE/.lock" || return 1
	echo "$dest"
}

# citus_add DIR: Citus's files into the private copy at DIR
citus_add() {
	local dir=$1 built
	built=$(citus_build) || return 1
	cp -a "$built/usr/lib/postgresql/$PG_MAJOR/lib/." "$dir/usr/lib/postgresql/$PG_MAJOR/lib/"
	cp -a "$built/usr/share/postgresql/$PG_MAJOR/extension/." "$dir/usr/share/postgresql/$PG_MAJOR/extension/"
	echo "Citus into $dir: $(basename "$built")"
}
