"""Constants, errors and output shared by every module."""

import os
import re
import signal
import sys

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo


PROG = "shardid-fleet"
MAX_SHARD = 8191
NSHARDS = MAX_SHARD + 1
# The router's gate and the tool's run lock: per PL/Proxy cluster, a table
# named after the cluster in this schema, which no role but its owner may
# use (so no other role can name the table to lock it).  Every PL/Proxy
# call of the cluster passes the gate in plproxy.get_cluster_version
# (ROW SHARE, given back at once); a move holds it (EXCLUSIVE) for the
# moment its fence and switch take, so calls wait there and then go to the
# shard's new server.  A run of router or move holds SHARE UPDATE
# EXCLUSIVE for its whole run: one run at a time, and calls never wait
# for it.  (shardid-fleet of shardid 1.2 and before used advisory locks,
# which any role can take.)
GATE_SCHEMA = "shardid_fleet_gate"
# the trigger function whose presence marks a shard's schema as fenced by
# a move on its old server (every write there fails with 40001)
FENCE_TRIGGER_FUNCTION = "shardid_fleet_moved"
MARKER = "shardid-fleet: PL/Proxy cluster configuration from shardid_fleet.map"
FLEET_SCHEMA = "shardid_fleet"

# The steps of a move, in order.  The router records the step a move is
# in before the step is taken.
STEPS = ["prepared", "schema", "publication", "slot", "subscription", "sync",
         "fence", "retired", "switched", "cleaned", "done"]
FINAL = ("done", "aborted")


class FleetError(Exception):
    """An error to report and exit with status 1."""


#
# Output.  Everything printed goes through mask(): password=... and the
# password of a postgresql:// URI never reach a terminal or a log.  A
# connection string the tool prints is rendered by show_conn() from what
# libpq parses, its secrets replaced; mask() is the fallback for free text
# (libpq's messages, a string libpq cannot parse).
#

SECRET_KEYS = ("password", "sslpassword")
HIDDEN = "********"
# the keywords printed first, in this order; the rest in libpq's order
_FIRST_KEYS = ("service", "host", "hostaddr", "port", "dbname", "user")

# a libpq value: one masked already (by show_conn, followed by the end of
# the string it was printed in), quoted ('...', backslash escapes, possibly
# unterminated) or bare (up to white space, backslash escapes)
_PW_KEYWORD = re.compile(r"""((?:ssl)?password\s*=\s*)(\*{8}(?=[\s"':;,.)]|$)|'(?:[^'\\]|\\.|\\$)*(?:'|$)|(?:[^\s\\]|\\.|\\$)*)""",
                         re.I | re.S)
_PW_URI = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)", re.I)
_PW_URI_PARAM = re.compile(r"([?&](?:ssl)?password=)([^&\s]*)", re.I)


# in a connection string libpq cannot parse, a bare value may hold spaces
# (password=correct horse): it runs to the next keyword=
_PW_KEYWORD_CONN = re.compile(r"""((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.|\\$)*(?:'|$)|.*?(?=\s+[A-Za-z_]+\s*=|$))""",
                              re.I | re.S)


def mask(text):
    text = _PW_KEYWORD.sub(lambda m: m.group(1) + HIDDEN, str(text))
    text = _PW_URI.sub(lambda m: m.group(1) + HIDDEN + m.group(3), text)
    return _PW_URI_PARAM.sub(lambda m: m.group(1) + HIDDEN, text)


def conn_params(conninfo):
    """The parameters libpq reads from a connection string, or None if it
    cannot parse it"""
    try:
        return conninfo_to_dict(conninfo)
    except (psycopg.Error, TypeError):
        return None


def render_conn(params):
    """A connection string from parameters, the usual keywords first"""
    keys = [k for k in _FIRST_KEYS if k in params] + [k for k in params if k not in _FIRST_KEYS]
    return make_conninfo(**{k: params[k] for k in keys})


def show_conn(conninfo):
    """A connection string as printed: as it is if it holds no secret,
    else rendered from its parsed parameters with every secret replaced"""
    params = conn_params(conninfo)
    if params is None:
        return mask(_PW_KEYWORD_CONN.sub(lambda m: m.group(1) + HIDDEN, str(conninfo)))
    if not any(k in params for k in SECRET_KEYS):
        return mask(conninfo)
    return render_conn({k: (HIDDEN if k in SECRET_KEYS else v) for k, v in params.items()})


def has_secret(conninfo):
    params = conn_params(conninfo)
    if params is None:
        return mask(conninfo) != conninfo
    return any(k in params for k in SECRET_KEYS)


def strip_secrets(conninfo):
    """The connection string without password and sslpassword (as it is if
    it has neither): what is written to the map file and the router"""
    params = conn_params(conninfo)
    if params is None or not any(k in params for k in SECRET_KEYS):
        return conninfo
    return render_conn({k: v for k, v in params.items() if k not in SECRET_KEYS})


def server_key(conninfo):
    """What names a server in a connection string: its parameters but the
    secrets"""
    params = conn_params(conninfo)
    if params is None:
        return ("", conninfo)
    return tuple(sorted((k, v) for k, v in params.items() if k not in SECRET_KEYS))


def same_server(a, b):
    if a is None or b is None:
        return a is b
    return a == b or server_key(a) == server_key(b)


def out(msg=""):
    sys.stdout.write(mask(msg) + "\n")
    sys.stdout.flush()


def warn(msg):
    sys.stderr.write(mask("%s: warning: %s" % (PROG, msg)) + "\n")
    sys.stderr.flush()


def pgerr(e):
    """A psycopg error as SQLSTATE: message, with detail and hint."""
    diag = getattr(e, "diag", None)
    if diag is None or diag.message_primary is None:
        return str(e).strip()
    text = "%s: %s" % (diag.sqlstate, diag.message_primary)
    if diag.message_detail:
        text += "\nDETAIL: " + diag.message_detail
    if diag.message_hint:
        text += "\nHINT: " + diag.message_hint
    return text


def plural(n, word):
    return "1 %s" % word if n == 1 else "%d %ss" % (n, word)


def ranges(nums):
    """'0-20,22,24-30' from integers"""
    nums = sorted(nums)
    parts = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if i == j else "%d-%d" % (nums[i], nums[j]))
        i = j + 1
    return ",".join(parts)


def shard_schema(n):
    return "shard_%04d" % n


def kill_point(name):
    """Test hook: SHARDID_FLEET_KILL_AT=NAME makes the tool kill itself
    with SIGKILL here, as an operator's kill -9 or a crash would."""
    if os.environ.get("SHARDID_FLEET_KILL_AT") == name:
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
