"""move: the decisions of the steps"""

import argparse
import datetime

import pytest

from conftest import NEW, OLD, OTHER, make_conns, make_state
from shardid_fleet.common import FleetError
from shardid_fleet.move import MoveOptions, caught_up, map_note, new_map_entry, switch_needed


def test_caught_up():
    assert caught_up(0.0) and caught_up(0.499)
    assert not caught_up(0.5)
    assert not caught_up(None)      # past 5 s


def test_new_map_entry():
    given = "host=db2 dbname=app password=secret"
    # the router's string, if it sends the shard there already
    assert new_map_entry("dbname=app host=db2", given, [OLD]) == "dbname=app host=db2"
    # else the map's own string for that server
    assert new_map_entry(None, given, [OLD, "dbname=app host=db2"]) == "dbname=app host=db2"
    assert new_map_entry(OLD, given, [OLD, NEW]) == NEW
    # else the one given, without its secrets
    entry = new_map_entry(None, given, [OLD])
    assert "secret" not in entry and "db2" in entry
    entry = new_map_entry(None, "host=db2 dbname=app sslpassword=x", [OLD])
    assert "sslpassword" not in entry


def test_switch_needed():
    st = make_state(step="retired")
    conns = make_conns(st, target="host=db2 dbname=app password=secret")
    assert switch_needed(st, conns, OLD) is True
    assert switch_needed(st, conns, NEW) is False
    with pytest.raises(FleetError, match='the router puts logical shard 42 on "host=db3 dbname=app", not on the old server'):
        switch_needed(st, conns, OTHER)


def test_map_note_has_no_secret():
    now = datetime.datetime(2026, 12, 2, 6, 5, 4, tzinfo=datetime.timezone.utc)
    note = map_note(now, 42, "host=db1 dbname=app password=secret", "host=db2 dbname=app password=other")
    assert note.startswith("2026-12-02T06:05:04Z shardid-fleet moved logical shard 42 from ")
    assert "secret" not in note and "other" not in note


def test_options_from_the_command_line():
    a = argparse.Namespace(mapfile="fleet.map", owner="appo", publisher_conn=None, max_clock_wait=1.0,
                           lock_timeout=2.0, fence_timeout=3.0, drop=True)
    assert MoveOptions.from_args(a) == MoveOptions("fleet.map", "appo", None, 1.0, 2.0, 3.0)
