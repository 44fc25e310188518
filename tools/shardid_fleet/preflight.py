"""The checks before a move: everything that can be checked before
anything is changed (preflight).  Each check_* reads what it needs and
refuses with a FleetError; the refusals that decide from what was read
alone are tested without a server (test/fleet_unit)."""

from .common import FleetError, NSHARDS, out, ranges, same_server, shard_schema, show_conn
from .conn import (
    check_schema_trusted, connect, ensure_extension, extension_info, one, pg_program, rows, shard_tables,
    trusted_roles)
from .fleetmap import probe_map_writable
from .router import router_current_map


# The functions the new server's replication workers may run for a shard's
# tables: of their constraints, column defaults and generated columns,
# indexes (expressions, predicates, operator classes), triggers and
# partition keys, directly or through an operator, and of the types of
# their columns (domain constraints, input and output functions), with the
# object that uses each.
CODE_OF_TABLES = """
    WITH RECURSIVE
    rel AS (
        SELECT c.oid FROM pg_catalog.pg_class AS c
         WHERE c.relnamespace OPERATOR(pg_catalog.=) %(nsp)s
           AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])),
    obj (classid, objid) AS (
        SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, r.oid FROM rel AS r
        UNION ALL
        SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, x.indexrelid
          FROM pg_catalog.pg_index AS x JOIN rel AS r ON r.oid OPERATOR(pg_catalog.=) x.indrelid
        UNION ALL
        SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid
          FROM pg_catalog.pg_constraint AS k JOIN rel AS r ON r.oid OPERATOR(pg_catalog.=) k.conrelid
        UNION ALL
        SELECT 'pg_catalog.pg_attrdef'::pg_catalog.regclass, d.oid
          FROM pg_catalog.pg_attrdef AS d JOIN rel AS r ON r.oid OPERATOR(pg_catalog.=) d.adrelid
        UNION ALL
        SELECT 'pg_catalog.pg_trigger'::pg_catalog.regclass, t.oid
          FROM pg_catalog.pg_trigger AS t JOIN rel AS r ON r.oid OPERATOR(pg_catalog.=) t.tgrelid),
    used (classid, objid, what) AS (
        SELECT o.classid, o.objid, pg_catalog.pg_describe_object(o.classid, o.objid, 0) FROM obj AS o),
    typ0 (oid, what) AS (
        SELECT a.atttypid, pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass,
                                                          a.attrelid, a.attnum::pg_catalog.int4)
          FROM pg_catalog.pg_attribute AS a JOIN rel AS r ON r.oid OPERATOR(pg_catalog.=) a.attrelid
         WHERE a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
        UNION ALL
        SELECT d.refobjid, pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) FROM used AS u
          JOIN pg_catalog.pg_depend AS d ON d.classid OPERATOR(pg_catalog.=) u.classid
                                        AND d.objid OPERATOR(pg_catalog.=) u.objid
         WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass),
    -- and the types those are made of: base types of domains, elements of
    -- arrays, subtypes of ranges, columns of composite types
    typ (oid, what) AS (
        SELECT t.oid, t.what FROM typ0 AS t
        UNION
        SELECT n.oid, y.what
          FROM typ AS y JOIN pg_catalog.pg_type AS t ON t.oid OPERATOR(pg_catalog.=) y.oid
          LEFT JOIN pg_catalog.pg_range AS g ON g.rngtypid OPERATOR(pg_catalog.=) t.oid
          CROSS JOIN LATERAL (
              VALUES (t.typbasetype), (t.typelem), (g.rngsubtype)
              UNION ALL
              SELECT a.atttypid FROM pg_catalog.pg_attribute AS a
               WHERE a.attrelid OPERATOR(pg_catalog.=) t.typrelid AND t.typrelid OPERATOR(pg_catalog.<>) 0
                 AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped) AS n (oid)
         WHERE n.oid IS NOT NULL AND n.oid OPERATOR(pg_catalog.<>) 0),
    code (classid, objid, what) AS (
        SELECT u.classid, u.objid, u.what FROM used AS u
        UNION ALL
        SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid,
               pg_catalog.pg_describe_object('pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid, 0)
                 OPERATOR(pg_catalog.||) ', for ' OPERATOR(pg_catalog.||) y.what
          FROM typ AS y JOIN pg_catalog.pg_constraint AS k ON k.contypid OPERATOR(pg_catalog.=) y.oid),
    fn (oid, what) AS (
        SELECT d.refobjid, c.what FROM code AS c
          JOIN pg_catalog.pg_depend AS d ON d.classid OPERATOR(pg_catalog.=) c.classid
                                        AND d.objid OPERATOR(pg_catalog.=) c.objid
         WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
        UNION ALL
        SELECT o.oprcode::pg_catalog.oid, c.what
                 OPERATOR(pg_catalog.||) ', through operator ' OPERATOR(pg_catalog.||) o.oid::pg_catalog.regoperator::pg_catalog.text
          FROM code AS c
          JOIN pg_catalog.pg_depend AS d ON d.classid OPERATOR(pg_catalog.=) c.classid
                                        AND d.objid OPERATOR(pg_catalog.=) c.objid
          JOIN pg_catalog.pg_operator AS o ON o.oid OPERATOR(pg_catalog.=) d.refobjid
         WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_operator'::pg_catalog.regclass
        UNION ALL
        SELECT f.oid, c.what
                 OPERATOR(pg_catalog.||) ', through operator class ' OPERATOR(pg_catalog.||) oc.opcname::pg_catalog.text
          FROM code AS c
          JOIN pg_catalog.pg_depend AS d ON d.classid OPERATOR(pg_catalog.=) c.classid
                                        AND d.objid OPERATOR(pg_catalog.=) c.objid
          JOIN pg_catalog.pg_opclass AS oc ON oc.oid OPERATOR(pg_catalog.=) d.refobjid
          CROSS JOIN LATERAL (
              SELECT p.amproc::pg_catalog.oid FROM pg_catalog.pg_amproc AS p
               WHERE p.amprocfamily OPERATOR(pg_catalog.=) oc.opcfamily
              UNION ALL
              SELECT o.oprcode::pg_catalog.oid FROM pg_catalog.pg_amop AS m
                JOIN pg_catalog.pg_operator AS o ON o.oid OPERATOR(pg_catalog.=) m.amopopr
               WHERE m.amopfamily OPERATOR(pg_catalog.=) oc.opcfamily) AS f (oid)
         WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_opclass'::pg_catalog.regclass
        UNION ALL
        SELECT f.oid, y.what
                 OPERATOR(pg_catalog.||) ', through type ' OPERATOR(pg_catalog.||) pg_catalog.format_type(t.oid, NULL)
          FROM typ AS y JOIN pg_catalog.pg_type AS t ON t.oid OPERATOR(pg_catalog.=) y.oid
          LEFT JOIN pg_catalog.pg_range AS g ON g.rngtypid OPERATOR(pg_catalog.=) t.oid
          CROSS JOIN LATERAL (VALUES (t.typinput::pg_catalog.oid), (t.typoutput::pg_catalog.oid),
                                     (t.typreceive::pg_catalog.oid), (t.typsend::pg_catalog.oid),
                                     (t.typmodin::pg_catalog.oid), (t.typmodout::pg_catalog.oid),
                                     (g.rngcanonical::pg_catalog.oid), (g.rngsubdiff::pg_catalog.oid)) AS f (oid)
         WHERE f.oid OPERATOR(pg_catalog.<>) 0)
    SELECT pg_catalog.format('%%I.%%I(%%s)', n.nspname, p.proname, pg_catalog.oidvectortypes(p.proargtypes)),
           pg_catalog.pg_get_userbyid(p.proowner)::pg_catalog.text,
           p.proowner OPERATOR(pg_catalog.=) ANY (%(trusted)s::pg_catalog.oid[]),
           p.pronamespace OPERATOR(pg_catalog.=) %(nsp)s,
           pg_catalog.string_agg(DISTINCT f.what, '; ')
      FROM fn AS f
      JOIN pg_catalog.pg_proc AS p ON p.oid OPERATOR(pg_catalog.=) f.oid
      JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
     GROUP BY p.oid, n.nspname, p.proname, p.proowner, p.pronamespace
     ORDER BY 1"""


