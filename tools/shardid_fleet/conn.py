"""Connections, programs and trust: whose objects the tool takes as they are."""

import ctypes
import os
import shutil
import signal
import re
import subprocess
import tempfile

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from .common import (
    FENCE_TRIGGER_FUNCTION, FleetError, MAX_SHARD, PROG, SECRET_KEYS, has_secret, mask, pgerr, render_conn,
    show_conn, warn)


#
# Connections
#

def _parse_error(conninfo, e):
    """libpq's message about a connection string it cannot parse, without
    the pieces of it that libpq quotes when the string holds a secret (they
    may be words of a password)"""
    text = str(e).strip()
    if has_secret(conninfo):
        text = re.sub(r'"[^"]*"', lambda m: m.group(0) if m.group(0) == '"="' else '"..."', text)
    return mask(text)


def connect(conninfo, what="server"):
    """An autocommit session with search_path = pg_catalog, pg_temp."""
    try:
        params = conninfo_to_dict(conninfo)
    except psycopg.Error as e:
        raise FleetError('connection string of %s "%s" is not valid: %s'
                         % (what, show_conn(conninfo), _parse_error(conninfo, e)))
    kwargs = {}
    if "connect_timeout" not in params:
        kwargs["connect_timeout"] = 10
    if "application_name" not in params:
        kwargs["application_name"] = PROG
    try:
        conn = psycopg.connect(conninfo, autocommit=True, **kwargs)
    except psycopg.Error as e:
        raise FleetError('cannot connect to %s "%s": %s' % (what, show_conn(conninfo), str(e).strip()))
    conn.add_notice_handler(lambda diag: None)
    conn.fleet_conninfo = show_conn(conninfo)     # for messages
    conn.fleet_dsn = conninfo                      # to connect again
    try:
        _session_settings(conn, what)
    except BaseException:
        conn.close()
        raise
    return conn


# What the tool's sessions rely on.  A database's owner can set any of these
# for every session (ALTER DATABASE ... SET), and a role's for its own
# (ALTER ROLE ... SET); the tool sets them back right after connecting.
# (RESET and SET ... TO DEFAULT would go back to those settings.)
SESSION_SETTINGS = [
    ("search_path", "pg_catalog, pg_temp"),
    ("default_transaction_read_only", "off"),
    ("default_transaction_isolation", "read committed"),
    ("default_transaction_deferrable", "off"),
    ("statement_timeout", "0"),
    ("lock_timeout", "0"),
    ("idle_in_transaction_session_timeout", "0"),
    ("idle_session_timeout", "0"),
    ("check_function_bodies", "on"),
    ("row_security", "off"),
    ("standard_conforming_strings", "on"),
    ("transform_null_equals", "off"),
    ("quote_all_identifiers", "off"),
    ("default_tablespace", ""),
    ("temp_tablespaces", ""),
    ("default_table_access_method", "heap"),
]


def _session_settings(conn, what):
    """Refuse a session that runs as another role than the one it logged in
    as, and set what the tool relies on."""
    session_user, current_user, srr = conn.execute(
        "SELECT SESSION_USER::pg_catalog.text, CURRENT_USER::pg_catalog.text, "
        "pg_catalog.current_setting('session_replication_role')").fetchone()
    where = conn.fleet_conninfo
    if session_user != conn.info.user:
        raise FleetError('refusing the session on %s "%s": it runs as role "%s", not as "%s", '
                         "the role it connected as" % (what, where, session_user, conn.info.user))
    if current_user != session_user:
        # A setting of role (ALTER DATABASE ... SET role, or ALTER ROLE ...
        # IN DATABASE ... SET role) would have every statement of the tool
        # run as that role: what it creates would be that role's, and the
        # tool would trust that role's objects as its own.  RESET ROLE would
        # go back to the setting; the session is refused instead.
        raise FleetError('refusing the session on %s "%s": it runs as role "%s", not as "%s", '
                         "the role it logged in as (a setting of parameter role for the database "
                         "or the role); nothing was done there" % (what, where, current_user, session_user)
                         + "\nHINT: Look at ALTER DATABASE ... RESET role and ALTER ROLE ... IN DATABASE ... "
                           "RESET role; the settings are in pg_db_role_setting.")
    conn.execute("SELECT pg_catalog.count(pg_catalog.set_config(s.name, s.value, false)) "
                 "FROM ROWS FROM (pg_catalog.unnest(%s::pg_catalog.text[]), pg_catalog.unnest(%s::pg_catalog.text[])) "
                 "AS s(name, value)",
                 ([n for n, _ in SESSION_SETTINGS], [v for _, v in SESSION_SETTINGS]))
    if srr != "origin":
        # replica would keep ordinary triggers and rules from firing; only a
        # superuser can have set it, and only a superuser can set it back
        try:
            conn.execute("SELECT pg_catalog.set_config('session_replication_role', 'origin', false)")
        except psycopg.Error as e:
            raise FleetError('refusing the session on %s "%s": session_replication_role is %s, and it '
                             "cannot be set back to origin: %s" % (what, where, srr, pgerr(e)))


