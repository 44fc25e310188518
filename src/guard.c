/*-------------------------------------------------------------------------
 *
 * guard.c
 *	  The guard: where shardid_next's IDs go in time, so that none is ever
 *	  issued twice, across sessions, clock steps, restarts, crashes,
 *	  failovers and restores.
 *
 * The published scheme takes nextval() % 1024 beside the current
 * millisecond.  A caller faster than 1,024 IDs per millisecond, or a clock
 * that steps back, makes it repeat itself.  shardid keeps, per (database,
 * sequence), the last time field issued and the block of sequence values
 * that field holds; rule.h decides from that state and the clock where
 * each value goes.  Everything is compared as time fields (milliseconds
 * since the database's epoch, which is kept beside its fence and which
 * shardid_next may not change: an earlier epoch's larger fields would
 * carry the fence ahead of the clock).
 *
 * The block alone keeps IDs apart only while the sequence moves forward.
 * A sequence that cycles or is set back hands out a value of the same
 * block again, so each slot also keeps a bitmap of the ten-bit values
 * issued in its last field; a value whose bit is taken there goes to a
 * later field.
 *
 * Shared memory does not survive the postmaster, so each database also
 * keeps a durable fence (fence.c): a time field at or before which the
 * database issues no ID again, stored in the database and carried by WAL,
 * base backups, pg_dump and pg_upgrade.  The guard keeps it ahead:
 *
 *	- No ID is returned with a field past the fence as this server knows
 *	  it (one comparison with a value read without a lock).  An ID that
 *	  would pass it waits until a backend has written a new fence, flushed
 *	  it, and, with synchronous replication, had it acknowledged.
 *	- The new fence is the old one (or the field, if later) plus
 *	  shardid.fence_lead, and it is written as soon as an ID comes within
 *	  a quarter of the lead of the old one, by the backend that issued it,
 *	  after the ID: so under steady load the guard writes one small WAL
 *	  record per lead and per database, and no caller waits for it.
 *	- After any start, and so after a crash, a promotion or a restore, a
 *	  database's slots start at its fence as read from the database.  A
 *	  clock behind it by no more than the lead it was written with (and
 *	  the quarter) waits for it; a clock further behind is the clock's
 *	  fault, waited out up to shardid.max_clock_regression beyond that and
 *	  refused beyond.
 *	- A fence written into a sequence that the current transaction created
 *	  is undone if it rolls back: it is never published (see xact_fence),
 *	  and a transaction that dropped the committed fence issues nothing
 *	  past it.
 *	- A new slot starts after the largest ID already in its table
 *	  (floor.c), which holds when the fence does not: after DROP and
 *	  CREATE EXTENSION, or a dump of part of a database.
 *
 * No lock is held while calling nextval (the caller did that before
 * coming here), while sleeping, or while raising an error.  The slot's
 * spinlock is held across the clock reading, the decision and the update.
 * The fence is read and written under its sequence's fence lock, a
 * heavyweight lock, and no LWLock or spinlock is held meanwhile: so a
 * cancel ends any wait for it, for the disk or for the standbys.  Every
 * sleep ends if the postmaster dies.  See shmem.h.
 *
 * src/guard.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/pmsignal.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "compat.h"
#include "fence.h"
#include "floor.h"
#include "guard.h"
#include "report.h"
#include "rule.h"
#include "shmem.h"

/* Longest single sleep, so that a long wait notices interrupts promptly. */
#define GUARD_MAX_SLEEP_US	10000

/*
 * Backend-local memory of the slot each sequence uses, indexed by the
 * sequence's OID (a backend serves one database).  Only a hint: the
 * slot's key is checked under its mutex.
 */
#define GUARD_CACHE_SIZE 64

typedef struct GuardCacheEntry
{
	Oid			seqid;
	int			slotno;
} GuardCacheEntry;

static GuardCacheEntry guard_cache[GUARD_CACHE_SIZE];

/* GUCs */
static int	guard_max_clock_regression = 1000;
int			shardid_fence_lead = 500;
static int	guard_debug_fence_write_delay = 0;

/*
 * A fence written into a sequence that is new in the current transaction
 * (CREATE EXTENSION, or DROP and CREATE, not yet committed): it is undone
 * if the transaction rolls back, so it is never published in shared
 * memory.  This backend alone may issue up to it, until its transaction
 * ends; at the end, whichever way, the next call in the database reads
 * the fence again and, if the server knows of IDs past it, writes a fence
 * past them first.
 */
static int64 xact_fence = -1;
static LocalTransactionId xact_fence_lxid = InvalidLocalTransactionId;
static bool reload_at_xact_end = false;

/*
 * This transaction dropped the database's committed fence (DROP EXTENSION,
 * perhaps to create it again).  A rollback brings that fence back with
 * its old value, and a crash before the next call would forget any ID
 * past it: so until the transaction ends, no ID past the published fence
 * is issued here at all (55000), rather than under a fence a rollback
 * undoes.  A transaction that creates the extension in a database that
 * had none may issue under its own fence: without the extension after a
 * rollback, nothing can issue there.
 */
