"""Composing, splitting and shortcodes, as the extension's src/codec.c.

An ID is (ms since the epoch << 23) | (shard << 10) | seq, a non-negative
signed 64-bit integer.  Times are Unix milliseconds (int) or aware
datetimes; sub-millisecond parts are truncated toward the past, as the
extension truncates a timestamptz's microseconds.
"""

from collections import namedtuple
from datetime import datetime, timedelta, timezone

from ._errors import ShardidError

SEQ_BITS = 10
SHARD_BITS = 13
TIME_SHIFT = SEQ_BITS + SHARD_BITS
MAX_SHARD = (1 << SHARD_BITS) - 1           # 8191
MAX_SEQ = (1 << SEQ_BITS) - 1               # 1023
MAX_TIME_MS = (1 << 40) - 1                 # keeps bit 63 clear
MAX_ID = (1 << 63) - 1
DEFAULT_EPOCH_MS = 1293840000000            # 2011-01-01 00:00:00 UTC

# PostgreSQL's timestamp range in Unix ms: 4714-11-24 BC up to (not
# including) 294277-01-01.  An epoch's horizon must lie inside it.
PG_MIN_UNIX_MS = -210866803200000
PG_END_UNIX_MS = 9224318016000000

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS = timedelta(milliseconds=1)

SHORTCODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_DIGIT = {c: i for i, c in enumerate(SHORTCODE_ALPHABET)}
SHORTCODE_MAXLEN = 11

Decoded = namedtuple("Decoded", "ms time shard seq")
Decoded.__doc__ = """An ID's parts: ms (int, Unix milliseconds), time (an
aware UTC datetime, or None past datetime's range), shard and seq (int)."""


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def ms_to_datetime(ms):
    """Unix milliseconds as an aware UTC datetime, None outside its range."""
    try:
        return _UNIX_EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return None


def format_ms(ms):
    """Unix milliseconds in ISO 8601, UTC, to the millisecond."""
    dt = ms_to_datetime(ms)
    if dt is None:
        return f"{ms} ms after 1970-01-01"
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def _datetime_ms(dt, what):
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ShardidError("22023", f"{what} {dt.isoformat()} has no time zone",
                           "pass an aware datetime, e.g. with tzinfo=timezone.utc")
    return (dt - _UNIX_EPOCH) // _ONE_MS


def _time_ms(when):
    """A time argument: Unix ms (int) or an aware datetime, floored to ms."""
    if isinstance(when, datetime):
        return _datetime_ms(when, "time")
    if _is_int(when):
        return when
    raise TypeError(f"a time is an int of Unix milliseconds or an aware datetime, not {type(when).__name__}")


def epoch_ms(epoch=None):
    """The epoch in Unix ms, checked as the extension checks it."""
    if epoch is None:
        return DEFAULT_EPOCH_MS
    if isinstance(epoch, datetime):
        if epoch.tzinfo is not None and epoch.microsecond % 1000 != 0:
            raise ShardidError("22023", f"epoch {epoch.isoformat()} is not a whole millisecond",
                               "IDs count whole milliseconds since the epoch")
        ms = _datetime_ms(epoch, "epoch")
    elif _is_int(epoch):
        ms = epoch
    else:
        raise TypeError(f"an epoch is an int of Unix milliseconds or an aware datetime, not {type(epoch).__name__}")
    if ms < PG_MIN_UNIX_MS or ms + MAX_TIME_MS >= PG_END_UNIX_MS:
        raise ShardidError("22008", f"epoch {ms} ms is out of range",
                           f"the epoch's horizon, {MAX_TIME_MS} ms later, must be a valid PostgreSQL timestamp")
    return ms


def check_id(id):
    """An ID argument: an int in [0, 2^63)."""
    if not _is_int(id):
        raise TypeError(f"an ID is an int, not {type(id).__name__}")
    if id < 0:
        raise ShardidError("22023", f"ID {id} is negative",
                           "IDs made by shardid are never negative: bit 63 is always 0")
    if id > MAX_ID:
        raise ShardidError("22003", f"value {id} is out of range for type bigint")
    return id


def _check_int4(v, what):
    if not _is_int(v):
        raise TypeError(f"{what} is an int, not {type(v).__name__}")
    if not -(1 << 31) <= v < (1 << 31):
        raise ShardidError("22003", f"value {v} is out of range for type integer")


