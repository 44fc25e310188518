"""Moving a logical shard online: the state machine of one move (class
Move), step by step.  The move command around it is movecmd."""

import datetime
import re
import time

import psycopg
from psycopg import sql

from .common import (
    FENCE_TRIGGER_FUNCTION, FINAL, FleetError, MAX_SHARD, STEPS, kill_point, mask, out,
    pgerr, plural, same_server, shard_schema, show_conn, strip_secrets, warn)
from .fleetmap import load_map, write_map_atomically
from .conn import (
    connect, extension_info, incoming_marker, one, rows, run_pg, shard_tables, trusted_roles)
from .router import gate_kind, gate_table, load_map_into_router, router_current_map


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
        if r is None or r[1] not in ("r", "p") or r[2] != "bigint" or r[3] != 0:
            raise FleetError("%s.%s is not a table with a bigint id (%s); the move reads no other kind of "
                             "relation, which could run its owner's code"
                             % (nsp, table, "gone" if r is None else
                                "relkind %s, id %s, %d partitions that are not tables" % (r[1], r[2], r[3])))
        ext = extension_info(conn, "shardid")
        reader = ext and conn.execute(
            "SELECT pg_catalog.to_regprocedure(pg_catalog.format('%%I.shardid_rows_bounds(pg_catalog.regclass, pg_catalog.name)', %s::pg_catalog.text))",
            (ext[0],)).fetchone()[0]
        if reader is None:
            raise FleetError('shardid %s on "%s" cannot read a table as its owner (shardid_rows_bounds, 1.3); '
                             "ALTER EXTENSION shardid UPDATE there first"
                             % ("is not installed" if not ext else ext[1],
                                getattr(conn, "fleet_conninfo", "the server")))
        return conn.execute(sql.SQL("SELECT b.hi FROM {}.shardid_rows_bounds(%s::pg_catalog.oid::pg_catalog.regclass, 'id'::pg_catalog.name) AS b").format(
            sql.Identifier(ext[0])), (r[0],)).fetchone()[0]


#
# move
#
# The fence on the old server: a trigger function in the shard's schema,
# fired before every write statement on each of its tables and partitions.
# Its name marks the schema as fenced (conn.live_shards leaves it out).
FENCE_FUNCTION = FENCE_TRIGGER_FUNCTION
# The router's gate stays shut through the fence unless the new server's
# clock must first catch up by more than this (milliseconds)
GATE_MAX_CLOCK_WAIT_MS = 200
# and after it shuts, calls already past it get this long (milliseconds) to
# reach the old server before the fence's lock is requested
GATE_DRAIN_MS = 30
FENCE_FUNCTION_DDL = """
    CREATE FUNCTION {}() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $fn$
    BEGIN
        RAISE EXCEPTION USING ERRCODE = 'serialization_failure', MESSAGE = TG_ARGV[0], HINT = TG_ARGV[1];
    END
    $fn$"""


# What any role that can connect may hold on a data server's catalogs:
# parse analysis takes a lock on every relation a statement names before
# privileges are checked, so a PREPAREd SELECT ... FOR UPDATE or DELETE
# holds ROW SHARE or ROW EXCLUSIVE on pg_replication_origin (a catalog
# shared by every database of the server) for as long as its transaction
# lasts.  Creating and dropping a subscription take EXCLUSIVE on it, so the
# tool waits for those at most --lock-timeout and then names the sessions.
def lock_holders(conn, relation, weakest=None):
    """'role "mallory" (pid 1671, database "app") holds RowShareLock', ...:
    the other sessions that hold a lock on relation (in weakest or a
    stronger mode), in any database"""
    modes = ["AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
             "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"]
    want = modes[modes.index(weakest):] if weakest else modes
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