static bool fence_dropped_in_xact = false;
static object_access_hook_type prev_object_access_hook = NULL;

static void guard_object_access(ObjectAccessType access, Oid classId,
								Oid objectId, int subId, void *arg);

static void guard_xact_callback(XactEvent event, void *arg);
static void guard_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								   SubTransactionId parentSubid, void *arg);

/*
 * From shardid.fence_lead: how close to the fence an ID may come before a
 * new one is written (a quarter of the lead), and how far the fence may
 * be ahead of the newest ID, the lead of a start (the lead and a quarter).
 */
static int64 fence_margin = 125;
static int64 fence_slack = 625;

static void
fence_lead_assign(int newval, void *extra)
{
	fence_margin = Max(newval / 4, 1);
	fence_slack = newval + fence_margin;
}

void
shardid_guard_define(void)
{
	DefineCustomIntVariable("shardid.max_clock_regression",
							"Sets how far the clock may step back before shardid_next refuses instead of waiting.",
							NULL,
							&guard_max_clock_regression,
							1000,
							0,
							3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("shardid.fence_lead",
							"Sets how far ahead of the IDs it issues shardid writes each database's durable fence.",
							NULL,
							&shardid_fence_lead,
							500,
							10,
							60 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, fence_lead_assign, NULL);

	DefineCustomIntVariable("shardid.debug_fence_write_delay",
							"Sets a delay before each fence write, for tests that force a race.",
							NULL,
							&guard_debug_fence_write_delay,
							0,
							0,
							60 * 1000,
							PGC_SUSET,
							GUC_UNIT_MS | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	shardid_shmem_define();

	MarkGUCPrefixReserved("shardid");

	RegisterXactCallback(guard_xact_callback, NULL);
	RegisterSubXactCallback(guard_subxact_callback, NULL);
	prev_object_access_hook = object_access_hook;
	object_access_hook = guard_object_access;
}

/* A DROP of the database's fence: see fence_dropped_in_xact. */
static void
guard_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 &&
		!fence_dropped_in_xact && IsTransactionState() &&
		shardid_fence_is(objectId))
		fence_dropped_in_xact = true;
}

/* Does this backend's transaction-local fence cover field? */
static inline bool
xact_fence_covers(int64 field)
{
	return xact_fence_lxid == SHARDID_MY_LXID &&
		xact_fence_lxid != InvalidLocalTransactionId && field <= xact_fence &&
		!fence_dropped_in_xact;
}

/* Refuse an ID past the published fence: see fence_dropped_in_xact. */
static void
report_fence_dropped(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("shardid_next cannot pass the durable fence of database \"%s\" in the transaction that dropped it",
					get_database_name(MyDatabaseId)),
			 errdetail("Extension shardid was dropped in this transaction.  A fence written now would be undone by a rollback, and a crash after the rollback would forget the IDs it covered."),
			 errhint("Commit the DROP EXTENSION and CREATE EXTENSION first, then issue IDs.")));
}

/* The next call in this database reads its fence again. */
static void
request_reload(void)
{
	GuardDb    *db;

	if (!shardid_shared)
		return;
	db = shardid_db_current();
	if (db == NULL)
		return;
	SpinLockAcquire(&db->mutex);
	if (db->dbid == MyDatabaseId &&
		pg_atomic_read_u32(&db->state) != GUARD_FENCE_UNKNOWN)
		pg_atomic_write_u32(&db->state, GUARD_FENCE_RELOAD);
	SpinLockRelease(&db->mutex);
}

static void
guard_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:

			/*
			 * Whoever commits the prepared transaction would not tell the
			 * guard that the fence changed hands, as this backend does at
			 * its own commit.
			 */
			if (reload_at_xact_end || fence_dropped_in_xact)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that created or dropped shardid's durable fence"),
						 errhint("Run CREATE, ALTER or DROP EXTENSION shardid and shardid_set_epoch in a transaction of their own.")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			xact_fence_lxid = InvalidLocalTransactionId;
			xact_fence = -1;
			fence_dropped_in_xact = false;
			if (reload_at_xact_end)
			{
				reload_at_xact_end = false;
				request_reload();
			}
			break;
		default:
			break;
	}
}

/*
 * A rolled-back savepoint may take the fence sequence with it (created
 * after the savepoint): forget the transaction's fence and read again.
 */
static void
guard_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && reload_at_xact_end)
	{
		xact_fence_lxid = InvalidLocalTransactionId;
		xact_fence = -1;
		request_reload();
	}
}

/*
 * Sleep us microseconds at most, then service interrupts.  A sleep of a
 * millisecond or more waits on the latch, which ends it at once if the
 * postmaster dies; a shorter one checks for that after it.  Either way a
 * backend whose postmaster is gone exits here, and returns no ID.
 */
