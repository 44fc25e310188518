"""Moving a logical shard online (class Move): each step a method with one
job, taken in order from the step the router records (state.MoveState),
and undone by abort().  The fence's own pieces are in fence, the router's
gate in gate, the move command around it in movecmd."""

import dataclasses
import datetime
import time
from typing import Optional

import psycopg
from psycopg import sql

from . import state as moves
from .common import FleetError, kill_point, mask, out, pgerr, plural, same_server, show_conn, strip_secrets, warn
from .conn import connect, incoming_marker, one, rows, run_pg, shard_tables, trusted_roles
from .fence import FENCE_FUNCTION, WriteFence, fence_targets, schema_situation
from .fleetmap import load_map, write_map_atomically
from .gate import RouterGate
from .router import load_map_into_router, router_current_map


@dataclasses.dataclass
class MoveOptions:
    """The options of the move command that the steps use"""
    mapfile: str
    owner: Optional[str] = None             # --owner: also trust this role's objects on the old server
    publisher_conn: Optional[str] = None    # --publisher-conn
    max_clock_wait: float = 10.0            # seconds
    lock_timeout: float = 5.0               # seconds
    fence_timeout: float = 10.0             # seconds

    @classmethod
    def from_args(cls, a):
        return cls(a.mapfile, a.owner, a.publisher_conn, a.max_clock_wait, a.lock_timeout, a.fence_timeout)


# What any role that can connect may hold on a data server's catalogs:
# parse analysis takes a lock on every relation a statement names before
# privileges are checked, so a PREPAREd SELECT ... FOR UPDATE or DELETE
# holds ROW SHARE or ROW EXCLUSIVE on pg_replication_origin (a catalog
# shared by every database of the server) for as long as its transaction
# lasts.  Creating and dropping a subscription take EXCLUSIVE on it, so the
# tool waits for those at most --lock-timeout and then names the sessions.
LOCK_MODES = ["AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
              "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"]


def lock_holders(conn, relation, weakest=None):
    """'role "mallory" (pid 1671, database "app") holds RowShareLock', ...:
    the other sessions that hold a lock on relation (in weakest or a
    stronger mode), in any database"""
    want = LOCK_MODES[LOCK_MODES.index(weakest):] if weakest else LOCK_MODES
    return ['role "%s" (pid %d, database "%s") holds %s' % r for r in rows(conn, """
        SELECT COALESCE(a.usename::pg_catalog.text, '?'::pg_catalog.text), l.pid,
               COALESCE(a.datname::pg_catalog.text, '?'::pg_catalog.text), l.mode
          FROM pg_catalog.pg_locks AS l
          LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid OPERATOR(pg_catalog.=) l.pid
         WHERE l.locktype OPERATOR(pg_catalog.=) 'relation' AND l.granted
           AND l.relation OPERATOR(pg_catalog.=) %s::pg_catalog.regclass
           AND l.mode OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.text[])
           AND l.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
         ORDER BY 2, 4""", (relation, want))]


def lock_waits(conn, backend_type_pattern):
    """'pid 4242 waits for role "mallory" (pid 1671)', ...: backends of the
    given type (a LIKE pattern) that wait for a lock, and who holds it"""
    return ['pid %d waits for role "%s" (pid %d)' % r for r in rows(conn, """
        SELECT w.pid, COALESCE(b.usename::pg_catalog.text, '?'::pg_catalog.text), b.pid
          FROM pg_catalog.pg_stat_activity AS w
         CROSS JOIN LATERAL pg_catalog.unnest(pg_catalog.pg_blocking_pids(w.pid)) AS x(pid)
          JOIN pg_catalog.pg_stat_activity AS b ON b.pid OPERATOR(pg_catalog.=) x.pid
         WHERE w.backend_type OPERATOR(pg_catalog.~~) %s
           AND w.wait_event_type OPERATOR(pg_catalog.=) 'Lock'
         ORDER BY 1, 3""", (backend_type_pattern,))]


#
# Decisions of the steps, from what they found
#

