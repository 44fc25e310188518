"""provision: apply's decisions from what the servers hold"""

import pytest

from conftest import NEW, OLD, OTHER, make_map
from shardid_fleet.common import FleetError
from shardid_fleet.conn import incoming_marker
from shardid_fleet.provision import check_map_current, tally_provisioned


def test_a_current_map_is_taken():
    fm = make_map(provisioned=[0, 1, 5000])
    live = {OLD: {0: None, 1: None}, NEW: {5000: None}}
    check_map_current(fm, [OLD, NEW], live, {OLD: set(), NEW: set()})
    # shards not made yet anywhere: apply makes them
    check_map_current(fm, [OLD, NEW], {OLD: {}, NEW: {}}, {OLD: set(), NEW: set()})


def test_a_map_behind_a_move_is_refused():
    fm = make_map(provisioned=[0, 1])
    live = {OLD: {0: None}, NEW: {1: None}}
    with pytest.raises(FleetError, match='logical shard 1 is on "host=db2 dbname=app" \\(schema shard_0001\\), '
                                         'but the map file puts it on "host=db1 dbname=app"'):
        check_map_current(fm, [OLD, NEW], live, {OLD: set(), NEW: set()})


def test_an_incoming_copy_elsewhere_is_named():
    fm = make_map(provisioned=[1])
    live = {OLD: {}, NEW: {1: incoming_marker(1, "0123abcd")}}
    with pytest.raises(FleetError, match="the copy of an unfinished move"):
        check_map_current(fm, [OLD, NEW], live, {OLD: set(), NEW: set()})


def test_a_shard_retired_at_home_is_refused():
    fm = make_map(provisioned=[1])
    with pytest.raises(FleetError, match='logical shard 1 was retired on "host=db1 dbname=app" by a move'):
        check_map_current(fm, [OLD, NEW, OTHER], {OLD: {}, NEW: {}, OTHER: {}}, {OLD: {1}, NEW: set(), OTHER: set()})


def test_tally_provisioned():
    counts, existing = tally_provisioned([
        (0, "schema", "shard_0000", "created"), (0, "table", "shard_0000.t", "created"),
        (0, "sequence", "shard_0000.t_id_seq", "created"), (1, "schema", "shard_0001", "exists"),
        (1, "table", "shard_0001.t", "created"), (2, "schema", "shard_0002", "exists")])
    assert counts == {"schema": 1, "table": 2, "sequence": 1}
    assert existing == 2
    assert tally_provisioned([]) == ({}, 0)
