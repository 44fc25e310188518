/*-------------------------------------------------------------------------
 *
 * fence.c
 *	  The durable fence: where each database keeps it, and how it is read
 *	  and written.
 *
 * A database's fence is a time field at or before which the database
 * issues no ID again (guard.c keeps every issued ID at or before it).  It
 * lives in the database itself, as the value of the sequence
 * shardid_fence that extension shardid 1.1 creates in its schema, so that
 * PostgreSQL carries it every way it carries the data:
 *
 *	- setval() writes a WAL record, which crash recovery, streaming and
 *	  cascading standbys and point-in-time recovery replay;
 *	- pg_basebackup copies the sequence with the rest of the data
 *	  directory, and the WAL that comes with the backup;
 *	- pg_dump dumps its value (the extension marks it with
 *	  pg_extension_config_dump), and pg_restore sets it;
 *	- pg_upgrade carries it as it carries every sequence.
 *
 * A sequence is written outside transactions: a fence written by a
 * transaction that rolls back stays written, as it must, since the IDs it
 * covered may already have been handed out.  There is one exception: a
 * sequence created (or given a new relfilenode) in the current transaction
 * disappears with it if it rolls back, so a fence written there is not
 * durable until commit; shardid_fence_is_transactional() tells the guard.
 * setval() does not wait for its WAL record to reach the disk, so
 * shardid_fence_flush() flushes it, and waits for synchronous standbys as
 * a commit would, except that the wait ends the statement with 57014 when
 * it is cancelled or times out (a commit's wait cannot, but a fence that
 * the standbys have not acknowledged must not be used).
 *
 * Writers of one database's fence are serialized by a self-conflicting
 * lock on the sequence itself (ShareUpdateExclusiveLock), held only for
 * the read, the compare and the write: whichever shared-memory entry a
 * backend works through, it never writes a value below the stored one.
 *
 * Beside the fence, version 1.2 keeps two more sequences of the same kind:
 * shardid_epoch, the database's epoch (Unix ms), and shardid_fence_lead,
 * how far the stored fence may lie ahead of the newest ID (the lead and a
 * quarter in force when it was written), so that a start judges the fence
 * by the lead it was written with.
 *
 * The sequence belongs to the extension's owner and no one else may read
 * or write it; the functions here switch to the owner for the one call
 * that does, as SECURITY DEFINER would.
 *
 * src/fence.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "replication/walsender_private.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

#include "compat.h"

#include "fence.h"

/* The schema of extension extoid. */
static Oid
extension_schema(Oid extoid)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			nspid = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		nspid = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nspid;
}

/*
 * The extension's own logged sequence named relname in its schema, or
 * InvalidOid if the extension or the sequence is absent.  A relation of
 * that name that is not the extension's own is refused: it was found by
 * name, and could have been put there by anyone with CREATE on the schema.
 */
static Oid
member_lookup(const char *relname)
{
	Oid			extoid = get_extension_oid("shardid", true);
	Oid			nspid;
	Oid			relid;

	if (!OidIsValid(extoid))
		return InvalidOid;
	nspid = extension_schema(extoid);
	if (!OidIsValid(nspid))
		return InvalidOid;
	relid = get_relname_relid(relname, nspid);
	if (!OidIsValid(relid))
		return InvalidOid;

	/* found by name: only the extension's own logged sequence counts */
	if (getExtensionOfObject(RelationRelationId, relid) != extoid ||
		get_rel_relkind(relid) != RELKIND_SEQUENCE ||
		get_rel_persistence(relid) != RELPERSISTENCE_PERMANENT)
		return InvalidOid;
	return relid;
}

/*
 * The sequences found, per backend (a backend serves one database).  A
 * relcache invalidation of one of them (DROP EXTENSION, ALTER, a rollback
 * of their creation) or of all relations forgets them all; a sequence not
 * found is looked up again each time.
 */
static const char *const member_names[] = {
	SHARDID_FENCE_RELNAME, SHARDID_EPOCH_RELNAME, SHARDID_LEAD_RELNAME
};
#define MEMBER_COUNT lengthof(member_names)
static Oid	member_cache[MEMBER_COUNT];

void
shardid_fence_invalidate(Oid relid)
{
	int			i;
	bool		hit = !OidIsValid(relid);

	for (i = 0; i < (int) MEMBER_COUNT; i++)
		hit |= member_cache[i] == relid;
	if (hit)
		memset(member_cache, 0, sizeof(member_cache));
}

Oid
shardid_fence_member(const char *relname)
{
	int			i;

	for (i = 0; i < (int) MEMBER_COUNT; i++)
	{
		if (strcmp(member_names[i], relname) == 0)
		{
			if (!OidIsValid(member_cache[i]))
				member_cache[i] = member_lookup(relname);
			return member_cache[i];
		}
	}
	return member_lookup(relname);
}