def rows(conn, query, params=None):
    return conn.execute(query, params).fetchall()


def one(conn, query, params=None):
    r = conn.execute(query, params).fetchone()
    return None if r is None else r[0]


def split_secrets(conninfo):
    """(parameters without password and sslpassword, {secret: value})"""
    params = conninfo_to_dict(conninfo)
    found = {k: params.pop(k) for k in SECRET_KEYS if k in params}
    return params, found


def pg_program(name):
    bindir = os.environ.get("PG_BINDIR")
    if bindir:
        path = os.path.join(bindir, name)
        if os.access(path, os.X_OK):
            return path
    path = shutil.which(name)
    if path is None:
        raise FleetError("cannot find %s (set PG_BINDIR, or put it on PATH)" % name)
    return path


def _die_with_parent():
    # the child dies with the tool, so that a killed move leaves no pg_dump
    # or psql behind to finish a step on its own
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except Exception:
        pass


SERVICE_NAME = "shardid_fleet"


def run_pg(program, conninfo, args, stdin=None):
    """Run pg_dump or psql against conninfo.  No secret goes on its command
    line: the password is in its environment (PGPASSWORD), sslpassword (for
    which libpq has no environment variable) in a service file of its own
    (PGSERVICEFILE), mode 0600 in a private directory, removed when it
    exits."""
    params, found = split_secrets(conninfo)
    env = dict(os.environ)
    tmpdir = None
    if "password" in found:
        env["PGPASSWORD"] = found["password"]
    try:
        if "sslpassword" in found:
            value = found["sslpassword"]
            if "service" in params:
                raise FleetError('connection string "%s" has both service= and sslpassword=; %s cannot pass '
                                 "sslpassword to %s without a command line: put it in the service file"
                                 % (show_conn(conninfo), PROG, program))
            if any(c in value for c in "\n\r\0"):
                raise FleetError("the sslpassword of \"%s\" has a line break; %s cannot pass it to %s"
                                 % (show_conn(conninfo), PROG, program))
            tmpdir = tempfile.mkdtemp(prefix="shardid-fleet-")      # mode 0700
            path = os.path.join(tmpdir, "pg_service.conf")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write("[%s]\nsslpassword=%s\n" % (SERVICE_NAME, value))
            env["PGSERVICEFILE"] = path
            params["service"] = SERVICE_NAME
        # the child runs as the role it logs in as, whatever role the
        # database or the role sets (a client's option wins over those)
        if "options" in params:
            params["options"] = (params["options"] + " -c role=none").strip()
        else:
            env["PGOPTIONS"] = (env.get("PGOPTIONS", "") + " -c role=none").strip()
        argv = [pg_program(program)] + args + ["-d", render_conn(params)]
        p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, preexec_fn=_die_with_parent)
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


#
# Connection strings on the command line: as they are, from a file
# (@FILE) or from the environment (env:NAME)
#

