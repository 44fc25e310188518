#!/usr/bin/env bash
# test/vectors/regenerate.sh: rebuild test/vectors/vectors.json from the
# extension in this tree.  Builds and installs shardid into a private copy
# of PostgreSQL (test/cluster.sh: the system's is not touched), starts a
# throwaway server with the spec's test keys in shardid.public_id_keys, runs
# test/vectors/generate.py against it, and stops it.  The regress suite
# vectors (test/sql/vectors.sql) then checks the new file against the extension;
# its expected output counts each section's vectors, so a file with more or
# fewer vectors needs test/expected/vectors.out updated to the new counts.
#
# Usage: bash test/vectors/regenerate.sh   (as root or as a user who may
# run initdb; root installs the missing Debian packages first)
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
. test/cluster.sh

install_packages make gcc postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR python3-psycopg

work=$(mktemp -d /tmp/shardid-vectors.XXXXXX)
chmod 755 "$work"
trap 'cluster_stop "$work/data"; rm -rf "$work"' EXIT

private_install "$work/pg"
cluster_start "$work/data" "" \
	"shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100'"
/usr/bin/python3 test/vectors/generate.py "$work/vectors.json"
cp "$work/vectors.json" test/vectors/vectors.json
echo "test/vectors/vectors.json: $(wc -c <test/vectors/vectors.json) bytes"