static void
guard_pause(int64 us)
{
	if (us >= 1000)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 (long) (us / 1000), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	else
	{
		if (us > 0)
		{
			pgstat_report_wait_start(PG_WAIT_EXTENSION);
			pg_usleep((long) us);
			pgstat_report_wait_end();
		}
		if (!PostmasterIsAlive())
			proc_exit(1);
	}
	CHECK_FOR_INTERRUPTS();
}

static inline bool
db_is_mine(GuardDb *db)
{
	return db->dbid == MyDatabaseId;
}

/*
 * The epoch stored for the current database, Unix ms; *free says the
 * database has no epoch of its own (shardid 1.1, not yet updated), so that
 * each call keeps its own as it did there.
 */
static int64
stored_epoch_of(bool *free)
{
	Oid			relid = shardid_fence_member(SHARDID_EPOCH_RELNAME);
	int64		epoch = OidIsValid(relid) ? shardid_seq_read(relid) : -1;

	if (free)
		*free = !OidIsValid(relid);
	return epoch >= 0 ? epoch : SHARDID_DEFAULT_EPOCH_UNIX_MS;
}

static int64
stored_epoch(void)
{
	return stored_epoch_of(NULL);
}

/*
 * Store value as the fence in relid unless the stored one is already at or
 * past it, with the lead it is written with, and flush.  The caller holds
 * the fence lock (shardid_fence_lock), so that the compare and the write
 * are one step for every writer of the database.  Returns the stored
 * fence, which is at least value.
 */
static int64
fence_store(Oid relid, int64 value, int64 slack, int64 *took_ms)
{
	int64		disk = shardid_seq_read(relid);
	Oid			lead_relid;
	int64		lead_disk = -1;
	TimestampTz start;

	if (took_ms)
		*took_ms = 0;
	if (value <= disk)
		return disk;
	start = GetCurrentTimestamp();
	if (guard_debug_fence_write_delay > 0)
	{
		/* the whole delay, whatever sets the latch meanwhile */
		TimestampTz until = TimestampTzPlusMilliseconds(start,
														guard_debug_fence_write_delay);

		while (GetCurrentTimestamp() < until)
			guard_pause(Min(until - GetCurrentTimestamp(), GUARD_MAX_SLEEP_US));
	}

	/*
	 * The lead record must never say less than the lead of the stored
	 * fence, whichever write a crash keeps: a larger lead is recorded
	 * before the fence, a smaller one after it.
	 */
	lead_relid = shardid_fence_member(SHARDID_LEAD_RELNAME);
	if (OidIsValid(lead_relid))
		lead_disk = shardid_seq_read(lead_relid);
	if (OidIsValid(lead_relid) && slack > lead_disk)
		shardid_seq_write(lead_relid, slack);
	shardid_seq_write(relid, value);
	if (OidIsValid(lead_relid) && slack < lead_disk)
		shardid_seq_write(lead_relid, slack);
	shardid_fence_flush();
	if (took_ms)
		*took_ms = (GetCurrentTimestamp() - start) / 1000;
	return value;
}

/*
 * How far ahead of field the next fence goes: the lead, and as long again
 * as the last write took, so that a write slower than the lead (a slow
 * disk, a distant synchronous standby) is still ahead of the clock when it
 * is durable, rather than being overtaken and written again, forever.
 * *slack is what the lead record then says.
 */
static int64
fence_value(GuardDb *db, int64 base, int64 *slack)
{
	int64		lag;

	SpinLockAcquire(&db->mutex);
	lag = db->write_lag_ms;
	SpinLockRelease(&db->mutex);
	*slack = fence_slack + lag;
	return base + shardid_fence_lead + lag;
}

/* After a write that took took_ms: remember it, and count it. */
static void
fence_wrote(GuardDb *db, int64 took_ms, bool waited)
{
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db))
	{
		db->write_lag_ms = Min(took_ms, 60 * 1000);
		db->fence_writes++;
		if (waited)
			db->fence_write_waits++;
	}
	SpinLockRelease(&db->mutex);
}

/* The lead record of the stored fence, or 0 if there is none. */
static int64
stored_slack(void)
{
	Oid			lead_relid = shardid_fence_member(SHARDID_LEAD_RELNAME);
	int64		slack = OidIsValid(lead_relid) ? shardid_seq_read(lead_relid) : -1;

	return slack > 0 ? slack : 0;
}

/*
 * Read the current database's fence: after this server started (or the
 * database's entry was taken and given back), when its slots then start at
 * the fence, or again after CREATE EXTENSION, ALTER EXTENSION UPDATE or
 * the end of the transaction that made either, when they stay where they
 * are.  If the server knows of IDs past the fence (the database had no
 * fence while they were issued), a fence past them is written first.
 */
