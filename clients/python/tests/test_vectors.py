"""Every vector of test/vectors/vectors.json (made from the extension by
test/vectors/generate.py) against this package."""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import shardid  # noqa: E402
from shardid import _public as speck  # noqa: E402

VECTORS = os.path.join(HERE, "..", "..", "..", "test", "vectors", "vectors.json")
with open(VECTORS, encoding="utf-8") as f:
    V = json.load(f)


def epoch(e):
    return None if e is None else int(e)


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def big(x):
    return None if x is None else int(x)


def call(fn, a, p):
    if fn == "decode":
        return shardid.decode(big(a["id"]), epoch=epoch(a.get("epoch_ms")))
    if fn == "encode":
        return shardid.encode(big(a["ms"]), a["shard"], a["seq"], epoch=epoch(a.get("epoch_ms")))
    if fn == "floor":
        return shardid.floor(big(a["ms"]), epoch=epoch(a.get("epoch_ms")))
    if fn == "horizon":
        return shardid.horizon_ms(epoch=epoch(a.get("epoch_ms")))
    if fn == "to_shortcode":
        return shardid.to_shortcode(big(a["id"]))
    if fn == "from_shortcode":
        return shardid.from_shortcode(a["code"])
    if fn == "to_public":
        return p.to_public(big(a["id"]), a.get("version"))
    if fn == "to_private":
        return p.to_private(a["text"])
    if fn == "to_public_bigint":
        return p.to_public_bigint(big(a["id"]), a.get("version"))
    if fn == "to_private_bigint":
        return p.to_private_bigint(big(a["c"]), a.get("version"))
    if fn == "json_parse":
        return shardid.loads("".join(piece * times for piece, times in a["text"]), ids=a["ids"])
    raise AssertionError(f"unknown function {fn} in the vectors")


class Vectors(unittest.TestCase):
    def test_sections(self):
        for k in ("decode", "encode", "floor", "horizon", "shortcode", "errors", "client_errors"):
            self.assertTrue(V[k], k)
        self.assertEqual(V["default_epoch_ms"], str(shardid.DEFAULT_EPOCH_MS))
        self.assertTrue(V["public_ids"]["ids"] and V["public_ids"]["errors"])

    def test_decode(self):
        for v in V["decode"]:
            with self.subTest(v=v):
                d = shardid.decode(int(v["id"]), epoch=epoch(v["epoch_ms"]))
                self.assertEqual((d.ms, d.shard, d.seq), (int(v["ms"]), v["shard"], v["seq"]))
                if v["time"] is not None:
                    self.assertEqual(iso(d.time), v["time"])
                self.assertEqual(shardid.encode(d.ms, d.shard, d.seq, epoch=epoch(v["epoch_ms"])), int(v["id"]))

    def test_encode(self):
        for v in V["encode"]:
            with self.subTest(v=v):
                e = epoch(v["epoch_ms"])
                self.assertEqual(shardid.encode(int(v["ms"]), v["shard"], v["seq"], epoch=e), int(v["id"]))
                t = shardid._codec.ms_to_datetime(int(v["ms"]))
                if t is not None:
                    self.assertEqual(shardid.encode(t, v["shard"], v["seq"], epoch=e), int(v["id"]))

    def test_floor(self):
        for v in V["floor"]:
            with self.subTest(v=v):
                self.assertEqual(shardid.floor(int(v["ms"]), epoch=epoch(v["epoch_ms"])), int(v["id"]))

    def test_horizon(self):
        for v in V["horizon"]:
            with self.subTest(v=v):
                self.assertEqual(shardid.horizon_ms(epoch=epoch(v["epoch_ms"])), int(v["ms"]))
                if v["time"] is not None:
                    self.assertEqual(iso(shardid.horizon(epoch=epoch(v["epoch_ms"]))), v["time"])

    def test_shortcode(self):
        for v in V["shortcode"]:
            with self.subTest(v=v):
                self.assertEqual(shardid.to_shortcode(int(v["id"])), v["code"])
                self.assertEqual(shardid.from_shortcode(v["code"]), int(v["id"]))

    def check_errors(self, cases, p):
        for v in cases:
            with self.subTest(v=v):
                with self.assertRaises(shardid.ShardidError) as cm:
                    call(v["fn"], v["args"], p)
                self.assertEqual(cm.exception.sqlstate, v["sqlstate"])

    def test_errors(self):
        self.check_errors(V["errors"], None)

    def test_client_errors(self):
        """the JSON codec's refusals, each with the same SQLSTATE as the JS parse's"""
        self.check_errors(V["client_errors"], None)

    def test_speck_published_vector(self):
        ks = speck.expand_key(V["speck"]["key"])
        self.assertEqual(speck.encrypt(ks, int(V["speck"]["plaintext"], 16)), int(V["speck"]["ciphertext"], 16))
        self.assertEqual(speck.decrypt(ks, int(V["speck"]["ciphertext"], 16)), int(V["speck"]["plaintext"], 16))

    def test_public_ids(self):
        pv = V["public_ids"]
        p = shardid.PublicIds(pv["keys"])
        self.assertEqual([k._asdict() for k in p.fingerprints()], pv["fingerprints"])
        for v in pv["ids"]:
            with self.subTest(v=v):
                id = int(v["id"])
                for version in (1, 2):
                    e = v[f"v{version}"]
                    self.assertEqual(p.to_public(id, version), e["text"])
                    self.assertEqual(p.to_private(e["text"]), id)
                    self.assertEqual(p.to_public_bigint(id, version), int(e["bigint"]))
                    self.assertEqual(p.to_private_bigint(int(e["bigint"]), version), id)
                self.assertEqual(p.to_public(id), v["newest"])

    def test_public_id_errors(self):
        self.check_errors(V["public_ids"]["errors"], shardid.PublicIds(V["public_ids"]["keys"]))


if __name__ == "__main__":
    unittest.main()
