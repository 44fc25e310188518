"""state: the recorded move (MoveState), its table and the checks of a
recorded row"""

import dataclasses
import datetime
import re

import pytest

from conftest import NEW, OLD, OTHER, make_conns, make_state
from shardid_fleet import state as moves
from shardid_fleet.common import FleetError, NSHARDS, STEPS
from shardid_fleet.conn import incoming_marker
from shardid_fleet.router import ROUTER_TABLES


def router_owner(shard_on=OLD):
    owner = [OLD] * NSHARDS
    owner[42] = shard_on
    owner[100] = NEW
    return owner


def test_fields_are_the_moves_tables_columns():
    ddl = ROUTER_TABLES["moves"].as_string(None)
    columns = re.findall(r"^\s+([a-z_]+) pg_catalog\.", ddl, re.M)
    recorded = [c for c in columns if c not in ("started_at", "updated_at", "finished_at")]
    assert list(moves.COLUMNS.values()) == recorded
    assert moves.COLUMNS["move_id"] == "id" and moves.COLUMNS["step"] == "state"


def test_names(state):
    assert state.schema == "shard_0042"
    assert state.name == "shardid_0042_0123abcd"


def test_reached(state):
    assert state.reached("sync") and state.reached("prepared")
    assert not state.reached("fence")


def test_record_takes_only_the_steps_fields(state):
    # refused before the router is used (there is none here)
    with pytest.raises(ValueError):
        moves.record(None, state, source="host=evil")
    with pytest.raises(ValueError):
        moves.record(None, state, move_id=1)


def test_a_written_row_is_taken(state):
    moves.check_recorded(state, make_conns(state), router_owner())


@pytest.mark.parametrize("field, value, complaint", [
    ("shard", 8192, "shard 8192 is not a logical shard"),
    ("shard", "42", "shard '42' is not a logical shard"),
    ("token", "0123ABCD", "token '0123ABCD' is not a token of shardid-fleet"),
    ("token", "x'; drop", "is not a token"),
    ("step", "done", "state 'done' is not a step of an unfinished move"),
    ("step", "dance", "state 'dance' is not a step"),
    ("drop_retired", "yes", "drop_retired is 'yes'"),
    ("source_schema_oid", None, "source_schema_oid is missing"),
])
def test_a_forged_field_is_refused(field, value, complaint):
    st = make_state(**{field: value})
    with pytest.raises(FleetError) as e:
        moves.check_recorded(st, make_conns(make_state()), router_owner())
    assert complaint in str(e.value)
    assert "refusing the move recorded in shardid_fleet.moves (id 7)" in str(e.value)
    assert "nothing was done" in str(e.value)


def test_the_source_must_be_a_server_of_the_map(state):
    with pytest.raises(FleetError, match="source \"host=db9 dbname=app\" is not a server of the router's map"):
        moves.check_recorded(state, make_conns(state, source="host=db9 dbname=app"), router_owner())


def test_the_target_must_be_another_server(state):
    with pytest.raises(FleetError, match="is not another server than the source"):
        moves.check_recorded(state, make_conns(state, target=OLD), router_owner())
    with pytest.raises(FleetError, match="is not another server than the source"):
        moves.check_recorded(state, make_conns(state, target=""), router_owner())


def test_servers_compare_by_what_libpq_parses(state):
    # the same server, written otherwise and with a password: taken
    conns = make_conns(state, source="dbname=app host=db1 password=secret")
    moves.check_recorded(state, conns, router_owner())


def test_before_the_switch_the_router_sends_the_shard_to_the_source(state):
    with pytest.raises(FleetError, match='source is "host=db1 dbname=app", but the router sends logical shard 42 '
                                         'to "host=db3 dbname=app" \\(step sync\\)'):
        moves.check_recorded(state, make_conns(state), router_owner(OTHER))


def test_after_the_switch_it_sends_it_to_the_target():
    st = make_state(step="switched", retired_schema="shard_0042_retired_20260101000000_0123abcd")
    moves.check_recorded(st, make_conns(st), router_owner(NEW))
    with pytest.raises(FleetError, match="target is"):
        moves.check_recorded(st, make_conns(st), router_owner(OLD))


def test_the_publisher_is_the_old_server_until_the_subscription():
    st = make_state(step="subscription", publisher=OTHER)
    with pytest.raises(FleetError, match="publisher .* is not the old server's connection string"):
        moves.check_recorded(st, make_conns(st), router_owner())
    # unless given again with --publisher-conn
    moves.check_recorded(st, make_conns(st), router_owner(), publisher_conn=OTHER)
    # after the subscription it is no longer used
    st = make_state(step="sync", publisher=OTHER)
    moves.check_recorded(st, make_conns(st), router_owner())


