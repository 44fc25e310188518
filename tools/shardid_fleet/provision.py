"""Provisioning: the check and apply commands."""

import os

import psycopg
from psycopg import sql

from .common import FleetError, NSHARDS, out, pgerr, plural, ranges, shard_schema, show_conn, warn
from .fleetmap import MapLock, load_map
from .conn import (
    check_schema_trusted, check_search_path, connect, ensure_extension, extension_info, is_incoming,
    live_shards, one, retired_shards, rows, schema_info, trusted_roles, untrusted_objects)


#
# check
#

def cmd_check(a):
    m = load_map(a.mapfile)
    servers = m.servers()
    out("map %s: %d logical shards on %s" % (a.mapfile, NSHARDS, plural(len(servers), "server")))
    for conn in servers:
        n = len(m.shards_on(conn, all_shards=True))
        p = ranges(m.shards_on(conn))
        out("  %s: %d logical shards, provisioned: %s" % (show_conn(conn), n, p or "none"))
    if a.no_connect:
        return 0
    problems = 0
    keysets = {}
    for cs in servers:
        try:
            c = connect(cs)
        except FleetError as e:
            out("  server %s: unreachable (%s)" % (show_conn(cs), e))
            problems += 1
            continue
        with c:
            found = []
            version = one(c, "SELECT pg_catalog.current_setting('server_version')")
            wal_level = one(c, "SELECT pg_catalog.current_setting('wal_level')")
            preload = one(c, "SELECT pg_catalog.current_setting('shared_preload_libraries')")
            ext = extension_info(c, "shardid")
            live = live_shards(c)
            if wal_level != "logical":
                found.append("wal_level is %s; moving shards needs wal_level = logical" % wal_level)
            if "shardid" not in [x.strip().strip('"') for x in preload.split(",")]:
                found.append("shardid is not in shared_preload_libraries")
            # where apply runs the template and API files, after pg_catalog:
            # the extension's schema, or the default one for it
            path_schema = ext[0] if ext is not None else "public"
            trusted = trusted_roles(c)
            try:
                check_schema_trusted(c, path_schema, trusted,
                                     "of extension shardid" if ext is not None else "for extension shardid")
            except FleetError as e:
                found.append(str(e).split("\n")[0])
            for obj in untrusted_objects(c, [path_schema], trusted):
                found.append('schema "%s", on the search_path of the template and API files, holds %s'
                             % (path_schema, obj))
            out("  server %s: PostgreSQL %s, wal_level %s, %s, %s here"
                % (show_conn(cs), version, wal_level,
                   "shardid %s in schema %s" % (ext[1], ext[0]) if ext else "no extension shardid",
                   plural(len(live), "shard schema")))
            keys = public_id_keys(c, ext)
            if isinstance(keys, FleetError):
                found.append(str(keys))
            else:
                keysets[cs] = keys
                out("    public ID keys: %s" % (
                    "none configured" if not keys else
                    ", ".join("version %d fingerprint %s" % kv for kv in keys)))
            for f in found:
                out("    problem: " + f)
            problems += len(found)
    # every server must mint and read the same public IDs
    if len(set(keysets.values())) > 1:
        problems += 1
        out("    problem: the servers' public ID keys differ (shardid.public_id_keys; compared by fingerprint): "
            + "; ".join("%s: %s" % (cs, ", ".join("v%d %s" % kv for kv in keys) or "none")
                        for cs, keys in keysets.items()))
    out("check: %s" % ("no problems" if problems == 0 else plural(problems, "problem")))
    return 0 if problems == 0 else 1


def public_id_keys(c, ext):
    """((version, fingerprint), ...) of the server's public ID keys, never
    the keys; () without any or without shardid 1.2; a FleetError when the
    setting does not parse"""
    if ext is None or not one(c, "SELECT pg_catalog.to_regprocedure(%s) IS NOT NULL",
                              (sql.SQL("{}.shardid_public_keys()").format(sql.Identifier(ext[0])).as_string(c),)):
        return ()
    try:
        with c.transaction():
            return tuple((v, f) for v, f in rows(c, sql.SQL(
                "SELECT k.key_version, k.fingerprint FROM {}.shardid_public_keys() AS k ORDER BY 1").format(
                sql.Identifier(ext[0]))))
    except psycopg.Error as e:
        return FleetError("public ID keys: %s" % pgerr(e).split("\n")[0])


#
# apply
#

