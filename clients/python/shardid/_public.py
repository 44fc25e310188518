"""Opaque public IDs: a keyed permutation of [0, 2^63) and its text form.

Speck64/128 (Beaulieu et al., 2013: 32-bit words, 27 rounds) with cycle
walking, exactly as the shared spec fixes it (docs/public-ids.md):
block v is the word pair (v >> 32, v & 0xffffffff); a key is 32 hex digits
read as big-endian words (l2, l1, l0, k0).
"""

from collections import namedtuple

from ._codec import SHORTCODE_ALPHABET, _DIGIT, check_id, _is_int, MAX_ID
from ._errors import ShardidError

_M32 = 0xFFFFFFFF
_ROUNDS = 27
_LIMIT = 1 << 63
_FINGERPRINT_BLOCK = 0x7368617264696430  # "shardid0"
_SETTING = "shardid.public_id_keys"
_HEX = frozenset("0123456789abcdefABCDEF")

KeyInfo = namedtuple("KeyInfo", "version fingerprint newest")


def _ror(x, r):
    return ((x >> r) | (x << (32 - r))) & _M32


def _rol(x, r):
    return ((x << r) | (x >> (32 - r))) & _M32


def expand_key(key_hex):
    """The 27 round keys of a 32-hex-digit key."""
    if not isinstance(key_hex, str):
        raise TypeError(f"a key is a str of 32 hex digits, not {type(key_hex).__name__}")
    if len(key_hex) != 32 or not set(key_hex) <= _HEX:
        raise ShardidError("22023", "a key is 32 hex digits")
    words = [int(key_hex[i:i + 8], 16) for i in range(0, 32, 8)]
    l2, l1, l0, k0 = words
    k = [k0]
    l = [l0, l1, l2]
    for i in range(_ROUNDS - 1):
        l.append(((k[i] + _ror(l[i], 8)) & _M32) ^ i)
        k.append(_rol(k[i], 3) ^ l[i + 3])
    return tuple(k)


def encrypt(round_keys, v):
    """One Speck64/128 encryption of the 64-bit block v."""
    x, y = v >> 32, v & _M32
    for k in round_keys:
        x = ((_ror(x, 8) + y) & _M32) ^ k
        y = _rol(y, 3) ^ x
    return (x << 32) | y


def decrypt(round_keys, v):
    """One Speck64/128 decryption of the 64-bit block v."""
    x, y = v >> 32, v & _M32
    for k in reversed(round_keys):
        y = _ror(y ^ x, 3)
        x = _rol(((x ^ k) - y) & _M32, 8)
    return (x << 32) | y


def permute(round_keys, v):
    """P: the permutation of [0, 2^63) (Speck with cycle walking)."""
    c = encrypt(round_keys, v)
    while c >= _LIMIT:
        c = encrypt(round_keys, c)
    return c


def unpermute(round_keys, c):
    """Q, the inverse of P."""
    v = decrypt(round_keys, c)
    while v >= _LIMIT:
        v = decrypt(round_keys, v)
    return v


def _invalid_keys(n, why):
    return ShardidError("55000", f'invalid value of "{_SETTING}": entry {n} {why}',
                        'the keys are a list "VERSION:HEX32, ..." with versions 0 to 63, each once')


def parse_keys(text):
    """{version: round keys} of a key list "1:hex32, 2:hex32"; {} if empty."""
    keys = {}
    if text is None or text.strip(" \t\n\r") == "":
        return keys
    for n, item in enumerate(text.split(","), start=1):
        item = item.strip(" \t\n\r")
        version, colon, key = item.partition(":")
        if not colon:
            raise _invalid_keys(n, 'is not "VERSION:KEY"')
        if not (version.isascii() and version.isdigit()) or len(version) > 2 or int(version) > 63:
            raise _invalid_keys(n, "has a version that is not 0 to 63")
        if len(key) != 32 or not set(key) <= _HEX:
            raise _invalid_keys(n, "has a key that is not 32 hex digits")
        v = int(version)
        if v in keys:
            raise _invalid_keys(n, f"repeats version {v}")
        keys[v] = expand_key(key)
    return keys


class PublicIds:
    """Public IDs under a key list, as the extension's shardid_public and
    shardid_private under the setting shardid.public_id_keys.

    >>> p = PublicIds("1:000102030405060708090a0b0c0d0e0f")
    >>> p.to_private(p.to_public(4185136929178974185))
    4185136929178974185
    """

    def __init__(self, keys):
        if keys is not None and not isinstance(keys, str):
            raise TypeError("the keys are a str: \"VERSION:HEX32, ...\"")
        self._keys = parse_keys(keys)
        self._newest = max(self._keys) if self._keys else None

    def __repr__(self):
        return f"<PublicIds versions={sorted(self._keys)}>"

    def _require_keys(self):
        if not self._keys:
            raise ShardidError("55000", "no public ID keys are configured",
                               f'set "{_SETTING}" to "VERSION:HEX32, ..."')

    def _version(self, version):
        self._require_keys()
        if version is None:
            return self._newest
        if not _is_int(version):
            raise TypeError(f"a key version is an int, not {type(version).__name__}")
        if version not in self._keys:
            raise ShardidError("22023", f"key version {version} is not configured")
        return version

    def to_public_bigint(self, id, version=None):
        """P(id) under the key of version (default: the newest)."""
        v = self._version(version)
        return permute(self._keys[v], check_id(id))

    def to_private_bigint(self, c, version=None):
        """Q(c), the inverse of to_public_bigint."""
        v = self._version(version)
        return unpermute(self._keys[v], check_id(c))

    def to_public(self, id, version=None):
        """The 12-character public form of an ID (default: newest key)."""
        v = self._version(version)
        c = permute(self._keys[v], check_id(id))
        digits = []
        for _ in range(11):
            digits.append(SHORTCODE_ALPHABET[c & 63])
            c >>= 6
        return SHORTCODE_ALPHABET[v] + "".join(reversed(digits))

    def to_private(self, text):
        """The ID of a public form; ShardidError 22P02 for anything else."""
        self._require_keys()
        if not isinstance(text, str):
            raise TypeError(f"a public ID is a str, not {type(text).__name__}")
        if len(text) != 12 or any(ch not in _DIGIT for ch in text):
            raise ShardidError("22P02", "invalid public ID",
                               "a public ID is 12 characters of A-Z, a-z, 0-9, \"-\" and \"_\"")
        version = _DIGIT[text[0]]
        if version not in self._keys:
            raise ShardidError("22P02", f"invalid public ID: key version {version} is not configured")
        c = 0
        for ch in text[1:]:
            c = (c << 6) | _DIGIT[ch]
        if c > MAX_ID:
            raise ShardidError("22P02", "invalid public ID")
        id = unpermute(self._keys[version], c)
        if self.to_public(id, version) != text:
            raise ShardidError("22P02", "invalid public ID")
        return id

    def fingerprints(self):
        """[KeyInfo(version, fingerprint, newest)] by version: the spec's
        fingerprint (16 hex digits) of each key, never the key."""
        return [KeyInfo(v, f"{encrypt(self._keys[v], _FINGERPRINT_BLOCK):016x}", v == self._newest)
                for v in sorted(self._keys)]
