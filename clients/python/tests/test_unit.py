"""Exact published values and the package's own rules (types, JSON, keys)."""

import json
import os
import random
import sys
import unittest
from datetime import datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import shardid  # noqa: E402
from shardid import PublicIds, ShardidError  # noqa: E402
from shardid import _public as speck  # noqa: E402

UTC = timezone.utc
KEYS = "1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100"


class Codec(unittest.TestCase):
    def assertState(self, state, fn, *args, **kwargs):
        with self.assertRaises(ShardidError) as cm:
            fn(*args, **kwargs)
        self.assertEqual(cm.exception.sqlstate, state)
        return cm.exception

    def test_published_example(self):
        t = datetime(2026, 10, 23, 9, 20, tzinfo=UTC)
        self.assertEqual(shardid.encode(t, 1341, 1001), 4185136929178974185)
        self.assertEqual(shardid.decode(4185136929178974185),
                         (1792747200000, t, 1341, 1001))
        self.assertEqual(shardid.to_shortcode(4185136929178974185), "DoUl90AFPfp")
        self.assertEqual(shardid.from_shortcode("DoUl90AFPfp"), 4185136929178974185)
        self.assertEqual(shardid.floor(t), 4185136929177600000)
        twitter = datetime(2010, 11, 4, 1, 42, 54, 657000, tzinfo=UTC)
        self.assertEqual(shardid.encode(t, 1341, 1001, epoch=twitter), 4227122124811466729)
        # another time zone is the same instant; microseconds are truncated
        ist = timezone(timedelta(hours=5, minutes=30))
        self.assertEqual(shardid.encode(datetime(2026, 10, 23, 14, 50, tzinfo=ist), 1341, 1001),
                         4185136929178974185)
        self.assertEqual(shardid.encode(t.replace(microsecond=999), 1341, 1001), 4185136929178974185)
        self.assertEqual(shardid.floor(t - timedelta(microseconds=1)), 4185136929177600000 - (1 << 23))

    def test_horizon(self):
        self.assertEqual(shardid.horizon(), datetime(2045, 11, 3, 19, 53, 47, 775000, tzinfo=UTC))
        self.assertEqual(shardid.encode(shardid.horizon(), 8191, 1023), (1 << 63) - 1)
        self.assertState("22008", shardid.encode, shardid.horizon_ms() + 1, 0, 0)
        self.assertState("22008", shardid.encode, shardid.DEFAULT_EPOCH_MS - 1, 0, 0)

    def test_epochs(self):
        self.assertEqual(shardid.decode(1, epoch=0), shardid.decode(1, epoch=datetime(1970, 1, 1, tzinfo=UTC)))
        self.assertState("22023", shardid.decode, 1, epoch=datetime(2020, 1, 1, 0, 0, 0, 500, tzinfo=UTC))
        self.assertState("22023", shardid.decode, 1, epoch=datetime(2020, 1, 1))
        self.assertState("22023", shardid.encode, datetime(2026, 1, 1), 0, 0)
        with self.assertRaises(TypeError):
            shardid.decode(1, epoch=1.0)

    def test_types(self):
        for bad in (1.0, "1", True, None):
            with self.assertRaises(TypeError):
                shardid.to_shortcode(bad)
        with self.assertRaises(TypeError):
            shardid.from_shortcode(b"BA")
        with self.assertRaises(TypeError):
            shardid.encode(0.5, 0, 0)
        self.assertIsInstance(ShardidError("22023", "x"), ValueError)

    def test_shortcode_byte_positions(self):
        self.assertIn("byte 5 ", str(self.assertState("22P02", shardid.from_shortcode, "DoUl\u00e9x")))
        self.assertIn("byte 1 ", str(self.assertState("22P02", shardid.from_shortcode, "\U0001F600A")))

    def test_shortcode_long_input(self):
        # The length first, in UTF-8 bytes as the server counts it: 50 MB
        # is refused without reading it, and the message shows its first
        # bytes only. A str that counts what is read of it shows both:
        # no character is iterated, and what is sliced is the first 12.
        class Counted(str):
            iterated = 0
            sliced = []

            def __iter__(self):
                Counted.iterated += 1
                return super().__iter__()

            def __getitem__(self, key):
                Counted.sliced.append(key)
                return super().__getitem__(key)

        big = Counted("\u00e9" + "A" * (50 * 1024 * 1024) + "!")
        e = self.assertState("22003", shardid.from_shortcode, big)
        self.assertEqual(Counted.iterated, 0)
        self.assertEqual(Counted.sliced, [slice(None, 12, None)])
        self.assertLess(len(str(e)), 200)
        self.assertIn('shortcode "\u00e9AAAAAAAAA..." is too long', str(e))
        # an invalid character past the 11th is not what is reported
        self.assertState("22003", shardid.from_shortcode, "BBBBBBBBBBBB!")
        # 11 characters, 12 bytes: too long, as the server has it
        self.assertState("22003", shardid.from_shortcode, "DoUl90AFPf\u00e9")