def read_file(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise FleetError('cannot read %s file "%s": %s' % (what, path, e.strerror))
    except UnicodeDecodeError:
        raise FleetError('%s file "%s" is not UTF-8' % (what, path))


def file_search_path(conn, schemas):
    """The search_path of a template or API file: pg_catalog first (left
    out of the setting, PostgreSQL searches it first), then the schemas
    (the first one gets what the file creates), then pg_temp."""
    return ", ".join(sql.Identifier(s).as_string(conn) for s in list(schemas) + ["pg_temp"])


def run_sql_file(conn, text, schemas, trusted, what):
    """Run an SQL file (plain SQL, no psql commands) in one transaction with
    search_path = pg_catalog, schemas, pg_temp, once check_search_path has
    found nothing of an untrusted role on it."""
    check_search_path(conn, schemas, trusted, what)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_catalog.set_config('search_path', %s, true)",
                         (file_search_path(conn, schemas),))
            conn.execute(text)
    except psycopg.Error as e:
        raise FleetError('%s failed on "%s": %s' % (what, conn.fleet_conninfo, pgerr(e)))


def cmd_apply(a):
    template = read_file(a.template, "template")
    api = read_file(a.api, "API") if a.api else None
    if a.batch_size < 1:
        raise FleetError("--batch-size must be at least 1")
    m = load_map(a.mapfile)
    MapLock(a.mapfile)
    servers = m.servers()
    for x in a.server:
        if x not in servers:
            servers.append(x)

    conns = {cs: connect(cs) for cs in servers}
    check_map_current(m, servers, {cs: live_shards(conns[cs]) for cs in servers},
                      {cs: retired_shards(conns[cs]) for cs in servers})
    total_created = 0
    for cs in servers:
        total_created += apply_server(a, m, cs, conns[cs], template, api)
    for c in conns.values():
        c.close()
    out("apply: %s, %s created" % (plural(len(servers), "server"), plural(total_created, "object")))
    return 0


def check_map_current(m, servers, live, retired):
    """Before anything is made: a map that puts a shard where it is not,
    while another server holds it, is out of date (a move it does not
    know of); provisioning from it would make an empty copy.  live and
    retired: each server's live_shards and retired_shards."""
    for n in sorted(m.provisioned):
        home = m.owner[n]
        if n in live.get(home, {}) and not is_incoming(live[home][n]):
            continue
        elsewhere = [cs for cs in servers if cs != home and n in live[cs]]
        if elsewhere:
            raise FleetError(
                'logical shard %d is on "%s" (schema %s%s), but the map file puts it on "%s"; '
                "the map file is out of date, nothing was changed"
                % (n, show_conn(elsewhere[0]), shard_schema(n),
                   ", the copy of an unfinished move" if is_incoming(live[elsewhere[0]][n]) else "", show_conn(home))
                + "\nHINT: Use the map file that the last move wrote, and see shardid-fleet status.")
        if n in retired.get(home, ()):
            raise FleetError(
                'logical shard %d was retired on "%s" by a move, and is on no other server of the map; '
                "nothing was changed" % (n, show_conn(home))
                + "\nHINT: See shardid-fleet status; finish the move with shardid-fleet move --resume.")


def apply_server(a, m, cs, c, template, api):
    """apply on one server; returns how many objects it created"""
    out("server %s" % show_conn(cs))
    trusted = trusted_roles(c, [a.owner] if a.owner else [])
    ext_schema = prepare_extension(c, cs, a, trusted)
    tmpl = a.template_schema
    prepare_template(c, cs, a, template, ext_schema, trusted)
    if a.owner:
        c.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(tmpl), sql.Identifier(a.owner)))
        c.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(
            sql.Identifier(tmpl), sql.Identifier(a.owner)))
    shards = m.shards_on(cs) if cs in m.servers() else []
    created = provision_shards(c, cs, a, shards, ext_schema)
    note_strays(c, set(m.shards_on(cs, all_shards=True)) if cs in m.servers() else set())
    if api is not None:
        run_sql_file(c, api, [ext_schema], trusted, 'API file "%s"' % a.api)
        out("  api %s: applied" % os.path.basename(a.api))
    return created


def prepare_extension(c, cs, a, trusted):
    """Extension shardid, created where missing; returns its schema"""
    ext_schema, created = ensure_extension(c, "shardid", a.extension_schema, trusted)
    out("  extension shardid: %s" % ("created" if created else "present"))
    version = extension_info(c, "shardid")[1]
    if version == "1.0":
        raise FleetError('extension shardid on "%s" is version 1.0, whose shardid_provision_shard() '
                         "takes schemas that other roles made; update it first" % cs
                         + "\nHINT: ALTER EXTENSION shardid UPDATE;")
    preload = one(c, "SELECT pg_catalog.current_setting('shared_preload_libraries')")
    if "shardid" not in [x.strip().strip('"') for x in preload.split(",")]:
        warn('shardid is not in shared_preload_libraries on "%s": inserts into its shards will fail' % cs)
    return ext_schema