def test_the_retired_name_is_this_moves():
    good = "shard_0042_retired_20260101000000_0123abcd"
    st = make_state(step="fence", retired_schema=good)
    moves.check_recorded(st, make_conns(st), router_owner())
    for bad in ("public", "shard_0042_retired_20260101000000_ffffffff", "shard_0043_retired_20260101000000_0123abcd",
                good + "x"):
        st = make_state(step="fence", retired_schema=bad)
        with pytest.raises(FleetError, match="retired_schema .* is not the name this move retires shard_0042 under"):
            moves.check_recorded(st, make_conns(st), router_owner())
    # none is recorded before the fence
    st = make_state(step="sync", retired_schema=good)
    with pytest.raises(FleetError, match="retired_schema"):
        moves.check_recorded(st, make_conns(st), router_owner())


def test_check_retired_name():
    moves.check_retired_name(make_state(retired_schema="shard_0042_retired_20260101000000_0123abcd"))
    for bad in (None, "shard_0042", "shard_0042_retired_x_ffffffff"):
        with pytest.raises(FleetError, match="is not one this move would make"):
            moves.check_retired_name(make_state(retired_schema=bad))


def test_retired_schema_name(state):
    now = datetime.datetime(2026, 12, 2, 6, 5, 4, tzinfo=datetime.timezone.utc)
    name = moves.retired_schema_name(state, now)
    assert name == "shard_0042_retired_20261202060504_0123abcd"
    assert re.fullmatch(moves.retired_pattern(state), name)


def test_found_source_schema(state):
    trusted = {10}
    moves.check_found_source_schema(state, None, trusted)
    moves.check_found_source_schema(state, ("shard_0042", 10, "postgres"), trusted)
    with pytest.raises(FleetError, match='source_schema_oid names schema "public" on the old server, not shard_0042'):
        moves.check_found_source_schema(state, ("public", 10, "postgres"), trusted)
    with pytest.raises(FleetError, match='owned by role "mallory", which shardid-fleet does not trust'):
        moves.check_found_source_schema(state, ("shard_0042", 666, "mallory"), trusted)
    retired = make_state(step="fence", retired_schema="shard_0042_retired_20260101000000_0123abcd")
    moves.check_found_source_schema(retired, (retired.retired_schema, 10, "postgres"), trusted)


def test_found_target_schema(state):
    moves.check_found_target_schema(state, None)
    moves.check_found_target_schema(state, ("shard_0042", incoming_marker(42, "0123abcd")))
    with pytest.raises(FleetError, match="not shard_0042"):
        moves.check_found_target_schema(state, ("pg_catalog", incoming_marker(42, "0123abcd")))
    with pytest.raises(FleetError, match="which is not this move's incoming copy"):
        moves.check_found_target_schema(state, ("shard_0042", incoming_marker(42, "ffffffff")))
    # once retired, the copy is the shard and has lost the mark
    moves.check_found_target_schema(make_state(step="retired"), ("shard_0042", "the shard's own comment"))


def test_found_subscription(state):
    moves.check_found_subscription(state, None)
    moves.check_found_subscription(state, "shardid_0042_0123abcd")
    with pytest.raises(FleetError, match='names subscription "other" on the new server'):
        moves.check_found_subscription(state, "other")


def test_classify_target_schema(state):
    assert moves.classify_target_schema(state, None) is None
    assert moves.classify_target_schema(state, (16500, None)) == 16500
    assert moves.classify_target_schema(state, (17000, incoming_marker(42, "0123abcd"))) == 17000
    assert moves.classify_target_schema(state, (17000, "someone's")) == -1
    assert moves.classify_target_schema(make_state(target_schema_oid=None), (16500, None)) == -1


def test_steps_to_take():
    assert moves.steps_to_take("prepared") == STEPS[1:]
    assert moves.steps_to_take("schema") == STEPS[1:]
    assert moves.steps_to_take("fence") == ["fence", "retired", "switched", "cleaned", "done"]
    assert moves.steps_to_take("cleaned") == ["cleaned", "done"]


def test_abort_only_before_the_switch():
    for step in STEPS[:STEPS.index("switched")]:
        moves.check_abortable(make_state(step=step))
    for step in ("switched", "cleaned", "done"):
        with pytest.raises(FleetError, match="the move can only be finished: shardid-fleet move --resume"):
            moves.check_abortable(make_state(step=step))


def test_stopped_message():
    assert moves.stopped_message(make_state(step="sync")).endswith("--resume finishes it, --abort undoes it")
    assert moves.stopped_message(make_state(step="switched")).endswith("--resume finishes it")
    assert moves.stopped_message(make_state(step="done")) is None
    assert moves.stopped_message(make_state(step="aborted")) is None


def test_a_state_is_plain_data(state):
    assert dataclasses.replace(state, step="fence").step == "fence"
    assert dataclasses.asdict(state)["shard"] == 42
