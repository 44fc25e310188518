"""The PL/Proxy router: the router and status commands."""

import os

import psycopg
from psycopg import sql

from .common import (
    FLEET_SCHEMA, FleetError, GATE_SCHEMA, MARKER, NSHARDS, out, plural, ranges, show_conn, warn)
from .fleetmap import FleetMap, MapLock, load_map
from .conn import (
    check_schema_trusted, connect, ensure_extension, extension_info, is_incoming, live_shards, one,
    rows, schema_info, trusted_roles, untrusted_objects)
from .provision import read_file, run_sql_file
from .state import finished_moves, has_moves_table, unfinished_move


#
# router
#

ROUTER_TABLES = {
    "cluster": sql.SQL("""
        CREATE TABLE shardid_fleet.cluster (
            name pg_catalog.text PRIMARY KEY,
            version pg_catalog.int4 NOT NULL,
            changed_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now()
        )"""),
    "map": sql.SQL("""
        CREATE TABLE shardid_fleet.map (
            cluster pg_catalog.text NOT NULL REFERENCES shardid_fleet.cluster,
            first_shard pg_catalog.int4 NOT NULL CHECK (first_shard BETWEEN 0 AND 8191),
            last_shard pg_catalog.int4 NOT NULL CHECK (last_shard BETWEEN first_shard AND 8191),
            connstr pg_catalog.text NOT NULL,
            PRIMARY KEY (cluster, first_shard)
        )"""),
    "moves": sql.SQL("""
        CREATE TABLE shardid_fleet.moves (
            id pg_catalog.int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            cluster pg_catalog.text NOT NULL REFERENCES shardid_fleet.cluster,
            shard pg_catalog.int4 NOT NULL CHECK (shard BETWEEN 0 AND 8191),
            token pg_catalog.text NOT NULL UNIQUE,
            source pg_catalog.text NOT NULL,
            target pg_catalog.text NOT NULL,
            publisher pg_catalog.text NOT NULL,
            drop_retired pg_catalog.bool NOT NULL DEFAULT false,
            state pg_catalog.text NOT NULL,
            retired_schema pg_catalog.text,
            source_schema_oid pg_catalog.oid,
            target_schema_oid pg_catalog.oid,
            subscription_oid pg_catalog.oid,
            fence_lsn pg_catalog.pg_lsn,
            fence_ms pg_catalog.int8,
            paused_ms pg_catalog.int8,
            last_error pg_catalog.text,
            started_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(),
            updated_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(),
            finished_at pg_catalog.timestamptz
        )"""),
}
# one unfinished move per cluster
ROUTER_INDEX = sql.SQL("""
    CREATE UNIQUE INDEX moves_one_unfinished ON shardid_fleet.moves (cluster)
     WHERE state OPERATOR(pg_catalog.<>) ALL ('{done,aborted}'::pg_catalog.text[])""")

