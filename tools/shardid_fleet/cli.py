"""The command line: the parser (build_parser) and main(), which runs a
command and turns its errors into an exit status.  Run by the launcher
(tools/shardid-fleet, /usr/bin/shardid-fleet) and by python3 -m
shardid_fleet (__main__)."""

import argparse
import sys

import psycopg

from .common import FleetError, PROG, mask, pgerr
from .conn import conn_arg
from .provision import cmd_apply, cmd_check
from .router import cmd_router, cmd_status
from .movecmd import cmd_move


#
# The parser: one function per command
#

MAPFILE_HELP = "the map file: which server holds which logical shard (see man shardid-fleet)"
ROUTER_HELP = "libpq connection string of the router database"
CLUSTER_HELP = "name of the PL/Proxy cluster (default shardid)"


def build_parser():
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Lay logical shards out over PostgreSQL servers, route to them with PL/Proxy,\n"
                    "and move them online.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    add_check(sub)
    add_apply(sub)
    add_router(sub)
    add_status(sub)
    add_move(sub)
    # the top-level help ends with every command's usage line
    synopses = []
    for name, c in sub.choices.items():
        lines = c.format_usage().rstrip("\n").split("\n")
        synopses += ["  " + line[len("usage: "):] for line in lines]
    p.epilog = ("commands:\n" + "\n".join(synopses) + "\n\n"
                "A CONN argument is a libpq connection string (service=NAME names one in a\n"
                "service file), @FILE (read from FILE) or env:NAME (read from the environment\n"
                "variable NAME); keep secrets off the command line.\n\n"
                "\"%s COMMAND --help\" describes a command's options; man shardid-fleet\n"
                "and docs/fleet.md (installed as /usr/share/doc/shardid-fleet/fleet.md.gz)\n"
                "describe the map file, moves and their recovery." % PROG)
    return p


def add_check(sub):
    c = sub.add_parser("check", help="validate a map file and look at its servers",
                       description="Validate the map file and show what each server holds; then connect "
                                   "to each server and report its version, wal_level and extension "
                                   "shardid. Exits 1 when the file is not valid or a server has a problem.")
    c.add_argument("--no-connect", action="store_true",
                   help="only validate the file; connect to no server")
    c.add_argument("mapfile", metavar="MAPFILE", help=MAPFILE_HELP)


def add_apply(sub):
    c = sub.add_parser("apply", help="provision the map's logical shards on every server",
                       description="On every server of the map: create extension shardid and the "
                                   "template schema where missing, provision the logical shards the map "
                                   "puts there, and run the API file. Refuses, and changes nothing, "
                                   "when the map file is out of date. A rerun creates only what is missing.")
    c.add_argument("--api", metavar="FILE",
                   help="SQL file of the functions the router calls, run on every server")
    c.add_argument("--server", action="append", default=[], metavar="CONN",
                   help="also prepare this server, which holds no shard yet (repeatable)")
    c.add_argument("--template-schema", default="shardid_template", metavar="NAME",
                   help="schema of the template tables, created from TEMPLATE.sql where missing "
                        "(default shardid_template)")
    c.add_argument("--extension-schema", default="public", metavar="NAME",
                   help="schema for extension shardid where it is missing (default public)")
    c.add_argument("--owner", metavar="ROLE", help="provision as this role, which then owns the shards")
    c.add_argument("--batch-size", type=int, default=32, metavar="N",
                   help="logical shards per transaction (default 32)")
    c.add_argument("-v", action="store_true", help="list every object created")
    c.add_argument("mapfile", metavar="MAPFILE", help=MAPFILE_HELP)
    c.add_argument("template", metavar="TEMPLATE.sql",
                   help="SQL file that creates the template tables (plain SQL, unqualified names)")


