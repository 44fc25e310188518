#!/usr/bin/env python3
"""test/orm/fetch_node_pg.py DIR: node-postgres into DIR/node_modules,
without npm.

Reads test/orm/node-pg.lock (name, version and sha512 of node-postgres
and of what it depends on, as npm resolved them), fetches each tarball
from the npm registry ($SHARDID_NPM_REGISTRY, default
https://registry.npmjs.org), refuses one whose sha512 is not the lock's,
and unpacks it into DIR/node_modules/NAME (npm's flat layout: no two
versions of one package).  Debian's npm package brings about 500 packages
with it; this needs python3 alone.  Prints one line per package; exits 1
on the first failure, saying which.
"""

import base64
import hashlib
import io
import os
import sys
import tarfile
import urllib.request

LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node-pg.lock")


def read_lock(path):
    """The lock's (name, version, integrity) triples, in its order."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, version, integrity = line.split()
            entries.append((name, version, integrity))
    return entries


def checked(data, integrity):
    """True if data's sha512 is the one integrity (an SRI string) names."""
    algo, _, want = integrity.partition("-")
    if algo != "sha512":
        return False
    got = base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    return got == want


def unpack(data, dest):
    """The tarball's package/ directory into dest, refusing any member
    whose path leaves it or that is not a file or a directory."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for m in tar.getmembers():
            parts = m.name.split("/", 1)
            if len(parts) < 2 or not parts[1]:
                continue
            rel = os.path.normpath(parts[1])
            if rel.startswith("..") or os.path.isabs(rel) or not (m.isfile() or m.isdir()):
                raise ValueError("unsafe member %r" % m.name)
            path = os.path.join(dest, rel)
            if m.isdir():
                os.makedirs(path, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with tar.extractfile(m) as src, open(path, "wb") as out:
                out.write(src.read())


def main(argv):
    if len(argv) != 2:
        print("usage: fetch_node_pg.py DIR", file=sys.stderr)
        return 2
    registry = os.environ.get("SHARDID_NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")
    modules = os.path.join(argv[1], "node_modules")
    for name, version, integrity in read_lock(LOCK):
        url = "%s/%s/-/%s-%s.tgz" % (registry, name, name, version)
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                data = r.read()
        except OSError as e:
            print("fetch_node_pg: %s: %s" % (url, e), file=sys.stderr)
            return 1
        if not checked(data, integrity):
            print("fetch_node_pg: %s: its sha512 is not the lock's" % url, file=sys.stderr)
            return 1
        unpack(data, os.path.join(modules, name))
        print("%s %s" % (name, version))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