class Public(unittest.TestCase):
    def test_speck_published_vector(self):
        ks = speck.expand_key("1b1a1918131211100b0a090803020100")
        self.assertEqual(speck.encrypt(ks, 0x3b7265747475432d), 0x8c6fa548454e028b)
        self.assertEqual(speck.decrypt(ks, 0x8c6fa548454e028b), 0x3b7265747475432d)
        self.assertEqual(speck.expand_key("1B1A1918131211100B0A090803020100"), ks)
        with self.assertRaises(ShardidError) as cm:
            speck.expand_key("00")
        self.assertEqual(cm.exception.sqlstate, "22023")

    def test_round_trips(self):
        p = PublicIds(KEYS)
        rng = random.Random(7)
        seen = set()
        for _ in range(2000):
            id = rng.randrange(1 << 63)
            text = p.to_public(id)
            self.assertRegex(text, r"^C[A-H][A-Za-z0-9_-]{10}$")
            self.assertEqual(p.to_private(text), id)
            self.assertLess(p.to_public_bigint(id, 1), 1 << 63)
            seen.add(text)
        self.assertEqual(len(seen), 2000)

    def test_rotation(self):
        v1 = PublicIds("1:000102030405060708090a0b0c0d0e0f").to_public(42)
        self.assertEqual(v1[0], "B")
        self.assertEqual(PublicIds(KEYS).to_private(v1), 42)
        only2 = PublicIds("2:0f0e0d0c0b0a09080706050403020100")
        with self.assertRaises(ShardidError) as cm:
            only2.to_private(v1)
        self.assertEqual(cm.exception.sqlstate, "22P02")
        self.assertIn("key version 1 is not configured", str(cm.exception))
        self.assertEqual([k.newest for k in only2.fingerprints()], [True])

    def test_bad_key_lists(self):
        key = "000102030405060708090a0b0c0d0e0f"
        for bad in (f"64:{key}", f"-1:{key}", f"1:{key}, 1:{key}", f"1:{key[1:]}", f"1:{key}0",
                    f"1:{key.replace('0', 'g', 1)}", f"1 {key}", f"1:{key},", f"x:{key}",
                    f"1:{key}, ,2:{key}", f"100:{key}", f"\u0661:{key}", "\u00a0"):
            with self.subTest(bad=bad):
                with self.assertRaises(ShardidError) as cm:
                    PublicIds(bad)
                self.assertEqual(cm.exception.sqlstate, "55000")
                self.assertNotIn(key[4:], str(cm.exception))
        self.assertEqual([k.version for k in PublicIds(f" 0:{key} ,\t63:{key.upper()} ").fingerprints()], [0, 63])
        for none in (None, "", "  "):
            p = PublicIds(none)
            with self.assertRaises(ShardidError) as cm:
                p.to_public(1)
            self.assertEqual(cm.exception.sqlstate, "55000")
            self.assertIn("shardid.public_id_keys", str(cm.exception))
            self.assertEqual(p.fingerprints(), [])