def caught_up(round_seconds):
    """Whether the copy has caught up: a catch-up round (how long until the
    new server has what the old one has now, None past 5 s) short enough
    that the fence will be short"""
    return round_seconds is not None and round_seconds < 0.5


def new_map_entry(routed, target, map_servers):
    """The new server's connection string for the map file and the router:
    the router's if it already sends the shard there, else the map's own
    string for that server if it has one, else the one given without its
    password and sslpassword (libpq then takes them from a passfile or a
    service file)"""
    if routed is not None and same_server(routed, target):
        return routed
    for cs in map_servers:
        if same_server(cs, target):
            return cs
    return strip_secrets(target)


def switch_needed(state, conns, routed):
    """Whether the router must still be switched: False if it sends the
    shard to the new server (routed) already; refused if it sends it to
    neither server"""
    if same_server(routed, conns.target):
        return False
    if not same_server(routed, conns.source):
        raise FleetError("the router puts logical shard %d on \"%s\", not on the old server"
                         % (state.shard, show_conn(routed)))
    return True


def map_note(now, shard, source, new):
    """The line the map file gets when a move rewrites it"""
    return "%s shardid-fleet moved logical shard %d from %s to %s" % (
        now.strftime("%Y-%m-%dT%H:%M:%SZ"), shard, mask(strip_secrets(source)), mask(strip_secrets(new)))


SUBSCRIPTION = ("SELECT s.oid, s.subenabled FROM pg_catalog.pg_subscription AS s "
                "WHERE s.subname OPERATOR(pg_catalog.=) %s")
SUBSCRIPTION_HERE = ("SELECT s.oid, s.subenabled FROM pg_catalog.pg_subscription AS s "
                     "WHERE s.subname OPERATOR(pg_catalog.=) %s AND s.subdbid OPERATOR(pg_catalog.=) "
                     "(SELECT d.oid FROM pg_catalog.pg_database AS d "
                     " WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())")


