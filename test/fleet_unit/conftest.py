"""Shared by the unit tests of shardid-fleet: a recorded move and a map
to decide from, and the count test/run.sh reads at the end
("fleet-unit: N passed, N failed")."""

import pytest

from shardid_fleet.common import NSHARDS
from shardid_fleet.fleetmap import FleetMap
from shardid_fleet.state import MoveConns, MoveState

OLD = "host=db1 dbname=app"
NEW = "host=db2 dbname=app"
OTHER = "host=db3 dbname=app"


def make_state(**fields):
    """A recorded move of logical shard 42 from OLD to NEW, at step sync"""
    values = dict(move_id=7, cluster="shardid", shard=42, token="0123abcd", source=OLD, target=NEW,
                  publisher=OLD, drop_retired=False, step="sync", source_schema_oid=16400,
                  target_schema_oid=16500, subscription_oid=16600)
    values.update(fields)
    return MoveState(**values)


def make_conns(state, **fields):
    values = dict(source=state.source, target=state.target, publisher=state.publisher)
    values.update(fields)
    return MoveConns(**values)


def make_map(owner=None, provisioned=range(64)):
    """A map: shards 0-4095 on OLD, the rest on NEW (or owner)"""
    if owner is None:
        owner = [OLD] * 4096 + [NEW] * (NSHARDS - 4096)
    return FleetMap(None, list(owner), set(provisioned), [(True, "0 4095 " + OLD), (True, "4096 8191 " + NEW)])


@pytest.fixture
def state():
    return make_state()


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    terminalreporter.write_line("fleet-unit: %d passed, %d failed" % (passed, failed))
