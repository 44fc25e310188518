# test/only.sh: test/run.sh --only NAME, one test of any kind, in seconds
# once it has run before.  Sourced by test/run.sh, whose functions it
# calls (run_regress, run_clients, run_tap, orm_node_modules, tap_extras)
# and whose globals it sets.
#
# NAME is a test's file name, its path, or its stem, or the start of a
# stem that only one test has (010 for test/t/010_stress.pl):
#   unit, fuzz, model, fleet_cli, fleet_unit, clients
#                                           test/run.sh's suites of those names
#   test/sql/NAME.sql                       a regress file
#   test/specs/NAME.spec                    an isolation spec
#   test/t/NAME.pl                          a TAP test
#   clients/js/test/NAME.test.js, clients/python/tests/NAME.py
#                                           one file of a client's tests
# A name that is no test's, or more than one's, stops the run (exit 2)
# with the tests it could mean.
#
# What a server needs is kept between runs, one directory per checkout
# and PostgreSQL version (/tmp/shardid-only/VERSION-HASH, or
# SHARDID_ONLY_DIR/VERSION-HASH: SHARDID_ONLY_DIR a directory the
# cluster owner can reach): the
# private copy of PostgreSQL with shardid installed, and a copy of the
# tree (the cluster owner's) where make builds only what changed since
# the last run.  The copy of PostgreSQL is made anew when the system's
# PostgreSQL or SHARDID_ASSERTS changed.  A regress file or a spec runs
# on the regress server of test/run.sh (run_regress: the same preload and
# settings), started for it and stopped after it.