static void
guard_fence_load(GuardDb *db)
{
	Oid			relid;
	int64		disk;
	int64		fence;
	int64		known;
	int64		published;
	int64		epoch;
	int64		slack;
	int64		took = 0;
	bool		wrote = false;
	bool		waited = false;
	bool		transactional;
	bool		epoch_free;
	uint32		state;

	/* the fence lock serializes loads and writes; its wait can be cancelled */
	relid = shardid_fence_lock(true, &waited);

	state = pg_atomic_read_u32(&db->state);
	if (!db_is_mine(db) ||
		(state != GUARD_FENCE_UNKNOWN && state != GUARD_FENCE_RELOAD))
	{
		if (OidIsValid(relid))
			shardid_fence_unlock(relid);
		return;
	}

	if (!OidIsValid(relid))
	{
		SpinLockAcquire(&db->mutex);
		if (db_is_mine(db))
		{
			pg_atomic_write_u64(&db->epoch, (uint64) GUARD_DEFAULT_EPOCH);
			pg_atomic_write_u32(&db->state, GUARD_FENCE_NONE);
		}
		SpinLockRelease(&db->mutex);
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("database \"%s\" has no durable fence for shardid",
						get_database_name(MyDatabaseId)),
				 errdetail("Extension shardid is older than version 1.1 here, so its IDs are kept apart by shared memory alone, which a crash of the server loses."),
				 errhint("Run ALTER EXTENSION shardid UPDATE in this database.")));
		return;
	}

	transactional = shardid_fence_is_transactional(relid);
	disk = shardid_seq_read(relid);
	epoch = stored_epoch_of(&epoch_free);
	slack = stored_slack();

	/*
	 * What the server knows was issued, and the fence it published: other
	 * backends may have issued up to that without the lock.  A fence read
	 * back (after CREATE EXTENSION, or from another entry) must cover
	 * both: the lead past the IDs, and at least the published fence, but
	 * not the lead past that, which would put it further ahead of the
	 * clock than its lead record says.
	 */
	known = shardid_db_known_max(db);
	published = guard_fence_read(db);
	fence = disk;
	if (Max(known, published) > disk)
	{
		int64		new_slack;
		int64		value = Max(fence_value(db, known, &new_slack), published);

		fence = fence_store(relid, value, new_slack, &took);
		wrote = true;
	}
	else if (!transactional && disk >= 0)
	{
		/*
		 * A fence this backend did not write may not be durable yet: the
		 * write of a backend whose wait for the standbys was cancelled, or
		 * a commit made with synchronous_commit off.  Write it again (one
		 * small record, after every record it depends on) and flush that,
		 * waiting for the standbys, before it is used.
		 */
		shardid_seq_write(relid, disk);
		shardid_fence_flush();
		wrote = true;
	}
	if (transactional)
	{
		/* see xact_fence: this backend's alone until commit */
		xact_fence = fence;
		xact_fence_lxid = SHARDID_MY_LXID;
		reload_at_xact_end = true;
	}

	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db) && pg_atomic_read_u32(&db->state) != state)
	{
		/* handed over and back meanwhile: read it again */
		SpinLockRelease(&db->mutex);
		shardid_fence_unlock(relid);
		return;
	}
	if (db_is_mine(db))
	{
		if (state == GUARD_FENCE_UNKNOWN)
		{
			/* judged by the lead the stored fence was written with */
			db->start = Max(db->start, disk);
			db->start_slack = slack;
			pg_atomic_fetch_add_u32(&db->gen, 1);
		}
		pg_atomic_write_u64(&db->epoch, (uint64) epoch);
		db->epoch_free = epoch_free;
		/* gen before fence: see shardid_guard_next */
		if (!transactional)
			pg_atomic_write_u64(&db->fence, (uint64) fence);
		pg_atomic_write_u32(&db->state, GUARD_FENCE_LOADED);
	}
	SpinLockRelease(&db->mutex);
	if (wrote)
		fence_wrote(db, took, waited);
	shardid_fence_unlock(relid);
}

/*
 * Make the fence cover field, a time field under epoch_ms (Unix ms).
 * required: an ID at field waits for this, so
 * wait for the fence lock and write if the fence is below field.
 * Otherwise this is the early write that keeps callers from waiting: skip
 * it if another backend is at it, and write only if field is within the
 * margin.  No LWLock or spinlock is held while writing: the write waits
 * for the disk and perhaps for standbys, and that wait must end on a
 * cancel, a statement_timeout or the postmaster's death.
 */