PLPROXY_FUNCS = {
    "get_cluster_version(text)": sql.SQL("""
        {} FUNCTION plproxy.get_cluster_version(cluster_name pg_catalog.text)
        RETURNS pg_catalog.int4
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER
        SET search_path = pg_catalog, pg_temp
        AS $fn$
        DECLARE
            v pg_catalog.int4;
        BEGIN
            -- the gate: while a move of the cluster fences and switches a
            -- shard (tens of milliseconds), calls wait here, and then read
            -- the new map.  The gate is a table that only its owner (the
            -- owner of this SECURITY DEFINER function) may use: no other
            -- role can lock it.  A call takes it in ROW SHARE mode, which
            -- only the move's EXCLUSIVE hold conflicts with, and gives it
            -- back at once: a rolled-back subtransaction releases the locks
            -- it took, so no call keeps it.  VOLATILE, so that the version
            -- below is read with a snapshot taken after the wait, not the
            -- calling statement's (STABLE would route a call that waited by
            -- the old map).
            IF pg_catalog.octet_length(cluster_name) OPERATOR(pg_catalog.<=)
               pg_catalog.current_setting('max_identifier_length')::pg_catalog.int4 THEN
                BEGIN
                    EXECUTE pg_catalog.format('LOCK TABLE ONLY {gate}.%I IN ROW SHARE MODE', cluster_name);
                    RAISE SQLSTATE 'SHFG0';
                EXCEPTION
                    -- passed (or the cluster has no gate: the lookup below decides)
                    WHEN SQLSTATE 'SHFG0' OR undefined_table THEN NULL;
                    WHEN lock_not_available THEN
                        RAISE EXCEPTION USING
                            ERRCODE = 'serialization_failure',
                            MESSAGE = pg_catalog.format('a logical shard of PL/Proxy cluster "%s" is being moved by shardid-fleet', cluster_name),
                            DETAIL = 'This session''s lock_timeout ran out while the move switched the router.',
                            HINT = 'Retry the transaction.';
                END;
            END IF;
            SELECT c.version INTO v FROM shardid_fleet.cluster AS c
             WHERE c.name OPERATOR(pg_catalog.=) cluster_name;
            IF v IS NULL THEN
                RAISE EXCEPTION USING
                    ERRCODE = 'undefined_object',
                    MESSAGE = pg_catalog.format('PL/Proxy cluster "%s" is not in shardid_fleet.cluster', cluster_name);
            END IF;
            RETURN v;
        END
        $fn$"""),
    "get_cluster_partitions(text)": sql.SQL("""
        {} FUNCTION plproxy.get_cluster_partitions(cluster_name pg_catalog.text)
        RETURNS SETOF pg_catalog.text
        LANGUAGE sql STABLE
        SET search_path = pg_catalog, pg_temp
        AS $fn$
            SELECT m.connstr
              FROM pg_catalog.generate_series(0, 8191) AS p
              JOIN shardid_fleet.map AS m
                ON m.cluster OPERATOR(pg_catalog.=) cluster_name
               AND p OPERATOR(pg_catalog.>=) m.first_shard AND p OPERATOR(pg_catalog.<=) m.last_shard
             ORDER BY p
        $fn$"""),
    "get_cluster_config(text)": sql.SQL("""
        {} FUNCTION plproxy.get_cluster_config(
            IN cluster_name pg_catalog.text, OUT key pg_catalog.text, OUT val pg_catalog.text)
        RETURNS SETOF record
        LANGUAGE sql STABLE
        SET search_path = pg_catalog, pg_temp
        AS $fn$ SELECT NULL::pg_catalog.text, NULL::pg_catalog.text WHERE false $fn$"""),
}


def router_objects(conn, trusted):
    """Check what shardid-fleet finds of its own on the router and report
    what it would have to create.  Nothing is adopted: every object must be
    owned by a trusted role, hold nothing else, and carry nothing attached."""
    problems = fleet_schema_problems(conn, trusted) + plproxy_problems(conn, trusted)
    problems += gate_objects(conn, trusted)
    # types, operators and the rest (relations and functions are above)
    problems += untrusted_objects(conn, [FLEET_SCHEMA, "plproxy"], trusted, skip=("pg_class", "pg_proc"))
    problems += untrusted_objects(conn, [GATE_SCHEMA], trusted, skip=("pg_class",))
    return problems


