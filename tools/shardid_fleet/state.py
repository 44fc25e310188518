"""The recorded state of a move (MoveState: one row of the router's table
shardid_fleet.moves) and every read and write of that table.

The router records each step of a move before the step is taken, so a
move stopped anywhere is finished (--resume) or undone (--abort) from this
row alone.  The row is written only by shardid-fleet, but a role that may
write the table (the router database's owner, or one it let) could write
one of its own: check_recorded() refuses a row whose fields are not what
shardid-fleet writes, before any step uses them.  Everything here but the
table's reads and writes decides from the recorded state alone, and is
tested without a server (test/fleet_unit)."""

import dataclasses
import re
from typing import Optional

import psycopg
from psycopg import sql

from .common import FINAL, FleetError, MAX_SHARD, PROG, STEPS, same_server, shard_schema, show_conn
from .conn import incoming_marker, one, rows


@dataclasses.dataclass
class MoveState:
    """One move as the router records it.  The connection strings are
    recorded without their secrets (MoveConns has those a run uses)."""
    move_id: Optional[int]            # column id
    cluster: str                      # the PL/Proxy cluster
    shard: int                        # the logical shard moved
    token: str                        # 8 hexadecimal digits, in every name the move makes
    source: str                       # the old server
    target: str                       # the new server
    publisher: str                    # how the new server connects to the old one
    drop_retired: bool                # drop the retired schema at the end (--drop)
    step: str                         # column state: the step taken last, or being taken (STEPS)
    retired_schema: Optional[str] = None      # the old schema's name once retired
    source_schema_oid: Optional[int] = None   # the shard's schema on the old server
    target_schema_oid: Optional[int] = None   # its copy on the new server
    subscription_oid: Optional[int] = None    # the subscription on the new server
    fence_lsn: Optional[str] = None           # the old server's WAL position at the fence
    fence_ms: Optional[int] = None            # the last millisecond of any ID of the shard
    paused_ms: Optional[int] = None           # how long writes to the shard were paused
    last_error: Optional[str] = None          # why the last run stopped

    @property
    def schema(self):
        """The shard's schema, on both servers"""
        return shard_schema(self.shard)

    @property
    def name(self):
        """The publication's, the slot's and the subscription's name"""
        return "shardid_%04d_%s" % (self.shard, self.token)

    def reached(self, step):
        """Whether the move has got as far as step"""
        return STEPS.index(self.step) >= STEPS.index(step)


@dataclasses.dataclass
class MoveConns:
    """The connection strings a run connects with: those the operator gave
    (or the map file's), with their secrets, which the router never
    records.  Each names the same server as MoveState's field."""
    source: str
    target: str
    publisher: str


# MoveState's fields and the columns of shardid_fleet.moves that hold them
COLUMNS = {f.name: ("id" if f.name == "move_id" else "state" if f.name == "step" else f.name)
           for f in dataclasses.fields(MoveState)}
# the fields a step may record (the others are written once, by insert_move)
RECORDED = ("step", "drop_retired", "retired_schema", "target_schema_oid", "subscription_oid",
            "fence_lsn", "fence_ms", "paused_ms")
# (composed into a query as it is: its braces are not format()'s)
UNFINISHED = sql.SQL("m.state OPERATOR(pg_catalog.<>) ALL ('{done,aborted}'::pg_catalog.text[])")


#
# The table
#

def has_moves_table(conn):
    """Whether the router has shardid_fleet.moves (one set up by an older
    shardid-fleet may lack it)"""
    return one(conn, "SELECT pg_catalog.to_regclass('shardid_fleet.moves') IS NOT NULL") is True


def load_unfinished(conn, cluster):
    """The cluster's unfinished move, or None"""
    cols = sql.SQL(", ").join(
        sql.SQL("m.{}::pg_catalog.text").format(sql.Identifier(c)) if c == "fence_lsn" else
        sql.SQL("m.{}").format(sql.Identifier(c)) for c in COLUMNS.values())
    r = conn.execute(sql.SQL("SELECT {} FROM shardid_fleet.moves AS m "
                             "WHERE m.cluster OPERATOR(pg_catalog.=) %s AND {}").format(cols, UNFINISHED),
                     (cluster,)).fetchone()
    return None if r is None else MoveState(*r)


def insert_move(conn, state):
    """Record a new move (step prepared); sets state.move_id"""
    try:
        state.move_id = one(conn, "INSERT INTO shardid_fleet.moves (cluster, shard, token, source, target, "
                                  "publisher, drop_retired, state, source_schema_oid) VALUES (%(cluster)s, "
                                  "%(shard)s, %(token)s, %(source)s, %(target)s, %(publisher)s, %(drop_retired)s, "
                                  "%(step)s, %(source_schema_oid)s) RETURNING id", dataclasses.asdict(state))
    except psycopg.errors.UniqueViolation:
        raise FleetError('another move of cluster "%s" is unfinished' % state.cluster)
    return state