def prepare_template(c, cs, a, template, ext_schema, trusted):
    """The template schema, created from the template file where missing"""
    tmpl = a.template_schema
    if schema_info(c, tmpl) is not None:
        check_schema_trusted(c, tmpl, trusted, "the template")
        ntables = template_tables(c, tmpl)
        out("  template %s: present (%s; the template file is read only when the schema is missing)"
            % (tmpl, plural(ntables, "table")))
        return
    # the template runs with pg_catalog first, then the template
    # schema (new, and so empty), then the extension's: a function
    # or operator another role left there would be copied into
    # every shard's defaults and checks
    check_search_path(c, [ext_schema], trusted, 'template "%s"' % a.template)
    try:
        with c.transaction():
            c.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(tmpl)))
            c.execute("SELECT pg_catalog.set_config('search_path', %s, true)",
                      (file_search_path(c, [tmpl, ext_schema]),))
            c.execute(template)
    except psycopg.Error as e:
        raise FleetError('template "%s" failed on server "%s": %s' % (a.template, cs, pgerr(e)))
    ntables = template_tables(c, tmpl)
    out("  template %s: created from %s (%s)" % (tmpl, os.path.basename(a.template), plural(ntables, "table")))


def provision_shards(c, cs, a, shards, ext_schema):
    """The logical shards the map puts on this server, a batch per
    transaction; returns how many objects were created"""
    if not shards:
        out("  logical shards: none provisioned here")
        return 0
    results = []
    done = []
    for i in range(0, len(shards), a.batch_size):
        batch = shards[i:i + a.batch_size]
        res = provision_batch(c, cs, a, batch, done, ext_schema)
        done += batch
        for s, kind, name, action in res:
            if action == "created" and a.v:
                out("    created %s %s" % (kind, name))
        results += res
    counts, existing = tally_provisioned(results)
    if not counts:
        out("  logical shards %s (%d): all complete, nothing created" % (ranges(shards), len(shards)))
    else:
        made = ", ".join(plural(counts[k], k) for k in ("schema", "table", "sequence") if k in counts)
        out("  logical shards %s (%d): created %s; %d of the %d schemas were there already"
            % (ranges(shards), len(shards), made, existing, len(shards)))
    return sum(counts.values())


def provision_batch(c, cs, a, batch, done, ext_schema):
    """[(shard, kind, name, action)] of shardid_provision_shard for one
    batch of logical shards, in one transaction (as --owner if given)"""
    try:
        with c.transaction():
            if a.owner:
                c.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(a.owner)))
            return rows(c, sql.SQL("""
                SELECT s, p.kind, p.name, p.action
                  FROM pg_catalog.unnest(%s::pg_catalog.int4[]) AS s,
                       {}.shardid_provision_shard(s, %s::pg_catalog.text, NULL::pg_catalog.text) AS p
                 ORDER BY s""").format(sql.Identifier(ext_schema)), (batch, a.template_schema))
    except psycopg.Error as e:
        raise FleetError(
            'provisioning logical shards %s failed on server "%s": %s'
            % (ranges(batch), cs, pgerr(e))
            + ("\n(logical shards %s were provisioned; nothing of %s was made)"
               % (ranges(done), ranges(batch)) if done else
               "\n(nothing was made there)"))


def tally_provisioned(results):
    """({kind: how many created}, how many schemas were there already)
    from shardid_provision_shard's rows"""
    counts = {}
    existing = 0
    for s, kind, name, action in results:
        if action == "created":
            counts[kind] = counts.get(kind, 0) + 1
        elif kind == "schema":
            existing += 1
    return counts, existing


def note_strays(c, here):
    """The shard schemas on this server that the map puts elsewhere (here:
    the logical shards the map puts on it)"""
    for n, comment in sorted(live_shards(c).items()):
        if n not in here:
            if is_incoming(comment):
                out("  note: schema %s is here as the incoming copy of an unfinished move"
                    % shard_schema(n))
            else:
                out("  warning: schema %s is here, but the map puts logical shard %d on another server"
                    % (shard_schema(n), n))


def template_tables(conn, schema):
    return one(conn, """
        SELECT pg_catalog.count(*) FROM pg_catalog.pg_class AS c
          JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
         WHERE n.nspname OPERATOR(pg_catalog.=) %s
           AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
           AND NOT c.relispartition""", (schema,))