static void
guard_fence_advance(GuardDb *db, int64 field, bool required, int64 epoch_ms)
{
	Oid			relid;
	int64		fence;
	int64		disk;
	int64		value;
	int64		slack;
	int64		took = 0;
	int64		margin = required ? 0 : fence_margin;
	bool		waited = false;
	bool		transactional;

	if (!required &&
		(field <= guard_fence_read(db) - margin ||
		 pg_atomic_read_u32(&db->writing) != 0))
		return;
	relid = shardid_fence_lock(required, &waited);
	if (!OidIsValid(relid))
	{
		/*
		 * The fence is gone: a transaction that created the extension
		 * rolled back, or the extension was dropped.  Read again what the
		 * database has; the guard then goes on as for shardid 1.0, and
		 * says so.  (Without required: another backend holds the lock.)
		 */
		if (required)
		{
			SpinLockAcquire(&db->mutex);
			if (db_is_mine(db))
				pg_atomic_write_u32(&db->state, GUARD_FENCE_UNKNOWN);
			SpinLockRelease(&db->mutex);
		}
		return;
	}

	fence = guard_fence_read(db);
	transactional = shardid_fence_is_transactional(relid);
	if (transactional && fence_dropped_in_xact)
	{
		shardid_fence_unlock(relid);
		if (required)
			report_fence_dropped();
		return;
	}
	if (transactional && xact_fence_lxid == SHARDID_MY_LXID)
		fence = Max(fence, xact_fence);
	if (!db_is_mine(db) ||
		pg_atomic_read_u32(&db->state) != GUARD_FENCE_LOADED ||
		field <= fence - margin)
	{
		/* another backend wrote it meanwhile, or the entry changed hands */
		shardid_fence_unlock(relid);
		return;
	}

	/*
	 * The stored fence may be later than this server knows: a restore into
	 * this database while it runs, a write through another entry, or a
	 * write whose wait for the standbys was cancelled.  The database's
	 * slots start again from it, as after a restart, judged by the lead it
	 * was written with: so no ID goes past it without a new write.
	 */
	disk = shardid_seq_read(relid);
	if (disk > fence && !transactional)
	{
		int64		disk_slack = stored_slack();

		SpinLockAcquire(&db->mutex);
		if (db_is_mine(db))
		{
			db->start = Max(db->start, disk);
			db->start_slack = disk_slack;
			/* gen before fence: see shardid_guard_next */
			pg_atomic_fetch_add_u32(&db->gen, 1);
			pg_atomic_write_u64(&db->fence, (uint64) disk);
		}
		SpinLockRelease(&db->mutex);
		fence = disk;
		if (field <= fence - margin)
		{
			shardid_fence_unlock(relid);
			return;
		}
	}

	/*
	 * From the clock, if it is later than field: the write takes time.  In
	 * the call's epoch, which is the database's but in a database still at
	 * 1.1, where each call has its own.
	 */
	{
		int64		now_field = shardid_floor_div(shardid_clock_now_us(), 1000) -
			epoch_ms;

		value = fence_value(db, Max(fence, Max(field, now_field)), &slack);
	}

	/*
	 * Early writers skip the lock while this is set.  An error in the
	 * write (a cancelled wait for the standbys) leaves it set, until the
	 * next required write, which does not look at it, clears it.
	 */
	pg_atomic_write_u32(&db->writing, 1);
	value = fence_store(relid, value, slack, &took);

	if (transactional)
	{
		xact_fence = value;
		xact_fence_lxid = SHARDID_MY_LXID;
		reload_at_xact_end = true;
	}
	else
	{
		SpinLockAcquire(&db->mutex);
		if (db_is_mine(db))
			pg_atomic_write_u64(&db->fence, (uint64) value);
		SpinLockRelease(&db->mutex);
	}
	fence_wrote(db, took, waited);
	pg_atomic_write_u32(&db->writing, 0);
	shardid_fence_unlock(relid);
}

void
shardid_guard_reload_fence(void)
{
	GuardDb    *db;
	Oid			relid;

	if (!shardid_shared)
		return;
	db = shardid_db_current();
	if (db == NULL)
		return;

	/*
	 * IDs this server issued here while the database had no fence (at
	 * 1.0, or before DROP and CREATE EXTENSION) get a fence past them now,
	 * in the same transaction that creates the fence: if it commits, no
	 * crash after it can forget them.
	 */
	relid = shardid_fence_lock(true, NULL);
	if (OidIsValid(relid))
	{
		int64		known = shardid_db_known_max(db);
		int64		published = guard_fence_read(db);

		if (db_is_mine(db) && Max(known, published) >= 0)
		{
			int64		slack;
			int64		value = Max(fence_value(db, known, &slack), published);

			(void) fence_store(relid, value, slack, NULL);
		}
		shardid_fence_unlock(relid);
	}

	/* the next call reads the fence, now and again when this ends */
	request_reload();
	reload_at_xact_end = true;
}

/*
 * The slot's database start rose (gen changed): the slot starts again at
 * it, unless it is already past it.  Called under the slot's mutex.
 */
static inline void
slot_restart(GuardSlot *slot, GuardDb *db, uint32 gen)
{
	int64		start;
	int64		slack;

	SpinLockAcquire(&db->mutex);
	start = db->start;
	slack = db->start_slack;
	SpinLockRelease(&db->mutex);
	if (start > slot->last)
	{
		slot->last = start;
		slot->start_slack = slack;
		slot->last_block = SHARDID_NO_BLOCK;
		slot->fenced = true;
		/* which values the start holds is not known: take them all */
		guard_slot_take_all(slot);
	}
	slot->gen = gen;
}