class Move:
    """One move of a logical shard, driven from the state the router
    records.  Every step can be taken again: each first looks at what is
    already there."""

    def __init__(self, a, router, row, conns=None, lock=None):
        self.a = a
        self.R = router
        # the session on the router that holds the run lock (in a
        # transaction of its own for the whole run), and the gate when shut
        self.L = lock
        self.__dict__.update(row)
        # the router records the connection strings without their secrets;
        # the tool connects with those the operator gave (or the map file's)
        self.__dict__.update(conns or {})
        self.nsp = shard_schema(self.shard)
        self.name = "shardid_%04d_%s" % (self.shard, self.token)
        self._S = self._T = None
        self._gate = False
        self._gate_warned = False
        self.max_wait = a.max_clock_wait
        self.lock_timeout = a.lock_timeout
        self.fence_timeout = a.fence_timeout

    # connections, made when first needed
    @property
    def S(self):
        if self._S is None:
            self._S = connect(self.source, "the old server")
        return self._S

    @property
    def T(self):
        if self._T is None:
            self._T = connect(self.target, "the new server")
        return self._T

    def record(self, **fields):
        assigns = sql.SQL(", ").join(
            sql.SQL("{} = {}").format(sql.Identifier(k), sql.Placeholder(k)) for k in fields)
        fields["id"] = self.id
        self.R.execute(sql.SQL("UPDATE shardid_fleet.moves SET {}, updated_at = pg_catalog.now() "
                               "WHERE id OPERATOR(pg_catalog.=) %(id)s").format(assigns), fields)
        for k, v in fields.items():
            setattr(self, k, v)

    def step(self, state):
        kill_point("before:" + state)
        self.record(state=state)

    # --- the recorded state, checked before --resume or --abort uses it

    def check_row(self, owner):
        """Every field of the state row that the steps use, against what
        the tool writes and against the catalogs: the router database's
        owner, or a role it let write shardid_fleet.moves, could otherwise
        have the operator's session drop or rename any schema, or slot."""
        def refuse(field, why):
            raise FleetError('refusing the move recorded in shardid_fleet.moves (id %s): %s %s; nothing was done'
                             % (self.id, field, why)
                             + "\nHINT: shardid-fleet writes this row itself; a row it did not write is not "
                               "taken.  See shardid-fleet status and the router's log.")

        if not isinstance(self.shard, int) or not 0 <= self.shard <= MAX_SHARD:
            refuse("shard", "%r is not a logical shard (0 to %d)" % (self.shard, MAX_SHARD))
        if not isinstance(self.token, str) or not re.fullmatch(r"[0-9a-f]{8}", self.token):
            refuse("token", "%r is not a token of shardid-fleet (8 hexadecimal digits)" % (self.token,))
        if self.state not in STEPS or self.state in FINAL:
            refuse("state", "%r is not a step of an unfinished move" % (self.state,))
        if not isinstance(self.drop_retired, bool):
            refuse("drop_retired", "is %r" % (self.drop_retired,))
        step = STEPS.index(self.state)
        servers = set(x for x in owner if x is not None)
        # servers compared by what libpq parses, secrets left out (the
        # router records connection strings without them)
        if not isinstance(self.source, str) or not any(same_server(self.source, s) for s in servers):
            refuse("source", '"%s" is not a server of the router\'s map' % show_conn(self.source))
        if not isinstance(self.target, str) or not self.target or same_server(self.target, self.source):
            refuse("target", '"%s" is not another server than the source' % show_conn(self.target))
        routed = self.target if step >= STEPS.index("switched") else self.source
        if not same_server(owner[self.shard], routed):
            refuse("source" if routed is self.source else "target",
                   'is "%s", but the router sends logical shard %d to "%s" (step %s)'
                   % (show_conn(routed), self.shard, show_conn(owner[self.shard]), self.state))
        if step <= STEPS.index("subscription") and not (
                same_server(self.publisher, self.source)
                or (self.a.publisher_conn and same_server(self.publisher, self.a.publisher_conn))):
            refuse("publisher", '"%s" is not the old server\'s connection string; give it again with '
                   "--publisher-conn if it is the one the move was started with" % show_conn(self.publisher))
        if self.retired_schema is not None:
            want = r"shard_%04d_retired_[0-9]{14}_%s" % (self.shard, self.token)
            if step < STEPS.index("fence") or not re.fullmatch(want, self.retired_schema):
                refuse("retired_schema", '"%s" is not the name this move retires %s under (%s)'
                       % (self.retired_schema, self.nsp, want.replace("[0-9]{14}", "YYYYMMDDHHMMSS")))
        if not isinstance(self.source_schema_oid, int):
            refuse("source_schema_oid", "is missing")
        if self.state == "cleaned":
            return      # only the map file is left to rewrite
        r = self.S.execute("SELECT n.nspname::pg_catalog.text, n.nspowner, "
                           "pg_catalog.pg_get_userbyid(n.nspowner)::pg_catalog.text "
                           "FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) %s",
                           (self.source_schema_oid,)).fetchone()
        if r is not None:
            if r[0] not in (self.nsp, self.retired_schema):
                refuse("source_schema_oid", 'names schema "%s" on the old server, not %s%s'
                       % (r[0], self.nsp, " or %s" % self.retired_schema if self.retired_schema else ""))
            if r[1] not in trusted_roles(self.S, [self.a.owner] if self.a.owner else []):
                refuse("source_schema_oid", 'names schema "%s" on the old server, owned by role "%s", which '
                       "shardid-fleet does not trust (name it with --owner if you do)" % (r[0], r[2]))
        if self.target_schema_oid is not None:
            r = self.T.execute("SELECT n.nspname::pg_catalog.text, pg_catalog.obj_description(n.oid, 'pg_namespace') "
                               "FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) %s",
                               (self.target_schema_oid,)).fetchone()
            if r is not None:
                if r[0] != self.nsp:
                    refuse("target_schema_oid", 'names schema "%s" on the new server, not %s' % (r[0], self.nsp))
                if step < STEPS.index("retired") and r[1] != incoming_marker(self.shard, self.token):
                    refuse("target_schema_oid", "names schema %s on the new server, which is not this move's "
                           "incoming copy" % self.nsp)
        if self.subscription_oid is not None:
            r = one(self.T, "SELECT s.subname::pg_catalog.text FROM pg_catalog.pg_subscription AS s "
                            "WHERE s.oid OPERATOR(pg_catalog.=) %s", (self.subscription_oid,))
            if r is not None and r != self.name:
                refuse("subscription_oid", 'names subscription "%s" on the new server, not %s' % (r, self.name))

    # --- what is where

    def fenced_in_place(self):
        """Whether the shard's schema on the old server carries this move's
        fence: the trigger function that refuses every write with 40001"""
        return bool(one(self.S, """
            SELECT EXISTS (SELECT FROM pg_catalog.pg_proc AS p
                            WHERE p.pronamespace OPERATOR(pg_catalog.=) %s
                              AND p.proname OPERATOR(pg_catalog.=) %s)""",
                        (self.source_schema_oid, FENCE_FUNCTION)))

    def source_schema(self):
        """(live schema oid or None, retired schema oid or None) on the old server"""
        live = one(self.S, "SELECT n.oid FROM pg_catalog.pg_namespace AS n WHERE n.nspname OPERATOR(pg_catalog.=) %s",
                   (self.nsp,))
        retired = None
        if self.retired_schema:
            retired = one(self.S, "SELECT n.oid FROM pg_catalog.pg_namespace AS n "
                                  "WHERE n.nspname OPERATOR(pg_catalog.=) %s", (self.retired_schema,))
        return live, retired

    def target_schema(self):
        """The incoming schema's oid on the new server if it is this move's"""
        r = self.T.execute("SELECT n.oid, pg_catalog.obj_description(n.oid, 'pg_namespace') "
                           "FROM pg_catalog.pg_namespace AS n WHERE n.nspname OPERATOR(pg_catalog.=) %s",
                           (self.nsp,)).fetchone()
        if r is None:
            return None
        oid, comment = r
        if self.target_schema_oid is not None and oid == self.target_schema_oid:
            return oid
        if comment == incoming_marker(self.shard, self.token):
            return oid
        return -1      # someone else's

    # --- the steps

    def do_schema(self):
        oid = self.target_schema()
        if oid == -1:
            raise FleetError('schema %s exists on the new server "%s" and is not this move\'s copy; '
                             "drop it there, or --abort" % (self.nsp, show_conn(self.target)))
        if oid is None:
            self.check_pg_settings_lock()
            code, dump, errtext = run_pg("pg_dump", self.source,
                                        ["--schema-only", "--no-tablespaces", "--no-subscriptions",
                                         "--no-publications", "--schema", '"%s"' % self.nsp])
            if code != 0:
                raise FleetError("pg_dump of %s on the old server failed: %s" % (self.nsp, errtext.strip()))
            mark = sql.SQL("COMMENT ON SCHEMA {} IS {};").format(
                sql.Identifier(self.nsp), sql.Literal(incoming_marker(self.shard, self.token))).as_string(self.T)
            script = dump + b"\n" + mark.encode() + b"\n"
            code, _, errtext = run_pg("psql", self.target,
                                      ["-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "-f", "-"],
                                      stdin=script)
            if code != 0:
                raise FleetError("restoring the schema of %s on the new server failed: %s"
                                 % (self.nsp, errtext.strip()))
            oid = self.target_schema()
            if oid in (None, -1):
                raise FleetError("the copy of %s on the new server is not there after the restore" % self.nsp)
        self.record(target_schema_oid=oid)
        out("  1. schema %s copied to the new server (%s)"
            % (self.nsp, plural(len(shard_tables(self.T, self.nsp)), "table")))

    def check_pg_settings_lock(self):
        """pg_dump reads pg_catalog.pg_settings, which any role may lock in
        ACCESS EXCLUSIVE mode while PUBLIC has UPDATE on it (PostgreSQL's
        default): pg_dump would wait for that role's transaction to end.
        Refuse instead, naming the session."""
        held = rows(self.S, """
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
                             % (self.nsp, ", ".join('role "%s" (pid %d) %s' % (u, pid, "holds" if g else "waits for")
                                                    for pid, u, g in held))
                             + "\nDETAIL: Any role may lock pg_settings so while PUBLIC has UPDATE on it, "
                               "as it has by default."
                             + "\nHINT: End that transaction (pg_terminate_backend), then move --resume; and keep "
                               "it from happening again: REVOKE UPDATE ON pg_catalog.pg_settings FROM PUBLIC;")

    def do_publication(self):
        r = self.S.execute("SELECT p.oid, p.pubowner, p.pubviaroot FROM pg_catalog.pg_publication AS p "
                           "WHERE p.pubname OPERATOR(pg_catalog.=) %s", (self.name,)).fetchone()
        if r is None:
            self.S.execute(sql.SQL("CREATE PUBLICATION {} FOR TABLES IN SCHEMA {} "
                                   "WITH (publish_via_partition_root = true)").format(
                sql.Identifier(self.name), sql.Identifier(self.nsp)))
        elif r[1] not in trusted_roles(self.S):
            raise FleetError('publication %s on the old server is not this move\'s' % self.name)
        out("  2. publication %s of schema %s on the old server" % (self.name, self.nsp))

    def do_slot(self):
        have = one(self.S, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_replication_slots AS s "
                           "WHERE s.slot_name OPERATOR(pg_catalog.=) %s", (self.name,))
        if not have:
            # the slot waits until every transaction that has written on the
            # old server (any role's) has ended: say which, if any has run
            # for a while
            for pid, user, since in rows(self.S, """
                    SELECT a.pid, COALESCE(a.usename::pg_catalog.text, '?'::pg_catalog.text), a.xact_start
                      FROM pg_catalog.pg_stat_activity AS a
                     WHERE a.backend_xid IS NOT NULL AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
                       AND a.xact_start OPERATOR(pg_catalog.<)
                           (pg_catalog.now() OPERATOR(pg_catalog.-) '1 s'::pg_catalog.interval)
                     ORDER BY a.xact_start"""):
                out("     the slot waits for the transaction of role \"%s\" (pid %d, since %s) on the old server"
                    % (user, pid, since))
            self.S.execute("SELECT pg_catalog.pg_create_logical_replication_slot(%s, 'pgoutput')", (self.name,))
        out("  3. replication slot %s on the old server" % self.name)

    def do_subscription(self):
        # streaming off: a transaction is applied, in commit order, by the
        # worker whose received position the fence waits on
        r = self.T.execute("SELECT s.oid, s.subenabled FROM pg_catalog.pg_subscription AS s "
                           "WHERE s.subname OPERATOR(pg_catalog.=) %s AND s.subdbid OPERATOR(pg_catalog.=) "
                           "(SELECT d.oid FROM pg_catalog.pg_database AS d "
                           " WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())",
                           (self.name,)).fetchone()
        if r is None:
            # From PostgreSQL 16 on, the workers act on each table as its
            # owner (run_as_owner = false), not as the subscription's owner,
            # a superuser: the code of the tables' owners (constraints,
            # defaults, index expressions) runs with their rights only.  On
            # 15 they run as the subscription's owner; preflight refuses a
            # shard whose tables carry code of a role the tool does not trust.
            as_owner = sql.SQL(", run_as_owner = false") if self.T.info.server_version >= 160000 else sql.SQL("")
            self.subscription_ddl(sql.SQL("CREATE SUBSCRIPTION {} CONNECTION {} PUBLICATION {} "
                                          "WITH (create_slot = false, slot_name = {}, copy_data = true, "
                                          "streaming = false, enabled = true{})").format(
                sql.Identifier(self.name), sql.Literal(self.publisher), sql.Identifier(self.name),
                sql.Literal(self.name), as_owner))
            r = self.T.execute("SELECT s.oid, s.subenabled FROM pg_catalog.pg_subscription AS s "
                               "WHERE s.subname OPERATOR(pg_catalog.=) %s", (self.name,)).fetchone()
        elif not r[1]:
            self.T.execute(sql.SQL("ALTER SUBSCRIPTION {} ENABLE").format(sql.Identifier(self.name)))
        self.record(subscription_oid=r[0])
        out("  4. subscription %s on the new server, copying the data" % self.name)

    def subscription_ddl(self, stmt):
        """CREATE or DROP SUBSCRIPTION on the new server, waiting at most
        --lock-timeout for the lock on pg_replication_origin (see
        lock_holders)"""
        self.T.execute("SELECT pg_catalog.set_config('lock_timeout', %s, false)",
                       ("%dms" % int(self.lock_timeout * 1000),))
        try:
            self.T.execute(stmt)
        except psycopg.errors.LockNotAvailable as e:
            held = lock_holders(self.T, "pg_catalog.pg_replication_origin", "RowShareLock")
            raise FleetError("%s on the new server waited %g s for a lock on pg_catalog.pg_replication_origin "
                             "(%s); run move --resume (or --abort) once they are gone"
                             % (stmt.as_string(self.T).split(" ")[0] + " SUBSCRIPTION", self.lock_timeout,
                                "; ".join(held) or pgerr(e).split("\n")[0])
                             + "\nDETAIL: Any role that can connect to a database of that server can hold such "
                               "a lock for as long as its transaction lasts, through a statement it prepares.")
        finally:
            self.T.execute("SELECT pg_catalog.set_config('lock_timeout', '0', false)")

    def lag(self):
        """(tables not yet synchronized, bytes the slot is behind)"""
        pending = one(self.T, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_subscription_rel AS r "
                              "WHERE r.srsubid OPERATOR(pg_catalog.=) %s "
                              "AND r.srsubstate OPERATOR(pg_catalog.<>) 'r'", (self.subscription_oid,))
        behind = one(self.S, "SELECT pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), "
                             "s.confirmed_flush_lsn)::pg_catalog.int8 FROM pg_catalog.pg_replication_slots AS s "
                             "WHERE s.slot_name OPERATOR(pg_catalog.=) %s", (self.name,))
        return pending, behind

    def applied_past(self, lsn):
        """Has the new server applied everything the old one committed
        before lsn?  Its apply worker has received (and so applied, as it
        applies in order) WAL past lsn."""
        return bool(one(self.T, "SELECT pg_catalog.bool_or(s.received_lsn OPERATOR(pg_catalog.>=) %s::pg_catalog.pg_lsn) "
                                "FROM pg_catalog.pg_stat_subscription AS s "
                                "WHERE s.subid OPERATOR(pg_catalog.=) %s AND s.relid IS NULL",
                        (lsn, self.subscription_oid)))

    def flush_point(self):
        """A WAL position past every commit on the old server so far, and
        flushed (a tiny transaction of our own, committed synchronously)."""
        with self.S.transaction():
            self.S.execute("SET LOCAL synchronous_commit = local")
            self.S.execute("SELECT pg_catalog.pg_current_xact_id()")
        return one(self.S, "SELECT pg_catalog.pg_current_wal_flush_lsn()::pg_catalog.text")

    def do_sync(self):
        t0 = time.monotonic()
        last_report = t0
        errors0 = None
        while True:
            pending, behind = self.lag()
            if behind is None:
                raise FleetError("replication slot %s is gone from the old server; --abort the move" % self.name)
            if pending == 0:
                # a catch-up round: how long until the new server has what
                # the old one has now?  Short enough, and the fence is short.
                point = self.flush_point()
                r0 = time.monotonic()
                while not self.applied_past(point):
                    if time.monotonic() - r0 > 5:
                        break
                    time.sleep(0.005)
                else:
                    if time.monotonic() - r0 < 0.5:
                        break
            now = time.monotonic()
            errs = one(self.T, "SELECT s.apply_error_count OPERATOR(pg_catalog.+) s.sync_error_count "
                               "FROM pg_catalog.pg_stat_subscription_stats AS s "
                               "WHERE s.subid OPERATOR(pg_catalog.=) %s", (self.subscription_oid,))
            if errors0 is None:
                errors0 = errs
            elif errs is not None and errs > errors0:
                warn("the subscription on the new server has reported %d errors; see its server log" % (errs - errors0))
                errors0 = errs
            if now - last_report >= 10:
                waits = (["on the new server: " + w for w in lock_waits(self.T, "logical replication%")]
                         + ["on the old server: " + w for w in lock_waits(self.S, "walsender")])
                out("     ... %s to copy, %d kB behind (%d s)%s"
                    % (plural(pending, "table"), (behind or 0) // 1024, now - t0,
                       "; a replication worker waits for a lock: " + "; ".join(waits) if waits else ""))
                last_report = now
            time.sleep(0.05 if pending else 0.01)
        out("  5. data copied and caught up (%.1f s)" % (time.monotonic() - t0))

    def do_fence(self):
        """Writes to the shard on the old server wait for a moment, while
        the new server catches up to the last write and its IDs are fenced
        past every old one; then the old schema is retired."""
        if not self.retired_schema:
            self.record(retired_schema="%s_retired_%s_%s" % (
                self.nsp, datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d%H%M%S"), self.token))
        live, retired = self.source_schema()
        if live is None and retired is not None and retired == self.source_schema_oid:
            out("  6. %s was already retired on the old server" % self.nsp)
            return
        if live == self.source_schema_oid and self.fenced_in_place():
            out("  6. %s was already fenced on the old server" % self.nsp)
            return
        if live != self.source_schema_oid:
            raise FleetError("schema %s on the old server is not the one this move started from" % self.nsp)
        tables = shard_tables(self.S, self.nsp)
        # every table and partition of the schema gets the fence's trigger:
        # a write straight into a partition fires no trigger of its parent
        rels = [x[0] for x in rows(self.S, """
            SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_class AS c
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s
               AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
             ORDER BY 1""", (self.source_schema_oid,))]
        seqs = [x[0] for x in rows(self.S, """
            SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_class AS c
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relkind OPERATOR(pg_catalog.=) 'S'
             ORDER BY 1""", (self.source_schema_oid,))]
        ext = extension_info(self.S, "shardid")[0]
        attempts = 0
        while True:
            attempts += 1
            try:
                self._fence_once(tables, rels, seqs, ext)
                return
            except (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected) as e:
                self.gate_open()
                if attempts >= 3:
                    raise FleetError("could not take the write fence on %s in %d attempts (%s); "
                                     "writes go on on the old server; run move --resume to try again"
                                     % (self.nsp, attempts, pgerr(e).split("\n")[0]))
                warn("write fence on %s not taken (%s); trying again" % (self.nsp, pgerr(e).split("\n")[0]))
                time.sleep(1)

    def _fence_once(self, tables, rels, seqs, ext):
        F = connect(self.source, "the old server")
        F.autocommit = False
        try:
            F.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)",
                      ("%dms" % int(self.lock_timeout * 1000),))
            t_request = time.monotonic()
            # calls through the router wait at its gate from here until the
            # router sends the shard to the new server
            if self.gate_close():
                # calls that passed the gate just before it closed get a
                # moment to reach the old server's tables and commit there
                # (the lock below waits for them) rather than queue behind
                # the lock and meet the fence
                time.sleep(GATE_DRAIN_MS / 1000)
            F.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(
                sql.SQL(", ").join(sql.Identifier(self.nsp, t) for t in tables)))
            kill_point("fence:locked")
            # Every write to the shard is now either committed or waiting.
            point = self.flush_point()
            # the latest millisecond of any ID: of the rows, and of what the
            # old server's guard issued for these sequences (its floor covers
            # sequences it evicted)
            fence_ms = None
            maxids = {}
            for t in tables:
                mid = checked_max_id(F, self.source_schema_oid, self.nsp, t)
                maxids[t] = mid
                if mid is not None:
                    ms = F.execute(sql.SQL(
                        "SELECT pg_catalog.floor(EXTRACT(epoch FROM {}.shardid_created_at(%s::pg_catalog.int8))"
                        " OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8").format(sql.Identifier(ext)),
                        (mid,)).fetchone()[0]
                    fence_ms = ms if fence_ms is None else max(fence_ms, ms)
            guard = F.execute(sql.SQL("""
                SELECT pg_catalog.floor(EXTRACT(epoch FROM GREATEST(pg_catalog.max(s.last_ms),
                           (SELECT i.floor_ms FROM {}.shardid_stats_info() AS i))) OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8
                  FROM {}.shardid_stats AS s
                  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) s.seqid
                 WHERE s.datid OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database AS d
                                     WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
                   AND c.relnamespace OPERATOR(pg_catalog.=) %s""").format(
                sql.Identifier(ext), sql.Identifier(ext)), (self.source_schema_oid,)).fetchone()[0]
            if guard is not None:
                fence_ms = guard if fence_ms is None else max(fence_ms, guard)
            # each sequence's stored value (also one set with is_called
            # false, which nextval then takes), by OID: never through its
            # name, which its owner could give a view of hers meanwhile
            seqvals = {}
            for s in seqs:
                r = F.execute("""
                    SELECT COALESCE(pg_catalog.pg_sequence_last_value(c.oid),
                                    pg_catalog.nextval(c.oid::pg_catalog.regclass)),
                           q.seqincrement, q.seqmax
                      FROM pg_catalog.pg_class AS c
                      JOIN pg_catalog.pg_sequence AS q ON q.seqrelid OPERATOR(pg_catalog.=) c.oid
                     WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relname OPERATOR(pg_catalog.=) %s""",
                              (self.source_schema_oid, s)).fetchone()
                if r is None:
                    raise FleetError("sequence %s.%s is gone from the old server" % (self.nsp, s))
                seqvals[s] = r

            # the new server has applied everything up to the fence
            while not self.applied_past(point):
                if time.monotonic() - t_request > self.fence_timeout:
                    raise FleetError("the new server did not catch up within %g s of pausing writes; writes resumed "
                                     "on the old server; run move --resume to try again" % self.fence_timeout)
                time.sleep(0.002)
            kill_point("fence:caught-up")
            for t in tables:
                have = checked_max_id(self.T, self.target_schema_oid, self.nsp, t)
                if have != maxids[t]:
                    raise FleetError("table %s.%s: the new server's last ID is %s, the old server's %s; "
                                     "writes resumed on the old server" % (self.nsp, t, have, maxids[t]))
            # sequences past the next block of 1,024
            for s, (last, inc, mx) in seqvals.items():
                if inc <= 0:
                    raise FleetError("sequence %s.%s descends; shardid-fleet moves ascending sequences only"
                                     % (self.nsp, s))
                v = (last // 1024 + 2) * 1024 - 1
                if v > mx:
                    raise FleetError("sequence %s.%s has no room past its next block of 1,024 (maximum %d)"
                                     % (self.nsp, s, mx))
                self.T.execute(sql.SQL("SELECT pg_catalog.setval(%s::pg_catalog.regclass, %s, true)"),
                               (sql.Identifier(self.nsp, s).as_string(self.T), v))
            # the ID fence: no ID of the shard from the new server until its
            # clock is past every ID the shard has
            waited = 0.0
            if fence_ms is not None:
                w0 = time.monotonic()
                behind = one(self.T, "SELECT %s OPERATOR(pg_catalog.-) pg_catalog.floor(EXTRACT(epoch FROM "
                                     "pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8",
                             (fence_ms,))
                reopened = behind >= GATE_MAX_CLOCK_WAIT_MS and self._gate
                if reopened:
                    # a long wait: the gate opens meanwhile, so that calls for
                    # the other shards go on; those for this shard wait for
                    # the lock on the old server and then meet the fence
                    # there (40001, retried)
                    self.gate_open()
                while one(self.T, "SELECT pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp()) "
                                  "OPERATOR(pg_catalog.*) 1000)::pg_catalog.int8 OPERATOR(pg_catalog.<=) %s",
                          (fence_ms,)):
                    if time.monotonic() - w0 > self.max_wait:
                        raise FleetError("the clock of the new server is more than %g s behind the last ID of "
                                         "logical shard %d; writes resumed on the old server (--max-clock-wait)"
                                         % (self.max_wait, self.shard))
                    time.sleep(0.001)
                waited = time.monotonic() - w0
                if reopened:
                    self.gate_close()
            self.record(fence_lsn=point, fence_ms=fence_ms)
            # fence the shard on the old server: from the commit on, every
            # write to it there fails with 40001 (serialization_failure),
            # which applications retry, whatever happens next.  A write
            # waiting for the lock above goes on into that error, not into
            # the old copy, and not into 42P01: the schema keeps its name
            # until the router has switched and the cleanup renames it.
            F.execute(sql.SQL(FENCE_FUNCTION_DDL).format(sql.Identifier(self.nsp, FENCE_FUNCTION)))
            msg = ("logical shard %d is moving to another server (shardid-fleet move %s)"
                   % (self.shard, self.token))
            hint = "Retry the transaction: the router sends it to the shard's new server."
            for r in rels:
                F.execute(sql.SQL("CREATE TRIGGER {} BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {} "
                                  "FOR EACH STATEMENT EXECUTE FUNCTION {}({}, {})").format(
                    sql.Identifier(FENCE_FUNCTION), sql.Identifier(self.nsp, r),
                    sql.Identifier(self.nsp, FENCE_FUNCTION), sql.Literal(msg), sql.Literal(hint)))
            kill_point("fence:fenced")
            F.commit()
            self.fence_started = t_request
            kill_point("fence:committed")
            out("  6. writes paused; the new server caught up to %s; sequences set past the next block of 1,024; "
                "its clock is past the last ID (%s, waited %d ms); %s fenced on the old server "
                "(a write there fails with 40001), to be retired as %s"
                % (point, "none" if fence_ms is None else
                   datetime.datetime.fromtimestamp(fence_ms / 1000, datetime.timezone.utc).isoformat(
                       timespec="milliseconds"),
                   waited * 1000, self.nsp, self.retired_schema))
        except BaseException:
            try:
                F.rollback()
            except Exception:
                pass
            self.gate_open()
            raise
        finally:
            F.close()

    # --- the router's gate

    def gate_close(self):
        """Shut the router's gate of the cluster: every PL/Proxy call of the
        cluster waits in plproxy.get_cluster_version until gate_open().  The
        lock (EXCLUSIVE on the cluster's gate table) is taken in a savepoint
        of the run lock's transaction, so gate_open() gives it back alone;
        it goes with the session, also when the tool is killed."""
        if self._gate:
            return True
        kind = gate_kind(self.R)
        if kind != "table" or self.L is None:
            if not self._gate_warned:
                warn("the router's plproxy.get_cluster_version has no gate %s: writes on their way to the old "
                     "server during the switch fail with 40001; run shardid-fleet router to update it"
                     % ("that only shardid-fleet can take (made by an older shardid-fleet, its gate is an "
                        "advisory lock, which any role can hold)" if kind == "advisory"
                        else "(made by an older shardid-fleet)"))
                self._gate_warned = True
            return False
        L = self.L
        L.execute("SAVEPOINT shardid_fleet_gate")
        try:
            L.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)",
                      ("%dms" % int(self.lock_timeout * 1000),))
            L.execute(sql.SQL("LOCK TABLE ONLY {} IN EXCLUSIVE MODE").format(gate_table(self.cluster)))
        except BaseException:
            self._gate_rollback()
            raise
        self._gate = True
        self.gate_closed_at = time.monotonic()
        return True

    def gate_open(self):
        if self._gate:
            self._gate = False
            self._gate_rollback()

    def _gate_rollback(self):
        """Roll back to the savepoint the gate was shut in, which releases
        that lock and keeps the run lock.  If that fails, the session is
        closed (which releases both): the gate must not stay shut, and a
        later step that needs the session fails."""
        try:
            self.L.execute("ROLLBACK TO SAVEPOINT shardid_fleet_gate")
            self.L.execute("RELEASE SAVEPOINT shardid_fleet_gate")
        except BaseException:
            try:
                self.L.close()
            except Exception:
                pass

    def do_switch(self):
        # The copy becomes the shard: it loses the mark of an incoming copy
        # (and gets the comment the old schema had), and stops applying
        # changes from the old server, which has taken its last write.
        comment = one(self.S, "SELECT pg_catalog.obj_description(n.oid, 'pg_namespace') "
                              "FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) %s",
                      (self.source_schema_oid,))
        self.T.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
            sql.Identifier(self.nsp), sql.Literal(comment)))
        if one(self.T, "SELECT s.subenabled FROM pg_catalog.pg_subscription AS s "
                       "WHERE s.subname OPERATOR(pg_catalog.=) %s", (self.name,)):
            self.T.execute(sql.SQL("ALTER SUBSCRIPTION {} DISABLE").format(sql.Identifier(self.name)))
        with self.R.transaction():
            owner, version = router_current_map(self.R, self.cluster)
            if same_server(owner[self.shard], self.target):
                new = version
            else:
                if not same_server(owner[self.shard], self.source):
                    raise FleetError("the router puts logical shard %d on \"%s\", not on the old server"
                                     % (self.shard, show_conn(owner[self.shard])))
                owner[self.shard] = self.map_conn(load_map(self.a.mapfile))
                _, new = load_map_into_router(self.R, self.cluster, owner)
            paused = None
            if getattr(self, "fence_started", None) is not None:
                paused = int((time.monotonic() - self.fence_started) * 1000)
            kill_point("before:switched")
            self.record(state="switched", paused_ms=paused)
        # calls waiting at the gate now read the new map
        gated = self._gate
        if gated:
            self.gate_open()
            gated = int((time.monotonic() - self.gate_closed_at) * 1000)
        out("  7. router: logical shard %d now on the new server (map version %d)%s%s"
            % (self.shard, new, "; writes to it were paused for %d ms" % paused if paused is not None else "",
               "; calls through the router waited at its gate for %d ms" % gated if gated is not False else ""))

    def drop_subscription(self):
        """The subscription on the new server and the slots on the old one"""
        r = self.T.execute("SELECT s.oid, s.subenabled, s.subslotname FROM pg_catalog.pg_subscription AS s "
                           "WHERE s.subname OPERATOR(pg_catalog.=) %s", (self.name,)).fetchone()
        sub_oid = r[0] if r is not None else self.subscription_oid
        if r is not None:
            if r[1]:
                self.T.execute(sql.SQL("ALTER SUBSCRIPTION {} DISABLE").format(sql.Identifier(self.name)))
            if r[2] is not None:
                self.T.execute(sql.SQL("ALTER SUBSCRIPTION {} SET (slot_name = NONE)").format(
                    sql.Identifier(self.name)))
            self.subscription_ddl(sql.SQL("DROP SUBSCRIPTION {}").format(sql.Identifier(self.name)))
        # the main slot and the table synchronization slots
        sync = "^pg_%d_sync_" % sub_oid if sub_oid is not None else "^$"
        t0 = time.monotonic()
        while True:
            slots = rows(self.S, "SELECT s.slot_name::pg_catalog.text, s.active_pid FROM pg_catalog.pg_replication_slots AS s "
                                 "WHERE s.slot_name OPERATOR(pg_catalog.=) %s OR s.slot_name OPERATOR(pg_catalog.~) %s",
                         (self.name, sync))
            if not slots:
                break
            for name, pid in slots:
                if pid is None:
                    try:
                        self.S.execute("SELECT pg_catalog.pg_drop_replication_slot(%s)", (name,))
                    except psycopg.errors.ObjectInUse:
                        pass
                elif time.monotonic() - t0 > 10:
                    self.S.execute("SELECT pg_catalog.pg_terminate_backend(%s)", (pid,))
            time.sleep(0.05)

    def drop_publication(self):
        self.S.execute(sql.SQL("DROP PUBLICATION IF EXISTS {}").format(sql.Identifier(self.name)))

    def do_cleanup(self):
        self.drop_subscription()
        self.drop_publication()
        self.retire()
        for t in shard_tables(self.T, self.nsp):
            self.T.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(self.nsp, t)))
        dropped = False
        if self.drop_retired:
            live, retired = self.source_schema()
            self.check_retired_name()
            if retired is not None and retired == self.source_schema_oid:
                self.S.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(self.retired_schema)))
                dropped = True
        out("  8. subscription, replication slot and publication dropped; %s"
            % ("%s dropped on the old server" % self.retired_schema if dropped else
               "%s kept on the old server; drop it once the move is checked" % self.retired_schema))

    def retire(self):
        """Rename the fenced schema on the old server to its retired name,
        once every transaction there that began before this step has ended
        (10 s at most): one that began before the router switched may still
        be on its way to the fenced tables, and it should meet 40001 there,
        not a missing table."""
        live, retired = self.source_schema()
        if live is None or live != self.source_schema_oid:
            return
        self.check_retired_name()
        since = one(self.S, "SELECT pg_catalog.clock_timestamp()")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10 and one(self.S, """
                SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity AS a
                 WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
                   AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
                   AND a.backend_type OPERATOR(pg_catalog.=) 'client backend'
                   AND a.xact_start OPERATOR(pg_catalog.<) %s""", (since,)):
            time.sleep(0.05)
        self.S.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
            sql.Identifier(self.nsp), sql.Identifier(self.retired_schema)))
        out("     %s renamed to %s on the old server" % (self.nsp, self.retired_schema))

    def check_retired_name(self):
        want = "%s_retired_" % self.nsp
        if not (self.retired_schema or "").startswith(want) or not self.retired_schema.endswith("_" + self.token):
            raise FleetError("the recorded retired schema name %r is not one this move would make" % self.retired_schema)

    def map_conn(self, fm):
        """The new server's connection string for the map file and the
        router: the map's own string for that server if it has one, else
        the one given without its password and sslpassword (libpq then
        takes them from a passfile or a service file)"""
        for cs in fm.servers():
            if same_server(cs, self.target):
                return cs
        return strip_secrets(self.target)

    def do_map_file(self):
        fm = load_map(self.a.mapfile)
        routed = router_current_map(self.R, self.cluster)[0][self.shard]
        new = routed if same_server(routed, self.target) else self.map_conn(fm)
        if fm.owner[self.shard] != new:
            owner = list(fm.owner)
            owner[self.shard] = new
            note = "%s shardid-fleet moved logical shard %d from %s to %s" % (
                datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                self.shard, mask(strip_secrets(self.source)), mask(strip_secrets(new)))
            write_map_atomically(self.a.mapfile, fm.render(owner, note))
        out("  9. map file %s rewritten" % self.a.mapfile)

    def run(self):
        """Take the steps from the recorded one to the end."""
        try:
            self._run()
        finally:
            self.gate_open()

    def _run(self):
        i = STEPS.index(self.state)
        if self.state == "prepared":
            i += 1
        actions = {
            "schema": self.do_schema, "publication": self.do_publication, "slot": self.do_slot,
            "subscription": self.do_subscription, "sync": self.do_sync, "fence": self.do_fence,
        }
        for state in STEPS[i:]:
            if state in actions:
                if self.state != state:
                    self.step(state)
                actions[state]()
                kill_point("after:" + state)
            elif state == "retired":
                if self.state != "retired":
                    self.step("retired")
            elif state == "switched":
                if self.state != "switched":
                    self.do_switch()
                kill_point("after:switched")
            elif state == "cleaned":
                if self.state != "cleaned":
                    self.do_cleanup()
                    self.step("cleaned")
                    kill_point("after:cleaned")
            elif state == "done":
                self.do_map_file()
                kill_point("before:done")
                self.R.execute("UPDATE shardid_fleet.moves SET state = 'done', last_error = NULL, "
                               "updated_at = pg_catalog.now(), finished_at = pg_catalog.now() "
                               "WHERE id OPERATOR(pg_catalog.=) %s", (self.id,))
                self.state = "done"
        out("move: logical shard %d is on %s" % (self.shard, show_conn(self.target)))

    def abort(self):
        if STEPS.index(self.state) >= STEPS.index("switched"):
            raise FleetError("the router already sends logical shard %d to the new server (step %s); "
                             "the move can only be finished: shardid-fleet move --resume"
                             % (self.shard, self.state))
        out("abort move of logical shard %d (step %s)" % (self.shard, self.state))
        # the old schema back in service, if it was fenced or retired
        if self.source_schema_oid is not None:
            live, _ = self.source_schema()
            if live == self.source_schema_oid and self.fenced_in_place():
                self.S.execute(sql.SQL("DROP FUNCTION {}() CASCADE").format(
                    sql.Identifier(self.nsp, FENCE_FUNCTION)))
                out("  the fence on %s on the old server removed: writes go on there" % self.nsp)
        if self.retired_schema:
            live, retired = self.source_schema()
            if live is None and retired is not None and retired == self.source_schema_oid:
                self.S.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                    sql.Identifier(self.retired_schema), sql.Identifier(self.nsp)))
                out("  %s on the old server renamed back to %s" % (self.retired_schema, self.nsp))
        self.drop_subscription()
        self.drop_publication()
        out("  subscription, replication slot and publication dropped")
        oid = self.target_schema()
        if oid not in (None, -1):
            self.T.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(self.nsp)))
            out("  the copy %s on the new server dropped" % self.nsp)
        elif oid == -1:
            warn("schema %s on the new server is not this move's copy; left as it is" % self.nsp)
        self.R.execute("UPDATE shardid_fleet.moves SET state = 'aborted', updated_at = pg_catalog.now(), "
                       "finished_at = pg_catalog.now() WHERE id OPERATOR(pg_catalog.=) %s", (self.id,))
        out("move: aborted; logical shard %d stays on %s" % (self.shard, show_conn(self.source)))