def fleet_schema_problems(conn, trusted):
    """What is wrong with schema shardid_fleet (the map and the moves)"""
    problems = []
    info = schema_info(conn, FLEET_SCHEMA)
    if info is not None:
        check_schema_trusted(conn, FLEET_SCHEMA, trusted, "shardid-fleet's state")
        for relname, relkind, owner, owner_name in rows(conn, """
                SELECT c.relname::pg_catalog.text, c.relkind::pg_catalog.text, c.relowner,
                       pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text
                  FROM pg_catalog.pg_class AS c
                 WHERE c.relnamespace OPERATOR(pg_catalog.=) %s ORDER BY 1""", (info[0],)):
            if owner not in trusted:
                problems.append('relation %s.%s is owned by role "%s"' % (FLEET_SCHEMA, relname, owner_name))
        for what, name, owner_name in rows(conn, """
                SELECT 'trigger', pg_catalog.format('%%s on %%s', t.tgname, t.tgrelid::pg_catalog.regclass), ''
                  FROM pg_catalog.pg_trigger AS t JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
                 WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND NOT t.tgisinternal
                UNION ALL
                SELECT 'rule', pg_catalog.format('%%s on %%s', r.rulename, r.ev_class::pg_catalog.regclass), ''
                  FROM pg_catalog.pg_rewrite AS r JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) r.ev_class
                 WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relkind OPERATOR(pg_catalog.=) 'r'
                UNION ALL
                SELECT 'policy', pg_catalog.format('%%s on %%s', p.polname, p.polrelid::pg_catalog.regclass), ''
                  FROM pg_catalog.pg_policy AS p JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) p.polrelid
                 WHERE c.relnamespace OPERATOR(pg_catalog.=) %s
                UNION ALL
                SELECT 'function', p.oid::pg_catalog.regprocedure::pg_catalog.text, pg_catalog.pg_get_userbyid(p.proowner)
                  FROM pg_catalog.pg_proc AS p
                 WHERE p.pronamespace OPERATOR(pg_catalog.=) %s
                   AND NOT (p.oid::pg_catalog.regprocedure::pg_catalog.text OPERATOR(pg_catalog.=)
                            'shardid_fleet.load_map(text,integer[],integer[],text[])'
                            AND p.proowner OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.oid[]))
                """, (info[0], info[0], info[0], info[0], list(trusted))):
            problems.append("%s %s%s" % (what, name, ' (owned by role "%s")' % owner_name if owner_name else ""))
        for relname, why in rows(conn, """
                SELECT c.relname::pg_catalog.text,
                       CASE WHEN c.relrowsecurity OR c.relforcerowsecurity THEN 'has row security enabled'
                            ELSE 'is not a plain table' END
                  FROM pg_catalog.pg_class AS c
                 WHERE c.relnamespace OPERATOR(pg_catalog.=) %s
                   AND (c.relrowsecurity OR c.relforcerowsecurity
                        OR (c.relname OPERATOR(pg_catalog.=) ANY ('{cluster,map,moves}'::pg_catalog.text[])
                            AND c.relkind OPERATOR(pg_catalog.<>) 'r'))
                 ORDER BY 1""", (info[0],)):
            problems.append("relation %s.%s %s" % (FLEET_SCHEMA, relname, why))
        for table in ("cluster", "map", "moves"):
            r = rows(conn, """
                SELECT a.attname::pg_catalog.text FROM pg_catalog.pg_attribute AS a
                  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relname OPERATOR(pg_catalog.=) %s
                   AND c.relkind OPERATOR(pg_catalog.=) 'r'
                   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped ORDER BY a.attnum""",
                     (info[0], table))
            if r and table in ("cluster", "map"):
                want = {"cluster": ["name", "version", "changed_at"],
                        "map": ["cluster", "first_shard", "last_shard", "connstr"]}[table]
                if [x[0] for x in r] != want:
                    problems.append("table %s.%s has columns (%s), not (%s)"
                                    % (FLEET_SCHEMA, table, ", ".join(x[0] for x in r), ", ".join(want)))
    return problems


def plproxy_problems(conn, trusted):
    """What is wrong with PL/Proxy's configuration functions"""
    problems = []
    pinfo = schema_info(conn, "plproxy")
    if pinfo is not None:
        check_schema_trusted(conn, "plproxy", trusted, "PL/Proxy's configuration")
        for sig, owner, owner_name, comment in rows(conn, """
                SELECT pg_catalog.format('%%s(%%s)', p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid)),
                       p.proowner, pg_catalog.pg_get_userbyid(p.proowner)::pg_catalog.text,
                       pg_catalog.obj_description(p.oid, 'pg_proc')
                  FROM pg_catalog.pg_proc AS p
                 WHERE p.pronamespace OPERATOR(pg_catalog.=) %s""", (pinfo[0],)):
            if owner not in trusted:
                problems.append('function plproxy.%s is owned by role "%s"' % (sig, owner_name))
            elif sig.split("(")[0] in ("get_cluster_version", "get_cluster_partitions", "get_cluster_config"):
                if comment != MARKER:
                    problems.append("function plproxy.%s is PL/Proxy configuration of its own, "
                                    "not shardid-fleet's" % sig)
    return problems


#
# The gate and the run lock: a table per cluster in schema
# shardid_fleet_gate (common.GATE_SCHEMA), which only trusted roles may use
#

# how long a run waits for another run's lock on the cluster before it
# says so (the lock is only ever held for longer by another run)
RUN_LOCK_WAIT_MS = 2000


def gate_table(cluster):
    return sql.Identifier(GATE_SCHEMA, cluster)


