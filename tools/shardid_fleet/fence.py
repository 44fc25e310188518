"""The write fence of a move, on the old server: what it locks, what it
reads under the lock (every table's last ID, the guard's last
millisecond, every sequence), where the new server's sequences go, and the
trigger that then refuses every write there with 40001; WriteFence takes
them in order, in one attempt of Move.do_fence."""

import dataclasses
import datetime
import time
from typing import Dict, List, Optional, Tuple

from psycopg import sql

from .common import FENCE_TRIGGER_FUNCTION, FleetError, kill_point, out
from .conn import connect, extension_info, one, rows
from .gate import GATE_DRAIN_MS, gate_opens_for_clock


# The fence on the old server: a trigger function in the shard's schema,
# fired before every write statement on each of its tables and partitions.
# Its name marks the schema as fenced (conn.live_shards leaves it out).
FENCE_FUNCTION = FENCE_TRIGGER_FUNCTION
FENCE_FUNCTION_DDL = """
    CREATE FUNCTION {}() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $fn$
    BEGIN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure', MESSAGE = TG_ARGV[0], HINT = TG_ARGV[1];
    END
    $fn$"""
# the new server's sequences start past the next block of this many values
SEQUENCE_BLOCK = 1024


@dataclasses.dataclass
class FenceTargets:
    """What the fence of a shard's schema acts on, found before it is taken"""
    tables: List[str]           # locked, and their last IDs read
    relations: List[str]        # every table and partition: each gets the trigger
    sequences: List[str]        # set past their next block on the new server
    extension_schema: str       # shardid's schema on the old server


@dataclasses.dataclass
class FenceReading:
    """What the fence reads on the old server, under its lock"""
    point: str                              # a flushed WAL position past every write to the shard
    max_ids: Dict[str, Optional[int]]       # each table's last ID
    fence_ms: Optional[int]                 # the last millisecond of any ID of the shard
    sequences: Dict[str, Tuple[int, int, int]]  # each sequence's (stored value, increment, maximum)


def fence_targets(conn, state, tables):
    """The targets of the fence of state's shard on the old server (conn)"""
    # every table and partition of the schema gets the fence's trigger:
    # a write straight into a partition fires no trigger of its parent
    relations = [x[0] for x in rows(conn, """
        SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_class AS c
         WHERE c.relnamespace OPERATOR(pg_catalog.=) %s
           AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
         ORDER BY 1""", (state.source_schema_oid,))]
    sequences = [x[0] for x in rows(conn, """
        SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_class AS c
         WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relkind OPERATOR(pg_catalog.=) 'S'
         ORDER BY 1""", (state.source_schema_oid,))]
    return FenceTargets(tables, relations, sequences, extension_info(conn, "shardid")[0])


def schema_situation(state, live, retired, fenced):
    """Where the fence step finds the old schema: "retired" (already
    renamed), "fenced" (already), "live" (to fence) or "other" (the
    schema of that name is not the one the move started from).  live and
    retired: the OIDs of the schemas of the shard's and of the retired
    name; fenced: whether the live one carries this move's fence."""
    if live is None and retired is not None and retired == state.source_schema_oid:
        return "retired"
    if live == state.source_schema_oid and fenced:
        return "fenced"
    if live != state.source_schema_oid:
        return "other"
    return "live"


def latest_ms(*values):
    """The latest of the milliseconds given, None if none is known"""
    known = [v for v in values if v is not None]
    return max(known) if known else None


