#!/usr/bin/python3
"""test/vectors/generate.py: write test/vectors/vectors.json from the extension.

Connects (libpq's PGHOST, PGPORT, PGUSER, PGDATABASE) to a running server
with shardid in shared_preload_libraries, creates the extension in that
database if it is missing, and asks its SQL functions for every expected
value and every refused input's SQLSTATE: the inputs are listed here, the
outputs come from the server.  test/vectors/regenerate.sh starts a private
server for it (see test/cluster.sh).

Public IDs: when the server has shardid_public and friends, and its
shardid.public_id_keys holds the spec's test keys, they come from there
too; otherwise from the Python client (clients/python), and the file says
so in public_ids.source: regenerate once the extension has them.

Usage: /usr/bin/python3 test/vectors/generate.py [OUTPUT]
"""

import json
import os
import random
import sys

import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
import shardid  # noqa: E402  (the Python client: public IDs until the extension has them)
from shardid import _public as speck  # noqa: E402

DAY_MS = 86400000
DEFAULT_EPOCH_MS = 1293840000000
MAX_TIME_MS = (1 << 40) - 1
PG_MIN_UNIX_MS = -210866803200000
PG_END_UNIX_MS = 9224318016000000
TEST_KEYS = "1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100"

# Epochs (Unix ms; None is the default, 2011-01-01): Twitter's
# 2010-11-04 01:42:54.657, 2020-01-01, 1960-01-01, the Unix epoch, and the
# first and last epochs whose horizon PostgreSQL can represent.
EPOCHS = [None, 1288834974657, 1577836800000, -315619200000, 0,
          PG_MIN_UNIX_MS, PG_END_UNIX_MS - MAX_TIME_MS - 1]

PUBLISHED_MS = DEFAULT_EPOCH_MS + 498907200000     # 2026-10-23 09:20:00 UTC
# Instagram's "Sharding & IDs at Instagram" worked example: 1387263000 ms
# after its epoch 2011-01-01, user 31341 on logical shard 31341 % 2000,
# sequence value 5001 % 1024.
BLOG_MS = DEFAULT_EPOCH_MS + 1387263000

EPOCH_SQL = ("('epoch'::timestamptz + %(epoch_days)s::int * interval '1 day'"
             " + %(epoch_rest)s::bigint * interval '1 millisecond')")
TS_SQL = ("('epoch'::timestamptz + %(days)s::int * interval '1 day'"
          " + %(rest)s::bigint * interval '1 millisecond')")
MS_OF = "floor(extract(epoch FROM {}) * 1000)::bigint"
ISO_OF = ("CASE WHEN {0} BETWEEN '0001-01-01+00' AND '9999-12-31 23:59:59.999+00'"
          " THEN to_char({0} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') END")


