# test/roots.sh: Debian roots to build and test shardid in, one per
# PostgreSQL major version.  Sourced by test/matrix.sh and test/package.sh.
#
#   15  Debian 12 bookworm
#   17  Debian 13 trixie
#   18  Debian forky (testing)
#   19  Debian sid, with experimental (19~rc1) pinned to the packages built
#       from the source package postgresql-19 alone: postgresql-19,
#       postgresql-client-19, postgresql-server-dev-19, and libpq5 and
#       libpq-dev, which postgresql-client-19 and the headers need at 19
#       (sid's are 18's).  Every other package comes from sid.
#
# A root holds the base system only: what mmdebstrap's default variant
# installs (Essential and Priority important, apt among them), and nothing
# of PostgreSQL or of the build tools.  What a test or a build needs, it
# installs itself, as on a fresh machine: demo/run.sh and test/run.sh for
# the suites, test/package.sh for the package build.  A root is made once
# and kept in $SHARDID_MATRIX_CACHE (default /var/tmp/shardid-matrix) as
# <suite>-base (about 300 MB).  Each use mounts a fresh overlay on top of
# it, so that nothing a run installs or writes reaches the cached root and
# every run starts from the base system; the overlay is thrown away
# afterwards.
#
# The .deb files apt downloads are kept between runs in
# $SHARDID_MATRIX_CACHE/apt-<suite>, bind-mounted on the root's
# /var/cache/apt/archives: that saves downloads, not state.  The package
# lists are fetched anew in each root (apt-get update).  apt refuses a
# cache that another apt holds, so scripts whose roots run at the same
# time as others of the same suite keep a cache of their own:
# ROOTS_APT_CACHE=NAME makes it $SHARDID_MATRIX_CACHE/NAME-<suite>
# (test/package.sh: apt-package).
#
# The host's apt sources are never changed: mmdebstrap is pointed at the
# host's Debian mirror, and the root gets its own sources.list.  forky's
# and sid's Release files carry a Valid-Until date that a frozen mirror
# snapshot outlives, so apt is told not to check it, both while the root is
# made and inside the root.  One setting is added to the base system:
# installing postgresql-NN makes no "main" cluster (createcluster.d), so
# that no server starts inside a root; the suites make their own clusters.
#
# Needs root (mmdebstrap, mount, chroot) and the host packages mmdebstrap
# and rsync.  rm -rf /var/tmp/shardid-matrix removes the roots, the .deb
# cache and the built packages.

MATRIX_CACHE=${SHARDID_MATRIX_CACHE:-/var/tmp/shardid-matrix}

# Roots entered and not yet left; root_leave_all tears them all down.
ROOTS_ENTERED=()

# root_suite MAJOR: the Debian suite whose archive carries PostgreSQL MAJOR
root_suite() {
	case $1 in
		15) echo bookworm ;;
		17) echo trixie ;;
		18) echo forky ;;
		19) echo sid ;;
		*) echo "no Debian suite known for PostgreSQL $1" >&2; return 1 ;;
	esac
}

# host_mirror [security]: the Debian mirror the host's apt uses, or with
# "security" its security mirror
host_mirror() {
	local url
	url=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
			/etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -oE '(https?|file)://[^ ]*/debian(-security)?/?( |$)' | tr -d ' ' |
		if [ "${1:-}" = security ]; then grep -- -security; else grep -v -- -security; fi |
		head -n 1)
	if [ "${1:-}" = security ]; then
		echo "${url:-http://deb.debian.org/debian-security}"
	else
		echo "${url:-http://deb.debian.org/debian}"
	fi
}

# root_sources SUITE: the root's apt sources, one line each: the suite
# with its updates and security updates, from the host's mirrors (sid:
# sid and experimental, which have neither)
root_sources() {
	local suite=$1 mirror security
	mirror=$(host_mirror)
	security=$(host_mirror security)
	if [ "$suite" = sid ]; then
		echo "deb $mirror sid main"
		echo "deb $mirror experimental main"
		return
	fi
	echo "deb $mirror $suite main"
	echo "deb $mirror $suite-updates main"
	echo "deb $security $suite-security main"
}