def sequence_restart(schema, name, last, increment, maximum):
    """Where the new server's copy of a sequence is set (is_called true):
    past the next block of SEQUENCE_BLOCK values after the old one's stored
    value, so that no ID the old server could still hand out from a block
    it holds is handed out again"""
    if increment <= 0:
        raise FleetError("sequence %s.%s descends; shardid-fleet moves ascending sequences only" % (schema, name))
    value = (last // SEQUENCE_BLOCK + 2) * SEQUENCE_BLOCK - 1
    if value > maximum:
        raise FleetError("sequence %s.%s has no room past its next block of 1,024 (maximum %d)"
                         % (schema, name, maximum))
    return value


def check_copied_id(state, table, old, new):
    """The new server's last ID of a table (new) is the old one's"""
    if new != old:
        raise FleetError("table %s.%s: the new server's last ID is %s, the old server's %s; "
                         "writes resumed on the old server" % (state.schema, table, new, old))


def fence_message(state):
    """(message, hint) of the error a write to the fenced schema meets"""
    return ("logical shard %d is moving to another server (shardid-fleet move %s)" % (state.shard, state.token),
            "Retry the transaction: the router sends it to the shard's new server.")


def read_id_fence_ms(conn, state, targets):
    """(each table's last ID, the latest millisecond of any ID): of the
    rows, and of what the old server's guard issued for the schema's
    sequences (its floor covers sequences it evicted); read in conn's
    transaction, which holds the fence's lock"""
    ext = sql.Identifier(targets.extension_schema)
    max_ids = {}
    fence_ms = None
    for t in targets.tables:
        mid = checked_max_id(conn, state.source_schema_oid, state.schema, t)
        max_ids[t] = mid
        if mid is not None:
            ms = conn.execute(sql.SQL(
                "SELECT pg_catalog.floor(EXTRACT(epoch FROM {}.shardid_created_at(%s::pg_catalog.int8))"
                " OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8").format(ext), (mid,)).fetchone()[0]
            fence_ms = latest_ms(fence_ms, ms)
    guard = conn.execute(sql.SQL("""
        SELECT pg_catalog.floor(EXTRACT(epoch FROM GREATEST(pg_catalog.max(s.last_ms),
                   (SELECT i.floor_ms FROM {}.shardid_stats_info() AS i))) OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8
          FROM {}.shardid_stats AS s
          JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) s.seqid
         WHERE s.datid OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database AS d
                             WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
           AND c.relnamespace OPERATOR(pg_catalog.=) %s""").format(ext, ext),
                         (state.source_schema_oid,)).fetchone()[0]
    return max_ids, latest_ms(fence_ms, guard)


def read_sequences(conn, state, targets):
    """Each sequence's stored value (also one set with is_called false,
    which nextval then takes), increment and maximum, by OID: never
    through its name, which its owner could give a view of hers
    meanwhile"""
    values = {}
    for s in targets.sequences:
        r = conn.execute("""
            SELECT COALESCE(pg_catalog.pg_sequence_last_value(c.oid),
                            pg_catalog.nextval(c.oid::pg_catalog.regclass)),
                   q.seqincrement, q.seqmax
              FROM pg_catalog.pg_class AS c
              JOIN pg_catalog.pg_sequence AS q ON q.seqrelid OPERATOR(pg_catalog.=) c.oid
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relname OPERATOR(pg_catalog.=) %s""",
                         (state.source_schema_oid, s)).fetchone()
        if r is None:
            raise FleetError("sequence %s.%s is gone from the old server" % (state.schema, s))
        values[s] = tuple(r)
    return values


def install_fence(conn, state, relations):
    """The fence's trigger function and a trigger on every table and
    partition of the schema, in conn's transaction: from its commit on,
    every write to the shard there fails with 40001"""
    conn.execute(sql.SQL(FENCE_FUNCTION_DDL).format(sql.Identifier(state.schema, FENCE_FUNCTION)))
    msg, hint = fence_message(state)
    for r in relations:
        conn.execute(sql.SQL("CREATE TRIGGER {} BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {} "
                             "FOR EACH STATEMENT EXECUTE FUNCTION {}({}, {})").format(
            sql.Identifier(FENCE_FUNCTION), sql.Identifier(state.schema, r),
            sql.Identifier(state.schema, FENCE_FUNCTION), sql.Literal(msg), sql.Literal(hint)))


def checked_max_id(conn, nsp_oid, nsp, table):
    """The largest id of the shard's table nsp.table (None if it has no
    rows), read so that nothing another role defined runs with the tool's
    rights.  The table's owner may be a role the move trusts only as far
    as --owner says: a view put in the table's place, or an id of a type
    of hers with an implicit cast to bigint, would run her code inside
    max().  So, in one transaction (a savepoint of the caller's, if it is
    in one): the schema's row is locked (FOR SHARE: no rename, no drop of
    it until the end), the table too (ACCESS SHARE: no ALTER), and by
    OID it must be a table or a partitioned one whose id is bigint, with
    no partition that is not a table.  Only then is it read, and then as
    its owner, in a security-restricted operation, by the extension's
    shardid_rows_bounds (1.3): planning max(id) runs the table's own code
    (its indexes' predicates and expressions), which must never run with
    the tool's rights."""
    with conn.transaction():
        r = conn.execute(
            "SELECT n.nspname::pg_catalog.text FROM pg_catalog.pg_namespace AS n"
            " WHERE n.oid OPERATOR(pg_catalog.=) %s FOR SHARE", (nsp_oid,)).fetchone()
        if r is None or r[0] != nsp:
            raise FleetError("schema %s is no longer the shard's schema of this move (its OID %s names %s)"
                             % (nsp, nsp_oid, "nothing" if r is None else r[0]))
        conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS SHARE MODE").format(sql.Identifier(nsp, table)))
        r = conn.execute("""
            SELECT c.oid, c.relkind::pg_catalog.text,
                   (SELECT a.atttypid::pg_catalog.regtype::pg_catalog.text FROM pg_catalog.pg_attribute AS a
                     WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attname OPERATOR(pg_catalog.=) 'id'
                       AND NOT a.attisdropped),
                   (SELECT pg_catalog.count(*) FROM pg_catalog.pg_partition_tree(c.oid) AS t
                      JOIN pg_catalog.pg_class AS p ON p.oid OPERATOR(pg_catalog.=) t.relid
                     WHERE p.relkind OPERATOR(pg_catalog.<>) ALL ('{r,p}'::pg_catalog."char"[]))
              FROM pg_catalog.pg_class AS c
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relname OPERATOR(pg_catalog.=) %s""",
                         (nsp_oid, table)).fetchone()
        check_id_table(nsp, table, r)
        return conn.execute(sql.SQL("SELECT b.hi FROM {}.shardid_rows_bounds(%s::pg_catalog.oid::pg_catalog.regclass, 'id'::pg_catalog.name) AS b").format(
            sql.Identifier(bounds_reader_schema(conn))), (r[0],)).fetchone()[0]


def check_id_table(nsp, table, found):
    """found: (oid, relkind, the type of its column id, how many of its
    partitions are not tables) or None.  Only a table or a partitioned one
    whose id is bigint, with no partition that is not a table, is read."""
    if found is None or found[1] not in ("r", "p") or found[2] != "bigint" or found[3] != 0:
        raise FleetError("%s.%s is not a table with a bigint id (%s); the move reads no other kind of "
                         "relation, which could run its owner's code"
                         % (nsp, table, "gone" if found is None else
                            "relkind %s, id %s, %d partitions that are not tables" % tuple(found[1:])))


def bounds_reader_schema(conn):
    """The schema of the extension whose shardid_rows_bounds(regclass,
    name) reads a table as its owner (shardid 1.3)"""
    ext = extension_info(conn, "shardid")
    reader = ext and conn.execute(
        "SELECT pg_catalog.to_regprocedure(pg_catalog.format('%%I.shardid_rows_bounds(pg_catalog.regclass, pg_catalog.name)', %s::pg_catalog.text))",
        (ext[0],)).fetchone()[0]
    if reader is None:
        raise FleetError('shardid %s on "%s" cannot read a table as its owner (shardid_rows_bounds, 1.3); '
                         "ALTER EXTENSION shardid UPDATE there first"
                         % ("is not installed" if not ext else ext[1],
                            getattr(conn, "fleet_conninfo", "the server")))
    return ext[0]


class WriteFence:
    """One attempt at the write fence of a move (Move.do_fence makes up to
    three): writes to the shard on the old server wait while the new
    server catches up to the last one, its sequences and its clock are
    set past every ID of the shard, and the fence is installed.  move:
    the Move (its sessions, gate, options and recorded state)."""

    def __init__(self, move, targets):
        self.move = move
        self.state = move.state
        self.targets = targets

    def take(self):
        """The attempt, in a transaction of its own on the old server:
        rolled back, and the gate opened, on any error"""
        F = connect(self.move.conns.source, "the old server")
        F.autocommit = False
        try:
            self.take_in(F)
        except BaseException:
            try:
                F.rollback()
            except Exception:
                pass
            self.move.gate.open()
            raise
        finally:
            F.close()

    def take_in(self, F):
        mv, st, targets = self.move, self.move.state, self.targets
        F.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)",
                  ("%dms" % int(mv.opts.lock_timeout * 1000),))
        t_request = time.monotonic()
        # calls through the router wait at its gate from here until the
        # router sends the shard to the new server
        if mv.gate.close():
            # calls that passed the gate just before it closed get a
            # moment to reach the old server's tables and commit there
            # (the lock below waits for them) rather than queue behind
            # the lock and meet the fence
            time.sleep(GATE_DRAIN_MS / 1000)
        F.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(
            sql.SQL(", ").join(sql.Identifier(st.schema, t) for t in targets.tables)))
        kill_point("fence:locked")
        # Every write to the shard is now either committed or waiting.
        point = mv.flush_point()
        max_ids, fence_ms = read_id_fence_ms(F, st, targets)
        seqvals = read_sequences(F, st, targets)
        self.wait_applied(point, t_request)
        kill_point("fence:caught-up")
        for t in targets.tables:
            check_copied_id(st, t, max_ids[t], checked_max_id(mv.new, st.target_schema_oid, st.schema, t))
        self.set_sequences(seqvals)
        waited = self.wait_for_clock(fence_ms)
        mv.record(fence_lsn=point, fence_ms=fence_ms)
        # fence the shard on the old server: from the commit on, every
        # write to it there fails with 40001 (serialization_failure),
        # which applications retry, whatever happens next.  A write
        # waiting for the lock above goes on into that error, not into
        # the old copy, and not into 42P01: the schema keeps its name
        # until the router has switched and the cleanup renames it.
        install_fence(F, st, targets.relations)
        kill_point("fence:fenced")
        F.commit()
        mv.fence_started = t_request
        kill_point("fence:committed")
        out("  6. writes paused; the new server caught up to %s; sequences set past the next block of 1,024; "
            "its clock is past the last ID (%s, waited %d ms); %s fenced on the old server "
            "(a write there fails with 40001), to be retired as %s"
            % (point, "none" if fence_ms is None else
               datetime.datetime.fromtimestamp(fence_ms / 1000, datetime.timezone.utc).isoformat(
                   timespec="milliseconds"),
               waited * 1000, st.schema, st.retired_schema))

    def wait_applied(self, point, t_request):
        """The new server has applied everything up to the fence"""
        while not self.move.applied_past(point):
            if time.monotonic() - t_request > self.move.opts.fence_timeout:
                raise FleetError("the new server did not catch up within %g s of pausing writes; writes resumed "
                                 "on the old server; run move --resume to try again" % self.move.opts.fence_timeout)
            time.sleep(0.002)

    def set_sequences(self, seqvals):
        """The new server's sequences past the next block of 1,024"""
        for s, (last, inc, mx) in seqvals.items():
            v = sequence_restart(self.state.schema, s, last, inc, mx)
            self.move.new.execute(sql.SQL("SELECT pg_catalog.setval(%s::pg_catalog.regclass, %s, true)"),
                                  (sql.Identifier(self.state.schema, s).as_string(self.move.new), v))

    def wait_for_clock(self, fence_ms):
        """The ID fence: no ID of the shard from the new server until its
        clock is past every ID the shard has.  Returns the seconds waited."""
        if fence_ms is None:
            return 0.0
        mv = self.move
        w0 = time.monotonic()
        behind = one(mv.new, "SELECT %s OPERATOR(pg_catalog.-) pg_catalog.floor(EXTRACT(epoch FROM "
                             "pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8",
                     (fence_ms,))
        reopened = gate_opens_for_clock(behind, mv.gate.shut)
        if reopened:
            # a long wait: the gate opens meanwhile, so that calls for
            # the other shards go on; those for this shard wait for
            # the lock on the old server and then meet the fence
            # there (40001, retried)
            mv.gate.open()
        while one(mv.new, "SELECT pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp()) "
                          "OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8 OPERATOR(pg_catalog.<=) %s",
                  (fence_ms,)):
            if time.monotonic() - w0 > mv.opts.max_clock_wait:
                raise FleetError("the clock of the new server is more than %g s behind the last ID of "
                                 "logical shard %d; writes resumed on the old server (--max-clock-wait)"
                                 % (mv.opts.max_clock_wait, self.state.shard))
            time.sleep(0.001)
        waited = time.monotonic() - w0
        if reopened:
            mv.gate.close()
        return waited
