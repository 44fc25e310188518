"""preflight: the refusals before a move, from what was read"""

import pytest

from conftest import NEW, OLD, OTHER, make_state
from shardid_fleet.common import FleetError, NSHARDS
from shardid_fleet import preflight


def test_differing_shards():
    owner = [OLD] * NSHARDS
    assert preflight.differing_shards(owner, list(owner)) == []
    other = list(owner)
    other[3] = other[42] = NEW
    assert preflight.differing_shards(owner, other) == [3, 42]
    # the file may be behind the router by the move in flight, no more
    assert preflight.differing_shards(owner, other, moving=make_state()) == [3]
    other[42] = OTHER
    assert preflight.differing_shards(owner, other, moving=make_state()) == [3, 42]


def test_server_versions():
    preflight.check_server_versions(150000, 180001)
    with pytest.raises(FleetError, match="the old server runs PostgreSQL 140010; moves need 15 or later"):
        preflight.check_server_versions(140010, 170000)
    with pytest.raises(FleetError, match="the new server runs"):
        preflight.check_server_versions(170000, 149999)


def test_replication_settings():
    preflight.check_replication_settings(OLD, "logical", 2, 2)
    with pytest.raises(FleetError, match='wal_level is replica on the old server "host=db1 dbname=app"'):
        preflight.check_replication_settings(OLD, "replica", 10, 10)
    with pytest.raises(FleetError, match="the old server has 1 free replication slots; a move needs 2"):
        preflight.check_replication_settings(OLD, "logical", 1, 10)
    with pytest.raises(FleetError, match="the new server allows 1 logical replication workers"):
        preflight.check_replication_settings(OLD, "logical", 2, 1)


def test_relation():
    preflight.check_relation("shard_0042", "t", "appo", True, None)
    with pytest.raises(FleetError, match='relation shard_0042.t on the old server is owned by role "mallory"') as e:
        preflight.check_relation("shard_0042", "t", "mallory", False, None)
    assert "--owner" in str(e.value)
    with pytest.raises(FleetError, match="relation shard_0042.t on the old server has no replica identity; "
                                         "nothing was changed"):
        preflight.check_relation("shard_0042", "t", "appo", True, "has no replica identity")


def test_roles_exist():
    preflight.check_roles_exist("shard_0042", ["appo", "reader"], {"appo", "reader", "postgres"})
    with pytest.raises(FleetError, match='the new server has no role "reader", "x", which owns objects of shard_0042'):
        preflight.check_roles_exist("shard_0042", ["appo", "reader", "x"], {"appo"})


def test_clock_difference():
    preflight.check_clock_difference(1000.0, 995.0, 10.0)
    preflight.check_clock_difference(1000.0, 2000.0, 0.0)     # ahead is fine
    with pytest.raises(FleetError, match="the clock of the new server is 10.5 s behind the old one's, more than "
                                         "--max-clock-wait \\(10 s\\)"):
        preflight.check_clock_difference(1010.5, 1000.0, 10.0)