def check_code_of_tables(S, T, soid, nsp):
    """On PostgreSQL 15 the new server's replication workers run as the
    subscription's owner, a superuser: refuse a shard whose tables carry a
    function of a role other than a superuser or the connected one.  Roles
    named with --owner are not trusted here: their functions are exactly
    those that would run as a superuser.  A function outside the shard's
    schema is checked on the new server too, where the copy will call it."""
    found = rows(S, CODE_OF_TABLES, {"nsp": soid, "trusted": list(trusted_roles(S))})
    bad = [(sig, owner, where) for sig, owner, ok, inside, where in found if not ok]
    outside = [sig for sig, owner, ok, inside, where in found if ok and not inside]
    if outside:
        ttrusted = list(trusted_roles(T))
        for sig, owner in rows(T, """
                SELECT s.sig, pg_catalog.pg_get_userbyid(p.proowner)::pg_catalog.text
                  FROM pg_catalog.unnest(%s::pg_catalog.text[]) AS s (sig)
                  JOIN pg_catalog.pg_proc AS p ON p.oid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure(s.sig)
                 WHERE p.proowner OPERATOR(pg_catalog.<>) ALL (%s::pg_catalog.oid[])
                 ORDER BY 1""", (outside, ttrusted)):
            where = [w for s, o, ok, inside, w in found if s == sig][0]
            bad.append((sig, owner + '" on the new server', where))
    if bad:
        raise FleetError("the new server runs PostgreSQL 15, whose replication workers run as a superuser, and "
                         "the tables of %s use %s that shardid-fleet does not trust; nothing was changed:\n  %s"
                         % (nsp, "a function" if len(bad) == 1 else "functions",
                            "\n  ".join('function %s, owned by role "%s", used by %s' % b for b in bad))
                         + "\nHINT: Only functions owned by a superuser or the connected role may run there; "
                           "--owner does not extend to them.  Move the shard to PostgreSQL 16 or later, where "
                           "the workers act as each table's owner.")


