"""The move command: starting a move, resuming and aborting one (the
checks before it are preflight, its steps move.Move, its recorded state
state.MoveState)."""

import re
import secrets
import sys

import psycopg

from . import state as moves
from .common import (
    FleetError, MAX_SHARD, kill_point, mask, out, pgerr, ranges, same_server, shard_schema, show_conn, strip_secrets)
from .fleetmap import MapLock, load_map
from .conn import connect
from .move import Move, MoveOptions
from .preflight import differing_shards, preflight
from .router import check_router, ensure_gate, router_current_map, take_run_lock


def check_timeouts(a):
    for opt in ("max_clock_wait", "lock_timeout", "fence_timeout"):
        if getattr(a, opt) < 0:
            raise FleetError("--%s must not be negative" % opt.replace("_", "-"))


def shard_arg(a):
    """The shard argument, None if not given"""
    if a.shard is None:
        return None
    if not re.fullmatch(r"[0-9]+", a.shard) or int(a.shard) > MAX_SHARD:
        raise FleetError("shard ID %s is out of range (valid shard IDs are 0 to %d)" % (a.shard, MAX_SHARD))
    return int(a.shard)


def open_run(a):
    """(router session, run lock session): one shardid-fleet at a time on
    the cluster's moves, by the run lock on the cluster's gate, held by a
    session of its own in a transaction that lasts the whole run (the
    move's gate is taken there too), and released when the tool exits,
    however it exits.  A router set up by an older shardid-fleet gets its
    gate here."""
    R = connect(a.router_conn, "router")
    trusted = check_router(R)
    if router_current_map(R, a.cluster)[0] is None:
        raise FleetError('router "%s" has no cluster "%s"; run shardid-fleet router first'
                         % (show_conn(a.router_conn), a.cluster))
    with R.transaction():
        ensure_gate(R, a.cluster, trusted)
    L = connect(a.router_conn, "the router")
    L.autocommit = False
    take_run_lock(L, a.cluster)
    return R, L


def cmd_move(a):
    check_timeouts(a)
    fm = load_map(a.mapfile)
    MapLock(a.mapfile)
    R, L = open_run(a)
    shard = shard_arg(a)
    if a.resume or a.abort:
        return resume_or_abort(a, fm, R, L, shard)
    return start_move(a, fm, R, L, shard)


def check_resume_args(a, shard, state):
    """SHARD, TO_CONN and --publisher-conn, if given again, against the
    recorded move"""
    if shard is not None and shard != state.shard:
        raise FleetError("the unfinished move is of logical shard %d, not %d" % (state.shard, shard))
    if a.to_conn is not None and not same_server(a.to_conn, state.target):
        raise FleetError('the unfinished move is to "%s", not to "%s"'
                         % (show_conn(state.target), show_conn(a.to_conn)))
    if a.publisher_conn is not None and not same_server(a.publisher_conn, state.publisher):
        raise FleetError('the unfinished move\'s new server connects to "%s", not to "%s"'
                         % (show_conn(state.publisher), show_conn(a.publisher_conn)))


def resume_or_abort(a, fm, R, L, shard):
    what = "resume" if a.resume else "abort"
    if not moves.has_moves_table(R):
        raise FleetError('router "%s" has no moves to %s' % (show_conn(a.router_conn), what))
    state = moves.load_unfinished(R, a.cluster)
    if state is None:
        raise FleetError('no move of cluster "%s" to %s' % (a.cluster, what))
    check_resume_args(a, shard, state)
    # the file may be behind the router by this move, no more
    owner, _ = router_current_map(R, a.cluster)
    differ = differing_shards(owner, fm.owner, moving=state)
    if differ:
        raise FleetError("the map file and the router's map disagree on logical shards %s" % ranges(differ))
    mv = Move(MoveOptions.from_args(a), R, state, resume_conns(a, fm, state), L)
    mv.check_recorded(owner)
    if a.drop and not state.drop_retired:
        mv.record(drop_retired=True)
    try:
        if a.abort:
            mv.abort()
        else:
            out("resume move of logical shard %d (%s) from step %s" % (state.shard, state.schema, state.step))
            out("  from %s" % show_conn(mv.conns.source))
            out("  to   %s" % show_conn(mv.conns.target))
            mv.run()
    except (FleetError, psycopg.Error, KeyboardInterrupt) as e:
        note_error(R, mv, e)
        raise
    return 0


def new_move(a, shard, source, soid):
    """The state and the connection strings of a move about to start.  The
    router records the connection strings without their secrets: a
    resumed move takes them from the map file, from TO_CONN and
    --publisher-conn given again, or from libpq's own sources."""
    publisher = a.publisher_conn or source
    conns = moves.MoveConns(source=source, target=a.to_conn, publisher=publisher)
    state = moves.MoveState(
        move_id=None, cluster=a.cluster, shard=shard, token=secrets.token_hex(4), source=strip_secrets(source),
        target=strip_secrets(a.to_conn), publisher=strip_secrets(publisher), drop_retired=a.drop,
        step="prepared", source_schema_oid=soid)
    return state, conns


def start_move(a, fm, R, L, shard):
    if shard is None or a.to_conn is None:
        raise FleetError("move needs SHARD and TO_CONN (or --resume or --abort)")
    source = fm.owner[shard]
    target = a.to_conn
    if same_server(source, target):
        raise FleetError('the map already puts logical shard %d on "%s"' % (shard, show_conn(target)))
    unfinished = moves.unfinished_move(R, a.cluster)
    if unfinished is not None:
        raise FleetError("logical shard %d of cluster \"%s\" is being moved (step %s, since %s); "
                         "finish it first with shardid-fleet move --resume or --abort"
                         % (unfinished[1], a.cluster, unfinished[2], unfinished[5]))
    out("move logical shard %d (%s)" % (shard, shard_schema(shard)))
    out("  from %s" % show_conn(source))
    out("  to   %s" % show_conn(target))
    # the router's tables for moves (a router set up by an older
    # shardid-fleet lacks them)
    if not moves.has_moves_table(R):
        raise FleetError('router "%s" has no table shardid_fleet.moves; run shardid-fleet router once more'
                         % show_conn(a.router_conn))
    soid = preflight(a, fm, R, shard, source, target)
    state, conns = new_move(a, shard, source, soid)
    moves.insert_move(R, state)
    kill_point("after:prepared")
    mv = Move(MoveOptions.from_args(a), R, state, conns, L)
    try:
        mv.run()
    except (FleetError, psycopg.Error, KeyboardInterrupt) as e:
        note_error(R, mv, e)
        raise
    return 0


def resume_conns(a, fm, state):
    """The connection strings of a recorded move, with the secrets the
    operator gives again or the map file holds"""
    def from_map(recorded):
        for cs in fm.servers():
            if same_server(cs, recorded):
                return cs
        return recorded
    source = from_map(state.source)
    target = a.to_conn if a.to_conn is not None else from_map(state.target)
    if a.publisher_conn is not None:
        publisher = a.publisher_conn
    elif same_server(state.publisher, state.source):
        publisher = source
    else:
        publisher = state.publisher
    return moves.MoveConns(source=source, target=target, publisher=publisher)


def error_text(e):
    return pgerr(e) if isinstance(e, psycopg.Error) else "interrupted" if isinstance(e, KeyboardInterrupt) else str(e)


def note_error(R, mv, e):
    """Why the run stopped, recorded on the router and told the operator"""
    moves.record_error(R, mv.state, mask(error_text(e)))
    message = moves.stopped_message(mv.state)
    if message is not None:
        sys.stderr.write(mask(message) + "\n")