def gate_objects(conn, trusted):
    """What makes schema shardid_fleet_gate unfit to hold the gates: a role
    other than a trusted one that may use it (it could then lock a gate by
    name, even without a privilege on the table: parse analysis of a
    PREPAREd statement locks the tables it names), any relation in it that
    is not a plain table owned by a trusted role, a privilege on one
    granted to another role, or a trigger, rule or policy on one."""
    info = schema_info(conn, GATE_SCHEMA)
    if info is None:
        return []
    check_schema_trusted(conn, GATE_SCHEMA, trusted, "shardid-fleet's gates")
    problems = []
    for grantee, name, privs in rows(conn, """
            SELECT a.grantee, CASE a.grantee WHEN 0 THEN 'PUBLIC'
                              ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END,
                   pg_catalog.string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type)
              FROM pg_catalog.pg_namespace AS n, pg_catalog.aclexplode(n.nspacl) AS a
             WHERE n.oid OPERATOR(pg_catalog.=) %s AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
             GROUP BY 1, 2 ORDER BY 2""", (info[0],)):
        if grantee not in trusted:
            problems.append("schema %s lets %s use it (%s): only shardid-fleet may lock the gates in it; "
                            "REVOKE ALL ON SCHEMA %s FROM %s;" % (GATE_SCHEMA, name, privs, GATE_SCHEMA, name))
    for relname, relkind, owner, owner_name, grants in rows(conn, """
            SELECT c.relname::pg_catalog.text, c.relkind::pg_catalog.text, c.relowner,
                   pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text,
                   ARRAY(SELECT DISTINCT a.grantee FROM pg_catalog.aclexplode(c.relacl) AS a
                          WHERE a.grantee OPERATOR(pg_catalog.<>) c.relowner)
              FROM pg_catalog.pg_class AS c
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s
               AND c.relkind OPERATOR(pg_catalog.<>) ALL ('{i,I}'::pg_catalog."char"[])
             ORDER BY 1""", (info[0],)):
        what = "relation %s.%s" % (GATE_SCHEMA, relname)
        if owner not in trusted:
            problems.append('%s is owned by role "%s"' % (what, owner_name))
        elif relkind != "r":
            problems.append("%s is not a plain table" % what)
        elif any(g not in trusted for g in grants):
            problems.append("%s grants privileges to roles other than its owner" % what)
    for what, name in rows(conn, """
            SELECT 'trigger', pg_catalog.format('%%s on %%s', t.tgname, t.tgrelid::pg_catalog.regclass)
              FROM pg_catalog.pg_trigger AS t JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND NOT t.tgisinternal
            UNION ALL
            SELECT 'rule', pg_catalog.format('%%s on %%s', r.rulename, r.ev_class::pg_catalog.regclass)
              FROM pg_catalog.pg_rewrite AS r JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) r.ev_class
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relkind OPERATOR(pg_catalog.=) 'r'
            UNION ALL
            SELECT 'policy', pg_catalog.format('%%s on %%s', p.polname, p.polrelid::pg_catalog.regclass)
              FROM pg_catalog.pg_policy AS p JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) p.polrelid
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s
             ORDER BY 1, 2""", (info[0], info[0], info[0])):
        problems.append("%s %s" % (what, name))
    return problems


def ensure_gate(conn, cluster, trusted):
    """The cluster's gate, inside the caller's transaction: schema
    shardid_fleet_gate and a table named after the cluster, created if
    missing, with no privilege for any role but their owner; checked
    again once made (default privileges could have granted some)."""
    limit = one(conn, "SELECT pg_catalog.current_setting('max_identifier_length')::pg_catalog.int4")
    if len(cluster.encode("utf-8")) > limit:
        raise FleetError('the name of PL/Proxy cluster "%s" is longer than %d bytes: shardid-fleet names the '
                         "cluster's gate on the router after it; nothing was changed" % (cluster, limit))
    made = False
    if schema_info(conn, GATE_SCHEMA) is None:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(GATE_SCHEMA)))
        conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(sql.Identifier(GATE_SCHEMA)))
        conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(sql.Identifier(GATE_SCHEMA), sql.Literal(
            "shardid-fleet: the router's gate and run lock of each PL/Proxy cluster; no other role may use it")))
        made = True
    if one(conn, "SELECT pg_catalog.to_regclass(%s) IS NULL", (gate_table(cluster).as_string(conn),)):
        conn.execute(sql.SQL("CREATE TABLE {} ()").format(gate_table(cluster)))
        conn.execute(sql.SQL("REVOKE ALL ON TABLE {} FROM PUBLIC").format(gate_table(cluster)))
        conn.execute(sql.SQL("COMMENT ON TABLE {} IS {}").format(gate_table(cluster), sql.Literal(
            'shardid-fleet: the gate of PL/Proxy cluster "%s" (locked by plproxy.get_cluster_version and '
            "shardid-fleet only)" % cluster)))
        made = True
    if made:
        problems = gate_objects(conn, trusted)
        if problems:
            raise FleetError('router "%s": the gate shardid-fleet made is not its own alone; nothing was '
                             "changed:\n  %s" % (conn.fleet_conninfo, "\n  ".join(problems))
                             + "\nHINT: Look at the default privileges (ALTER DEFAULT PRIVILEGES) of the "
                               "role shardid-fleet connects as.")


