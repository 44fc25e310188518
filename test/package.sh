#!/usr/bin/env bash
# test/package.sh: build the Debian packages postgresql-NN-shardid for each
# PostgreSQL major version, and shardid-fleet and python3-shardid
# (Architecture: all, made by every version's build, in that version's
# Debian release), check them with lintian, and test them as a user gets
# them: installed with apt into a clean Debian root, then for the
# extension the regression and isolation suites (debian/tests/installcheck,
# as autopkgtest runs it) against the installed files, from a source tree
# that was never built, for shardid-fleet debian/tests/fleet-cli (--help,
# check --no-connect, the manual page), for python3-shardid
# debian/tests/python (import, the unit tests and the test vectors), and
# for each package debian/tests/docs (every link of its installed pages
# resolves).
#
#   15  built and tested in Debian 12 bookworm roots
#   17  built and tested in Debian 13 trixie roots
#   18  built and tested in Debian forky roots
#   19  built and tested in Debian sid roots with experimental's
#       postgresql-19 pinned in (test/roots.sh)
#
# Each build and test says PG_SUPPORTED_VERSIONS=V to postgresql-common
# (pg_buildext): sid's own supported version is 18, and 19 comes from
# experimental; on the other releases V is the release's own.  It installs
# postgresql-server-dev-V beside what postgresql-server-dev-all brings
# (sid's: 18's).
#
# Each build and each test runs in a fresh overlay on the cached base root
# (see test/roots.sh), which holds the base system only: the build installs
# build-essential and the package's Build-Depends (apt-get build-dep), the
# test installs the package with apt and what debian/tests/control names.
# lintian runs in one more bookworm root.  The host gets mmdebstrap and
# rsync, nothing else.  The packages, with their .changes and build logs,
# go to DIR/NN/ (default: $SHARDID_MATRIX_CACHE/packages, that is
# /var/tmp/shardid-matrix/packages); nothing is written into this tree.
#
# Usage: bash test/package.sh [--versions "15 17 18"] [--out DIR] [--cache DIR]
#                             [--build-only]
#   --build-only  build only: no lintian, no installed-package test
#
# Run as root.  Closes with "package: N passed, N failed", counting per
# version the build, lintian, and the tests of the installed extension,
# shardid-fleet and python3-shardid.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

versions="15 17 18"
out=""
build_only=0
while [ $# -gt 0 ]; do
	case $1 in
		--versions) versions=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		--cache) SHARDID_MATRIX_CACHE=$2; shift 2 ;;
		--build-only) build_only=1; shift ;;
		*) sed -n '/^# Usage/,/^# *--build-only/p' "$0" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "test/package.sh: run as root (it makes roots and mounts)" >&2; exit 2; }
. test/roots.sh
# a .deb cache of its own: test/matrix.sh runs this beside its versions'
# roots, which use the same suites
ROOTS_APT_CACHE=apt-package
# the host needs no PostgreSQL of its own: the versions run in the roots
PG_MAJOR=${PG_MAJOR:-none}
. test/cluster.sh
out=${out:-$MATRIX_CACHE/packages}
install_packages mmdebstrap rsync

# The upstream version: the Debian version (of the changelog's first
# line) less its revision.
debver=$(sed -nE '1s/^[^ ]+ \(([^)]+)\).*/\1/p' debian/changelog)
upver=${debver%-*}
arch=$(dpkg --print-architecture)

root_run_dir

passed=0
failed=0
summary=()
step() {
	local name=$1
	shift
	local started=$SECONDS
	echo "== $name"
	if "$@"; then
		passed=$((passed + 1))
		summary+=("ok     $name ($((SECONDS - started)) s)")
	else
		failed=$((failed + 1))
		summary+=("FAILED $name ($((SECONDS - started)) s)")
		echo "FAILED: $name"
	fi
}

# prepare DIR: DIR/shardid-UPVER is the source tree without build products,
# beside the upstream tarball dpkg-source wants (the tree less debian/).
prepare() {
	local dir=$1
	rm -rf "$dir"
	mkdir -p "$dir"
	copy_tree "$here" "$dir/shardid-$upver"
	tar -C "$dir" --exclude="shardid-$upver/debian" --sort=name --owner=0 --group=0 \
		-czf "$dir/shardid_$upver.orig.tar.gz" "shardid-$upver"
}