/*
 * Sleep until the clock reads unix_ms, at most GUARD_MAX_SLEEP_US at a
 * time, then service interrupts (statement_timeout, pg_cancel_backend) and
 * the postmaster's death.
 */
static void
guard_sleep_until(int64 unix_ms, int64 now_us)
{
	int64		us = unix_ms * 1000 - now_us;

	guard_pause(Min(us, GUARD_MAX_SLEEP_US));
}

/* The slot of seqid in this database, as this backend remembers it. */
static inline GuardSlot *
slot_of(Oid seqid)
{
	GuardCacheEntry *cached = &guard_cache[seqid % GUARD_CACHE_SIZE];

	if (unlikely(cached->seqid != seqid))
	{
		cached->slotno = shardid_slot_lookup(MyDatabaseId, seqid);
		cached->seqid = seqid;
	}
	return &shardid_shared->slots[cached->slotno];
}

/* Forget where seqid's slot is: it was evicted. */
static void
slot_forget(Oid seqid)
{
	guard_cache[seqid % GUARD_CACHE_SIZE].seqid = InvalidOid;
}

/*
 * A new slot: read the largest ID already in its table (floor.c), outside
 * every lock, and start the slot after it.  A field found there is an
 * issued ID's, so a clock behind it went back (lead 1), unlike a start at
 * the fence.
 */
static void
slot_probe(Oid seqid)
{
	int64		found = shardid_table_floor(seqid);
	GuardSlot  *slot = slot_of(seqid);

	SpinLockAcquire(&slot->mutex);
	if (slot->in_use && slot->key.seqid == seqid &&
		slot->key.dbid == MyDatabaseId && slot->probe_pending)
	{
		slot->probe_pending = false;
		if (found > slot->last)
		{
			slot->unprobed_last = slot->last;
			slot->probed = true;
			slot->last = found;
			slot->last_block = SHARDID_NO_BLOCK;
			slot->fenced = false;
			guard_slot_take_all(slot);
		}
	}
	SpinLockRelease(&slot->mutex);
}

/* Refuse shardid_next with an epoch that is not the database's. */
static void
report_other_epoch(int64 epoch_ms, int64 db_epoch)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("epoch %s is not the epoch of database \"%s\"",
					shardid_unix_ms_to_str(epoch_ms),
					get_database_name(MyDatabaseId)),
			 errdetail("The database issues IDs under the epoch %s, and its durable fence counts time from it: IDs under another epoch could repeat its IDs or carry its fence ahead of the clock.",
					   shardid_unix_ms_to_str(db_epoch)),
			 errhint("Call shardid_next without an epoch.  A superuser or the owner of extension shardid can change the database's epoch with SELECT shardid_set_epoch('%s').",
					 shardid_unix_ms_to_str(epoch_ms))));
}

/*
 * Refuse a call whose time field is too far behind the slot's last.
 * last_epoch is the epoch of the slot's last ID (unknown for a fenced
 * start); epoch_ms the epoch of this call.
 */
static void
report_refusal(Oid seqid, bool fenced, int64 last, int64 last_epoch,
			   int64 now_ms, int64 epoch_ms, int64 regression_ms, int64 lead_ms)
{
	char	   *seqname = get_rel_name(seqid);

	if (!fenced && last_epoch != epoch_ms)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sequence \"%s\" issued IDs under another epoch",
						seqname ? seqname : "(dropped)"),
				 errdetail("Its last ID has time field %lld (%s with the epoch %s); with the epoch %s the clock gives time field %lld, %lld ms behind it, and IDs of one sequence may not go back in time field.",
						   (long long) last,
						   shardid_unix_ms_to_str(last + last_epoch),
						   shardid_unix_ms_to_str(last_epoch),
						   shardid_unix_ms_to_str(epoch_ms),
						   (long long) (now_ms - epoch_ms),
						   (long long) regression_ms),
				 errhint("Use one epoch per sequence.")));
	if (fenced)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("system clock is %lld ms behind the durable fence",
						(long long) regression_ms),
				 errdetail("Database \"%s\" issued no ID after %s before this server started, was promoted or was restored, but the clock reads %s; the fence runs at most %lld ms ahead of the IDs, and shardid.max_clock_regression is %d ms.",
						   get_database_name(MyDatabaseId),
						   shardid_unix_ms_to_str(last + epoch_ms),
						   shardid_unix_ms_to_str(now_ms),
						   (long long) lead_ms, guard_max_clock_regression),
				 errhint("Fix the clock, or wait until it passes the fence.  A sequence used with a later epoch than other sequences of its database is held back by their fence after a restart: use one epoch per database.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("system clock moved backwards by %lld ms",
					(long long) regression_ms),
			 errdetail("Sequence \"%s\" may not issue IDs before %s, but the clock reads %s, and shardid.max_clock_regression is %d ms.",
					   seqname ? seqname : "(dropped)",
					   shardid_unix_ms_to_str(last + epoch_ms),
					   shardid_unix_ms_to_str(now_ms),
					   guard_max_clock_regression),
			 errhint("Fix the clock, or wait until it passes the last issued millisecond.  Use slewing, not stepping, for NTP.")));
}