def conn_arg(value, what):
    """The connection string a command-line argument names.  One given
    literally with a secret in it is taken, with a warning: any local user
    can read the command line of a process while it runs."""
    if value is None:
        return None
    if value.startswith("@"):
        path = value[1:]
        try:
            with open(path, encoding="utf-8") as f:
                lines = [x.strip() for x in f.read().splitlines()]
        except OSError as e:
            raise FleetError('cannot read the connection string of %s from "%s": %s' % (what, path, e.strerror))
        except UnicodeDecodeError:
            raise FleetError('connection string file "%s" of %s is not UTF-8' % (path, what))
        lines = [x for x in lines if x and not x.startswith("#")]
        if len(lines) != 1:
            raise FleetError('connection string file "%s" of %s must hold one connection string on one line '
                             "(besides # comments)" % (path, what))
        return lines[0]
    if value.startswith("env:"):
        name = value[4:]
        conninfo = os.environ.get(name, "").strip()
        if not conninfo:
            raise FleetError("environment variable %s, the connection string of %s, is not set" % (name, what))
        return conninfo
    if has_secret(value):
        warn("the connection string of %s on the command line holds a password; any local user can read it "
             "there while %s runs: give it as @FILE or env:NAME, or keep the password in a passfile or "
             "service file" % (what, PROG))
    return value


#
# Trust: whose objects the tool takes as they are
#

def trusted_roles(conn, extra=()):
    """Roles whose objects are trusted in this database: the role the
    session logged in as (SESSION_USER, never CURRENT_USER, which a setting
    of role could make another one: connect() refuses such a session),
    superusers, pg_database_owner when the database's owner is one of
    those, and the roles named with --owner."""
    r = rows(conn, """
        SELECT r.oid, r.rolname FROM pg_catalog.pg_roles AS r
         WHERE r.rolsuper OR r.rolname OPERATOR(pg_catalog.=) SESSION_USER
            OR r.rolname OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.text[])
            OR (r.rolname OPERATOR(pg_catalog.=) 'pg_database_owner'
                AND EXISTS (SELECT FROM pg_catalog.pg_database AS d
                              JOIN pg_catalog.pg_roles AS o ON o.oid OPERATOR(pg_catalog.=) d.datdba
                             WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
                               AND (o.rolsuper OR o.rolname OPERATOR(pg_catalog.=) SESSION_USER)))""",
             (list(extra),))
    return {oid for oid, _ in r}


def schema_info(conn, name):
    """(oid, owner oid, owner name, [(grantee oid, grantee name)] holding
    CREATE) of a schema, or None"""
    r = conn.execute("""
        SELECT n.oid, n.nspowner, pg_catalog.pg_get_userbyid(n.nspowner),
               ARRAY(SELECT a.grantee FROM pg_catalog.aclexplode(n.nspacl) AS a
                      WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
                        AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner),
               ARRAY(SELECT CASE a.grantee WHEN 0 THEN 'PUBLIC'
                            ELSE pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text END
                       FROM pg_catalog.aclexplode(n.nspacl) AS a
                      WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
                        AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner)
          FROM pg_catalog.pg_namespace AS n
         WHERE n.nspname OPERATOR(pg_catalog.=) %s""", (name,)).fetchone()
    if r is None:
        return None
    return r[0], r[1], r[2], list(zip(r[3], r[4]))


def check_schema_trusted(conn, name, trusted, what):
    """Refuse a schema that an untrusted role owns or may create objects in:
    such a role could replace what the tool finds there."""
    info = schema_info(conn, name)
    if info is None:
        return None
    oid, owner, owner_name, creators = info
    where = conn.fleet_conninfo
    if owner not in trusted:
        raise FleetError('refusing schema "%s" (%s) on "%s": it is owned by role "%s", which shardid-fleet does not trust'
                         % (name, what, where, owner_name)
                         + "\nDETAIL: Only objects owned by the connected role, a superuser or a role named"
                           " with --owner are used as they are.")
    bad = [gname for g, gname in creators if g not in trusted]
    if bad:
        raise FleetError('refusing schema "%s" (%s) on "%s": it lets %s create objects in it'
                         % (name, what, where, ", ".join('"%s"' % b for b in bad))
                         + "\nHINT: REVOKE CREATE ON SCHEMA %s FROM %s;"
                         % (name, ", ".join(b if b == "PUBLIC" else '"%s"' % b for b in bad)))
    return oid


