"""The router's gate as a move shuts and opens it (RouterGate).  The gate
itself, a table per PL/Proxy cluster that plproxy.get_cluster_version
passes, and the run lock are made by router (router.ensure_gate)."""

import time

from psycopg import sql

from .common import warn
from .router import gate_kind, gate_table


# The router's gate stays shut through the fence unless the new server's
# clock must first catch up by more than this (milliseconds)
GATE_MAX_CLOCK_WAIT_MS = 200
# and after it shuts, calls already past it get this long (milliseconds) to
# reach the old server before the fence's lock is requested
GATE_DRAIN_MS = 30


def gate_opens_for_clock(behind_ms, shut):
    """Whether the gate opens while the new server's clock catches up
    behind_ms milliseconds: a long wait lets the calls for the other
    shards go on"""
    return shut and behind_ms >= GATE_MAX_CLOCK_WAIT_MS


class RouterGate:
    """The gate of one cluster on the router, shut by a move from its fence
    to the router's switch.  run_lock: the session that holds the run lock
    (in a transaction of its own for the whole run), or None."""

    def __init__(self, router, run_lock, cluster, lock_timeout):
        self.router = router
        self.run_lock = run_lock
        self.cluster = cluster
        self.lock_timeout = lock_timeout
        self.shut = False
        self.shut_at = None
        self.warned = False

    def close(self):
        """Shut the gate: every PL/Proxy call of the cluster waits in
        plproxy.get_cluster_version until open().  The lock (EXCLUSIVE on
        the cluster's gate table) is taken in a savepoint of the run lock's
        transaction, so open() gives it back alone; it goes with the
        session, also when the tool is killed.  False where there is no
        gate shardid-fleet can shut (said once)."""
        if self.shut:
            return True
        kind = gate_kind(self.router)
        if kind != "table" or self.run_lock is None:
            self.warn_no_gate(kind)
            return False
        session = self.run_lock
        session.execute("SAVEPOINT shardid_fleet_gate")
        try:
            session.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true)",
                            ("%dms" % int(self.lock_timeout * 1000),))
            session.execute(sql.SQL("LOCK TABLE ONLY {} IN EXCLUSIVE MODE").format(gate_table(self.cluster)))
        except BaseException:
            self._rollback()
            raise
        self.shut = True
        self.shut_at = time.monotonic()
        return True

    def warn_no_gate(self, kind):
        if self.warned:
            return
        warn("the router's plproxy.get_cluster_version has no gate %s: writes on their way to the old "
             "server during the switch fail with 40001; run shardid-fleet router to update it"
             % ("that only shardid-fleet can take (made by an older shardid-fleet, its gate is an "
                "advisory lock, which any role can hold)" if kind == "advisory"
                else "(made by an older shardid-fleet)"))
        self.warned = True

    def open(self):
        if self.shut:
            self.shut = False
            self._rollback()

    def _rollback(self):
        """Roll back to the savepoint the gate was shut in, which releases
        that lock and keeps the run lock.  If that fails, the session is
        closed (which releases both): the gate must not stay shut, and a
        later step that needs the session fails."""
        try:
            self.run_lock.execute("ROLLBACK TO SAVEPOINT shardid_fleet_gate")
            self.run_lock.execute("RELEASE SAVEPOINT shardid_fleet_gate")
        except BaseException:
            try:
                self.run_lock.close()
            except Exception:
                pass