class Move:
    """One move of a logical shard, driven from the state the router
    records.  Every step can be taken again: each first looks at what is
    already there.

    opts: MoveOptions; router: the session on the router database;
    state: the recorded MoveState; conns: the MoveConns to connect with;
    run_lock: the router session that holds the run lock (in a
    transaction of its own for the whole run), where the gate is shut."""

    def __init__(self, opts, router, state, conns, run_lock=None):
        self.opts = opts
        self.router = router
        self.state = state
        self.conns = conns
        self.gate = RouterGate(router, run_lock, state.cluster, opts.lock_timeout)
        self._old = self._new = None
        # when the fence's lock was requested (time.monotonic), in this run
        self.fence_started = None

    # connections, made when first needed
    @property
    def old(self):
        """The session on the old server"""
        if self._old is None:
            self._old = connect(self.conns.source, "the old server")
        return self._old

    @property
    def new(self):
        """The session on the new server"""
        if self._new is None:
            self._new = connect(self.conns.target, "the new server")
        return self._new

    def record(self, **changes):
        moves.record(self.router, self.state, **changes)

    def enter(self, step):
        """Record step as being taken"""
        kill_point("before:" + step)
        self.record(step=step)

    # --- the recorded state, checked before --resume or --abort uses it

    def check_recorded(self, router_owner):
        """Every field of the state row that the steps use, against what
        the tool writes and against the catalogs: the router database's
        owner, or a role it let write shardid_fleet.moves, could otherwise
        have the operator's session drop or rename any schema, or slot."""
        moves.check_recorded(self.state, self.conns, router_owner, self.opts.publisher_conn)
        if self.state.step == "cleaned":
            return      # only the map file is left to rewrite
        st = self.state
        found = self.old.execute("SELECT n.nspname::pg_catalog.text, n.nspowner, "
                                 "pg_catalog.pg_get_userbyid(n.nspowner)::pg_catalog.text "
                                 "FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) %s",
                                 (st.source_schema_oid,)).fetchone()
        if found is not None:
            moves.check_found_source_schema(
                st, found, trusted_roles(self.old, [self.opts.owner] if self.opts.owner else []))
        if st.target_schema_oid is not None:
            moves.check_found_target_schema(st, self.new.execute(
                "SELECT n.nspname::pg_catalog.text, pg_catalog.obj_description(n.oid, 'pg_namespace') "
                "FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) %s",
                (st.target_schema_oid,)).fetchone())
        if st.subscription_oid is not None:
            moves.check_found_subscription(st, one(self.new, "SELECT s.subname::pg_catalog.text "
                                                             "FROM pg_catalog.pg_subscription AS s "
                                                             "WHERE s.oid OPERATOR(pg_catalog.=) %s",
                                                   (st.subscription_oid,)))

    # --- what is where

    def fenced_in_place(self):
        """Whether the shard's schema on the old server carries this move's
        fence: the trigger function that refuses every write with 40001"""
        return bool(one(self.old, """
            SELECT EXISTS (SELECT FROM pg_catalog.pg_proc AS p
                            WHERE p.pronamespace OPERATOR(pg_catalog.=) %s
                              AND p.proname OPERATOR(pg_catalog.=) %s)""",
                        (self.state.source_schema_oid, FENCE_FUNCTION)))

    def source_schema(self):
        """(live schema oid or None, retired schema oid or None) on the old server"""
        live = one(self.old, "SELECT n.oid FROM pg_catalog.pg_namespace AS n "
                             "WHERE n.nspname OPERATOR(pg_catalog.=) %s", (self.state.schema,))
        retired = None
        if self.state.retired_schema:
            retired = one(self.old, "SELECT n.oid FROM pg_catalog.pg_namespace AS n "
                                    "WHERE n.nspname OPERATOR(pg_catalog.=) %s", (self.state.retired_schema,))
        return live, retired

    def target_schema(self):
        """The incoming schema's oid on the new server if it is this move's
        (None if there is none, -1 if it is someone else's)"""
        return moves.classify_target_schema(self.state, self.new.execute(
            "SELECT n.oid, pg_catalog.obj_description(n.oid, 'pg_namespace') "
            "FROM pg_catalog.pg_namespace AS n WHERE n.nspname OPERATOR(pg_catalog.=) %s",
            (self.state.schema,)).fetchone())

    # --- step schema

    def do_schema(self):
        """The shard's schema copied to the new server (pg_dump
        --schema-only), marked as this move's incoming copy"""
        nsp = self.state.schema
        oid = self.target_schema()
        if oid == -1:
            raise FleetError('schema %s exists on the new server "%s" and is not this move\'s copy; '
                             "drop it there, or --abort" % (nsp, show_conn(self.conns.target)))
        if oid is None:
            self.check_pg_settings_lock()
            self.copy_schema()
            oid = self.target_schema()
            if oid in (None, -1):
                raise FleetError("the copy of %s on the new server is not there after the restore" % nsp)
        self.record(target_schema_oid=oid)
        out("  1. schema %s copied to the new server (%s)" % (nsp, plural(len(shard_tables(self.new, nsp)), "table")))

    def copy_schema(self):
        nsp = self.state.schema
        code, dump, errtext = run_pg("pg_dump", self.conns.source,
                                     ["--schema-only", "--no-tablespaces", "--no-subscriptions",
                                      "--no-publications", "--schema", '"%s"' % nsp])
        if code != 0:
            raise FleetError("pg_dump of %s on the old server failed: %s" % (nsp, errtext.strip()))
        mark = sql.SQL("COMMENT ON SCHEMA {} IS {};").format(
            sql.Identifier(nsp), sql.Literal(incoming_marker(self.state.shard, self.state.token))).as_string(self.new)
        script = dump + b"\n" + mark.encode() + b"\n"
        code, _, errtext = run_pg("psql", self.conns.target,
                                  ["-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "-f", "-"],
                                  stdin=script)
        if code != 0:
            raise FleetError("restoring the schema of %s on the new server failed: %s" % (nsp, errtext.strip()))

    def check_pg_settings_lock(self):
        """pg_dump reads pg_catalog.pg_settings, which any role may lock in
        ACCESS EXCLUSIVE mode while PUBLIC has UPDATE on it (PostgreSQL's
        default): pg_dump would wait for that role's transaction to end.
        Refuse instead, naming the session."""
        held = rows(self.old, """
            SELECT l.pid, COALESCE(a.usename::pg_catalog.text, '?'::pg_catalog.text), l.granted
              FROM pg_catalog.pg_locks AS l
              LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid OPERATOR(pg_catalog.=) l.pid
             WHERE l.locktype OPERATOR(pg_catalog.=) 'relation'
               AND l.database OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database AS d
                                WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
               AND l.relation OPERATOR(pg_catalog.=) 'pg_catalog.pg_settings'::pg_catalog.regclass
               AND l.mode OPERATOR(pg_catalog.=) 'AccessExclusiveLock'
             ORDER BY 1""")
        if held:
            raise FleetError("pg_dump of %s on the old server would wait: %s ACCESS EXCLUSIVE on "
                             "pg_catalog.pg_settings, which pg_dump reads"
                             % (self.state.schema,
                                ", ".join('role "%s" (pid %d) %s' % (u, pid, "holds" if g else "waits for")
                                          for pid, u, g in held))
                             + "\nDETAIL: Any role may lock pg_settings so while PUBLIC has UPDATE on it, "
                               "as it has by default."
                             + "\nHINT: End that transaction (pg_terminate_backend), then move --resume; and keep "
                               "it from happening again: REVOKE UPDATE ON pg_catalog.pg_settings FROM PUBLIC;")

    # --- steps publication and slot

    def do_publication(self):
        name = self.state.name
        r = self.old.execute("SELECT p.oid, p.pubowner, p.pubviaroot FROM pg_catalog.pg_publication AS p "
                             "WHERE p.pubname OPERATOR(pg_catalog.=) %s", (name,)).fetchone()
        if r is None:
            self.old.execute(sql.SQL("CREATE PUBLICATION {} FOR TABLES IN SCHEMA {} "
                                     "WITH (publish_via_partition_root = true)").format(
                sql.Identifier(name), sql.Identifier(self.state.schema)))
        elif r[1] not in trusted_roles(self.old):
            raise FleetError('publication %s on the old server is not this move\'s' % name)
        out("  2. publication %s of schema %s on the old server" % (name, self.state.schema))

    def do_slot(self):
        name = self.state.name
        have = one(self.old, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_replication_slots AS s "
                             "WHERE s.slot_name OPERATOR(pg_catalog.=) %s", (name,))
        if not have:
            # the slot waits until every transaction that has written on the
            # old server (any role's) has ended: say which, if any has run
            # for a while
            for pid, user, since in rows(self.old, """
                    SELECT a.pid, COALESCE(a.usename::pg_catalog.text, '?'::pg_catalog.text), a.xact_start
                      FROM pg_catalog.pg_stat_activity AS a
                     WHERE a.backend_xid IS NOT NULL AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
                       AND a.xact_start OPERATOR(pg_catalog.<)
                           (pg_catalog.now() OPERATOR(pg_catalog.-) '1 s'::pg_catalog.interval)
                     ORDER BY a.xact_start"""):
                out("     the slot waits for the transaction of role \"%s\" (pid %d, since %s) on the old server"
                    % (user, pid, since))
            self.old.execute("SELECT pg_catalog.pg_create_logical_replication_slot(%s, 'pgoutput')", (name,))
        out("  3. replication slot %s on the old server" % name)

    # --- step subscription

    def subscription(self, this_database=False):
        """(oid, enabled) of this move's subscription on the new server, or
        None; this_database: only one of the new server's database"""
        return self.new.execute(SUBSCRIPTION_HERE if this_database else SUBSCRIPTION,
                                (self.state.name,)).fetchone()

    def do_subscription(self):
        # streaming off: a transaction is applied, in commit order, by the
        # worker whose received position the fence waits on
        name = self.state.name
        r = self.subscription(this_database=True)
        if r is None:
            # From PostgreSQL 16 on, the workers act on each table as its
            # owner (run_as_owner = false), not as the subscription's owner,
            # a superuser: the code of the tables' owners (constraints,
            # defaults, index expressions) runs with their rights only.  On
            # 15 they run as the subscription's owner; preflight refuses a
            # shard whose tables carry code of a role the tool does not trust.
            as_owner = sql.SQL(", run_as_owner = false") if self.new.info.server_version >= 160000 else sql.SQL("")
            self.subscription_ddl(sql.SQL("CREATE SUBSCRIPTION {} CONNECTION {} PUBLICATION {} "
                                          "WITH (create_slot = false, slot_name = {}, copy_data = true, "
                                          "streaming = false, enabled = true{})").format(
                sql.Identifier(name), sql.Literal(self.conns.publisher), sql.Identifier(name),
                sql.Literal(name), as_owner))
            r = self.subscription()
        elif not r[1]:
            self.new.execute(sql.SQL("ALTER SUBSCRIPTION {} ENABLE").format(sql.Identifier(name)))
        self.record(subscription_oid=r[0])
        out("  4. subscription %s on the new server, copying the data" % name)

    def subscription_ddl(self, stmt):
        """CREATE or DROP SUBSCRIPTION on the new server, waiting at most
        --lock-timeout for the lock on pg_replication_origin (see
        lock_holders)"""
        lock_timeout = self.opts.lock_timeout
        self.new.execute("SELECT pg_catalog.set_config('lock_timeout', %s, false)",
                         ("%dms" % int(lock_timeout * 1000),))
        try:
            self.new.execute(stmt)
        except psycopg.errors.LockNotAvailable as e:
            held = lock_holders(self.new, "pg_catalog.pg_replication_origin", "RowShareLock")
            raise FleetError("%s on the new server waited %g s for a lock on pg_catalog.pg_replication_origin "
                             "(%s); run move --resume (or --abort) once they are gone"
                             % (stmt.as_string(self.new).split(" ")[0] + " SUBSCRIPTION", lock_timeout,
                                "; ".join(held) or pgerr(e).split("\n")[0])
                             + "\nDETAIL: Any role that can connect to a database of that server can hold such "
                               "a lock for as long as its transaction lasts, through a statement it prepares.")
        finally:
            self.new.execute("SELECT pg_catalog.set_config('lock_timeout', '0', false)")

    # --- step sync

    def lag(self):
        """(tables not yet synchronized, bytes the slot is behind)"""
        pending = one(self.new, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_subscription_rel AS r "
                                "WHERE r.srsubid OPERATOR(pg_catalog.=) %s "
                                "AND r.srsubstate OPERATOR(pg_catalog.<>) 'r'", (self.state.subscription_oid,))
        behind = one(self.old, "SELECT pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), "
                               "s.confirmed_flush_lsn)::pg_catalog.int8 FROM pg_catalog.pg_replication_slots AS s "
                               "WHERE s.slot_name OPERATOR(pg_catalog.=) %s", (self.state.name,))
        return pending, behind

    def applied_past(self, lsn):
        """Has the new server applied everything the old one committed
        before lsn?  Its apply worker has received (and so applied, as it
        applies in order) WAL past lsn."""
        return bool(one(self.new, "SELECT pg_catalog.bool_or(s.received_lsn OPERATOR(pg_catalog.>=) %s::pg_catalog.pg_lsn) "
                                  "FROM pg_catalog.pg_stat_subscription AS s "
                                  "WHERE s.subid OPERATOR(pg_catalog.=) %s AND s.relid IS NULL",
                        (lsn, self.state.subscription_oid)))

    def flush_point(self):
        """A WAL position past every commit on the old server so far, and
        flushed (a tiny transaction of our own, committed synchronously)."""
        with self.old.transaction():
            self.old.execute("SET LOCAL synchronous_commit = local")
            self.old.execute("SELECT pg_catalog.pg_current_xact_id()")
        return one(self.old, "SELECT pg_catalog.pg_current_wal_flush_lsn()::pg_catalog.text")

    def catch_up_round(self):
        """Seconds until the new server has what the old one has now, None
        past 5 s"""
        point = self.flush_point()
        r0 = time.monotonic()
        while not self.applied_past(point):
            if time.monotonic() - r0 > 5:
                return None
            time.sleep(0.005)
        return time.monotonic() - r0

    def subscription_errors(self):
        return one(self.new, "SELECT s.apply_error_count OPERATOR(pg_catalog.+) s.sync_error_count "
                             "FROM pg_catalog.pg_stat_subscription_stats AS s "
                             "WHERE s.subid OPERATOR(pg_catalog.=) %s", (self.state.subscription_oid,))

    def do_sync(self):
        """Wait for the copy, then for a catch-up short enough for the fence"""
        t0 = last_report = time.monotonic()
        errors0 = None
        while True:
            pending, behind = self.lag()
            if behind is None:
                raise FleetError("replication slot %s is gone from the old server; --abort the move"
                                 % self.state.name)
            if pending == 0 and caught_up(self.catch_up_round()):
                break
            now = time.monotonic()
            errs = self.subscription_errors()
            if errors0 is None:
                errors0 = errs
            elif errs is not None and errs > errors0:
                warn("the subscription on the new server has reported %d errors; see its server log" % (errs - errors0))
                errors0 = errs
            if now - last_report >= 10:
                self.report_sync(pending, behind, now - t0)
                last_report = now
            time.sleep(0.05 if pending else 0.01)
        out("  5. data copied and caught up (%.1f s)" % (time.monotonic() - t0))

    def report_sync(self, pending, behind, seconds):
        waits = (["on the new server: " + w for w in lock_waits(self.new, "logical replication%")]
                 + ["on the old server: " + w for w in lock_waits(self.old, "walsender")])
        out("     ... %s to copy, %d kB behind (%d s)%s"
            % (plural(pending, "table"), (behind or 0) // 1024, seconds,
               "; a replication worker waits for a lock: " + "; ".join(waits) if waits else ""))

    # --- step fence

    def do_fence(self):
        """Writes to the shard on the old server wait for a moment, while
        the new server catches up to the last write and its IDs are fenced
        past every old one; then the old schema is retired."""
        st = self.state
        if not st.retired_schema:
            self.record(retired_schema=moves.retired_schema_name(st, datetime.datetime.now(datetime.timezone.utc)))
        live, retired = self.source_schema()
        situation = schema_situation(st, live, retired, live == st.source_schema_oid and self.fenced_in_place())
        if situation == "retired":
            out("  6. %s was already retired on the old server" % st.schema)
            return
        if situation == "fenced":
            out("  6. %s was already fenced on the old server" % st.schema)
            return
        if situation == "other":
            raise FleetError("schema %s on the old server is not the one this move started from" % st.schema)
        targets = fence_targets(self.old, st, shard_tables(self.old, st.schema))
        attempts = 0
        while True:
            attempts += 1
            try:
                WriteFence(self, targets).take()
                return
            except (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected) as e:
                self.gate.open()
                if attempts >= 3:
                    raise FleetError("could not take the write fence on %s in %d attempts (%s); "
                                     "writes go on on the old server; run move --resume to try again"
                                     % (st.schema, attempts, pgerr(e).split("\n")[0]))
                warn("write fence on %s not taken (%s); trying again" % (st.schema, pgerr(e).split("\n")[0]))
                time.sleep(1)

    # --- step switched

    def do_switch(self):
        """The copy becomes the shard: it loses the mark of an incoming copy
        (and gets the comment the old schema had), and stops applying
        changes from the old server, which has taken its last write; the
        router sends the shard to the new server."""
        st = self.state
        comment = one(self.old, "SELECT pg_catalog.obj_description(n.oid, 'pg_namespace') "
                                "FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) %s",
                      (st.source_schema_oid,))
        self.new.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
            sql.Identifier(st.schema), sql.Literal(comment)))
        if one(self.new, "SELECT s.subenabled FROM pg_catalog.pg_subscription AS s "
                         "WHERE s.subname OPERATOR(pg_catalog.=) %s", (st.name,)):
            self.new.execute(sql.SQL("ALTER SUBSCRIPTION {} DISABLE").format(sql.Identifier(st.name)))
        with self.router.transaction():
            owner, version = router_current_map(self.router, st.cluster)
            new = version
            if switch_needed(st, self.conns, owner[st.shard]):
                owner[st.shard] = new_map_entry(None, self.conns.target, load_map(self.opts.mapfile).servers())
                _, new = load_map_into_router(self.router, st.cluster, owner)
            paused = None
            if self.fence_started is not None:
                paused = int((time.monotonic() - self.fence_started) * 1000)
            kill_point("before:switched")
            self.record(step="switched", paused_ms=paused)
        # calls waiting at the gate now read the new map
        gated = self.gate.shut
        if gated:
            self.gate.open()
            gated = int((time.monotonic() - self.gate.shut_at) * 1000)
        out("  7. router: logical shard %d now on the new server (map version %d)%s%s"
            % (st.shard, new, "; writes to it were paused for %d ms" % paused if paused is not None else "",
               "; calls through the router waited at its gate for %d ms" % gated if gated is not False else ""))

    # --- step cleaned

    def drop_subscription(self):
        """The subscription on the new server and the slots on the old one"""
        name = self.state.name
        r = self.new.execute("SELECT s.oid, s.subenabled, s.subslotname FROM pg_catalog.pg_subscription AS s "
                             "WHERE s.subname OPERATOR(pg_catalog.=) %s", (name,)).fetchone()
        sub_oid = r[0] if r is not None else self.state.subscription_oid
        if r is not None:
            if r[1]:
                self.new.execute(sql.SQL("ALTER SUBSCRIPTION {} DISABLE").format(sql.Identifier(name)))
            if r[2] is not None:
                self.new.execute(sql.SQL("ALTER SUBSCRIPTION {} SET (slot_name = NONE)").format(
                    sql.Identifier(name)))
            self.subscription_ddl(sql.SQL("DROP SUBSCRIPTION {}").format(sql.Identifier(name)))
        self.drop_slots(sub_oid)

    def drop_slots(self, sub_oid):
        """The main slot and the table synchronization slots on the old
        server; a slot still in use for 10 s has its walsender ended"""
        sync = "^pg_%d_sync_" % sub_oid if sub_oid is not None else "^$"
        t0 = time.monotonic()
        while True:
            slots = rows(self.old, "SELECT s.slot_name::pg_catalog.text, s.active_pid FROM pg_catalog.pg_replication_slots AS s "
                                   "WHERE s.slot_name OPERATOR(pg_catalog.=) %s OR s.slot_name OPERATOR(pg_catalog.~) %s",
                         (self.state.name, sync))
            if not slots:
                break
            for name, pid in slots:
                if pid is None:
                    try:
                        self.old.execute("SELECT pg_catalog.pg_drop_replication_slot(%s)", (name,))
                    except psycopg.errors.ObjectInUse:
                        pass
                elif time.monotonic() - t0 > 10:
                    self.old.execute("SELECT pg_catalog.pg_terminate_backend(%s)", (pid,))
            time.sleep(0.05)

    def drop_publication(self):
        self.old.execute(sql.SQL("DROP PUBLICATION IF EXISTS {}").format(sql.Identifier(self.state.name)))

    def do_cleanup(self):
        st = self.state
        self.drop_subscription()
        self.drop_publication()
        self.retire()
        for t in shard_tables(self.new, st.schema):
            self.new.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(st.schema, t)))
        dropped = False
        if st.drop_retired:
            live, retired = self.source_schema()
            moves.check_retired_name(st)
            if retired is not None and retired == st.source_schema_oid:
                self.old.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(st.retired_schema)))
                dropped = True
        out("  8. subscription, replication slot and publication dropped; %s"
            % ("%s dropped on the old server" % st.retired_schema if dropped else
               "%s kept on the old server; drop it once the move is checked" % st.retired_schema))

    def retire(self):
        """Rename the fenced schema on the old server to its retired name,
        once every transaction there that began before this step has ended
        (10 s at most): one that began before the router switched may still
        be on its way to the fenced tables, and it should meet 40001 there,
        not a missing table."""
        st = self.state
        live, retired = self.source_schema()
        if live is None or live != st.source_schema_oid:
            return
        moves.check_retired_name(st)
        since = one(self.old, "SELECT pg_catalog.clock_timestamp()")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10 and one(self.old, """
                SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity AS a
                 WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
                   AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
                   AND a.backend_type OPERATOR(pg_catalog.=) 'client backend'
                   AND a.xact_start OPERATOR(pg_catalog.<) %s""", (since,)):
            time.sleep(0.05)
        self.old.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
            sql.Identifier(st.schema), sql.Identifier(st.retired_schema)))
        out("     %s renamed to %s on the old server" % (st.schema, st.retired_schema))

    # --- step done

    def do_map_file(self):
        st = self.state
        fm = load_map(self.opts.mapfile)
        routed = router_current_map(self.router, st.cluster)[0][st.shard]
        new = new_map_entry(routed, self.conns.target, fm.servers())
        if fm.owner[st.shard] != new:
            owner = list(fm.owner)
            owner[st.shard] = new
            note = map_note(datetime.datetime.now(datetime.timezone.utc), st.shard, self.conns.source, new)
            write_map_atomically(self.opts.mapfile, fm.render(owner, note))
        out("  9. map file %s rewritten" % self.opts.mapfile)

    # --- the run

    def run(self):
        """Take the steps from the recorded one to the end."""
        try:
            self._run()
        finally:
            self.gate.open()

    def _run(self):
        actions = {
            "schema": self.do_schema, "publication": self.do_publication, "slot": self.do_slot,
            "subscription": self.do_subscription, "sync": self.do_sync, "fence": self.do_fence,
        }
        for step in moves.steps_to_take(self.state.step):
            if step in actions:
                if self.state.step != step:
                    self.enter(step)
                actions[step]()
                kill_point("after:" + step)
            elif step == "retired":
                if self.state.step != "retired":
                    self.enter("retired")
            elif step == "switched":
                if self.state.step != "switched":
                    self.do_switch()
                kill_point("after:switched")
            elif step == "cleaned":
                if self.state.step != "cleaned":
                    self.do_cleanup()
                    self.enter("cleaned")
                    kill_point("after:cleaned")
            elif step == "done":
                self.do_map_file()
                kill_point("before:done")
                moves.record_done(self.router, self.state)
        out("move: logical shard %d is on %s" % (self.state.shard, show_conn(self.conns.target)))

    def abort(self):
        """Undo the move, up to the router's switch: the old schema back in
        service, the replication and the copy dropped"""
        st = self.state
        moves.check_abortable(st)
        out("abort move of logical shard %d (step %s)" % (st.shard, st.step))
        self.unfence()
        self.drop_subscription()
        self.drop_publication()
        out("  subscription, replication slot and publication dropped")
        oid = self.target_schema()
        if oid not in (None, -1):
            self.new.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(st.schema)))
            out("  the copy %s on the new server dropped" % st.schema)
        elif oid == -1:
            warn("schema %s on the new server is not this move's copy; left as it is" % st.schema)
        moves.record_aborted(self.router, st)
        out("move: aborted; logical shard %d stays on %s" % (st.shard, show_conn(self.conns.source)))

    def unfence(self):
        """The old schema back in service, if it was fenced or retired"""
        st = self.state
        if st.source_schema_oid is not None:
            live, _ = self.source_schema()
            if live == st.source_schema_oid and self.fenced_in_place():
                self.old.execute(sql.SQL("DROP FUNCTION {}() CASCADE").format(
                    sql.Identifier(st.schema, FENCE_FUNCTION)))
                out("  the fence on %s on the old server removed: writes go on there" % st.schema)
        if st.retired_schema:
            live, retired = self.source_schema()
            if live is None and retired is not None and retired == st.source_schema_oid:
                self.old.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                    sql.Identifier(st.retired_schema), sql.Identifier(st.schema)))
                out("  %s on the old server renamed back to %s" % (st.retired_schema, st.schema))