# Objects with an owner and a schema, by catalog: what can stand in for a
# name on a search_path, or be called from a default, a check or a view.
_OWNED_OBJECTS = {
    "pg_proc": "SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass, x.oid, x.proowner, x.pronamespace "
               "FROM pg_catalog.pg_proc AS x",
    "pg_operator": "SELECT 'pg_catalog.pg_operator'::pg_catalog.regclass, x.oid, x.oprowner, x.oprnamespace "
                   "FROM pg_catalog.pg_operator AS x",
    # not a relation's row type (the relation is listed), nor the array or
    # multirange type made with another type
    "pg_type": "SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, x.oid, x.typowner, x.typnamespace "
               "FROM pg_catalog.pg_type AS x WHERE x.typrelid OPERATOR(pg_catalog.=) 0 "
               "AND NOT EXISTS (SELECT FROM pg_catalog.pg_type AS e WHERE e.typarray OPERATOR(pg_catalog.=) x.oid) "
               "AND NOT EXISTS (SELECT FROM pg_catalog.pg_range AS g "
               "WHERE g.rngmultitypid OPERATOR(pg_catalog.=) x.oid)",
    "pg_class": "SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, x.oid, x.relowner, x.relnamespace "
                "FROM pg_catalog.pg_class AS x "
                "WHERE x.relkind OPERATOR(pg_catalog.<>) ALL ('{i,I}'::pg_catalog.\"char\"[])",
    "pg_collation": "SELECT 'pg_catalog.pg_collation'::pg_catalog.regclass, x.oid, x.collowner, x.collnamespace "
                    "FROM pg_catalog.pg_collation AS x",
    "pg_conversion": "SELECT 'pg_catalog.pg_conversion'::pg_catalog.regclass, x.oid, x.conowner, x.connamespace "
                     "FROM pg_catalog.pg_conversion AS x",
    "pg_opclass": "SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass, x.oid, x.opcowner, x.opcnamespace "
                  "FROM pg_catalog.pg_opclass AS x",
    "pg_opfamily": "SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass, x.oid, x.opfowner, x.opfnamespace "
                   "FROM pg_catalog.pg_opfamily AS x",
    "pg_ts_config": "SELECT 'pg_catalog.pg_ts_config'::pg_catalog.regclass, x.oid, x.cfgowner, x.cfgnamespace "
                    "FROM pg_catalog.pg_ts_config AS x",
    "pg_ts_dict": "SELECT 'pg_catalog.pg_ts_dict'::pg_catalog.regclass, x.oid, x.dictowner, x.dictnamespace "
                  "FROM pg_catalog.pg_ts_dict AS x",
    "pg_statistic_ext": "SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid, x.stxowner, "
                        "x.stxnamespace FROM pg_catalog.pg_statistic_ext AS x",
}


def untrusted_objects(conn, schemas, trusted, skip=()):
    """['function public.now() (owned by role "mallory")', ...]: objects in
    the named schemas that a role outside `trusted` owns.  Current CREATE
    grants say who may add objects from now on; these were added already
    (while a role had CREATE, or by a role that owned the schema)."""
    oids = [x[0] for x in rows(conn, "SELECT n.oid FROM pg_catalog.pg_namespace AS n "
                                     "WHERE n.nspname OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.text[])",
                               (list(schemas),))]
    if not oids:
        return []
    union = sql.SQL(" UNION ALL ").join(sql.SQL(q) for cat, q in _OWNED_OBJECTS.items() if cat not in skip)
    return ['%s (owned by role "%s")' % (desc, owner) for desc, owner in rows(conn, sql.SQL("""
        SELECT pg_catalog.pg_describe_object(o.classid, o.objid, 0),
               pg_catalog.pg_get_userbyid(o.owner)::pg_catalog.text
          FROM ({}) AS o(classid, objid, owner, nsp)
         WHERE o.nsp OPERATOR(pg_catalog.=) ANY (%s::pg_catalog.oid[])
           AND o.owner OPERATOR(pg_catalog.<>) ALL (%s::pg_catalog.oid[])
         ORDER BY 1""").format(union), (oids, list(trusted)))]