def record(conn, state, **changes):
    """Write changes (MoveState's fields) to the move's row, then to state"""
    bad = [k for k in changes if k not in RECORDED]
    if bad:
        raise ValueError("not a field a step records: %s" % ", ".join(bad))
    assigns = sql.SQL(", ").join(
        sql.SQL("{} = {}").format(sql.Identifier(COLUMNS[k]), sql.Placeholder(k)) for k in changes)
    conn.execute(sql.SQL("UPDATE shardid_fleet.moves SET {}, updated_at = pg_catalog.now() "
                         "WHERE id OPERATOR(pg_catalog.=) %(move_id)s").format(assigns),
                 dict(changes, move_id=state.move_id))
    for k, v in changes.items():
        setattr(state, k, v)


def record_done(conn, state):
    conn.execute("UPDATE shardid_fleet.moves SET state = 'done', last_error = NULL, "
                 "updated_at = pg_catalog.now(), finished_at = pg_catalog.now() "
                 "WHERE id OPERATOR(pg_catalog.=) %s", (state.move_id,))
    state.step = "done"
    state.last_error = None


def record_aborted(conn, state):
    conn.execute("UPDATE shardid_fleet.moves SET state = 'aborted', updated_at = pg_catalog.now(), "
                 "finished_at = pg_catalog.now() WHERE id OPERATOR(pg_catalog.=) %s", (state.move_id,))
    state.step = "aborted"


def record_error(conn, state, text):
    """Why the run stopped (text masked already); a failure to write it is
    not reported over the error itself"""
    try:
        conn.execute("UPDATE shardid_fleet.moves SET last_error = %s, updated_at = pg_catalog.now() "
                     "WHERE id OPERATOR(pg_catalog.=) %s", (text, state.move_id))
    except psycopg.Error:
        return
    state.last_error = text


def unfinished_move(conn, cluster):
    """(id, shard, state, source, target, started_at, updated_at,
    last_error) of the cluster's unfinished move, or None"""
    if not has_moves_table(conn):
        return None
    return conn.execute(sql.SQL("""
        SELECT m.id, m.shard, m.state, m.source, m.target, m.started_at, m.updated_at, m.last_error
          FROM shardid_fleet.moves AS m
         WHERE m.cluster OPERATOR(pg_catalog.=) %s
           AND {}""").format(UNFINISHED), (cluster,)).fetchone()


def finished_moves(conn, cluster, limit=5):
    """[(id, shard, state, source, target, finished_at, paused_ms)] of the
    cluster's last finished moves, the latest first"""
    return rows(conn, """
        SELECT m.id, m.shard, m.state, m.source, m.target, m.finished_at, m.paused_ms
          FROM shardid_fleet.moves AS m
         WHERE m.cluster OPERATOR(pg_catalog.=) %s
           AND m.state OPERATOR(pg_catalog.=) ANY ('{done,aborted}'::pg_catalog.text[])
         ORDER BY m.id DESC LIMIT %s""", (cluster, limit))


#
# Decisions from the recorded state alone
#

def refusal(state, field, why):
    """The error that refuses a recorded row"""
    return FleetError('refusing the move recorded in shardid_fleet.moves (id %s): %s %s; nothing was done'
                      % (state.move_id, field, why)
                      + "\nHINT: shardid-fleet writes this row itself; a row it did not write is not "
                        "taken.  See shardid-fleet status and the router's log.")


def retired_pattern(state):
    """The names this move retires the old schema under"""
    return r"shard_%04d_retired_[0-9]{14}_%s" % (state.shard, state.token)


def check_recorded(state, conns, router_owner, publisher_conn=None):
    """Every field of the row that the steps use, against what the tool
    writes and against the router's map (router_owner: the server of each
    logical shard); the catalogs' part is Move.check_recorded_objects.
    conns: the connection strings the run uses, which name the recorded
    servers; publisher_conn: --publisher-conn, if given."""
    if not isinstance(state.shard, int) or not 0 <= state.shard <= MAX_SHARD:
        raise refusal(state, "shard", "%r is not a logical shard (0 to %d)" % (state.shard, MAX_SHARD))
    if not isinstance(state.token, str) or not re.fullmatch(r"[0-9a-f]{8}", state.token):
        raise refusal(state, "token", "%r is not a token of shardid-fleet (8 hexadecimal digits)" % (state.token,))
    if state.step not in STEPS or state.step in FINAL:
        raise refusal(state, "state", "%r is not a step of an unfinished move" % (state.step,))
    if not isinstance(state.drop_retired, bool):
        raise refusal(state, "drop_retired", "is %r" % (state.drop_retired,))
    check_recorded_servers(state, conns, router_owner, publisher_conn)
    if state.retired_schema is not None:
        want = retired_pattern(state)
        if not state.reached("fence") or not re.fullmatch(want, state.retired_schema):
            raise refusal(state, "retired_schema", '"%s" is not the name this move retires %s under (%s)'
                          % (state.retired_schema, state.schema, want.replace("[0-9]{14}", "YYYYMMDDHHMMSS")))
    if not isinstance(state.source_schema_oid, int):
        raise refusal(state, "source_schema_oid", "is missing")