def add_router(sub):
    c = sub.add_parser("router", help="set up the PL/Proxy router and load the map into it",
                       description="Set up the router database in one transaction: extensions plproxy "
                                   "and shardid, the map in table shardid_fleet.map and PL/Proxy's "
                                   "configuration functions; a changed map bumps the cluster version. "
                                   "Refuses, and changes nothing, while a move of the cluster is unfinished.")
    c.add_argument("--api", metavar="FILE", help="SQL file of the router's functions, run after the map is loaded")
    c.add_argument("--cluster", default="shardid", metavar="NAME", help=CLUSTER_HELP)
    c.add_argument("--extension-schema", default="public", metavar="NAME",
                   help="schema for extensions plproxy and shardid where they are missing (default public)")
    c.add_argument("mapfile", metavar="MAPFILE", help=MAPFILE_HELP)
    c.add_argument("router_conn", metavar="ROUTER_CONN", help=ROUTER_HELP)


def add_status(sub):
    c = sub.add_parser("status", help="where every shard is, and moves in flight",
                       description="Show the router's map version, whether the map file agrees, the move "
                                   "in flight and the last five moves, and what every server holds. "
                                   "Exits 1 when anything is inconsistent or a move is in flight.")
    c.add_argument("--cluster", default="shardid", metavar="NAME", help=CLUSTER_HELP)
    c.add_argument("mapfile", metavar="MAPFILE", help=MAPFILE_HELP)
    c.add_argument("router_conn", metavar="ROUTER_CONN", help=ROUTER_HELP)


def add_move(sub):
    c = sub.add_parser("move", help="move a logical shard to another server, online",
                       description="Move logical shard SHARD from the server the map names to TO_CONN "
                                   "with logical replication; writes to the shard pause only for a moment "
                                   "at the end. Every step is recorded on the router first: a move that "
                                   "stopped is finished with --resume or, until the router has switched, "
                                   "undone with --abort (SHARD and TO_CONN may then be left out; if given, "
                                   "they must match).")
    c.add_argument("--drop", action="store_true", help="drop the retired schema on the old server at the end")
    c.add_argument("--cluster", default="shardid", metavar="NAME", help=CLUSTER_HELP)
    c.add_argument("--max-clock-wait", type=float, default=10.0, metavar="SECONDS",
                   help="longest wait for the new server's clock to pass the last moved ID; a server "
                        "further behind is refused before anything changes (default 10)")
    c.add_argument("--lock-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="longest wait for each attempt to lock the shard's tables on the old server "
                        "(default 5; three attempts)")
    c.add_argument("--fence-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="longest wait in the write fence for the new server to receive the old one's "
                        "last writes (default 10)")
    c.add_argument("--owner", metavar="ROLE", help="also trust objects of this role on the old server")
    c.add_argument("--publisher-conn", metavar="CONN",
                   help="how the new server connects to the old one (default: the map's connection string)")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--resume", action="store_true", help="finish the cluster's unfinished move")
    g.add_argument("--abort", action="store_true", help="undo the cluster's unfinished move")
    c.add_argument("mapfile", metavar="MAPFILE", help=MAPFILE_HELP)
    c.add_argument("router_conn", metavar="ROUTER_CONN", help=ROUTER_HELP)
    c.add_argument("shard", nargs="?", metavar="SHARD", help="the logical shard to move, 0 to 8191")
    c.add_argument("to_conn", nargs="?", metavar="TO_CONN",
                   help="libpq connection string of the server to move it to")


def main(argv):
    a = build_parser().parse_args(argv)
    try:
        # a connection string argument may be given as @FILE or env:NAME,
        # to keep its secrets off the command line
        for attr, what in (("router_conn", "ROUTER_CONN"), ("to_conn", "TO_CONN"),
                           ("publisher_conn", "--publisher-conn")):
            if getattr(a, attr, None) is not None:
                setattr(a, attr, conn_arg(getattr(a, attr), what))
        if getattr(a, "server", None):
            a.server = [conn_arg(x, "--server") for x in a.server]
        return {"check": cmd_check, "apply": cmd_apply, "router": cmd_router,
                "status": cmd_status, "move": cmd_move}[a.cmd](a)
    except FleetError as e:
        sys.stderr.write(mask("%s: error: %s" % (PROG, e)) + "\n")
        return 1
    except psycopg.Error as e:
        sys.stderr.write(mask("%s: error: %s" % (PROG, pgerr(e))) + "\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130