def check_search_path(conn, schemas, trusted, what):
    """Refuse to run `what` with these schemas on its search_path when one
    is not trusted (check_schema_trusted) or holds objects of an untrusted
    role: any of them could stand in for a name the file uses, even behind
    pg_catalog (a function whose argument types match better wins)."""
    for s in schemas:
        if check_schema_trusted(conn, s, trusted, "on the search_path of %s" % what) is None:
            raise FleetError('schema "%s" (on the search_path of %s) does not exist on "%s"'
                             % (s, what, conn.fleet_conninfo))
    bad = untrusted_objects(conn, schemas, trusted)
    if bad:
        raise FleetError('refusing to run %s on "%s": schema %s on its search_path holds objects of roles '
                         "that shardid-fleet does not trust; nothing of it was run:\n  %s"
                         % (what, conn.fleet_conninfo, ", ".join('"%s"' % s for s in schemas), "\n  ".join(bad))
                         + "\nHINT: Drop them, or change their owner to a trusted role, if they are yours.")


def extension_info(conn, extname):
    r = conn.execute("""
        SELECT n.nspname, e.extversion FROM pg_catalog.pg_extension AS e
          JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
         WHERE e.extname OPERATOR(pg_catalog.=) %s""", (extname,)).fetchone()
    return r


def ensure_extension(conn, extname, schema, trusted, quiet=False):
    """The extension, in a trusted schema: created in `schema` if missing
    (never in whatever schema comes first on a search_path), checked if
    present.  Returns (schema, created)."""
    info = extension_info(conn, extname)
    if info is not None:
        check_schema_trusted(conn, info[0], trusted, "of extension %s" % extname)
        return info[0], False
    if check_schema_trusted(conn, schema, trusted, "for extension %s" % extname) is None:
        raise FleetError('schema "%s" for extension %s does not exist on "%s"'
                         % (schema, extname, conn.fleet_conninfo))
    # its script runs with that schema on its search_path
    check_search_path(conn, [schema], trusted, "CREATE EXTENSION %s" % extname)
    try:
        conn.execute(sql.SQL("CREATE EXTENSION {} SCHEMA {}").format(
            sql.Identifier(extname), sql.Identifier(schema)))
    except psycopg.Error as e:
        raise FleetError('cannot create extension %s on "%s": %s'
                         % (extname, conn.fleet_conninfo, pgerr(e)))
    return schema, True


def live_shards(conn):
    """{shard: comment} of the shard_NNNN schemas here that hold tables and
    are not fenced by a move (shardid_fleet_moved)"""
    r = rows(conn, """
        SELECT pg_catalog.substr(n.nspname, 7)::pg_catalog.int4,
               pg_catalog.obj_description(n.oid, 'pg_namespace')
          FROM pg_catalog.pg_namespace AS n
         WHERE n.nspname OPERATOR(pg_catalog.~) '^shard_[0-9]{4}$'
           AND EXISTS (SELECT FROM pg_catalog.pg_class AS c
                        WHERE c.relnamespace OPERATOR(pg_catalog.=) n.oid
                          AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[]))
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_proc AS p
                            WHERE p.pronamespace OPERATOR(pg_catalog.=) n.oid
                              AND p.proname OPERATOR(pg_catalog.=) %s)""", (FENCE_TRIGGER_FUNCTION,))
    return {n: comment for n, comment in r if n <= MAX_SHARD}


def retired_shards(conn):
    """logical shards with a retired schema (shard_NNNN_retired_...) here"""
    return {n for (n,) in rows(conn, """
        SELECT pg_catalog.substr(n.nspname, 7, 4)::pg_catalog.int4 FROM pg_catalog.pg_namespace AS n
         WHERE n.nspname OPERATOR(pg_catalog.~) '^shard_[0-9]{4}_retired_'""")}


def shard_tables(conn, nspname):
    """Tables and partitioned tables of a schema, not partitions"""
    return [x[0] for x in rows(conn, """
        SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_class AS c
          JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
         WHERE n.nspname OPERATOR(pg_catalog.=) %s
           AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
           AND NOT c.relispartition ORDER BY 1""", (nspname,))]


def incoming_marker(shard, token):
    return ("shardid-fleet: incoming copy of logical shard %d (move %s); "
            "not live until the move completes" % (shard, token))


def is_incoming(comment):
    return comment is not None and comment.startswith("shardid-fleet: incoming copy")