def take_run_lock(conn, cluster):
    """One shardid-fleet run at a time on a cluster: SHARE UPDATE EXCLUSIVE
    on its gate, inside the caller's transaction, until it ends.  Calls
    through the router pass the gate meanwhile (ROW SHARE does not conflict
    with it); another run waits RUN_LOCK_WAIT_MS, then says so."""
    conn.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)", ("%dms" % RUN_LOCK_WAIT_MS,))
    try:
        conn.execute(sql.SQL("LOCK TABLE ONLY {} IN SHARE UPDATE EXCLUSIVE MODE").format(gate_table(cluster)))
    except psycopg.errors.LockNotAvailable:
        raise FleetError('another shardid-fleet run is working on cluster "%s" of router "%s"'
                         % (cluster, conn.fleet_conninfo))
    conn.execute("SELECT pg_catalog.set_config('lock_timeout', '0', true)")


def gate_kind(conn):
    """What gate plproxy.get_cluster_version has: "table" (this version's),
    "advisory" (an older shardid-fleet's, which any role can hold) or None"""
    r = conn.execute("""
        SELECT p.prosecdef, p.prosrc FROM pg_catalog.pg_proc AS p
         WHERE p.oid OPERATOR(pg_catalog.=)
               pg_catalog.to_regprocedure('plproxy.get_cluster_version(pg_catalog.text)')""").fetchone()
    if r is None:
        return None
    if r[0] and ("LOCK TABLE ONLY %s." % GATE_SCHEMA) in r[1]:
        return "table"
    if "pg_advisory_lock_shared" in r[1]:
        return "advisory"
    return None


def check_router(conn):
    """At the start of every command that uses the router: refuse it unless
    every object of shardid-fleet there is a trusted role's, with no
    trigger, rule or row security attached.  Returns the trusted roles."""
    trusted = trusted_roles(conn)
    problems = router_objects(conn, trusted)
    if problems:
        raise FleetError('router "%s" has objects that shardid-fleet will not take as its own; '
                         "nothing was changed:\n  %s" % (conn.fleet_conninfo, "\n  ".join(problems)))
    return trusted


def router_current_map(conn, cluster):
    """The router's owner list for a cluster and its version, or (None, None)"""
    if schema_info(conn, FLEET_SCHEMA) is None or one(
            conn, "SELECT pg_catalog.to_regclass('shardid_fleet.map') IS NOT NULL") is not True:
        return None, None
    version = one(conn, "SELECT c.version FROM shardid_fleet.cluster AS c WHERE c.name OPERATOR(pg_catalog.=) %s",
                  (cluster,))
    if version is None:
        return None, None
    owner = [None] * NSHARDS
    for first, last, connstr in rows(conn, """
            SELECT m.first_shard, m.last_shard, m.connstr FROM shardid_fleet.map AS m
             WHERE m.cluster OPERATOR(pg_catalog.=) %s""", (cluster,)):
        for n in range(first, last + 1):
            owner[n] = connstr
    return owner, version