def ms_params(ms, prefix=""):
    return {prefix + "days": ms // DAY_MS, prefix + "rest": ms % DAY_MS}


def epoch_params(epoch):
    if epoch is None:
        return {}
    return {"epoch_days": epoch // DAY_MS, "epoch_rest": epoch % DAY_MS}


def with_epoch(call, epoch, *args):
    """SQL for call(args[, epoch]) with bind parameters."""
    parts = list(args) + ([EPOCH_SQL] if epoch is not None else [])
    return f"{call}({', '.join(parts)})"


class Gen:
    def __init__(self, conn):
        self.conn = conn

    def one(self, sql, params):
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchone()

    def sqlstate(self, sql, params):
        """The SQLSTATE that sql raises; fails if it raises none."""
        with self.conn.transaction():
            try:
                with self.conn.transaction():
                    with self.conn.cursor() as cur:
                        cur.execute(sql, params)
            except psycopg.Error as e:
                return e.sqlstate
        raise SystemExit(f"expected an error from {sql} {params}")

    def decode(self, id, epoch):
        p = {"id": str(id), **epoch_params(epoch)}
        ms, iso, shard, seq = self.one(
            f"SELECT {MS_OF.format('created_at')}, {ISO_OF.format('created_at')}, shard, seq"
            f" FROM {with_epoch('shardid_decode', epoch, '%(id)s::bigint')}", p)
        # the getters agree with the decode
        s, q = self.one("SELECT shardid_shard(%(id)s::bigint), shardid_seq(%(id)s::bigint)", p)
        c = self.one(f"SELECT {MS_OF.format(with_epoch('shardid_created_at', epoch, '%(id)s::bigint'))}", p)[0]
        assert (s, q, c) == (shard, seq, ms), (id, epoch)
        return {"id": str(id), "epoch_ms": None if epoch is None else str(epoch),
                "ms": str(ms), "time": iso, "shard": shard, "seq": seq}

    def encode(self, ms, shard, seq, epoch):
        p = {"shard": shard, "seq": seq, **ms_params(ms), **epoch_params(epoch)}
        (id,) = self.one("SELECT " + with_epoch("shardid_encode", epoch, TS_SQL,
                                                 "%(shard)s::int", "%(seq)s::int"), p)
        return {"ms": str(ms), "shard": shard, "seq": seq,
                "epoch_ms": None if epoch is None else str(epoch), "id": str(id)}

    def floor(self, ms, epoch):
        p = {**ms_params(ms), **epoch_params(epoch)}
        (id,) = self.one("SELECT " + with_epoch("shardid_floor", epoch, TS_SQL), p)
        return {"ms": str(ms), "epoch_ms": None if epoch is None else str(epoch), "id": str(id)}

    def horizon(self, epoch):
        h = with_epoch("shardid_horizon", epoch)
        ms, iso = self.one(f"SELECT {MS_OF.format(h)}, {ISO_OF.format(h)}", epoch_params(epoch))
        return {"epoch_ms": None if epoch is None else str(epoch), "ms": str(ms), "time": iso}

    def shortcode(self, id):
        code, back = self.one("SELECT shardid_to_shortcode(%(id)s::bigint),"
                              " shardid_from_shortcode(shardid_to_shortcode(%(id)s::bigint))",
                              {"id": str(id)})
        assert back == id
        return {"id": str(id), "code": code}

    def client_json_error(self, parts, ids, sqlstate, analog):
        """A refusal of the clients' JSON codec, confirmed by the server's
        nearest SQL where there is one"""
        text = "".join(piece * times for piece, times in parts)
        if analog == "jsonb":
            got = self.sqlstate("SELECT %(text)s::jsonb", {"text": text})
        elif analog == "bigint":
            got = self.sqlstate("SELECT (%(text)s::jsonb ->> %(key)s)::bigint", {"text": text, "key": ids[0]})
        else:
            got = sqlstate
        if got != sqlstate:
            raise SystemExit(f"the server gives {got}, not {sqlstate}, for its analog of {parts!r}")
        return {"fn": "json_parse", "args": {"text": parts, "ids": ids}, "sqlstate": sqlstate}

    # refused inputs: fn and args as the clients call them
    def error(self, fn, **args):
        epoch = args.get("epoch_ms")
        p = {k: (str(v) if isinstance(v, int) and k in ("id", "c") else v) for k, v in args.items()}
        p.update(epoch_params(epoch))
        if "ms" in args:
            p.update(ms_params(args["ms"]))
        sql = {
            "decode": lambda: "SELECT * FROM " + with_epoch("shardid_decode", epoch, "%(id)s::bigint"),
            "encode": lambda: "SELECT " + with_epoch("shardid_encode", epoch, TS_SQL,
                                                     "%(shard)s::bigint::int", "%(seq)s::bigint::int"),
            "floor": lambda: "SELECT " + with_epoch("shardid_floor", epoch, TS_SQL),
            "horizon": lambda: "SELECT " + with_epoch("shardid_horizon", epoch),
            "to_shortcode": lambda: "SELECT shardid_to_shortcode(%(id)s::bigint)",
            "from_shortcode": lambda: "SELECT shardid_from_shortcode(%(code)s::text)",
            "to_public": lambda: ("SELECT shardid_public(%(id)s::bigint, %(version)s::int)"
                                  if args.get("version") is not None
                                  else "SELECT shardid_public(%(id)s::bigint)"),
            "to_private": lambda: "SELECT shardid_private(%(text)s::text)",
            "to_public_bigint": lambda: "SELECT shardid_public_bigint(%(id)s::bigint, %(version)s::int)",
            "to_private_bigint": lambda: "SELECT shardid_private_bigint(%(c)s::bigint, %(version)s::int)",
        }[fn]()
        out = {k: (str(v) if isinstance(v, int) and k in ("id", "c", "ms", "epoch_ms") else v)
               for k, v in args.items()}
        return {"fn": fn, "args": out, "sqlstate": self.sqlstate(sql, p)}

    def has_public(self):
        (n,) = self.one("SELECT count(*) FROM pg_proc WHERE proname IN"
                        " ('shardid_public', 'shardid_private', 'shardid_public_bigint',"
                        "  'shardid_private_bigint', 'shardid_public_keys')", {})
        return n >= 5


# Refusals of the clients' JSON codec (JS parse, Python loads), which the
# extension has no function for: the file keeps them in client_errors,
# which test/sql/vectors.sql skips by name.  A text is a list of
# [piece, times] (5,000,000 digits take 40 bytes).  Each SQLSTATE is the
# extension's for the nearest SQL, and the server confirms it where there
# is one: text that is not JSON as ::jsonb ("jsonb": 22P02, 54001 when
# nested too deep), an ID field's text as ::bigint ("bigint": 22P02,
# 22003).  Where the clients are stricter than ::bigint (None: a bare
# number above 2^53 - 1, which a JavaScript reader would have rounded; a
# negative ID; leading zeros, blanks, "+" or an exponent), 22003 is a
# value out of range and 22P02 text that is no canonical decimal integer.
def one(text):
    return [[text, 1]]


CLIENT_JSON_ERRORS = [
    # bare numbers in an ID field past 2^53 - 1, the example first
    (one('{"id": 4213508198293835728}'), ["id"], "22003", None),
    (one('{"id": 9007199254740992}'), ["id"], "22003", None),
    (one('{"id": -9007199254740992}'), ["id"], "22003", None),
    (one('{"id": 9223372036854775808}'), ["id"], "22003", "bigint"),
    ([['{"id": 1', 1], ["0", 4999], ["}", 1]], ["id"], "22003", "bigint"),
    ([['{"id": 9', 1], ["9", 4999999], ["}", 1]], ["id"], "22003", "bigint"),
    # decimal strings out of range, refused by their length
    (one('{"id": "9223372036854775808"}'), ["id"], "22003", "bigint"),
    (one('{"id": "-1"}'), ["id"], "22003", None),
    (one('{"id": "99999999999999999999"}'), ["id"], "22003", "bigint"),
    ([['{"id": "1', 1], ["0", 4300], ['"}', 1]], ["id"], "22003", "bigint"),
    ([['{"id": "', 1], ["9", 5000000], ['"}', 1]], ["id"], "22003", "bigint"),
    ([['{"post": ["1", "', 1], ["8", 30], ['"]}', 1]], ["post"], "22003", None),
    # an ID field that holds no decimal integer
    (one('{"id": "12a"}'), ["id"], "22P02", "bigint"),
    (one('{"id": ""}'), ["id"], "22P02", "bigint"),
    (one('{"id": "1.5"}'), ["id"], "22P02", "bigint"),
    (one('{"id": "\u0661"}'), ["id"], "22P02", "bigint"),
    (one('{"id": "01"}'), ["id"], "22P02", None),
    (one('{"id": " 1"}'), ["id"], "22P02", None),
    (one('{"id": "+1"}'), ["id"], "22P02", None),
    (one('{"id": 1.5}'), ["id"], "22P02", "bigint"),
    (one('{"id": 1e3}'), ["id"], "22P02", None),
    (one('{"id": -0.0}'), ["id"], "22P02", None),
    (one('{"id": true}'), ["id"], "22P02", "bigint"),
    (one('{"id": {}}'), ["id"], "22P02", "bigint"),
    (one('{"id": [[1]]}'), ["id"], "22P02", "bigint"),
    (one('{"post": "x"}'), ["post"], "22P02", "bigint"),
    # text that is not JSON
    (one(""), ["id"], "22P02", "jsonb"),
    (one("{"), ["id"], "22P02", "jsonb"),
    (one('{"a" 1}'), ["id"], "22P02", "jsonb"),
    (one("[1,]"), ["id"], "22P02", "jsonb"),
    (one('{"a": 1,}'), ["id"], "22P02", "jsonb"),
    (one('{"id": 1} x'), ["id"], "22P02", "jsonb"),
    (one("[1] [2]"), ["id"], "22P02", "jsonb"),
    (one('"abc'), ["id"], "22P02", "jsonb"),
    (one('{"a": "\t"}'), ["id"], "22P02", "jsonb"),
    (one("{'a': 1}"), ["id"], "22P02", "jsonb"),
    (one("nul"), ["id"], "22P02", "jsonb"),
    (one("01"), ["id"], "22P02", "jsonb"),
    (one("-"), ["id"], "22P02", "jsonb"),
    (one("NaN"), ["id"], "22P02", "jsonb"),
    (one('{"x": Infinity}'), ["id"], "22P02", "jsonb"),
    (one('{"x": -Infinity}'), ["id"], "22P02", "jsonb"),
    # nested deeper than the clients (and PostgreSQL) read
    ([["[", 100000], ["]", 100000]], ["id"], "54001", "jsonb"),
    ([['{"a": ', 100000], ["1", 1], ["}", 100000]], ["id"], "54001", "jsonb"),
]


def edge_ids():
    return [0, 1, 1023, 1024, 8191 << 10, (8191 << 10) | 1023, 1 << 23, (1 << 23) + 1,
            (1 << 53) - 1, 1 << 53, (1 << 53) + 1, 1 << 62,
            4185136929178974185,                    # the published example
            (1387263000 << 23) | (1341 << 10) | 1001,  # Instagram's blog example
            MAX_TIME_MS << 23,                      # the horizon's floor
            (1 << 63) - 2, (1 << 63) - 1]           # the last valid IDs


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "vectors.json")
    rng = random.Random(20261201)
    conn = psycopg.connect(autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS shardid")
    conn.execute("SET timezone = 'UTC'")
    conn.autocommit = False
    g = Gen(conn)
    (version,) = g.one("SELECT extversion FROM pg_extension WHERE extname = 'shardid'", {})

    random_ids = [rng.randrange(1 << 63) for _ in range(150)]
    ids = edge_ids() + random_ids

    decode = [g.decode(i, None) for i in ids]
    decode += [g.decode(i, e) for e in EPOCHS[1:] for i in edge_ids()]
    decode += [g.decode(rng.randrange(1 << 63), rng.choice(EPOCHS)) for _ in range(100)]

    encode = [
        g.encode(PUBLISHED_MS, 1341, 1001, None),
        g.encode(BLOG_MS, 1341, 1001, None),
        g.encode(DEFAULT_EPOCH_MS, 0, 0, None),
        g.encode(DEFAULT_EPOCH_MS + 1, 0, 0, None),
        g.encode(DEFAULT_EPOCH_MS, 8191, 1023, None),
        g.encode(DEFAULT_EPOCH_MS + MAX_TIME_MS, 8191, 1023, None),
        g.encode(DEFAULT_EPOCH_MS + MAX_TIME_MS, 0, 0, None),
        g.encode(PUBLISHED_MS, 1341, 1001, 1288834974657),
        g.encode(PUBLISHED_MS, 1341, 1001, DEFAULT_EPOCH_MS),
        g.encode(-1, 7, 8, -315619200000),
    ]
    for _ in range(150):
        e = rng.choice(EPOCHS)
        base = DEFAULT_EPOCH_MS if e is None else e
        encode.append(g.encode(base + rng.randrange(MAX_TIME_MS + 1), rng.randrange(8192),
                               rng.randrange(1024), e))

    floor = [g.floor(PUBLISHED_MS, None), g.floor(DEFAULT_EPOCH_MS, None),
             g.floor(DEFAULT_EPOCH_MS + MAX_TIME_MS, None), g.floor(PUBLISHED_MS, 1288834974657)]
    for _ in range(50):
        e = rng.choice(EPOCHS)
        base = DEFAULT_EPOCH_MS if e is None else e
        floor.append(g.floor(base + rng.randrange(MAX_TIME_MS + 1), e))

    horizon = [g.horizon(e) for e in EPOCHS]

    widths = [(1 << b) + b for b in range(63)]
    shortcode = [g.shortcode(i) for i in
                 [0, 1, 25, 26, 51, 52, 61, 62, 63, 64, 65, 4095, 4096, 1099511627775]
                 + edge_ids() + widths + [rng.randrange(1 << 63) for _ in range(50)]]

    E = g.error
    errors = [
        E("decode", id=-1), E("decode", id=-(1 << 63)), E("decode", id=1 << 63),
        E("decode", id=0, epoch_ms=PG_END_UNIX_MS - MAX_TIME_MS),
        E("encode", ms=PUBLISHED_MS, shard=-1, seq=0),
        E("encode", ms=PUBLISHED_MS, shard=8192, seq=0),
        E("encode", ms=PUBLISHED_MS, shard=0, seq=-1),
        E("encode", ms=PUBLISHED_MS, shard=0, seq=1024),
        E("encode", ms=PUBLISHED_MS, shard=1 << 31, seq=0),
        E("encode", ms=DEFAULT_EPOCH_MS - 1, shard=0, seq=0),
        E("encode", ms=DEFAULT_EPOCH_MS + MAX_TIME_MS + 1, shard=0, seq=0),
        E("encode", ms=1288834974656, shard=0, seq=0, epoch_ms=1288834974657),
        E("encode", ms=1288834974657 + MAX_TIME_MS + 1, shard=0, seq=0, epoch_ms=1288834974657),
        E("encode", ms=PUBLISHED_MS, shard=0, seq=0, epoch_ms=PG_END_UNIX_MS - MAX_TIME_MS),
        E("floor", ms=DEFAULT_EPOCH_MS - 1),
        E("floor", ms=DEFAULT_EPOCH_MS + MAX_TIME_MS + 1),
        E("floor", ms=-315619200001, epoch_ms=-315619200000),
        E("horizon", epoch_ms=PG_END_UNIX_MS - MAX_TIME_MS),
        E("horizon", epoch_ms=PG_MIN_UNIX_MS - 1),
        E("to_shortcode", id=-1), E("to_shortcode", id=1 << 63),
    ] + [E("from_shortcode", code=c) for c in
         ["", "DoUl90+FPfp", "DoUl90AFPf=", "DoUl 90AFPfp", "DoUl\u00e9", "\u00e9", "BAAAAAAAAAAA",
          "IAAAAAAAAAA", "___________", "ADoUl90AFPf", "AA", "AAAAAAAAAAAA", "DoUl90AFPfp\n"]]

    # Public IDs under the spec's test keys.
    public_ids = [0, 1, 2, 1023, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, 1 << 62,
                  4185136929178974185, MAX_TIME_MS << 23, (1 << 63) - 2, (1 << 63) - 1] \
        + [rng.randrange(1 << 63) for _ in range(100)]
    public_errors_args = [
        ("to_public", {"id": -1}), ("to_public", {"id": 1 << 63}),
        ("to_public", {"id": 1, "version": 3}), ("to_public", {"id": 1, "version": 0}),
        ("to_public_bigint", {"id": -1, "version": 1}),
        ("to_public_bigint", {"id": 1, "version": 3}),
        ("to_private_bigint", {"c": -1, "version": 1}),
        ("to_private_bigint", {"c": 1, "version": 3}),
    ] + [("to_private", {"text": t}) for t in
         ["", "CBLWpDQqpDK", "CBLWpDQqpDKcA", "CBLWpDQqpD+c", "CBLWpDQqpD=c", "CBLWpDQqpDK\u00e9",
          "CBLWpDQqpDKc\n", " CBLWpDQqpDKc", "DBLWpDQqpDKc", "ABLWpDQqpDKc", "_BLWpDQqpDKc",
          "BIAAAAAAAAAA", "B___________", "CIAAAAAAAAAA", "C___________"]]

    if g.has_public():
        source = "extension"
        (keys_ok,) = g.one("SELECT count(*) = 2 FROM shardid_public_keys()", {})
        if not keys_ok:
            raise SystemExit("the server has shardid_public but its shardid.public_id_keys is not"
                             f" the test keys: set it to '{TEST_KEYS}'")
        fps = [{"version": v, "fingerprint": f, "newest": n} for v, f, n in
               conn.execute("SELECT key_version, fingerprint, newest FROM shardid_public_keys()"
                            " ORDER BY key_version").fetchall()]
        pub = []
        for i in public_ids:
            row = {"id": str(i)}
            for v in (1, 2):
                text, big, back = g.one(
                    "SELECT shardid_public(%(id)s::bigint, %(v)s), shardid_public_bigint(%(id)s::bigint, %(v)s),"
                    " shardid_private(shardid_public(%(id)s::bigint, %(v)s))", {"id": str(i), "v": v})
                assert back == i
                (inv,) = g.one("SELECT shardid_private_bigint(%(c)s::bigint, %(v)s)", {"c": str(big), "v": v})
                assert inv == i
                row[f"v{v}"] = {"text": text, "bigint": str(big)}
            (newest,) = g.one("SELECT shardid_public(%(id)s::bigint)", {"id": str(i)})
            row["newest"] = newest
            pub.append(row)
        perr = [E(fn, **a) for fn, a in public_errors_args]
    else:
        source = ("python client: the extension has no shardid_public yet;"
                  " regenerate with test/vectors/regenerate.sh once it has")
        p = shardid.PublicIds(TEST_KEYS)
        fps = [k._asdict() for k in p.fingerprints()]
        pub = []
        for i in public_ids:
            row = {"id": str(i)}
            for v in (1, 2):
                row[f"v{v}"] = {"text": p.to_public(i, v), "bigint": str(p.to_public_bigint(i, v))}
            row["newest"] = p.to_public(i)
            pub.append(row)
        perr = []
        for fn, a in public_errors_args:
            try:
                getattr(p, fn)(*a.values())
            except shardid.ShardidError as e:
                perr.append({"fn": fn, "args": {k: (str(v) if k in ("id", "c") else v) for k, v in a.items()},
                             "sqlstate": e.sqlstate})
            else:
                raise SystemExit(f"expected an error from {fn} {a}")

    client_errors = [g.client_json_error(*c) for c in CLIENT_JSON_ERRORS]

    ks = speck.expand_key("1b1a1918131211100b0a090803020100")
    assert speck.encrypt(ks, 0x3b7265747475432d) == 0x8c6fa548454e028b

    doc = {
        "about": ("Test vectors for shardid's clients, from the extension's SQL functions by"
                  " test/vectors/generate.py: every client must reproduce each value and refuse"
                  " each error case with its SQLSTATE. 64-bit values are decimal strings; times"
                  " are Unix milliseconds; epoch_ms null is the default epoch 2011-01-01 UTC;"
                  " time is ISO 8601 UTC, null outside years 1 to 9999. client_errors are"
                  " refusals of the clients' JSON codec (JS parse, Python loads), which the"
                  " extension has no function for: each text is the concatenation of its"
                  " [piece, times] pairs."),
        "extension_version": version,
        "default_epoch_ms": str(DEFAULT_EPOCH_MS),
        "decode": decode,
        "encode": encode,
        "floor": floor,
        "horizon": horizon,
        "shortcode": shortcode,
        "errors": errors,
        "client_errors": client_errors,
        "speck": {"about": "Speck64/128 published test vector (Beaulieu et al. 2013)",
                  "key": "1b1a1918131211100b0a090803020100",
                  "plaintext": "3b7265747475432d", "ciphertext": "8c6fa548454e028b"},
        "public_ids": {
            "source": source,
            "keys": TEST_KEYS,
            "fingerprints": fps,
            "ids": pub,
            "errors": perr,
        },
    }
    conn.close()
    with open(out_path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=True)
        f.write("\n")
    os.replace(out_path + ".tmp", out_path)
    n = sum(len(doc[k]) for k in ("decode", "encode", "floor", "horizon", "shortcode", "errors"))
    print(f"wrote {out_path}: {n} vectors from the extension {version},"
          f" {len(pub)} public IDs and {len(perr)} public-ID errors from the {source.split(':')[0]},"
          f" {len(client_errors)} refusals of the clients' JSON codec")


if __name__ == "__main__":
    main()
