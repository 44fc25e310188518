"""movecmd: the move command's arguments, a new move's state, a resumed
move's connection strings"""

import argparse

import psycopg
import pytest

from conftest import NEW, OLD, OTHER, make_map, make_state
from shardid_fleet.common import FleetError
from shardid_fleet.movecmd import check_resume_args, check_timeouts, error_text, new_move, resume_conns, shard_arg


def args(**kw):
    values = dict(shard=None, to_conn=None, publisher_conn=None, cluster="shardid", drop=False,
                  max_clock_wait=10.0, lock_timeout=5.0, fence_timeout=10.0)
    values.update(kw)
    return argparse.Namespace(**values)


def test_shard_arg():
    assert shard_arg(args()) is None
    assert shard_arg(args(shard="0")) == 0
    assert shard_arg(args(shard="8191")) == 8191
    for bad in ("8192", "-1", "1e3", " 5", "٣"):
        with pytest.raises(FleetError, match="is out of range"):
            shard_arg(args(shard=bad))


def test_timeouts_must_not_be_negative():
    check_timeouts(args(lock_timeout=0.0))
    with pytest.raises(FleetError, match="--fence-timeout must not be negative"):
        check_timeouts(args(fence_timeout=-1.0))


def test_a_new_move_records_no_secret():
    a = args(to_conn="host=db2 dbname=app password=two", drop=True)
    state, conns = new_move(a, 42, "host=db1 dbname=app password=one", 16400)
    assert state.step == "prepared" and state.move_id is None and state.drop_retired
    assert state.source_schema_oid == 16400
    assert all("password" not in x for x in (state.source, state.target, state.publisher))
    assert conns.source.endswith("password=one") and conns.target.endswith("password=two")
    assert conns.publisher == conns.source
    assert len(state.token) == 8 and new_move(a, 42, OLD, 1)[0].token != state.token


def test_a_new_moves_publisher():
    state, conns = new_move(args(to_conn=NEW, publisher_conn="host=10.0.0.1 dbname=app"), 42, OLD, 1)
    assert state.publisher == conns.publisher == "host=10.0.0.1 dbname=app"


def test_resume_args_must_match_the_recorded_move():
    st = make_state()
    check_resume_args(args(), None, st)
    check_resume_args(args(to_conn="dbname=app host=db2 password=x", publisher_conn=OLD), 42, st)
    with pytest.raises(FleetError, match="the unfinished move is of logical shard 42, not 43"):
        check_resume_args(args(), 43, st)
    with pytest.raises(FleetError, match='the unfinished move is to "host=db2 dbname=app", not to "host=db3'):
        check_resume_args(args(to_conn=OTHER), None, st)
    with pytest.raises(FleetError, match="the unfinished move's new server connects to"):
        check_resume_args(args(publisher_conn=OTHER), None, st)


def test_resume_conns_take_the_secrets_from_the_map_file():
    fm = make_map([OLD + " password=one"] * 4096 + [NEW + " password=two"] * 4096)
    conns = resume_conns(args(), fm, make_state())
    assert conns.source == OLD + " password=one"
    assert conns.target == NEW + " password=two"
    assert conns.publisher == conns.source


def test_resume_conns_given_again():
    fm = make_map()
    conns = resume_conns(args(to_conn=NEW + " password=x", publisher_conn="host=10.0.0.1 dbname=app"),
                         fm, make_state(publisher="host=10.0.0.1 dbname=app"))
    assert conns.target == NEW + " password=x"
    assert conns.publisher == "host=10.0.0.1 dbname=app"


def test_resume_conns_recorded():
    # a server the map no longer names, a publisher that is not the source
    fm = make_map([OTHER] * 8192)
    conns = resume_conns(args(), fm, make_state(publisher="host=10.0.0.1 dbname=app"))
    assert (conns.source, conns.target, conns.publisher) == (OLD, NEW, "host=10.0.0.1 dbname=app")


def test_error_text():
    assert error_text(FleetError("no")) == "no"
    assert error_text(KeyboardInterrupt()) == "interrupted"
    assert error_text(psycopg.OperationalError("gone")) == "gone"