def router_setup_and_load(conn, cluster, ext_schema, owner_list, trusted, fm=None):
    """In one transaction: PL/Proxy, shardid, shardid_fleet and the
    configuration functions (created if missing, refused if someone else's),
    then the map (replaced and the version bumped if it changed).
    Returns (old_version, new_version)."""
    with conn.transaction():
        problems = router_objects(conn, trusted)
        if problems:
            raise FleetError('router "%s" has objects that shardid-fleet will not take as its own; '
                             "nothing was changed:\n  %s" % (conn.fleet_conninfo, "\n  ".join(problems)))
        ensure_gate(conn, cluster, trusted)
        take_run_lock(conn, cluster)
        if one(conn, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_foreign_server AS s "
                     "WHERE s.srvname OPERATOR(pg_catalog.=) %s", (cluster,)):
            raise FleetError('router "%s" has a foreign server named "%s": PL/Proxy would take its cluster '
                             "configuration from it instead of from shardid_fleet.map; nothing was changed"
                             % (conn.fleet_conninfo, cluster))
        ensure_extension(conn, "plproxy", ext_schema, trusted)
        ensure_extension(conn, "shardid", ext_schema, trusted)

        if schema_info(conn, FLEET_SCHEMA) is None:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(FLEET_SCHEMA)))
        for table, ddl in ROUTER_TABLES.items():
            if one(conn, "SELECT pg_catalog.to_regclass(%s) IS NULL", ("shardid_fleet." + table,)):
                conn.execute(ddl)
                if table == "moves":
                    conn.execute(ROUTER_INDEX)
        conn.execute(sql.SQL("""COMMENT ON TABLE shardid_fleet.map IS
            'logical shard ranges -> data servers, loaded by shardid-fleet from its map file'"""))
        conn.execute(sql.SQL("""COMMENT ON TABLE shardid_fleet.moves IS
            'shard moves of shardid-fleet, each step recorded before it is taken'"""))
        # the bash tool's loader, no longer used
        conn.execute("DROP FUNCTION IF EXISTS shardid_fleet.load_map(pg_catalog.text, pg_catalog.int4[], "
                     "pg_catalog.int4[], pg_catalog.text[])")

        if schema_info(conn, "plproxy") is None:
            conn.execute("CREATE SCHEMA plproxy")
        for sig, ddl in PLPROXY_FUNCS.items():
            exists = one(conn, "SELECT pg_catalog.to_regprocedure(%s) IS NOT NULL", ("plproxy." + sig,))
            # present ones were checked above: trusted and marked as ours
            conn.execute(ddl.format(sql.SQL("CREATE OR REPLACE" if exists else "CREATE"),
                                    gate=sql.SQL(GATE_SCHEMA)))
            conn.execute(sql.SQL("COMMENT ON FUNCTION {} IS {}").format(
                sql.SQL("plproxy." + sig), sql.Literal(MARKER)))

        move = unfinished_move(conn, cluster)
        if move is not None and fm is not None:
            raise FleetError("logical shard %d of cluster \"%s\" is being moved (step %s, since %s); "
                             "finish it first with shardid-fleet move --resume or --abort; nothing was changed"
                             % (move[1], cluster, move[2], move[5]))
        return load_map_into_router(conn, cluster, owner_list)


def load_map_into_router(conn, cluster, owner_list):
    """Replace the cluster's map with owner_list (inside the caller's
    transaction); bump the version if it changed."""
    conn.execute("INSERT INTO shardid_fleet.cluster (name, version) VALUES (%s, 0) "
                 "ON CONFLICT (name) DO NOTHING", (cluster,))
    old = one(conn, "SELECT c.version FROM shardid_fleet.cluster AS c "
                    "WHERE c.name OPERATOR(pg_catalog.=) %s FOR UPDATE", (cluster,))
    want = FleetMap(None, owner_list, set(), []).range_rows()
    have = rows(conn, "SELECT m.first_shard, m.last_shard, m.connstr FROM shardid_fleet.map AS m "
                      "WHERE m.cluster OPERATOR(pg_catalog.=) %s ORDER BY m.first_shard", (cluster,))
    if [tuple(r) for r in have] == want:
        return old, old
    conn.execute("DELETE FROM shardid_fleet.map AS m WHERE m.cluster OPERATOR(pg_catalog.=) %s", (cluster,))
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO shardid_fleet.map (cluster, first_shard, last_shard, connstr) "
                        "VALUES (%s, %s, %s, %s)", [(cluster, f, l, c) for f, l, c in want])
    conn.execute("UPDATE shardid_fleet.cluster AS c SET version = c.version OPERATOR(pg_catalog.+) 1, "
                 "changed_at = pg_catalog.now() WHERE c.name OPERATOR(pg_catalog.=) %s", (cluster,))
    return old, old + 1