def differing_shards(router_owner, file_owner, moving=None):
    """The logical shards the router's map and the map file put on
    different servers.  moving: the recorded MoveState of an unfinished
    move, whose shard the file may still put on either of its servers
    (the file is behind the router by this move, no more)."""
    return [n for n in range(NSHARDS) if router_owner[n] != file_owner[n]
            and not (moving is not None and n == moving.shard
                     and (same_server(file_owner[n], moving.source) or same_server(file_owner[n], moving.target)))]


def check_server_versions(old_version, new_version):
    for version, what in ((old_version, "old"), (new_version, "new")):
        if version < 150000:
            raise FleetError("the %s server runs PostgreSQL %s; moves need 15 or later" % (what, version))


def check_replication_settings(source, wal_level, free_slots, workers):
    """The old server's wal_level and free replication slots, the new
    server's logical replication workers"""
    if wal_level != "logical":
        raise FleetError('wal_level is %s on the old server "%s"; moving a shard needs wal_level = logical'
                         % (wal_level, show_conn(source)))
    if free_slots < 2:
        raise FleetError("the old server has %d free replication slots; a move needs 2 "
                         "(max_replication_slots)" % free_slots)
    if workers < 2:
        raise FleetError("the new server allows %d logical replication workers; a move needs 2 "
                         "(max_logical_replication_workers)" % workers)


def check_servers(S, T, source):
    check_server_versions(S.info.server_version, T.info.server_version)
    wal_level = one(S, "SELECT pg_catalog.current_setting('wal_level')")
    free = one(S, "SELECT pg_catalog.current_setting('max_replication_slots')::pg_catalog.int4 "
                  "OPERATOR(pg_catalog.-) (SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_replication_slots)")
    workers = one(T, "SELECT pg_catalog.current_setting('max_logical_replication_workers')::pg_catalog.int4")
    check_replication_settings(source, wal_level, free, workers)