# build V: in a fresh root of V's Debian release, install build-essential
# and the Build-Depends, then pg_buildext updatecontrol and
# dpkg-buildpackage -us -uc; the results go to $out/V.
build() {
	local v=$1 dest=$out/$1 dir log
	rm -rf "$dest"
	mkdir -p "$dest"
	log=$dest/build.log
	dir=$run/root-build-$v
	root_enter "$v" "$dir" || return 1
	prepare "$dir/root/build"
	root_run "$dir" env PG_SUPPORTED_VERSIONS="$v" bash -euc "
		cd /build/shardid-$upver
		apt-get update -q
		apt-get install -y -q build-essential
		apt-get build-dep -y -q .
		apt-get install -y -q postgresql-server-dev-$v
		# debian/control for the PostgreSQL versions installed
		pg_buildext updatecontrol
		dpkg-buildpackage -us -uc" >"$log" 2>&1 ||
		{ tail -n 40 "$log"; root_leave "$dir"; return 1; }
	find "$dir/root/build" -maxdepth 1 -type f -exec cp {} "$dest"/ \;
	root_leave "$dir"
	# the version's extension package, and shardid-fleet: every version's
	# build makes it anew, from its own release, into its own directory
	ls "$dest"/postgresql-"$v"-shardid_"$debver"_"$arch".deb \
		"$dest"/shardid-fleet_"$debver"_all.deb \
		"$dest"/python3-shardid_"$debver"_all.deb >/dev/null || return 1
	echo "built: $(cd "$dest" && ls ./*.deb | tr '\n' ' ')"
	dpkg-deb -f "$dest"/postgresql-"$v"-shardid_"$debver"_"$arch".deb Depends
	dpkg-deb -f "$dest"/shardid-fleet_"$debver"_all.deb Depends
	dpkg-deb -f "$dest"/python3-shardid_"$debver"_all.deb Depends
}