def check_reroutes(old_owner, fm):
    """A changed map may route a provisioned shard to another server only
    when its data is there: never away from the server that holds it to one
    that does not (a stale map file)."""
    changed = [n for n in sorted(fm.provisioned) if old_owner[n] is not None and old_owner[n] != fm.owner[n]]
    if not changed:
        return
    conns = {}

    def live_on(cs):
        if cs not in conns:
            try:
                c = connect(cs)
                conns[cs] = live_shards(c)
                c.close()
            except FleetError:
                conns[cs] = None
        return conns[cs]

    for n in changed:
        lo, ln = live_on(old_owner[n]), live_on(fm.owner[n])
        old, new = show_conn(old_owner[n]), show_conn(fm.owner[n])
        if ln is None:
            raise FleetError('the map file routes logical shard %d to "%s", which cannot be reached to check '
                             "that it holds the shard; nothing was changed" % (n, new))
        new_has = n in ln and not is_incoming(ln[n])
        old_has = lo is not None and n in lo and not is_incoming(lo[n])
        if old_has and not new_has:
            raise FleetError('the map file routes logical shard %d to "%s", which does not hold it, away from '
                             '"%s", which does; the map file is out of date, nothing was changed'
                             % (n, new, old)
                             + "\nHINT: Shards move with shardid-fleet move; see shardid-fleet status.")
        if old_has and new_has:
            raise FleetError('logical shard %d is on both "%s" and "%s"; nothing was changed' % (n, old, new))
        if lo is None and not new_has:
            raise FleetError('the map file routes logical shard %d from "%s", which cannot be reached, to "%s", '
                             "which does not hold it; nothing was changed" % (n, old, new))
        if lo is None:
            warn('logical shard %d is routed to "%s" (which holds it) from "%s", which cannot be reached'
                 % (n, new, old))


def cmd_router(a):
    api = read_file(a.api, "API") if a.api else None
    fm = load_map(a.mapfile)
    MapLock(a.mapfile)
    conn = connect(a.router_conn, "router")
    trusted = check_router(conn)
    old_owner, _ = router_current_map(conn, a.cluster)
    move = unfinished_move(conn, a.cluster)
    if move is not None:
        raise FleetError("logical shard %d of cluster \"%s\" is being moved (step %s, since %s); "
                         "finish it first with shardid-fleet move --resume or --abort; nothing was changed"
                         % (move[1], a.cluster, move[2], move[5]))
    if old_owner is not None:
        check_reroutes(old_owner, fm)
    old, new = router_setup_and_load(conn, a.cluster, a.extension_schema, fm.owner, trusted, fm)
    if old == new:
        out("router: map of cluster %s unchanged (version %d)" % (a.cluster, new))
    else:
        out("router: map of cluster %s loaded, version %d -> %d" % (a.cluster, old, new))
    if api is not None:
        ext_schema = extension_info(conn, "shardid")[0]
        run_sql_file(conn, api, [ext_schema], trusted, 'API file "%s"' % a.api)
        out("router: api %s applied" % os.path.basename(a.api))
    conn.close()
    return 0


#
# status
#

def cmd_status(a):
    fm = load_map(a.mapfile)
    r = connect(a.router_conn, "router")
    check_router(r)
    owner, version = router_current_map(r, a.cluster)
    if owner is None:
        raise FleetError('router "%s" has no cluster "%s"; run shardid-fleet router first'
                         % (show_conn(a.router_conn), a.cluster))
    problems = status_router(r, a, fm, owner, version)
    servers = []
    for cs in owner + fm.owner:
        if cs not in servers:
            servers.append(cs)
    for cs in servers:
        problems += status_server(cs, {n for n in fm.provisioned if owner[n] == cs})
    r.close()
    out("status: %s" % ("consistent" if problems == 0 else plural(problems, "problem")))
    return 0 if problems == 0 else 1