# Each relation of a shard's schema on the old server: its owner, whether
# the tool trusts the owner, and why it cannot move, if it cannot
RELATIONS = """
    SELECT c.relname::pg_catalog.text, c.relkind::pg_catalog.text,
           pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text,
           c.relowner OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.oid[]),
           CASE
             WHEN c.relkind OPERATOR(pg_catalog.<>) ALL ('{r,p,S,i,I}'::pg_catalog."char"[])
               THEN 'is not a table, sequence or index'
             WHEN c.relpersistence OPERATOR(pg_catalog.<>) 'p' THEN 'is not a logged table'
             WHEN c.relkind OPERATOR(pg_catalog.=) 'r' AND c.relreplident OPERATOR(pg_catalog.=) 'n'
               THEN 'has no replica identity'
             WHEN c.relkind OPERATOR(pg_catalog.=) 'r' AND c.relreplident OPERATOR(pg_catalog.=) 'd'
                  AND NOT EXISTS (SELECT FROM pg_catalog.pg_index AS x
                                   WHERE x.indrelid OPERATOR(pg_catalog.=) c.oid AND x.indisprimary)
               THEN 'has no primary key or replica identity'
             WHEN EXISTS (SELECT FROM pg_catalog.pg_trigger AS t
                           WHERE t.tgrelid OPERATOR(pg_catalog.=) c.oid
                             AND t.tgenabled OPERATOR(pg_catalog.=) ANY ('{A,R}'::pg_catalog."char"[]))
               THEN 'has a trigger that fires on replicated rows (ENABLE ALWAYS or REPLICA)'
             WHEN c.relispartition AND EXISTS (
                    SELECT FROM pg_catalog.pg_partition_ancestors(c.oid) AS p(relid)
                      JOIN pg_catalog.pg_class AS pc ON pc.oid OPERATOR(pg_catalog.=) p.relid
                     WHERE pc.relnamespace OPERATOR(pg_catalog.<>) c.relnamespace)
               THEN 'is a partition of a table in another schema'
           END
      FROM pg_catalog.pg_class AS c
     WHERE c.relnamespace OPERATOR(pg_catalog.=) %s ORDER BY 1"""


def check_relation(nsp, relname, owner_name, is_trusted, why):
    """One relation of the shard's schema (a row of RELATIONS)"""
    if not is_trusted:
        raise FleetError('relation %s.%s on the old server is owned by role "%s"; the new server would '
                         "apply its rows as a superuser; nothing was changed" % (nsp, relname, owner_name)
                         + "\nHINT: Name the role with --owner if you trust it.")
    if why:
        raise FleetError("relation %s.%s on the old server %s; nothing was changed" % (nsp, relname, why))


def check_relations(S, nsp, soid, trusted, shard):
    """What the new server's apply worker will run (as a superuser on
    PostgreSQL 15) must come from trusted roles, every table must
    replicate updates and deletes, and no partition may be elsewhere"""
    for relname, relkind, owner_name, is_trusted, why in rows(S, RELATIONS, (list(trusted), soid)):
        check_relation(nsp, relname, owner_name, is_trusted, why)
    for (partname,) in rows(S, """
            SELECT p.relid::pg_catalog.regclass::pg_catalog.text
              FROM pg_catalog.pg_class AS c,
                   pg_catalog.pg_partition_tree(c.oid) AS p
              JOIN pg_catalog.pg_class AS pc ON pc.oid OPERATOR(pg_catalog.=) p.relid
             WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND c.relkind OPERATOR(pg_catalog.=) 'p'
               AND NOT c.relispartition
               AND pc.relnamespace OPERATOR(pg_catalog.<>) %s""", (soid, soid)):
        raise FleetError("partition %s of logical shard %d is outside schema %s; nothing was changed"
                         % (partname, shard, nsp))


def check_extension(S, T, source, owner):
    """shardid on both servers, in the same schema (the copied defaults
    name it); created on the new server where missing"""
    ext = extension_info(S, "shardid")
    if ext is None:
        raise FleetError('extension shardid is missing on the old server "%s"' % show_conn(source))
    ttrusted = trusted_roles(T, [owner] if owner else [])
    text = extension_info(T, "shardid")
    if text is None:
        ensure_extension(T, "shardid", ext[0], ttrusted)
        out("  extension shardid created on the new server, in schema %s" % ext[0])
    elif text[0] != ext[0]:
        raise FleetError("extension shardid is in schema %s on the old server but in %s on the new one; "
                         "the copied defaults name it" % (ext[0], text[0]))
    else:
        check_schema_trusted(T, text[0], ttrusted, "of extension shardid")