def check_recorded_servers(state, conns, router_owner, publisher_conn):
    """The recorded servers: the old one is a server of the router's map,
    the new one another, the router sends the shard to the one the step
    says, and the publisher is the old server (or --publisher-conn)"""
    source, target, publisher = conns.source, conns.target, conns.publisher
    servers = set(x for x in router_owner if x is not None)
    # servers compared by what libpq parses, secrets left out (the
    # router records connection strings without them)
    if not isinstance(source, str) or not any(same_server(source, s) for s in servers):
        raise refusal(state, "source", '"%s" is not a server of the router\'s map' % show_conn(source))
    if not isinstance(target, str) or not target or same_server(target, source):
        raise refusal(state, "target", '"%s" is not another server than the source' % show_conn(target))
    routed = target if state.reached("switched") else source
    if not same_server(router_owner[state.shard], routed):
        raise refusal(state, "source" if routed is source else "target",
                      'is "%s", but the router sends logical shard %d to "%s" (step %s)'
                      % (show_conn(routed), state.shard, show_conn(router_owner[state.shard]), state.step))
    if not state.reached("sync") and not (
            same_server(publisher, source) or (publisher_conn and same_server(publisher, publisher_conn))):
        raise refusal(state, "publisher", '"%s" is not the old server\'s connection string; give it again with '
                      "--publisher-conn if it is the one the move was started with" % show_conn(publisher))


def check_retired_name(state):
    """The recorded retired schema's name, before a step renames or drops
    a schema by it"""
    want = "%s_retired_" % state.schema
    if not (state.retired_schema or "").startswith(want) or not state.retired_schema.endswith("_" + state.token):
        raise FleetError("the recorded retired schema name %r is not one this move would make" % state.retired_schema)


def retired_schema_name(state, now):
    """The name the old schema is retired under, from the UTC time now"""
    return "%s_retired_%s_%s" % (state.schema, now.strftime("%Y%m%d%H%M%S"), state.token)


def steps_to_take(step):
    """The steps a run walks from the recorded one to the end: each is
    taken again (every step first looks at what is already there), but a
    move just prepared starts with the next"""
    return STEPS[max(STEPS.index(step), 1):]


def check_abortable(state):
    if state.reached("switched"):
        raise FleetError("the router already sends logical shard %d to the new server (step %s); "
                         "the move can only be finished: shardid-fleet move --resume"
                         % (state.shard, state.step))


def stopped_message(state):
    """What the operator is told when a run stops, or None once the move
    is finished"""
    if state.step in FINAL:
        return None
    return ("%s: the move of logical shard %d stopped at step %s; shardid-fleet move --resume finishes it%s"
            % (PROG, state.shard, state.step,
               "" if state.step in ("switched", "cleaned") else ", --abort undoes it"))


def check_found_source_schema(state, found, trusted):
    """found: (name, owner, owner's name) of the schema whose OID the row
    records on the old server, or None (gone)"""
    if found is None:
        return
    name, owner, owner_name = found
    if name not in (state.schema, state.retired_schema):
        raise refusal(state, "source_schema_oid", 'names schema "%s" on the old server, not %s%s'
                      % (name, state.schema, " or %s" % state.retired_schema if state.retired_schema else ""))
    if owner not in trusted:
        raise refusal(state, "source_schema_oid", 'names schema "%s" on the old server, owned by role "%s", which '
                      "shardid-fleet does not trust (name it with --owner if you do)" % (name, owner_name))


def check_found_target_schema(state, found):
    """found: (name, comment) of the schema whose OID the row records on
    the new server, or None (gone)"""
    if found is None:
        return
    name, comment = found
    if name != state.schema:
        raise refusal(state, "target_schema_oid", 'names schema "%s" on the new server, not %s' % (name, state.schema))
    if not state.reached("retired") and comment != incoming_marker(state.shard, state.token):
        raise refusal(state, "target_schema_oid", "names schema %s on the new server, which is not this move's "
                      "incoming copy" % state.schema)


def check_found_subscription(state, name):
    """name: the subscription's whose OID the row records on the new
    server, or None (gone)"""
    if name is not None and name != state.name:
        raise refusal(state, "subscription_oid", 'names subscription "%s" on the new server, not %s'
                      % (name, state.name))


def classify_target_schema(state, found):
    """found: (OID, comment) of the schema of the shard's name on the new
    server, or None.  Its OID if it is this move's copy (the recorded one,
    or marked as this move's incoming copy), None if there is none, -1 if
    it is someone else's."""
    if found is None:
        return None
    oid, comment = found
    if state.target_schema_oid is not None and oid == state.target_schema_oid:
        return oid
    if comment == incoming_marker(state.shard, state.token):
        return oid
    return -1
