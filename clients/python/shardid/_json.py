"""JSON that keeps 64-bit IDs exact for every reader.

JavaScript's JSON.parse rounds integers above 2^53 - 1 (9007199254740991)
to the nearest double, so IDs travel as decimal strings: dumps writes the
values of the ID keys as strings, loads turns them back into ints.
"""

import json

from ._codec import MAX_ID
from ._errors import ShardidError

_SAFE = (1 << 53) - 1


def _id_out(key, v):
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"ID field {key!r} holds {type(v).__name__} {v!r}, not an int")
    return str(v)


def _walk_out(obj, ids):
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in ids:
                out[k] = [_id_out(k, x) for x in v] if isinstance(v, (list, tuple)) else _id_out(k, v)
            else:
                out[k] = _walk_out(v, ids)
        return out
    if isinstance(obj, (list, tuple)):
        return [_walk_out(x, ids) for x in obj]
    return obj


def dumps(obj, *, ids=("id",), **kwargs):
    """json.dumps, with the values under the keys in ids (at any depth,
    or each element of a list there) written as decimal strings."""
    return json.dumps(_walk_out(obj, frozenset(ids)), **kwargs)


def _id_in(key, v):
    if v is None:
        return None
    if isinstance(v, str):
        s = v[1:] if v.startswith("-") else v
        if not (s.isascii() and s.isdigit()) or (len(s) > 1 and s[0] == "0"):
            raise ShardidError("22P02", f"ID field {key!r} holds {v!r}, not a decimal integer")
        n = int(v)
    elif isinstance(v, int) and not isinstance(v, bool):
        n = v
        if abs(n) > _SAFE:
            raise ShardidError("22003", f"ID field {key!r} holds the bare number {n}, above 2^53 - 1",
                               "a JavaScript reader would have rounded it: write IDs as strings")
    else:
        raise ShardidError("22P02", f"ID field {key!r} holds {v!r}, not an ID")
    if n < 0 or n > MAX_ID:
        raise ShardidError("22003", f"ID field {key!r} holds {n}, outside 0 to 2^63 - 1")
    return n


def _walk_in(obj, ids):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ids:
                obj[k] = [_id_in(k, x) for x in v] if isinstance(v, list) else _id_in(k, v)
            else:
                _walk_in(v, ids)
    elif isinstance(obj, list):
        for x in obj:
            _walk_in(x, ids)
    return obj


def loads(text, *, ids=("id",), **kwargs):
    """json.loads, with the values under the keys in ids (decimal strings,
    or bare numbers up to 2^53 - 1) turned into ints; anything else there,
    a fraction, or a bare number above 2^53 - 1, is refused (ShardidError)."""
    return _walk_in(json.loads(text, **kwargs), frozenset(ids))
