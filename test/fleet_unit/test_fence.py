"""fence: the write fence's decisions"""

import pytest

from conftest import make_state
from shardid_fleet import fence
from shardid_fleet.common import FleetError


def test_schema_situation():
    st = make_state(step="fence", retired_schema="shard_0042_retired_20260101000000_0123abcd")
    assert fence.schema_situation(st, None, 16400, False) == "retired"
    assert fence.schema_situation(st, 16400, None, True) == "fenced"
    assert fence.schema_situation(st, 16400, None, False) == "live"
    # a schema of the shard's name that is not the one the move started from
    assert fence.schema_situation(st, 17000, None, False) == "other"
    assert fence.schema_situation(st, None, None, False) == "other"
    # a schema of the retired name that is not the shard's
    assert fence.schema_situation(st, None, 17000, False) == "other"


def test_latest_ms():
    assert fence.latest_ms() is None
    assert fence.latest_ms(None, None) is None
    assert fence.latest_ms(None, 5) == 5
    assert fence.latest_ms(7, None, 5) == 7


@pytest.mark.parametrize("last, restart", [
    (1, 2047), (0, 2047), (1023, 2047), (1024, 3071), (2047, 3071), (1000000, 1001471)])
def test_sequence_restart_is_past_the_next_block(last, restart):
    value = fence.sequence_restart("shard_0042", "t_id_seq", last, 1, 2 ** 63 - 1)
    assert value == restart
    # past the block the old server may hold, and the next one
    assert value >= (last // 1024 + 2) * 1024 - 1 and (value + 1) % 1024 == 0


def test_sequence_restart_refusals():
    with pytest.raises(FleetError, match="sequence shard_0042.s descends"):
        fence.sequence_restart("shard_0042", "s", 100, -1, 1000)
    with pytest.raises(FleetError, match="descends"):
        fence.sequence_restart("shard_0042", "s", 100, 0, 1000)
    with pytest.raises(FleetError, match="has no room past its next block of 1,024 \\(maximum 2046\\)"):
        fence.sequence_restart("shard_0042", "s", 100, 1, 2046)
    assert fence.sequence_restart("shard_0042", "s", 100, 1, 2047) == 2047


def test_check_copied_id():
    st = make_state()
    fence.check_copied_id(st, "t", None, None)
    fence.check_copied_id(st, "t", 5, 5)
    with pytest.raises(FleetError, match="table shard_0042.t: the new server's last ID is 4, the old server's 5"):
        fence.check_copied_id(st, "t", 5, 4)
    with pytest.raises(FleetError, match="last ID is None"):
        fence.check_copied_id(st, "t", 5, None)


def test_fence_message():
    msg, hint = fence.fence_message(make_state())
    assert msg == "logical shard 42 is moving to another server (shardid-fleet move 0123abcd)"
    assert hint.startswith("Retry the transaction")


def test_only_a_table_with_a_bigint_id_is_read():
    fence.check_id_table("shard_0042", "t", (1, "r", "bigint", 0))
    fence.check_id_table("shard_0042", "t", (1, "p", "bigint", 0))
    for found, why in [
            (None, "gone"),
            ((1, "v", "bigint", 0), "relkind v, id bigint, 0 partitions that are not tables"),
            ((1, "r", "integer", 0), "id integer"),
            ((1, "r", "mytype", 0), "id mytype"),
            ((1, "r", None, 0), "id None"),
            ((1, "p", "bigint", 1), "1 partitions that are not tables")]:
        with pytest.raises(FleetError) as e:
            fence.check_id_table("shard_0042", "t", found)
        assert "shard_0042.t is not a table with a bigint id" in str(e.value) and why in str(e.value)
