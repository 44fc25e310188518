"""Constants, errors and output shared by every module."""

import os
import re
import signal
import sys


PROG = "shardid-fleet"
MAX_SHARD = 8191
NSHARDS = MAX_SHARD + 1
# advisory lock class of shardid-fleet on the router: "SHFL" in ASCII
LOCK_CLASS = 0x5348464C
# advisory lock class of the router's gate: "SHFG".  A move holds it, per
# cluster, for the moment its fence and switch take; every PL/Proxy call of
# the cluster passes through it (plproxy.get_cluster_version), so calls wait
# there and then go to the shard's new server.
GATE_CLASS = 0x53484647
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
# password of a postgresql:// URI never reach a terminal or a log.
#

_PW_KEYWORD = re.compile(r"((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)", re.I)
_PW_URI = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)", re.I)


def mask(text):
    text = _PW_KEYWORD.sub(r"\1********", str(text))
    return _PW_URI.sub(r"\1********\3", text)


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
