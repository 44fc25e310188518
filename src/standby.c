/*-------------------------------------------------------------------------
 *
 * standby.c
 *	  A fence's record flushed, and the standbys waited for.
 *
 * Which standbys a fence waits for, how long, and what is read of them
 * (exported interfaces only): docs/design.md, "Standbys".
 *
 * src/standby.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/tuplestore.h"

#include "clock.h"
#include "compat.h"
#include "fault.h"
#include "fence_int.h"

/*
 * Are synchronous standbys configured?  As synchronous_standby_names
 * says, whatever this session's synchronous_commit: a role that sets it
 * to local must not publish, for every session of the database, a fence
 * the standbys may not have.  SyncRepConfig is this backend's parsed
 * synchronous_standby_names (NULL when it is empty), the setting
 * SyncRepGetCandidateStandbys chooses the standbys by.
 */
static bool
sync_standbys_defined(void)
{
	return max_wal_senders > 0 && SyncRepConfig != NULL;
}

/*
 * Have the synchronous standbys flushed lsn?  SyncRepGetCandidateStandbys
 * (syncrep.h, for walsenders and user backends) returns the synchronous
 * standbys connected now: with FIRST n (or a list without a method), the n
 * of highest priority; with ANY n, every one listed.  Either way a commit
 * waits for n of them, so lsn is theirs once n have flushed it.  Flushed,
 * whatever this session's synchronous_commit: a fence needs to survive a
 * failover, not to be visible there, and a role that asked for
 * remote_apply, while a query of hers holds up the standby's replay,
 * would otherwise make the write as slow as she likes.
 */
static bool
sync_standbys_have(XLogRecPtr lsn)
{
	SyncRepStandbyData *standbys;
	int			n = SyncRepGetCandidateStandbys(&standbys);
	int			flushed = 0;

	for (int i = 0; i < n; i++)
		flushed += standbys[i].flush >= lsn;
	pfree(standbys);
	return SyncRepConfig == NULL || flushed >= SyncRepConfig->num_sync;
}

/*
 * The rows of the set-returning builtin fn (which takes no argument), in a
 * tuplestore made in the current memory context, and their descriptor in
 * *desc: the call an SQL query makes, in materialize mode.
 */
static Tuplestorestate *
builtin_rows(Oid fn, TupleDesc *desc)
{
	LOCAL_FCINFO(fcinfo, 0);
	FmgrInfo	flinfo;
	ReturnSetInfo rsinfo;

	fmgr_info(fn, &flinfo);
	MemSet(&rsinfo, 0, sizeof(rsinfo));
	rsinfo.type = T_ReturnSetInfo;
	rsinfo.econtext = CreateStandaloneExprContext();
	rsinfo.allowedModes = (int) SFRM_Materialize;
	rsinfo.returnMode = SFRM_ValuePerCall;
	rsinfo.isDone = ExprSingleResult;
	InitFunctionCallInfoData(*fcinfo, &flinfo, 0, InvalidOid, NULL,
							 (Node *) &rsinfo);
	(void) FunctionCallInvoke(fcinfo);
	FreeExprContext(rsinfo.econtext, true);
	if (rsinfo.returnMode != SFRM_Materialize || rsinfo.setDesc == NULL)
		elog(ERROR, "function %u did not return its rows in a tuplestore", fn);
	*desc = rsinfo.setDesc;
	return rsinfo.setResult;	/* NULL: no row */
}