# root_pin SUITE: the apt preferences the root gets, if any.  sid's root
# takes the packages of the source package postgresql-19 from experimental
# (which apt would otherwise install from only when asked by name: its
# Release says NotAutomatic) and nothing else from there.
root_pin() {
	[ "$1" = sid ] || return 0
	printf '%s\n' \
		'Package: src:postgresql-19' \
		'Pin: release a=experimental' \
		'Pin-Priority: 990'
}

# root_base MAJOR: print the path of the cached base root for MAJOR,
# making it first if it is missing, was made from other sources, or
# --rebuild asked for it (ROOTS_REBUILD=1).  With ROOTS_TOOLS="PKG ...",
# a base root of its own that holds those packages too (a tool that
# checks what the tests made, as lintian, not what a user installs: the
# roots of the tests themselves hold the base system only).
root_base() {
	local v=$1 suite base want include=()
	local -a sources
	suite=$(root_suite "$v") || return 1
	mapfile -t sources < <(root_sources "$suite")
	base=$MATRIX_CACHE/$suite-base
	want="suite=$suite sources=${sources[*]} variant=default"
	if [ -n "${ROOTS_TOOLS:-}" ]; then
		base=$base+$(echo $ROOTS_TOOLS | tr ' ' '+')
		want="$want tools=$ROOTS_TOOLS"
		include=("--include=$(echo $ROOTS_TOOLS | tr ' ' ',')")
	fi
	[ -z "$(root_pin "$suite")" ] || want="$want pin=$(root_pin "$suite" | tr '\n' ' ')"
	mkdir -p "$MATRIX_CACHE"
	# a lock per base root: the parts that want one wait for its making,
	# and the four releases' roots are made at once (one after the other,
	# the last part on a fresh machine started 442 s in; at once, all
	# four were made in 129 s)
	(
		flock 9
		if [ "${ROOTS_REBUILD:-0}" = 0 ] && [ -f "$base.stamp" ] &&
			[ "$(cat "$base.stamp")" = "$want" ] && [ -d "$base" ]; then
			exit 0
		fi
		echo "== making the $suite base root from ${sources[0]#deb }" >&2
		rm -rf "$base" "$base.new" "$base.stamp"
		local started=$SECONDS
		# The default variant: the base system, nothing else.
		# Valid-Until: see the header.  The root keeps the setting for
		# apt run inside it.  No cluster is made when postgresql-NN is
		# installed: the suites and pg_virtualenv make their own.
		mmdebstrap --quiet "${include[@]}" \
			--aptopt='Acquire::Check-Valid-Until "false"' \
			--customize-hook='mkdir -p "$1/etc/postgresql-common/createcluster.d" && echo "create_main_cluster = false" >"$1/etc/postgresql-common/createcluster.d/no-main-cluster.conf"' \
			"$suite" "$base.new" "${sources[@]}" >&2 || { rm -rf "$base.new"; exit 1; }
		if [ -n "$(root_pin "$suite")" ]; then
			root_pin "$suite" >"$base.new/etc/apt/preferences.d/shardid-postgresql-19.pref"
		fi
		mv "$base.new" "$base"
		echo "$want" >"$base.stamp"
		echo "== $suite root made in $((SECONDS - started)) s ($(du -sh "$base" | cut -f1))" >&2
	) 9>"$base.lock" || return 1
	echo "$base"
}

# root_run_dir: make $run, a directory for this run's roots under the
# cache, and tear every root down and remove it on exit or interrupt.
root_run_dir() {
	mkdir -p "$MATRIX_CACHE"
	run=$(mktemp -d "$MATRIX_CACHE/run.XXXXXX")
	trap 'root_leave_all; rm -rf "$run"' EXIT
	trap 'exit 130' INT TERM
}