/* What a call waited for, counted in its slot once it issues. */
#define WAITED_EXHAUSTED	0x1
#define WAITED_CLOCK		0x2
#define WAITED_FENCE		0x4

int64
shardid_guard_next(Oid seqid, int32 shard, int64 value, int64 requested_epoch)
{
	int64		epoch_ms = requested_epoch;
	int64		block = shardid_seq_block(value);
	uint32		value10 = (uint32) shardid_seq_slot(value);
	int			word = value10 / 64;
	uint64		bit = UINT64CONST(1) << (value10 % 64);
	uint64		key = guard_key_word(MyDatabaseId, seqid);
	int			waited = 0;

	for (;;)
	{
		GuardSlot  *slot = slot_of(seqid);
		GuardDb    *db;
		uint32		state;
		ShardidRule rule;
		int64		now_us;
		int64		now_ms;
		int64		issue = 0;
		int64		wait_until = 0;
		int64		regression = 0;
		int64		lead = 1;
		int64		db_epoch;
		int64		fence;
		bool		taken;
		bool		refresh = false;

		SpinLockAcquire(&slot->mutex);
		if (unlikely(guard_slot_key_word(slot) != key))
		{
			/* evicted since this backend found it */
			SpinLockRelease(&slot->mutex);
			slot_forget(seqid);
			continue;
		}
		db = slot->db;
		state = pg_atomic_read_u32(&db->state);
		if (unlikely(state != GUARD_FENCE_LOADED && state != GUARD_FENCE_NONE))
		{
			SpinLockRelease(&slot->mutex);
			guard_fence_load(db);
			continue;
		}
		/*
		 * The fence before gen: a writer that moves the database's start
		 * up to a fence bumps gen before it publishes that fence, so a
		 * fence read here never runs ahead of the start it needs.
		 */
		fence = guard_fence_read(db);
		pg_read_barrier();
		db_epoch = (int64) pg_atomic_read_u64(&db->epoch);
		epoch_ms = requested_epoch == SHARDID_EPOCH_OF_DATABASE ?
			db_epoch : requested_epoch;
		if (unlikely(epoch_ms != db_epoch) &&
			state == GUARD_FENCE_LOADED && !db->epoch_free)
		{
			SpinLockRelease(&slot->mutex);
			report_other_epoch(epoch_ms, db_epoch);
		}
		if (unlikely(slot->gen != pg_atomic_read_u32(&db->gen)))
		{
			if (slot->probe_pending)
			{
				SpinLockRelease(&slot->mutex);
				slot_probe(seqid);
				continue;
			}
			slot_restart(slot, db, pg_atomic_read_u32(&db->gen));
		}

		now_us = shardid_clock_now_us();
		now_ms = shardid_floor_div(now_us, 1000);
		if (unlikely(now_ms < epoch_ms))
		{
			SpinLockRelease(&slot->mutex);
			shardid_report(SHARDID_BEFORE_EPOCH, now_ms, epoch_ms, shard, value10);
		}
		/* the bitmap matters only when the clock has not passed last */
		taken = now_ms - epoch_ms <= slot->last &&
			guard_slot_taken(slot, word, bit);
		rule = shardid_rule_decide(slot->last, slot->last_block, taken,
								   now_ms - epoch_ms, block, lead,
								   guard_max_clock_regression,
								   &issue, &wait_until, &regression);

		if (likely(rule == SHARDID_ISSUE))
		{
			GuardCounters *c = &slot->counters;

			if (likely(state == GUARD_FENCE_LOADED))
			{
				if (unlikely(issue > fence - fence_margin))
				{
					if (issue > fence && !xact_fence_covers(issue))
					{
						/* nothing past the fence until it is durable */
						SpinLockRelease(&slot->mutex);
						guard_fence_advance(db, issue, true, epoch_ms);
						continue;
					}
					refresh = true;
				}
			}
			if (unlikely(issue > SHARDID_MAX_TIME_MS))
			{
				SpinLockRelease(&slot->mutex);
				shardid_report(SHARDID_PAST_HORIZON, issue + epoch_ms, epoch_ms,
							   shard, value10);
			}

			if (issue != slot->last || block != slot->last_block)
				slot->taken_words = 0;
			guard_slot_take(slot, word, bit);
			slot->last = issue;
			slot->last_block = block;
			slot->fenced = false;
			slot->probed = false;
			slot->last_issued_ms = issue + epoch_ms;
			c->issued++;
			if (unlikely(waited != 0))
			{
				c->exhausted_waits += (waited & WAITED_EXHAUSTED) != 0;
				c->clock_waits += (waited & WAITED_CLOCK) != 0;
				c->fence_waits += (waited & WAITED_FENCE) != 0;
			}
			SpinLockRelease(&slot->mutex);

			if (unlikely(refresh))
				guard_fence_advance(db, issue, false, epoch_ms);
			return shardid_id_from_field(issue, shard, (int32) value10);
		}

		/*
		 * The lead only tells a wait from a clock fault, never whether to
		 * issue: a start at the fence is judged by the lead it was written
		 * with.
		 */
		if (slot->fenced)
		{
			lead = slot->start_slack > 0 ? slot->start_slack : fence_slack;
			rule = shardid_rule_decide(slot->last, slot->last_block, taken,
									   now_ms - epoch_ms, block, lead,
									   guard_max_clock_regression,
									   &issue, &wait_until, &regression);
		}

		if (rule == SHARDID_REFUSE)
		{
			int64		last = slot->last;
			bool		fenced = slot->fenced;
			int64		last_epoch = slot->last_issued_ms == GUARD_NEVER ?
				epoch_ms : slot->last_issued_ms - slot->last;

			slot->counters.clock_refusals++;
			SpinLockRelease(&slot->mutex);
			report_refusal(seqid, fenced, last, last_epoch, now_ms, epoch_ms,
						   regression, lead);
		}

		if (rule == SHARDID_WAIT_CLOCK)
			waited |= WAITED_CLOCK;
		else if (slot->fenced)
			waited |= WAITED_FENCE;
		else
			waited |= WAITED_EXHAUSTED;
		SpinLockRelease(&slot->mutex);
		guard_sleep_until(wait_until + epoch_ms, now_us);
	}
}