# check V: lintian on what build V made (the .changes: the source, the
# extension package and shardid-fleet), every tag down to pedantic and
# the overridden ones too (each override in debian/ says why); fails on
# an error or a warning that is not overridden, or when the .changes
# lacks one of the packages.
lint_dir=
check() {
	local v=$1 tags
	if [ -z "$lint_dir" ]; then
		# one bookworm root with lintian for every version's packages: a
		# base root made with lintian in it and kept (test/roots.sh,
		# ROOTS_TOOLS), as installing it anew took 8 to 11 minutes of a
		# busy machine
		lint_dir=$run/root-lintian
		ROOTS_TOOLS=lintian ROOTS_APT_CACHE=apt-lintian-$v root_enter 15 "$lint_dir" || return 1
		root_run "$lint_dir" lintian --version || return 1
	fi
	local changes=$out/$v/shardid_${debver}_$arch.changes deb
	for deb in postgresql-"$v"-shardid_"$debver"_"$arch".deb shardid-fleet_"$debver"_all.deb \
		python3-shardid_"$debver"_all.deb; do
		grep -q " $deb\$" "$changes" || { echo "$changes lists no $deb"; return 1; }
	done
	rm -rf "$lint_dir/root/lint"
	mkdir -p "$lint_dir/root/lint"
	cp "$out/$v"/* "$lint_dir/root/lint/"
	tags=$(root_run "$lint_dir" lintian --display-info --pedantic --show-overrides \
		/lint/shardid_"$debver"_"$arch".changes 2>&1 | grep -v '^running with root') || true
	echo "$tags"
	echo "lintian: $(echo "$tags" | grep -c '^[EW]:' || true) errors and warnings," \
		"$(echo "$tags" | grep -c '^[IPX]:' || true) info and pedantic tags," \
		"$(echo "$tags" | grep -c '^O:' || true) overridden"
	! echo "$tags" | grep -q '^[EW]:'
}

# test_installed V: in a clean root, apt install the package, make sure
# the files are where PostgreSQL looks for them, run debian/tests/ from a
# source tree that holds no build products, and test/readme_clusters.sh
# (the README's first steps on Debian's clusters, as pasted), then purge
# the package.
test_installed() {
	local v=$1 dir=$run/root-test-$1 rc=0
	root_enter "$v" "$dir" || return 1
	mkdir -p "$dir/root/debs"
	cp "$out/$v"/postgresql-"$v"-shardid_"$debver"_"$arch".deb "$dir/root/debs/"
	copy_tree "$here" "$dir/root/src/shardid"
	# what debian/tests/control names: make, postgresql-server-dev-all and
	# the package itself
	root_run "$dir" env PG_SUPPORTED_VERSIONS="$v" bash -euc "
		v=$v
		apt-get update -q
		apt-get install -y -q make postgresql-server-dev-all postgresql-server-dev-\$v
		lib=\$(/usr/lib/postgresql/\$v/bin/pg_config --pkglibdir)
		ext=\$(/usr/lib/postgresql/\$v/bin/pg_config --sharedir)/extension
		if ls \$lib/shardid.so \$ext/shardid* 2>/dev/null; then
			echo 'the root is not clean: shardid is installed already'; exit 1
		fi
		if [ -n \"\$(find /src/shardid -name '*.so' -o -name '*.o')\" ]; then
			echo 'the source tree holds build products'; exit 1
		fi
		apt-get install -y -q --no-install-recommends /debs/postgresql-\$v-shardid_*.deb
		dpkg -s postgresql-\$v-shardid | grep -E '^(Status|Version|Depends):'
		ls -l \$lib/shardid.so \$ext/shardid.control \$ext/shardid--*.sql
		cd /src/shardid
		debian/tests/installcheck
		debian/tests/docs
		# the README's first steps on Debian's own clusters (pg_wrapper,
		# pg_ctlcluster: no systemd here), and its second-cluster note
		bash test/readme_clusters.sh \$v
		apt-get purge -y -q postgresql-\$v-shardid
		if ls \$lib/shardid.so \$ext/shardid* 2>/dev/null; then
			echo 'purge left files behind'; exit 1
		fi
		echo 'purged: no files left'
	" || rc=$?
	root_leave "$dir" || rc=1
	return $rc
}

# ports_held CMD...: CMD, holding SHARDID_PORTS_LOCK if it is set: the
# installed package's test starts Debian's clusters on their own ports
# (5432, and pg_virtualenv's 5433), which the roots' shared network has
# once (test/matrix.sh runs the versions' rounds at once)
ports_held() {
	if [ -z "${SHARDID_PORTS_LOCK:-}" ]; then
		"$@"
		return
	fi
	local rc=0
	exec 9>>"$SHARDID_PORTS_LOCK"
	flock 9
	"$@" || rc=$?
	flock -u 9
	exec 9>&-
	return $rc
}

# root_with_deb V DIR DEB: check that the Architecture: all package DEB
# of build V holds no byte code, then make a clean root of V's release in
# DIR with DEB in /debs and the source tree in /src/shardid.
root_with_deb() {
	local v=$1 dir=$2 deb=$3
	if dpkg-deb -c "$out/$v/$deb" | grep -E '__pycache__|\.pyc$'; then
		echo "$deb holds byte code"
		return 1
	fi
	root_enter "$v" "$dir" || return 1
	mkdir -p "$dir/root/debs"
	cp "$out/$v/$deb" "$dir/root/debs/"
	copy_tree "$here" "$dir/root/src/shardid"
}

# test_fleet V: in a clean root of V's release, apt install the
# shardid-fleet package that build V made (which brings python3,
# python3-psycopg and postgresql-client), check where its files are and
# that it holds no byte code, run debian/tests/fleet-cli (--help names
# every command, each command's --help, check --no-connect on a map and on
# a broken one, the manual page) and check --no-connect on the example
# map, format the manual page with man and no warning, then purge the
# package (after runs as root) and check that no file is left.
test_fleet() {
	local v=$1 dir=$run/root-fleet-$1 rc=0 deb=shardid-fleet_${debver}_all.deb
	root_with_deb "$v" "$dir" "$deb" || return 1
	root_run "$dir" bash -euc "
		apt-get update -q
		for p in shardid-fleet python3-psycopg; do
			if dpkg -s \$p >/dev/null 2>&1; then
				echo \"the root is not clean: \$p is installed already\"; exit 1
			fi
		done
		apt-get install -y -q --no-install-recommends /debs/$deb
		dpkg -s shardid-fleet | grep -E '^(Status|Version|Depends):'
		dpkg -s python3-psycopg postgresql-client | grep -E '^(Package|Status|Version):'
		command -v psql pg_dump
		ls -l /usr/bin/shardid-fleet /usr/share/shardid-fleet/shardid_fleet \
			/usr/share/man/man1/shardid-fleet.1.gz /usr/share/doc/shardid-fleet
		cd /src/shardid
		debian/tests/fleet-cli
		debian/tests/docs
		shardid-fleet check --no-connect tools/examples/fleet.map
		shardid-fleet check --no-connect /usr/share/doc/shardid-fleet/examples/fleet.map
		# the manual page as man shows it, with groff's warnings
		apt-get install -y -q --no-install-recommends man-db
		[ \"\$(man -w shardid-fleet)\" = /usr/share/man/man1/shardid-fleet.1.gz ]
		warnings=\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \\
			/usr/share/man/man1/shardid-fleet.1.gz 2>&1 >/dev/null)
		[ -z \"\$warnings\" ] || { echo \"man: \$warnings\"; exit 1; }
		MANWIDTH=80 man shardid-fleet 2>&1 | sed -n '1,12p'
		echo 'man shardid-fleet: no warnings'
		apt-get purge -y -q shardid-fleet
		if ls -d /usr/bin/shardid-fleet /usr/share/shardid-fleet /usr/share/doc/shardid-fleet \\
				/usr/share/man/man1/shardid-fleet.1.gz 2>/dev/null; then
			echo 'purge left files behind'; exit 1
		fi
		echo 'purged: no files left'
	" || rc=$?
	root_leave "$dir" || rc=1
	return $rc
}

# test_python V: in a clean root of V's release, apt install the
# python3-shardid package that build V made (nothing but python3 comes
# with it), check that it holds no byte code and installs into
# /usr/lib/python3/dist-packages, run debian/tests/python (import, the
# unit tests and every test vector against the installed module) and
# debian/tests/docs, then purge it and check that no file is left (the
# byte code that python3's postinst compiled goes with it).
test_python() {
	local v=$1 dir=$run/root-python-$1 rc=0 deb=python3-shardid_${debver}_all.deb
	root_with_deb "$v" "$dir" "$deb" || return 1
	root_run "$dir" bash -euc "
		apt-get update -q
		if dpkg -s python3-shardid >/dev/null 2>&1; then
			echo 'the root is not clean: python3-shardid is installed already'; exit 1
		fi
		apt-get install -y -q --no-install-recommends /debs/$deb
		dpkg -s python3-shardid | grep -E '^(Status|Version|Depends):'
		dpkg -L python3-shardid | grep -E '/dist-packages/shardid'
		cd /src/shardid
		debian/tests/python
		debian/tests/docs
		apt-get purge -y -q python3-shardid
		if ls -d /usr/lib/python3/dist-packages/shardid /usr/lib/python3/dist-packages/shardid-*.dist-info \\
				/usr/share/doc/python3-shardid 2>/dev/null; then
			echo 'purge left files behind'; exit 1
		fi
		echo 'purged: no files left'
	" || rc=$?
	root_leave "$dir" || rc=1
	return $rc
}

for v in $versions; do
	where="$(root_suite "$v") root"
	step "PostgreSQL $v: build ($where)" build "$v"
	[ $build_only = 1 ] && continue
	if [ -f "$out/$v/shardid_${debver}_$arch.changes" ]; then
		step "PostgreSQL $v: lintian" check "$v"
		step "PostgreSQL $v: apt install into a clean $(root_suite "$v") root, installcheck" \
			ports_held test_installed "$v"
		step "PostgreSQL $v: shardid-fleet: apt install into a clean $(root_suite "$v") root, --help, check, man page" \
			test_fleet "$v"
		step "PostgreSQL $v: python3-shardid: apt install into a clean $(root_suite "$v") root, import, vectors" \
			test_python "$v"
	else
		failed=$((failed + 4))
		summary+=("FAILED PostgreSQL $v: lintian and tests skipped, no package")
	fi
done

echo "==== package"
printf '%s\n' "${summary[@]}"
echo "packages in $out"
echo "package: $passed passed, $failed failed"
[ $failed -eq 0 ]