bool
shardid_fence_is(Oid relid)
{
	if (!OidIsValid(member_cache[0]))
		member_cache[0] = member_lookup(SHARDID_FENCE_RELNAME);
	return OidIsValid(relid) && relid == member_cache[0];
}

Oid
shardid_fence_relid(void)
{
	return shardid_fence_member(SHARDID_FENCE_RELNAME);
}

bool
shardid_fence_is_transactional(Oid relid)
{
	Relation	rel = RelationIdGetRelation(relid);
	bool		result;

	if (!RelationIsValid(rel))
		return false;
	result = rel->rd_createSubid != InvalidSubTransactionId ||
		rel->SHARDID_RD_FIRST_NEW_FILE_SUBID != InvalidSubTransactionId;
	RelationClose(rel);
	return result;
}

Oid
shardid_fence_lock(bool wait, bool *waited)
{
	if (waited)
		*waited = false;
	for (;;)
	{
		Oid			relid = shardid_fence_relid();

		if (!OidIsValid(relid))
			return InvalidOid;
		if (!ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
		{
			if (!wait)
				return InvalidOid;
			if (waited)
				*waited = true;
			LockRelationOid(relid, ShareUpdateExclusiveLock);
		}

		/* the lock brought in invalidations: is it still the fence? */
		if (shardid_fence_relid() == relid)
			return relid;
		UnlockRelationOid(relid, ShareUpdateExclusiveLock);
		if (!wait)
			return InvalidOid;
	}
}

void
shardid_fence_unlock(Oid relid)
{
	UnlockRelationOid(relid, ShareUpdateExclusiveLock);
}

/* Switch to the owner of relid; returns what to switch back to. */
static void
become_owner(Oid relid, Oid *save_userid, int *save_sec_context)
{
	HeapTuple	tuple;
	Oid			owner;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("shardid's fence sequence (OID %u) does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);

	GetUserIdAndSecContext(save_userid, save_sec_context);
	SetUserIdAndSecContext(owner, *save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

int64
shardid_seq_read(Oid relid)
{
	LOCAL_FCINFO(fcinfo, 1);
	Oid			save_userid;
	int			save_sec_context;
	Datum		result;

	become_owner(relid, &save_userid, &save_sec_context);
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(relid);
	fcinfo->args[0].isnull = false;
	result = pg_sequence_last_value(fcinfo);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	/* NULL: never set since the sequence was created */
	return fcinfo->isnull ? -1 : DatumGetInt64(result);
}

void
shardid_seq_write(Oid relid, int64 value)
{
	Oid			save_userid;
	int			save_sec_context;

	become_owner(relid, &save_userid, &save_sec_context);
	(void) DirectFunctionCall2(setval_oid, ObjectIdGetDatum(relid),
							   Int64GetDatum(value));
	SetUserIdAndSecContext(save_userid, save_sec_context);
}

/*
 * Are synchronous standbys configured?  As the server says, whatever this
 * session's synchronous_commit: a role that sets it to local must not
 * publish, for every session of the database, a fence the standbys may
 * not have.  Until the checkpointer has first read the setting into
 * shared memory, the setting itself says.
 */
static bool
standbys_defined(void)
{
	bool		defined;

	if (max_wal_senders == 0)
		return false;
	LWLockAcquire(SyncRepLock, LW_SHARED);
	defined = SHARDID_SYNC_STANDBYS_DEFINED(WalSndCtl);
	LWLockRelease(SyncRepLock);
	return defined ||
		(SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0');
}

/*
 * Have the synchronous standbys flushed lsn (applied it, if this session
 * asks for remote_apply)?  From the shared state the WAL senders keep.
 */
static bool
standbys_have(XLogRecPtr lsn)
{
	int			mode = synchronous_commit == SYNCHRONOUS_COMMIT_REMOTE_APPLY ?
		SYNC_REP_WAIT_APPLY : SYNC_REP_WAIT_FLUSH;
	bool		done;

	LWLockAcquire(SyncRepLock, LW_SHARED);
	done = lsn <= WalSndCtl->lsn[mode];
	LWLockRelease(SyncRepLock);
	return done;
}

void
shardid_fence_flush(void)
{
	XLogRecPtr	lsn = XactLastRecEnd;

	XLogFlush(lsn);

	/*
	 * Poll rather than queue as a commit does: a fence write is rare (one
	 * per lead), and a cancel, statement_timeout or the postmaster's death
	 * must end this wait, with nothing published past what the standbys
	 * hold.
	 */
	while (standbys_defined() && !standbys_have(lsn))
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}