# root_enter MAJOR DIR: a fresh overlay on the cached base root for MAJOR
# at DIR/root, with /proc, /dev/pts, a tmpfs on /dev/shm and the suite's
# .deb cache mounted.  Leave it with root_leave DIR (or root_leave_all,
# from an EXIT trap).
root_enter() {
	local v=$1 dir=$2 base r suite
	base=$(root_base "$v") || return 1
	suite=$(root_suite "$v")
	mkdir -p "$dir/upper" "$dir/work" "$dir/root"
	ROOTS_ENTERED+=("$dir")
	r=$dir/root
	mount -t overlay overlay \
		-o "lowerdir=$base,upperdir=$dir/upper,workdir=$dir/work" "$r" || return 1
	mount -t proc proc "$r/proc" || return 1
	mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$r/dev/pts" || return 1
	mount --bind "$r/dev/pts/ptmx" "$r/dev/ptmx" || return 1
	mount -t tmpfs -o mode=1777,size=1g tmpfs "$r/dev/shm" || return 1
	mkdir -p "$MATRIX_CACHE/${ROOTS_APT_CACHE:-apt}-$suite/partial"
	mount --bind "$MATRIX_CACHE/${ROOTS_APT_CACHE:-apt}-$suite" "$r/var/cache/apt/archives" || return 1
	cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
	# dpkg without an fsync per file: the root is thrown away at the end,
	# and the parts' installs at once made a busy disk's syncs their
	# bottleneck (what is installed, and how, is the same)
	echo force-unsafe-io >"$r/etc/dpkg/dpkg.cfg.d/shardid-unsafe-io"
	# The host's local certificate authorities (a site's TLS proxy, say):
	# the root trusts what the host trusts, as a new machine on this
	# network would, so that npm reaches its registry.  ca-certificates
	# adds them to the root's store when it is installed, or here if it is.
	if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
		mkdir -p "$r/usr/local/share/ca-certificates"
		cp /usr/local/share/ca-certificates/*.crt "$r/usr/local/share/ca-certificates/"
		if [ -x "$r/usr/sbin/update-ca-certificates" ]; then
			chroot "$r" /usr/sbin/update-ca-certificates >/dev/null 2>&1 || true
		fi
	fi
}

# root_run DIR COMMAND...: run COMMAND in the root at DIR, as root, with a
# clean environment (nothing of the caller's PG* variables leaks in).
root_run() {
	local dir=$1
	shift
	chroot "$dir/root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
		NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
		"$@"
}

# root_leave DIR: stop whatever still runs in the root (a server a failed
# test left behind, say), unmount everything under DIR/root, and remove DIR.
root_leave() {
	local dir=$1 r=$1/root p pids tries
	[ -d "$r" ] || return 0
	r=$(cd "$r" && pwd -P)
	for tries in 1 2 3; do
		pids=()
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/root" 2>/dev/null)" = "$r" ] && pids+=("${p#/proc/}")
		done
		[ ${#pids[@]} -eq 0 ] && break
		kill -9 "${pids[@]}" 2>/dev/null || true
		sleep 1
	done
	# innermost first; a lazy unmount if something still holds one
	local m
	for m in $(awk -v r="$r" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/self/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done
	if awk -v r="$r" '$2 == r || index($2, r "/") == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
		echo "root_leave: mounts under $r remain" >&2
		return 1
	fi
	rm -rf "$dir"
}

root_leave_all() {
	local d rc=0
	for d in "${ROOTS_ENTERED[@]}"; do
		root_leave "$d" || rc=1
	done
	ROOTS_ENTERED=()
	return $rc
}

# copy_tree SRC DEST: copy the source tree SRC to DEST without build
# products or .git: the files git tracks, and new files it does not ignore
# (outside a git checkout: everything but what .gitignore names).
copy_tree() {
	local src=$1 dest=$2
	mkdir -p "$dest"
	if ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		rsync -a --exclude .git --exclude-from="$src/.gitignore" "$src"/ "$dest"/
		return
	fi
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done) |
		rsync -a --from0 --files-from=- "$src"/ "$dest"/
}
