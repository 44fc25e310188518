"""gate: when the router's gate opens during the fence"""

from shardid_fleet.gate import GATE_MAX_CLOCK_WAIT_MS, RouterGate, gate_opens_for_clock


def test_the_gate_opens_only_for_a_long_clock_wait():
    assert not gate_opens_for_clock(GATE_MAX_CLOCK_WAIT_MS - 1, True)
    assert gate_opens_for_clock(GATE_MAX_CLOCK_WAIT_MS, True)
    assert not gate_opens_for_clock(10 * GATE_MAX_CLOCK_WAIT_MS, False)


def test_open_is_a_no_op_while_not_shut():
    # no session is touched: there is none
    gate = RouterGate(None, None, "shardid", 5.0)
    gate.open()
    assert not gate.shut
