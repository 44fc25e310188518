#!/usr/bin/env bash
# bench/client_json.sh: what the clients' JSON readers spend on an ID field
# of N digits, which they refuse (no int8 has more than 19): JS parse and
# Python loads, each beside its language's own reader of the same text
# (JSON.parse, json.loads) as the baseline of one run.  Issue 23: parse
# took 5.1 s of CPU for 5,000,000 digits when BigInt saw them; refused by
# length it takes about what JSON.parse takes to read the text.
#
# No server: it runs the packages in clients/ as they are in this tree.
#
# Usage: bench/client_json.sh [N [REPS]]   (default 5,000,000 digits, 5 reps)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-5000000}
reps=${2:-5}

echo "== JavaScript (node $(node --version)): {\"id\": <$n digits>}, best of $reps"
node --input-type=module - "$here/clients/js/index.js" "$n" "$reps" <<'EOF'
const [, , lib, n, reps] = process.argv;
const { parse } = await import(lib);
const digits = '9'.repeat(Number(n));
const best = (f) => {
  let b = Infinity;
  for (let r = 0; r < Number(reps); r++) {
    const t0 = process.hrtime.bigint();
    f();
    b = Math.min(b, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return b;
};
const refused = (f) => () => { try { f(); } catch (e) { if (!e.sqlstate) throw e; } };
for (const [what, text] of [['a string', `{"id":"${digits}"}`], ['a bare number', `{"id":${digits}}`]]) {
  const ours = best(refused(() => parse(text)));
  const base = best(() => JSON.parse(text));
  console.log(`  ${what.padEnd(14)} parse ${ours.toFixed(1).padStart(8)} ms   JSON.parse ${base.toFixed(1).padStart(8)} ms   ratio ${(ours / base).toFixed(2)}`);
}
EOF

echo "== Python ($(/usr/bin/python3 --version)): {\"id\": <$n digits>}, best of $reps"
(cd "$here/clients/python" && /usr/bin/python3 - "$n" "$reps") <<'EOF'
import json
import sys
import time

import shardid

n, reps = int(sys.argv[1]), int(sys.argv[2])
digits = "9" * n


def best(f):
    b = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        b = min(b, (time.perf_counter() - t0) * 1000)
    return b


def refused(f):
    def g():
        try:
            f()
        except shardid.ShardidError:
            pass
    return g


def baseline(text):
    def g():
        try:
            json.loads(text)
        except ValueError:      # a bare number past 4,300 digits
            pass
    return g


for what, text in (("a string", '{"id":"%s"}' % digits), ("a bare number", '{"id":%s}' % digits)):
    ours = best(refused(lambda: shardid.loads(text)))
    base = best(baseline(text))
    print(f"  {what:<14} loads {ours:8.1f} ms   json.loads {base:8.1f} ms   ratio {ours / base:.2f}")
EOF