/* The number of the column called name in desc. */
static AttrNumber
column_named(TupleDesc desc, const char *name)
{
	for (int i = 0; i < desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			return (AttrNumber) (i + 1);
	elog(ERROR, "no column \"%s\" in a builtin function's result", name);
	return InvalidAttrNumber;	/* keep the compiler quiet */
}

/*
 * The PIDs of the walsenders streaming to a standby that has not received
 * lsn (written it to its WAL), as pg_stat_replication shows them: state
 * streaming and write_lsn before lsn (or none yet).  Returns their number.
 */
static int
walsenders_behind(XLogRecPtr lsn, int32 *pids)
{
	TupleDesc	desc;
	Tuplestorestate *rows = builtin_rows(F_PG_STAT_GET_WAL_SENDERS, &desc);
	TupleTableSlot *slot;
	AttrNumber	pid_col;
	AttrNumber	state_col;
	AttrNumber	write_col;
	int			n = 0;

	if (rows == NULL)
		return 0;
	pid_col = column_named(desc, "pid");
	state_col = column_named(desc, "state");
	write_col = column_named(desc, "write_lsn");
	slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	while (n < max_wal_senders &&
		   tuplestore_gettupleslot(rows, true, false, slot))
	{
		bool		isnull;
		Datum		state = slot_getattr(slot, state_col, &isnull);
		Datum		write;

		if (isnull || strcmp(TextDatumGetCString(state), "streaming") != 0)
			continue;
		write = slot_getattr(slot, write_col, &isnull);
		if (!isnull && DatumGetLSN(write) >= lsn)
			continue;
		pids[n++] = DatumGetInt32(slot_getattr(slot, pid_col, &isnull));
	}
	ExecDropSingleTupleTableSlot(slot);
	tuplestore_end(rows);
	return n;
}

/*
 * Is the walsender pid one of a logical subscriber?  Logical decoding
 * always holds a logical slot, and pg_replication_slots shows its active
 * PID; a physical standby holds a physical slot or none.
 */
static bool
walsender_is_logical(const int32 *logical, int nlogical, int32 pid)
{
	for (int i = 0; i < nlogical; i++)
		if (logical[i] == pid)
			return true;
	return false;
}

/* The active PIDs of the logical slots, as pg_replication_slots shows them. */
static int
logical_slot_pids(int32 **pids)
{
	TupleDesc	desc;
	Tuplestorestate *rows = builtin_rows(F_PG_GET_REPLICATION_SLOTS, &desc);
	TupleTableSlot *slot;
	AttrNumber	type_col;
	AttrNumber	pid_col;
	int			n = 0;

	*pids = palloc(Max(max_replication_slots, 1) * sizeof(int32));
	if (rows == NULL)
		return 0;
	type_col = column_named(desc, "slot_type");
	pid_col = column_named(desc, "active_pid");
	slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	while (n < max_replication_slots &&
		   tuplestore_gettupleslot(rows, true, false, slot))
	{
		bool		isnull;
		Datum		type = slot_getattr(slot, type_col, &isnull);
		Datum		pid;

		if (isnull || strcmp(TextDatumGetCString(type), "logical") != 0)
			continue;
		pid = slot_getattr(slot, pid_col, &isnull);
		if (!isnull)
			(*pids)[n++] = DatumGetInt32(pid);
	}
	ExecDropSingleTupleTableSlot(slot);
	tuplestore_end(rows);
	return n;
}

/*
 * Has every connected streaming standby received lsn (written it to its
 * WAL)?  Logical walsenders do not count: a subscriber replays no
 * sequence.  Read as pg_stat_replication and pg_replication_slots read
 * it, through their functions, which show the LSNs only to a member of
 * pg_read_all_stats: called as the bootstrap superuser, in a
 * security-restricted operation (they run no code any role defined).
 * A few microseconds: this runs only while a fence write waits for the
 * standbys, about every millisecond, never per ID.
 */
static bool
standbys_received(XLogRecPtr lsn)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "shardid standbys",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Oid			save_userid;
	int			save_sec_context;
	volatile bool received = true;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID, save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		int32	   *behind = palloc(Max(max_wal_senders, 1) * sizeof(int32));
		int			nbehind = walsenders_behind(lsn, behind);

		if (nbehind > 0)
		{
			int32	   *logical;
			int			nlogical = logical_slot_pids(&logical);

			for (int i = 0; i < nbehind && received; i++)
				received = walsender_is_logical(logical, nlogical, behind[i]);
		}
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec_context);
		MemoryContextSwitchTo(old);
	}
	PG_END_TRY();
	MemoryContextDelete(cxt);
	return received;
}

/*
 * Is a streaming standby known to be stalled: one that did not receive a
 * fence record within shardid.standby_wait, and has not received it since?
 * Such a standby is not waited for again until it has caught up, so that
 * a stall costs the primary one wait, not one per fence write.
 */
static bool
standby_stalled(void)
{
	XLogRecPtr	behind;

	if (!shardid_shared)
		return false;
	behind = (XLogRecPtr) pg_atomic_read_u64(&shardid_shared->standby_behind);
	if (behind == InvalidXLogRecPtr)
		return false;
	if (!standbys_received(behind))
		return true;
	/* caught up: wait for it again */
	(void) pg_atomic_compare_exchange_u64(&shardid_shared->standby_behind,
										  (uint64 *) &behind, 0);
	ereport(LOG,
			(errmsg("every connected streaming standby has received shardid's fences again"),
			 errdetail("Fence writes wait for the standbys again, for at most shardid.standby_wait.")));
	return false;
}