# only_candidates: every test --only knows, one a line: KIND PATH, PATH
# relative to the checkout (a suite: its name)
only_candidates() {
	local f
	printf 'suite %s\n' unit fuzz model fleet_cli fleet_unit clients
	for f in test/sql/*.sql; do echo "regress $f"; done
	for f in test/specs/*.spec; do echo "isolation $f"; done
	for f in test/t/*.pl; do echo "tap $f"; done
	for f in clients/js/test/*.test.js; do echo "js $f"; done
	for f in clients/python/tests/test_*.py; do echo "python $f"; done
}

# only_stem PATH: the file name without its extension (.pl, .sql, .spec,
# .py, .js)
only_stem() {
	local b
	b=$(basename "$1")
	echo "${b%.*}"
}

# only_resolve NAME: only_kind and only_path of the one test NAME names,
# else a message with the candidates, and exit 2
only_resolve() {
	local name=$1 kind path base exact=() prefix=() all
	all=$(only_candidates)
	while read -r kind path; do
		base=${path##*/}
		if [ "$name" = "$path" ] || [ "$name" = "$base" ] || [ "$name" = "${base%.*}" ]; then
			exact+=("$kind $path")
		elif [[ ${base%.*} == "$name"* ]]; then
			prefix+=("$kind $path")
		fi
	done <<<"$all"
	[ ${#exact[@]} -gt 0 ] || exact=("${prefix[@]}")
	if [ ${#exact[@]} -eq 1 ]; then
		read -r only_kind only_path <<<"${exact[0]}"
		return 0
	fi
	if [ ${#exact[@]} -gt 1 ]; then
		echo "test/run.sh: --only $name could be any of these; name one:" >&2
		printf '  %s\n' "${exact[@]}" >&2
	else
		echo "test/run.sh: --only $name: no test has that name; the tests are:" >&2
		for kind in suite regress isolation tap js python; do
			echo "  $kind: $(sed -n "s,^$kind ,,p" <<<"$all" | xargs -n1 basename |
				sed -E 's/\.(pl|sql|spec|py|js)$//' | tr '\n' ' ' | sed 's/ $//')" >&2
		done
	fi
	exit 2
}

# only_setup: after test/run.sh read its options: --only takes no other
# option; resolve the name; no suite runs but the one only_run runs
only_setup() {
	if [ $quick = 1 ] || [ $skip_tap = 1 ] || [ $skip_common = 1 ] || [ -n "$tap_tests" ]; then
		echo "test/run.sh: --only runs one test: --quick, --tap, --skip-tap and --skip-common do not go with it" >&2
		exit 2
	fi
	only_resolve "$only"
	skip_common=1
	skip_tap=1
	tier="one test: $only_kind $only_path"
}

# only_workdir: work is the directory kept for this checkout and version,
# held by this run alone (a lock file); what the last run left there (its
# cluster, its logs) is removed
only_workdir() {
	local d base=${SHARDID_ONLY_DIR:-/tmp/shardid-only}
	# a directory of its own in base, never base itself (which may be /tmp
	# or a home directory: its mode and its files are not this script's)
	work=$base/$PG_MAJOR-$(printf '%s' "$here" | md5sum | cut -c1-8)
	if [ -z "${SHARDID_ONLY_DIR:-}" ]; then
		# /tmp is everyone's: use /tmp/shardid-only only if this user made it
		mkdir -p -m 755 "$base"
		if [ -L "$base" ] || [ ! -O "$base" ]; then
			echo "test/run.sh: $base is not this user's own directory: remove it, or set SHARDID_ONLY_DIR" >&2
			exit 1
		fi
	fi
	mkdir -p -m 755 "$work"
	if [ -L "$work" ] || [ ! -O "$work" ]; then
		echo "test/run.sh: $work is not this user's own directory: remove it, or set SHARDID_ONLY_DIR" >&2
		exit 1
	fi
	# the cluster owner reads the private copy and the tree in it
	chmod 755 "$work"
	exec 7>"$work/lock"
	flock -n 7 || {
		echo "test/run.sh: another test/run.sh --only uses $work (or a server it left running does): wait for it" >&2
		exit 1
	}
	cluster_stop "$work/data"
	rm -rf "$work/data" "$work"/data.*.log "$work"/tap-* "$work/initdb-template" "$work/initdb-template.log" \
		"$work/clients" "$work/suite.log" "$work/src-tree"/{tmp_check,results,output_iso,log,regression.diffs,regression.out}
	echo "== kept between runs: $work"
}

# only_build: the copy of the tree in $work/src-tree, as the checkout is
# (what git ignores, the build's files, stays); for a test that needs a
# server, shardid built there, as far as make finds it out of date, and
# installed into the private copy of PostgreSQL in $work/pg, made anew
# when the system's PostgreSQL, SHARDID_ASSERTS or SHARDID_FAULTS changed
only_build() {
	local sys_bindir=/usr/lib/postgresql/$PG_MAJOR/bin stamp asserts=${SHARDID_ASSERTS-1}
	stamp="$("$sys_bindir/postgres" -V); $("$sys_bindir/pg_config" --version); SHARDID_ASSERTS=$asserts SHARDID_FAULTS=${SHARDID_FAULTS:-}"
	if [ "$(cat "$work/build.stamp" 2>/dev/null)" != "$stamp" ]; then
		echo "== a new private copy of PostgreSQL $PG_MAJOR in $work/pg ($stamp)"
		rm -f "$work/build.stamp"
		rm -rf "$work/src-tree"
		private_copy "$work/pg"
		echo "$stamp" >"$work/build.stamp"
	else
		private_use "$work/pg"
	fi
	rsync -a --delete --exclude .git --filter=':- .gitignore' "$here"/ "$work"/src-tree/
	case $only_kind in
		regress | isolation | tap)
			echo "== build (what changed) and install into $work/pg"
			(cd "$work/src-tree" && SHARDID_ASSERTS=$asserts private_build) ;;
	esac
	[ "$(id -u)" = 0 ] && chown -R postgres: "$work/src-tree"
	return 0
}

# only_run: the test, then its count (1 passed or 1 failed)
only_run() {
	local rc=0 stem
	stem=$(only_stem "$only_path")
	suite_start
	case $only_kind:$only_path in
		suite:unit) make -s -C test/unit check || rc=$? ;;
		suite:fuzz)
			install_packages "${fuzz_packages[@]}"
			make -s -C test/unit -j2 fuzz FUZZ_SECONDS=20 || rc=$? ;;
		suite:model) bash test/model/run.sh || rc=$? ;;
		suite:fleet_cli)
			install_packages "${common_packages[@]}"
			/usr/bin/python3 test/fleet_cli.py || rc=$? ;;
		suite:fleet_unit)
			install_packages "${common_packages[@]}"
			PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest test/fleet_unit || rc=$? ;;
		suite:clients) run_clients || rc=$? ;;
		regress:*) run_regress REGRESS="$stem" ISOLATION= || rc=$? ;;
		isolation:*) run_regress REGRESS= ISOLATION="$stem" || rc=$? ;;
		js:*)
			command -v node >/dev/null || install_packages nodejs
			(cd "$work/src-tree/clients/js" && node --test --test-reporter=tap "test/$(basename "$only_path")") || rc=$? ;;
		python:*)
			install_packages python3-build python3-setuptools python3-wheel python3-venv
			(cd "$work/src-tree/clients/python" &&
				/usr/bin/python3 -m unittest discover -v -s tests -p "$(basename "$only_path")") || rc=$? ;;
		tap:*)
			install_packages "${tap_packages[@]}"
			if [[ " ${PG_TEST_EXTRA:-} " == *" shardid_ha "* ]]; then
				install_packages patroni etcd-server
			fi
			if [[ " ${PG_TEST_EXTRA:-} " =~ " shardid_"(node|load)" " ]] && ! command -v npm >/dev/null; then
				install_packages npm
			fi
			# the third-party extensions, unpacked into the copy once
			if [ ! -e "$work/pg/.tap-extras" ]; then
				tap_extras "$work/pg"
				touch "$work/pg/.tap-extras"
			fi
			# Citus, when its tier asks for it after the extras were added
			if [[ " ${PG_TEST_EXTRA:-} " == *" shardid_citus "* ]] &&
				[ ! -e "$work/pg/usr/lib/postgresql/$PG_MAJOR/lib/citus.so" ]; then
				citus_add "$work/pg" || echo "Citus could not be built: test/t/120_citus.pl will skip"
			fi
			if [ "$stem" = 100_orm ] && command -v npm >/dev/null; then
				orm_node_modules
			fi
			tap_tests=$only_path
			run_tap || rc=$? ;;
	esac
	count "$only_kind $only_path" $rc $((rc == 0)) $((rc != 0))
}