def _compose(ms, epoch, shard, seq):
    if shard < 0 or shard > MAX_SHARD:
        raise ShardidError("22003", f"shard ID {shard} is out of range",
                           f"valid shard IDs are 0 to {MAX_SHARD}")
    if seq < 0 or seq > MAX_SEQ:
        raise ShardidError("22003", f"sequence number {seq} is out of range",
                           f"valid sequence numbers are 0 to {MAX_SEQ}")
    if ms < epoch:
        raise ShardidError("22008", f"time {format_ms(ms)} is before the epoch {format_ms(epoch)}")
    if ms - epoch > MAX_TIME_MS:
        raise ShardidError("22008", f"time {format_ms(ms)} is past the horizon of the epoch",
                           f"with the epoch {format_ms(epoch)}, the last millisecond that encodes "
                           f"to a positive bigint is {format_ms(epoch + MAX_TIME_MS)}; use a later epoch")
    return ((ms - epoch) << TIME_SHIFT) | (shard << SEQ_BITS) | seq


def encode(when, shard, seq, *, epoch=None):
    """The ID of a time (Unix ms or aware datetime), shard and seq: shardid_encode."""
    ms = _time_ms(when)
    _check_int4(shard, "shard")
    _check_int4(seq, "seq")
    return _compose(ms, epoch_ms(epoch), shard, seq)


def decode(id, *, epoch=None):
    """An ID's creation time, shard and seq: shardid_decode."""
    check_id(id)
    ms = epoch_ms(epoch) + (id >> TIME_SHIFT)
    return Decoded(ms, ms_to_datetime(ms), (id >> SEQ_BITS) & MAX_SHARD, id & MAX_SEQ)


def floor(when, *, epoch=None):
    """The smallest ID any shard can issue in that millisecond: shardid_floor."""
    return _compose(_time_ms(when), epoch_ms(epoch), 0, 0)


def horizon_ms(*, epoch=None):
    """The last millisecond (Unix ms) that encodes to a positive ID."""
    return epoch_ms(epoch) + MAX_TIME_MS


def horizon(*, epoch=None):
    """The last millisecond that encodes to a positive ID, as a datetime
    (None past datetime's range): shardid_horizon.  2045-11-03
    19:53:47.775 UTC with the default epoch."""
    return ms_to_datetime(horizon_ms(epoch=epoch))


def to_shortcode(id):
    """Instagram's URL form of an ID: shardid_to_shortcode."""
    v = check_id(id)
    out = []
    while True:
        out.append(SHORTCODE_ALPHABET[v & 63])
        v >>= 6
        if v == 0:
            break
    return "".join(reversed(out))


def from_shortcode(code):
    """The ID of Instagram's URL form: shardid_from_shortcode."""
    if not isinstance(code, str):
        raise TypeError(f"a shortcode is a str, not {type(code).__name__}")
    if code == "":
        raise ShardidError("22P02", "shortcode is empty",
                           f"a shortcode has 1 to {SHORTCODE_MAXLEN} characters")
    # The length first, in UTF-8 bytes as the server counts it (more
    # characters than that are more bytes too): no work in proportion to
    # a long input, and only its first bytes in the message.
    head = code[:SHORTCODE_MAXLEN + 1].encode("utf-8", "surrogatepass")
    if len(code) > SHORTCODE_MAXLEN or len(head) > SHORTCODE_MAXLEN:
        shown = head[:SHORTCODE_MAXLEN].decode("utf-8", "ignore")
        raise ShardidError("22003", f'shortcode "{shown}..." is too long',
                           f"a shortcode has at most {SHORTCODE_MAXLEN} characters")
    for i, c in enumerate(code):
        if c not in _DIGIT:
            pos = len(code[:i].encode("utf-8", "surrogatepass")) + 1
            raise ShardidError("22P02", f'invalid character in shortcode "{code}"',
                               f'byte {pos} is not one of A-Z, a-z, 0-9, "-" and "_"')
    if len(code) > 1 and code[0] == "A":
        raise ShardidError("22P02", f'shortcode "{code}" has a leading "A"',
                           '"A" is the digit zero; shortcodes are written without leading zeros')
    v = 0
    for c in code:
        v = (v << 6) | _DIGIT[c]
    if v > MAX_ID:
        raise ShardidError("22003", f'shortcode "{code}" is out of range',
                           'shortcodes stand for IDs of at most 63 bits; the largest is "H__________"')
    return v
