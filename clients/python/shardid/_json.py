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


# Digits an int8 can have: 9223372036854775807.
_INT8_DIGITS = 19
# The most characters of a refused input that a message quotes.
_QUOTED = 40


def _quote(s):
    return s if len(s) <= _QUOTED else f"{s[:_QUOTED]}... ({len(s)} characters)"


class JSONError(ShardidError, json.JSONDecodeError):
    """Text that is not JSON (22P02): a ShardidError that is also the
    json.JSONDecodeError that json.loads raises, with its msg, doc, pos,
    lineno and colno."""

    def __init__(self, msg, doc, pos):
        json.JSONDecodeError.__init__(self, msg, doc, pos)
        self.sqlstate = "22P02"
        self.hint = None
        self.args = (f"invalid input syntax for type json: {self.args[0]}",)


def _parse_constant(name):
    raise ShardidError("22P02", f"invalid input syntax for type json: {name} is not a JSON number")


def _decimal(key, s, text):
    """The int of a decimal text, refused by its length (before int(), whose
    cost grows with the square of the length) when no int8 is that long."""
    if len(s) > _INT8_DIGITS:
        raise ShardidError("22003", f"ID field {key!r} holds a number of {len(s)} digits, out of range for type bigint",
                           f"a bigint has at most {_INT8_DIGITS} digits")
    return int(text)


def _id_in(key, v):
    if v is None:
        return None
    if isinstance(v, str):
        s = v[1:] if v.startswith("-") else v
        if not (s.isascii() and s.isdigit()) or (len(s) > 1 and s[0] == "0"):
            raise ShardidError("22P02", f"ID field {key!r} holds {_quote(v)!r}, not a decimal integer")
        n = _decimal(key, s, v)
    elif isinstance(v, int) and not isinstance(v, bool):
        n = v
        if abs(n) > _SAFE:
            raise ShardidError("22003", f"ID field {key!r} holds the bare number {_quote(str(n))}, above 2^53 - 1",
                               "a JavaScript reader would have rounded it: write IDs as strings")
    else:
        raise ShardidError("22P02", f"ID field {key!r} holds {_quote(repr(v))}, not an ID")
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
    a fraction, or a bare number above 2^53 - 1, is refused.

    Every refusal is a ShardidError: 22P02 for text that is not JSON (a
    JSONError, also a json.JSONDecodeError; NaN and Infinity are not JSON)
    or an ID field that holds no decimal integer, 22003 for a number out of
    range (an ID outside 0 to 2^63 - 1, a bare ID above 2^53 - 1, or any
    integer too long for Python's int), 22021 for bytes that are not UTF-8,
    54001 for JSON nested too deep for Python's recursion limit."""
    kwargs.setdefault("parse_constant", _parse_constant)
    try:
        doc = json.loads(text, **kwargs)
    except json.JSONDecodeError as e:
        raise JSONError(e.msg, e.doc, e.pos) from None
    except UnicodeDecodeError as e:
        raise ShardidError("22021", f"invalid byte sequence for encoding UTF8 at byte {e.start + 1}") from None
    except ShardidError:
        raise
    except ValueError as e:
        # int() past sys.get_int_max_str_digits() (4,300 digits by default),
        # which refuses by the length, wherever the number is
        raise ShardidError("22003", f"a number is too long: {e}",
                           "Python reads integers of at most sys.get_int_max_str_digits() digits") from None
    except RecursionError:
        raise ShardidError("54001", "JSON nested too deep",
                           "Python's json reads as deep as its recursion limit allows") from None
    try:
        return _walk_in(doc, frozenset(ids))
    except RecursionError:
        raise ShardidError("54001", "JSON nested too deep",
                           "Python's json reads as deep as its recursion limit allows") from None