class Json(unittest.TestCase):
    def test_dumps(self):
        self.assertEqual(shardid.dumps({"id": 4185136929178974185, "n": 1.5, "x": [{"id": 1}]}),
                         '{"id": "4185136929178974185", "n": 1.5, "x": [{"id": "1"}]}')
        self.assertEqual(shardid.dumps({"post": [1, None]}, ids=["post"]), '{"post": ["1", null]}')
        for bad in (1.5, True, {"a": 1}):
            with self.assertRaises(TypeError):
                shardid.dumps({"id": bad})

    def test_loads(self):
        self.assertEqual(shardid.loads('{"id": "9223372036854775807", "a": {"id": ["1", 2]}, "n": 4185136929178974185}'),
                         {"id": (1 << 63) - 1, "a": {"id": [1, 2]}, "n": 4185136929178974185})
        self.assertEqual(shardid.loads('[{"post": "7"}, {"post": null}]', ids=["post"]), [{"post": 7}, {"post": None}])
        for bad, state in (('{"id": 9007199254740993}', "22003"), ('{"id": 1.5}', "22P02"),
                           ('{"id": "01"}', "22P02"), ('{"id": "x"}', "22P02"), ('{"id": true}', "22P02"),
                           ('{"id": "-1"}', "22003"), ('{"id": "9223372036854775808"}', "22003"),
                           ('{"id": "\u0661"}', "22P02"), ("{", "22P02"), ('{"x": NaN}', "22P02"),
                           (b'{"a": "\xff"}', "22021"), ("[" * 100000 + "]" * 100000, "54001")):
            with self.subTest(bad=bad[:40]):
                with self.assertRaises(ShardidError) as cm:
                    shardid.loads(bad)
                self.assertEqual(cm.exception.sqlstate, state)

    def test_loads_refuses_by_length(self):
        """An ID string longer than any bigint is refused by its length,
        before int() (past 4,300 digits int() itself refuses with a plain
        ValueError); a bare integer past sys.get_int_max_str_digits() is
        a ShardidError too, wherever it is."""
        long = "9" * 5_000_000
        for text, pattern in (('{"id": "%s"}' % long, "of 5000000 digits, out of range for type bigint"),
                              ('{"id": "1%s"}' % ("0" * 4300), "of 4301 digits"),
                              ('{"id": %s}' % long, "value has 5000000 digits"),
                              ('{"n": 1%s}' % ("0" * 5000), "value has 5001 digits")):
            with self.subTest(text=text[:40]):
                with self.assertRaises(ShardidError) as cm:
                    shardid.loads(text)
                self.assertEqual(cm.exception.sqlstate, "22003")
                self.assertIn(pattern, str(cm.exception))
                self.assertLess(len(str(cm.exception)), 300)

    def test_loads_syntax_error_is_a_json_decode_error(self):
        """Text that is not JSON: ShardidError 22P02, and still the
        json.JSONDecodeError that json.loads raises"""
        text = '{"a": 1,\n}'
        # where the error is depends on the Python: 3.13 blames the comma
        # (line 1, column 8), 3.11 the brace after it (line 2, column 1)
        with self.assertRaises(json.JSONDecodeError) as plain:
            json.loads(text)
        with self.assertRaises(json.JSONDecodeError) as cm:
            shardid.loads(text)
        self.assertIsInstance(cm.exception, ShardidError)
        self.assertEqual(cm.exception.sqlstate, "22P02")
        self.assertEqual((cm.exception.pos, cm.exception.lineno, cm.exception.colno),
                         (plain.exception.pos, plain.exception.lineno, plain.exception.colno))
        self.assertIn((cm.exception.lineno, cm.exception.colno), ((2, 1), (1, 8)))
        self.assertIn("invalid input syntax for type json", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