/*
 * A standby did not receive lsn within shardid.standby_wait: say so once.
 * True for the one wait that began the stall (the others that waited with
 * it count it no more).
 */
static bool
standby_stall_begins(XLogRecPtr lsn)
{
	uint64		expected = 0;

	if (!shardid_shared)
		return true;
	if (!pg_atomic_compare_exchange_u64(&shardid_shared->standby_behind,
										&expected, (uint64) lsn))
		return false;
	ereport(LOG,
			(errmsg("a streaming standby did not receive shardid's fence within shardid.standby_wait (%d ms)",
					shardid_standby_wait),
			 errdetail("Fences are used without waiting for the standbys until every connected standby has received WAL up to %X/%X; a failover to it meanwhile may repeat IDs.",
					   LSN_FORMAT_ARGS(lsn))));
	return true;
}

/*
 * Flush this backend's WAL up to lsn and wait for the standbys: until the
 * synchronous ones have flushed it, whatever this session's
 * synchronous_commit says, and
 * until every other connected streaming standby has received it, for at
 * most shardid.standby_wait, unless one is known to be stalled (then not
 * at all, until it has caught up).  Polls rather than queues as a commit
 * does: a fence write is rare, and a cancel, statement_timeout or the
 * postmaster's death must end this wait (57014), with nothing published
 * past what the synchronous standbys hold.  Returns false if a standby
 * stopped this wait at shardid.standby_wait, and this wait began the
 * stall: once per stall.
 */
static bool
fence_flush_wait(XLogRecPtr lsn)
{
	TimestampTz until;

	XLogFlush(lsn);
	SHARDID_FAULT("after_flush");
	if (sync_standbys_defined() ||
		(shardid_standby_wait > 0 && max_wal_senders > 0))
		SHARDID_FAULT("before_standby_wait");
	while (sync_standbys_defined() && !sync_standbys_have(lsn))
		shardid_clock_pause(1000);

	if (shardid_standby_wait <= 0 || max_wal_senders == 0 || standbys_received(lsn))
		return true;
	if (standby_stalled())
		return true;
	until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), shardid_standby_wait);
	for (int i = 0;; i++)
	{
		/* a standby nearby answers within a fraction of a millisecond */
		shardid_clock_pause(i < 20 ? 50 : 1000);
		if (standbys_received(lsn))
			return true;
		if (GetCurrentTimestamp() >= until)
			return !standby_stall_begins(lsn);
	}
}

bool
fence_flush(XLogRecPtr lsn)
{
	bool		caught_up = fence_flush_wait(lsn);

	SHARDID_FAULT("after_standby_wait");
	return caught_up;
}

/*
 * Whether the record that ends at lsn may be used as a fence now, without
 * waiting and without a flush of its own: the log is flushed past it (a
 * commit's flush carried it), the synchronous standbys have flushed it,
 * and every other connected streaming standby has received it, or one is
 * known to be stalled, or shardid.standby_wait has passed since *flushed,
 * when this server first saw the record flushed (0: not yet; set here):
 * then a stall begins, and *timed_out says so.  The cover's ride on the
 * commits' flushes; its fault points are fence_flush_wait's.
 */
bool
fence_received(XLogRecPtr lsn, TimestampTz *flushed, bool *timed_out)
{
	*timed_out = false;
	if (GetFlushRecPtr(NULL) < lsn)
		return false;
	if (*flushed == 0)
		*flushed = GetCurrentTimestamp();
	SHARDID_FAULT("after_flush");
	if (sync_standbys_defined() ||
		(shardid_standby_wait > 0 && max_wal_senders > 0))
		SHARDID_FAULT("before_standby_wait");
	if (sync_standbys_defined() && !sync_standbys_have(lsn))
		return false;
	if (shardid_standby_wait > 0 && max_wal_senders > 0 &&
		!standbys_received(lsn) && !standby_stalled())
	{
		if (GetCurrentTimestamp() <
			TimestampTzPlusMilliseconds(*flushed, shardid_standby_wait))
			return false;
		*timed_out = standby_stall_begins(lsn);
	}
	SHARDID_FAULT("after_standby_wait");
	return true;
}