def status_router(r, a, fm, owner, version):
    """The router's part of status: its map against the file, its gate,
    the move in flight and the last ones.  Returns the problems found."""
    problems = 0
    changed_at = one(r, "SELECT c.changed_at FROM shardid_fleet.cluster AS c WHERE c.name OPERATOR(pg_catalog.=) %s",
                     (a.cluster,))
    out("cluster %s: router map version %d (changed %s)" % (a.cluster, version, changed_at))
    if gate_kind(r) != "table" or one(r, "SELECT pg_catalog.to_regclass(%s) IS NULL",
                                       (gate_table(a.cluster).as_string(r),)):
        problems += 1
        out("  the router's gate is not this shardid-fleet's (set up by an older one%s): run shardid-fleet router"
            % ("; its gate is an advisory lock, which any role can hold" if gate_kind(r) == "advisory" else ""))
    differ = [n for n in range(NSHARDS) if owner[n] != fm.owner[n]]
    if differ:
        problems += 1
        out("  map file %s differs from the router for logical shards %s:" % (a.mapfile, ranges(differ)))
        for n in differ[:10]:
            out('    %d: file "%s", router "%s"' % (n, show_conn(fm.owner[n]), show_conn(owner[n])))
    else:
        out("  map file %s agrees with the router" % a.mapfile)
    move = unfinished_move(r, a.cluster)
    if move is not None:
        problems += 1
        out("  move in flight: logical shard %d from %s to %s, step %s (started %s, last step %s)"
            % (move[1], show_conn(move[3]), show_conn(move[4]), move[2], move[5], move[6]))
        if move[7]:
            out("    last error: %s" % move[7])
        out("    finish it with: shardid-fleet move --resume (or undo it with --abort, before step switched)")
    if has_moves_table(r):
        for mid, shard, state, src, dst, fin, paused in finished_moves(r, a.cluster):
            out("  move %d: logical shard %d %s -> %s: %s %s%s"
                % (mid, shard, show_conn(src), show_conn(dst), state, fin,
                   ", writes paused %d ms" % paused if paused is not None else ""))
    return problems


def status_server(cs, expect):
    """One server's part of status: the shards it holds against those the
    router sends it (expect), and what moves left there.  Returns the
    problems found."""
    try:
        c = connect(cs)
    except FleetError as e:
        out("  server %s: unreachable: %s" % (show_conn(cs), e))
        return 1
    live = live_shards(c)
    wal_level = one(c, "SELECT pg_catalog.current_setting('wal_level')")
    retired = [x[0] for x in rows(c, """
        SELECT n.nspname::pg_catalog.text FROM pg_catalog.pg_namespace AS n
         WHERE n.nspname OPERATOR(pg_catalog.~) '^shard_[0-9]{4}_retired_' ORDER BY 1""")]
    pubs = [x[0] for x in rows(c, "SELECT p.pubname::pg_catalog.text FROM pg_catalog.pg_publication AS p "
                                  "WHERE p.pubname OPERATOR(pg_catalog.~) '^shardid_[0-9]{4}_' ORDER BY 1")]
    subs = [x[0] for x in rows(c, "SELECT s.subname::pg_catalog.text FROM pg_catalog.pg_subscription AS s "
                                  "WHERE s.subname OPERATOR(pg_catalog.~) '^shardid_[0-9]{4}_' ORDER BY 1")]
    slots = [x[0] for x in rows(c, "SELECT s.slot_name::pg_catalog.text FROM pg_catalog.pg_replication_slots AS s "
                                   "WHERE s.slot_name OPERATOR(pg_catalog.~) '^shardid_[0-9]{4}_' ORDER BY 1")]
    c.close()
    problems = 0
    missing = sorted(expect - set(live))
    extra = sorted(n for n in live if n not in expect and not is_incoming(live[n]))
    incoming = sorted(n for n in live if is_incoming(live[n]))
    out("  server %s: %d logical shards live%s, wal_level %s"
        % (show_conn(cs), len(set(live) - set(incoming)),
           " (%s)" % ranges(sorted(set(live) - set(incoming))) if live else "", wal_level))
    if missing:
        problems += 1
        out("    missing here: logical shards %s (the router sends them here)" % ranges(missing))
    if extra:
        problems += 1
        out("    here but routed elsewhere: logical shards %s" % ranges(extra))
    if incoming:
        out("    incoming copies of unfinished moves: logical shards %s" % ranges(incoming))
    if wal_level != "logical":
        problems += 1
        out("    wal_level is %s: shards cannot move from here (needs wal_level = logical)" % wal_level)
    for what, names in (("retired schemas", retired), ("publications", pubs),
                        ("subscriptions", subs), ("replication slots", slots)):
        if names:
            out("    %s: %s" % (what, ", ".join(names)))
    return problems