int64
shardid_guard_epoch(void)
{
	return stored_epoch();
}

/* The fence's relid, locked, or the documented error. */
static Oid
fence_lock_or_error(void)
{
	Oid			relid = shardid_fence_lock(true, NULL);

	if (!OidIsValid(relid) ||
		!OidIsValid(shardid_fence_member(SHARDID_EPOCH_RELNAME)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension shardid is older than version 1.2 in database \"%s\"",
						get_database_name(MyDatabaseId)),
				 errhint("Run ALTER EXTENSION shardid UPDATE in this database.")));
	if (shardid_fence_is_transactional(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the durable fence of database \"%s\" was created in this transaction",
						get_database_name(MyDatabaseId)),
				 errhint("Commit the CREATE EXTENSION or ALTER EXTENSION first.")));
	return relid;
}

void
shardid_guard_set_epoch(int64 epoch_ms)
{
	Oid			relid = fence_lock_or_error();
	Oid			epoch_relid = shardid_fence_member(SHARDID_EPOCH_RELNAME);
	GuardDb    *db = shardid_shared ? shardid_db_current() : NULL;
	int64		high = shardid_seq_read(relid);
	int64		old_epoch = stored_epoch();

	if (db != NULL)
		high = Max(high, shardid_db_known_max(db));

	if (high >= 0 && epoch_ms != old_epoch)
	{
		/*
		 * The database has issued IDs.  Their fields, and the fence, stay
		 * as they are; a later epoch gives smaller fields, and the clock
		 * under it must not be further behind the fence than a start
		 * waits for.
		 */
		int64		now_ms = shardid_floor_div(shardid_clock_now_us(), 1000);
		int64		behind = high - (now_ms - epoch_ms);

		if (behind > fence_slack)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("epoch %s would put the clock %lld ms behind the durable fence",
							shardid_unix_ms_to_str(epoch_ms), (long long) behind),
					 errdetail("Database \"%s\" has issued IDs up to time field %lld under the epoch %s; under the new epoch the clock gives time field %lld.",
							   get_database_name(MyDatabaseId), (long long) high,
							   shardid_unix_ms_to_str(old_epoch),
							   (long long) (now_ms - epoch_ms)),
					 errhint("Choose an epoch at or before %s.",
							 shardid_unix_ms_to_str(now_ms - high + fence_slack))));
	}

	shardid_seq_write(epoch_relid, epoch_ms);
	shardid_fence_flush();
	shardid_fence_unlock(relid);
	ereport(LOG,
			(errmsg("epoch of database \"%s\" set to %s (was %s)",
					get_database_name(MyDatabaseId),
					shardid_unix_ms_to_str(epoch_ms),
					shardid_unix_ms_to_str(old_epoch))));

	request_reload();
	reload_at_xact_end = true;
}

int64
shardid_guard_fence_set(int64 field)
{
	Oid			relid = fence_lock_or_error();
	GuardDb    *db = shardid_shared ? shardid_db_current() : NULL;
	int64		old = shardid_seq_read(relid);
	int64		target = field;

	if (db != NULL)
		target = shardid_db_lower(db, field);
	shardid_seq_write(relid, target);
	shardid_fence_flush();
	shardid_fence_unlock(relid);

	ereport(LOG,
			(errmsg("durable fence of database \"%s\" lowered from time field %lld to %lld",
					get_database_name(MyDatabaseId),
					(long long) old, (long long) target)));
	return target;
}