def check_roles(S, T, nsp, soid):
    """Every role that owns or has a privilege on the shard's objects
    exists on the new server, and the subscription's owner may act as the
    tables' owners there (PostgreSQL 16 and later)"""
    needed = [x[0] for x in rows(S, """
        SELECT pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text FROM pg_catalog.pg_class AS c
         WHERE c.relnamespace OPERATOR(pg_catalog.=) %s
        UNION
        SELECT pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text
          FROM pg_catalog.pg_class AS c, pg_catalog.aclexplode(c.relacl) AS a
         WHERE c.relnamespace OPERATOR(pg_catalog.=) %s AND a.grantee OPERATOR(pg_catalog.<>) 0
        UNION
        SELECT pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text
          FROM pg_catalog.pg_namespace AS n, pg_catalog.aclexplode(n.nspacl) AS a
         WHERE n.oid OPERATOR(pg_catalog.=) %s AND a.grantee OPERATOR(pg_catalog.<>) 0
        UNION
        SELECT pg_catalog.pg_get_userbyid(n.nspowner)::pg_catalog.text
          FROM pg_catalog.pg_namespace AS n WHERE n.oid OPERATOR(pg_catalog.=) %s""",
                                  (soid, soid, soid, soid))]
    have = {x[0] for x in rows(T, "SELECT r.rolname::pg_catalog.text FROM pg_catalog.pg_roles AS r")}
    check_roles_exist(nsp, needed, have)
    if T.info.server_version >= 160000:
        # the subscription's workers act as each table's owner: its
        # owner (the connected role) must be able to SET ROLE to them
        owners = [x[0] for x in rows(S, "SELECT DISTINCT pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text "
                                        "FROM pg_catalog.pg_class AS c WHERE c.relnamespace OPERATOR(pg_catalog.=) %s "
                                        "ORDER BY 1", (soid,))]
        cannot = [x[0] for x in rows(T, "SELECT r.rolname::pg_catalog.text FROM pg_catalog.pg_roles AS r "
                                        "WHERE r.rolname OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.text[]) "
                                        "AND NOT pg_catalog.pg_has_role(r.oid, 'SET') ORDER BY 1", (owners,))]
        if cannot:
            raise FleetError("the connected role on the new server cannot SET ROLE to %s, which owns tables of "
                             "%s; the subscription's workers act as each table's owner; nothing was changed"
                             % (", ".join('"%s"' % r for r in cannot), nsp))


def check_roles_exist(nsp, needed, have):
    lack = [r for r in needed if r not in have]
    if lack:
        raise FleetError("the new server has no role %s, which owns objects of %s"
                         % (", ".join('"%s"' % r for r in lack), nsp))


def check_clock_difference(old_s, new_s, max_clock_wait):
    """The clocks (seconds since the epoch): a new server far behind would
    keep writes paused"""
    if old_s - new_s > max_clock_wait:
        raise FleetError("the clock of the new server is %.1f s behind the old one's, more than --max-clock-wait "
                         "(%g s); nothing was changed" % (old_s - new_s, max_clock_wait))


def check_router_map(a, fm, R):
    owner, version = router_current_map(R, a.cluster)
    if owner is None:
        raise FleetError('router "%s" has no cluster "%s"; run shardid-fleet router first'
                         % (show_conn(a.router_conn), a.cluster))
    differ = differing_shards(owner, fm.owner)
    if differ:
        raise FleetError("the map file and the router's map disagree on logical shards %s; nothing was changed"
                         % ranges(differ) + "\nHINT: See shardid-fleet status.")


def preflight(a, fm, R, shard, source, target):
    """Everything that can be checked before anything is changed; returns
    the OID of the shard's schema on the old server."""
    check_router_map(a, fm, R)
    probe_map_writable(a.mapfile)
    pg_program("pg_dump")
    pg_program("psql")
    nsp = shard_schema(shard)
    S = connect(source, "the old server")
    T = connect(target, "the new server")
    try:
        check_servers(S, T, source)
        trusted = trusted_roles(S, [a.owner] if a.owner else [])
        soid = check_schema_trusted(S, nsp, trusted, "logical shard %d" % shard)
        if soid is None or not shard_tables(S, nsp):
            raise FleetError('schema %s with tables does not exist on the old server "%s"'
                             % (nsp, show_conn(source)))
        check_relations(S, nsp, soid, trusted, shard)
        if T.info.server_version < 160000:
            check_code_of_tables(S, T, soid, nsp)
        check_extension(S, T, source, a.owner)
        if one(T, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_namespace AS n "
                  "WHERE n.nspname OPERATOR(pg_catalog.=) %s", (nsp,)):
            raise FleetError('schema %s already exists on the new server "%s"; drop it there first'
                             % (nsp, show_conn(target)))
        check_roles(S, T, nsp, soid)
        t1 = one(S, "SELECT EXTRACT(epoch FROM pg_catalog.clock_timestamp())::pg_catalog.float8")
        t2 = one(T, "SELECT EXTRACT(epoch FROM pg_catalog.clock_timestamp())::pg_catalog.float8")
        check_clock_difference(t1, t2, a.max_clock_wait)
        return soid
    finally:
        S.close()
        T.close()
