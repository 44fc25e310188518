"""shardid: decode, encode and publish shardid's 64-bit IDs in Python.

The same rules as the PostgreSQL extension shardid, bit for bit:
decode/encode/floor/horizon as shardid_decode/shardid_encode/shardid_floor/
shardid_horizon, to_shortcode/from_shortcode as shardid_to_shortcode/
shardid_from_shortcode, PublicIds as shardid_public/shardid_private, and
dumps/loads for JSON that keeps IDs exact as strings.  Errors are
ShardidError (a ValueError) with the SQLSTATE the extension raises.
"""

from ._errors import ShardidError
from ._codec import (DEFAULT_EPOCH_MS, MAX_ID, MAX_SEQ, MAX_SHARD, MAX_TIME_MS,
                     Decoded, decode, encode, floor, from_shortcode, horizon,
                     horizon_ms, to_shortcode)
from ._public import KeyInfo, PublicIds
from ._json import JSONError, dumps, loads

__version__ = "1.3.0"

__all__ = [
    "ShardidError", "DEFAULT_EPOCH_MS", "MAX_ID", "MAX_SEQ", "MAX_SHARD", "MAX_TIME_MS",
    "Decoded", "decode", "encode", "floor", "horizon", "horizon_ms",
    "to_shortcode", "from_shortcode", "PublicIds", "KeyInfo", "dumps", "loads", "JSONError",
]
