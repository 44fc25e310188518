"""The command line."""

import argparse
import sys

import psycopg

from .common import FleetError, PROG, mask, pgerr
from .conn import conn_arg
from .provision import cmd_apply, cmd_check
from .router import cmd_router, cmd_status
from .movecmd import cmd_move


#
# main
#

def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description="Lay logical shards out over PostgreSQL servers, "
                                "route to them with PL/Proxy, and move them online.",
                                epilog="A CONN argument is a libpq connection string (service=NAME names "
                                "one in a service file), @FILE (read from FILE) or env:NAME (read from "
                                "the environment variable NAME); keep secrets off the command line.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True

    c = sub.add_parser("check", help="validate a map file and look at its servers")
    c.add_argument("--no-connect", action="store_true", help="only validate the file")
    c.add_argument("mapfile")

    c = sub.add_parser("apply", help="provision the map's logical shards on every server")
    c.add_argument("--api", help="SQL file of the functions the router calls, run on every server")
    c.add_argument("--server", action="append", default=[], metavar="CONN",
                   help="also prepare this server, which holds no shard yet")
    c.add_argument("--template-schema", default="shardid_template", metavar="NAME")
    c.add_argument("--extension-schema", default="public", metavar="NAME",
                   help="schema for extension shardid where it is missing (default public)")
    c.add_argument("--owner", metavar="ROLE", help="provision as this role, which then owns the shards")
    c.add_argument("--batch-size", type=int, default=32, metavar="N",
                   help="logical shards per transaction (default 32)")
    c.add_argument("-v", action="store_true", help="list every object created")
    c.add_argument("mapfile")
    c.add_argument("template")

    c = sub.add_parser("router", help="set up the PL/Proxy router and load the map into it")
    c.add_argument("--api", help="SQL file of the router's functions")
    c.add_argument("--cluster", default="shardid")
    c.add_argument("--extension-schema", default="public", metavar="NAME")
    c.add_argument("mapfile")
    c.add_argument("router_conn")

    c = sub.add_parser("status", help="where every shard is, and moves in flight")
    c.add_argument("--cluster", default="shardid")
    c.add_argument("mapfile")
    c.add_argument("router_conn")

    c = sub.add_parser("move", help="move a logical shard to another server, online")
    c.add_argument("--drop", action="store_true", help="drop the retired schema on the old server at the end")
    c.add_argument("--cluster", default="shardid")
    c.add_argument("--max-clock-wait", type=float, default=10.0, metavar="SECONDS")
    c.add_argument("--lock-timeout", type=float, default=5.0, metavar="SECONDS")
    c.add_argument("--fence-timeout", type=float, default=10.0, metavar="SECONDS")
    c.add_argument("--owner", metavar="ROLE", help="also trust objects of this role on the old server")
    c.add_argument("--publisher-conn", metavar="CONN",
                   help="how the new server connects to the old one (default: the map's connection string)")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--resume", action="store_true", help="finish the cluster's unfinished move")
    g.add_argument("--abort", action="store_true", help="undo the cluster's unfinished move")
    c.add_argument("mapfile")
    c.add_argument("router_conn")
    c.add_argument("shard", nargs="?")
    c.add_argument("to_conn", nargs="?")

    a = p.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
