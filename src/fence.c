/*-------------------------------------------------------------------------
 *
 * fence.c
 *	  The durable fences' protocol: when each is read, advanced and
 *	  published, its writers' locks, and what a transaction's end undoes.
 *
 * Beside it: seqio.c finds the extension's sequences and reads and writes
 * any sequence as its owner; standby.c flushes a fence's record and waits
 * for the standbys; fence_admin.c is what CREATE, ALTER and DROP
 * EXTENSION and the administrators' functions do to the fences.  What
 * they share with each other alone is in fence_int.h.
 *
 * What the fences are, why they live in sequences, when each is written
 * and what every path (a crash, a failover, a dump, DROP EXTENSION)
 * carries: docs/design.md, "The durable fences".  What the code here
 * relies on:
 *
 *	- Where: a sequence's fence is its own value, (value >> 10) - 1
 *	  (shardid_value_fence, fence.h), written as setval((f + 1) << 10,
 *	  false); the database's is the value of the extension's sequence
 *	  shardid_internal.shardid_fence, and the reach it was written with
 *	  that of shardid_internal.shardid_fence_lead (written before the
 *	  fence when the reach grows, after it when it shrinks).
 *	- Invariants: no slot issues past its sequence's fence or the
 *	  database's as this server published them; the database's fence
 *	  (the cover) is published only once its record is flushed and the
 *	  standbys have it (or shardid.standby_wait ran out); a sequence's
 *	  fence is published once its record is in the log, before the ID,
 *	  but in a transaction that made the database's fence anew, where it
 *	  is flushed first; the code here moves a fence only forward, but in
 *	  shardid_fence_lower_db and shardid_fence_lower_seq.
 *	- Rollbacks: setval's record outlives one, as it must (the IDs it
 *	  covers may be out).  A sequence made, or given a new file, in the
 *	  current transaction takes its value back with one (is_transactional):
 *	  the database's fence covers its IDs, and a rollback makes its slot
 *	  write again.  A database fence new in the transaction is written but
 *	  published to no one: this backend alone issues up to the fences
 *	  written under it (shardid_fence_own) until the transaction ends.
 *	- Locking order: each fence's writers' lock is a RowExclusiveLock on
 *	  the sequence that keeps the fence (for the database's also on the
 *	  other sequences its writers read), then a lock tag of shardid's
 *	  own (writer_lock).  The database fence's is never waited for with a
 *	  sequence's held (a transaction that dropped the extension holds it
 *	  and may want the sequence's): the cover is taken care of first, with
 *	  no other lock held (db_cover), then the sequence's fence; in a
 *	  transaction that made the database's fence anew, db_fence_cover
 *	  says DB_BUSY, and the writer lets go of the sequence's first.  No
 *	  spinlock or LWLock is held across a write, a flush or a wait.
 *	- Rights: every read and write of a sequence runs as its owner, in a
 *	  security-restricted operation (become_owner, seqio.c); setval and a
 *	  sequence's read run no code any role defined.
 *
 * The protocol's model, and which function here is which step of it:
 * docs/design.md, "The model".
 *
 * src/fence.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "utils/fmgrprotos.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "clock.h"
#include "compat.h"
#include "fault.h"
#include "fence.h"
#include "fence_int.h"
#include "report.h"
#include "slot.h"

/* Settings */
int			shardid_fence_lead = 500;
int			shardid_standby_wait = 1000;
int			shardid_debug_fence_write_delay = 0;
int64		shardid_fence_refresh = 125;
int64		shardid_fence_reach = 625;

void
shardid_fence_lead_assign(int newval, void *extra)
{
	shardid_fence_refresh = Max(newval / 4, 1);
	shardid_fence_reach = newval + shardid_fence_refresh;
}

/*
 * This transaction created, updated or set the epoch of the database's
 * fence: when it ends, whichever way, the next call in the database reads
 * the fence again.  Whoever commits a prepared transaction would not tell
 * the guard, so such a transaction cannot be prepared.
 */
static bool reload_at_xact_end = false;

void
reload_at_xact_end_set(void)
{
	reload_at_xact_end = true;
}

/*
 * Sequences whose fence this transaction wrote while they were new in it
 * (created, or given a new file): a rollback takes the value back, so
 * their slots must write again.  Every one of them, in the transaction's
 * memory: a rollback makes these slots write again and no other, however
 * many sequences a transaction makes (a bounded list that forgot every
 * slot's fence when it overflowed let any role make every other role's
 * sequences write at each call).
 */
static Oid *xact_seqs = NULL;
static int	xact_nseqs = 0;
static int	xact_seqs_size = 0;

/* Own fences (below) are kept for at most this many sequences. */
#define XACT_SEQS_MAX 16

/*
 * The fence writers' locks.  One writer at a time per fence: of the
 * database's, and of each sequence's.  Each is two locks, taken in this
 * order and released together:
 *
 *	1. RowExclusiveLock on the sequence that holds the fence (the lock
 *	   nextval, setval and pg_sequence_last_value take on it anyway, and
 *	   keep to the end of the transaction), so that a DROP or ALTER
 *	   SEQUENCE under way is waited for, and one that committed is seen,
 *	   before the fence is read; for the database's fence, on the epoch's
 *	   and the lead's sequences too, after the fence's, which its writers
 *	   read and write under the tag;
 *	2. an ExclusiveLock on a lock tag of shardid's own, keyed by the
 *	   database and the sequence (0 for the database's fence): the mutex
 *	   of its writers.
 *
 * No SQL function makes the tag (pg_advisory_lock's tags have 1 or 2 in
 * field4, shardid's SHARDID_LOCK_CLASS_*), and no writer waits for a lock
 * on the sequences it reads while it holds the tag.  The DDL that
 * conflicts with RowExclusiveLock on a sequence (ALTER SEQUENCE, DROP,
 * SET LOGGED) checks ownership before it locks; CREATE RULE, CREATE
 * TRIGGER, PARTITION OF and REFERENCES lock the relation they name before
 * they check it, but name lookup checks USAGE on its schema first, and
 * the extension's sequences are in shardid_internal, which no role but
 * the extension's owner may use (docs/design.md, "The writers' locks").
 * A sequence of a role's own is in a schema of hers: whoever she lets use
 * it can queue in front of that sequence's writers, and of no other's.
 * The writers' mutex was once the sequence's ShareUpdateExclusiveLock,
 * which any role that can name the sequence queues for with COMMENT ON
 * SEQUENCE (its ownership is checked once the lock is granted): every
 * writer then queued behind her.  pg_locks shows the tag as an advisory
 * lock, database the database's OID, objid the sequence's (0 for the
 * database's fence), objsubid the class.
 */
#define SHARDID_LOCK_CLASS_DB_FENCE		0x5344	/* the database's fence */
#define SHARDID_LOCK_CLASS_SEQ_FENCE	0x5345	/* a sequence's fence */

static void
writer_tag(LOCKTAG *tag, Oid seqid, uint16 class)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, 0, seqid, class);
}

/* Let go of relmode on the first n of relids (InvalidOid: none taken). */
static void
rels_unlock(const Oid *relids, int n, LOCKMODE relmode)
{
	int			i;

	for (i = n - 1; i >= 0; i--)
		if (OidIsValid(relids[i]))
			UnlockRelationOid(relids[i], relmode);
}

/*
 * Take the writers' lock of the fence kept in sequence relids[0] (with
 * class SHARDID_LOCK_CLASS_DB_FENCE, the database's; with tagged, the
 * sequence the tag names): relmode on each of the nrels sequences of
 * relids in their order (an InvalidOid is skipped), then the tag.  With
 * wait false, false if any is taken; else the waits are the lock
 * manager's, which a cancel, lock_timeout, statement_timeout or a
 * deadlock ends.  After a wait for the tag, the invalidations committed
 * meanwhile are read.
 */
static bool
writer_lock(const Oid *relids, int nrels, LOCKMODE relmode, Oid tagged,
			uint16 class, bool wait)
{
	LOCKTAG		tag;
	int			i;

	for (i = 0; i < nrels; i++)
	{
		if (!OidIsValid(relids[i]) ||
			ConditionalLockRelationOid(relids[i], relmode))
			continue;
		if (!wait)
		{
			rels_unlock(relids, i, relmode);
			return false;
		}
		LockRelationOid(relids[i], relmode);
	}
	writer_tag(&tag, tagged, class);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
	{
		if (!wait)
		{
			rels_unlock(relids, nrels, relmode);
			return false;
		}
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
		AcceptInvalidationMessages();
	}
	return true;
}

static void
writer_unlock(const Oid *relids, int nrels, LOCKMODE relmode, Oid tagged,
			  uint16 class)
{
	LOCKTAG		tag;

	writer_tag(&tag, tagged, class);
	(void) LockRelease(&tag, ExclusiveLock, false);
	rels_unlock(relids, nrels, relmode);
}

/* The writers' lock of sequence seqid's own fence. */
bool
seq_lock(Oid seqid, bool wait)
{
	return writer_lock(&seqid, 1, RowExclusiveLock, seqid,
					   SHARDID_LOCK_CLASS_SEQ_FENCE, wait);
}

void
seq_unlock(Oid seqid)
{
	writer_unlock(&seqid, 1, RowExclusiveLock, seqid,
				  SHARDID_LOCK_CLASS_SEQ_FENCE);
}

/*
 * The extension's sequences whose locks the database fence's lock takes,
 * in member() order: the fence, the epoch, the lead.  db_locked holds
 * those taken by the lock this backend holds, for db_fence_unlock: a
 * sequence not found then (a database at 1.0) is not let go of, should it
 * be found by then.
 */
static Oid	db_locked[MEMBER_COUNT];

/*
 * Take the lock that serializes every reader and writer of the current
 * database's fence, and return the fence's relid; InvalidOid if the
 * database has no fence or, with wait false, another backend holds the
 * lock.  relmode, on the fence, the epoch and the lead in that order
 * before the tag, is RowExclusiveLock, but for a DROP of the extension:
 * AccessExclusiveLock, which it is about to take anyway, so that it never
 * holds the writers' tag while it waits for a writer's RowExclusiveLock.
 * Every writer holds the three before the tag, and reads or writes no
 * other sequence of the extension's under it: none waits for a lock on
 * them with the tag held.
 */
Oid
db_fence_lock_mode(bool wait, LOCKMODE relmode)
{
	for (;;)
	{
		Oid			relids[MEMBER_COUNT];
		bool		same = true;
		int			i;

		for (i = 0; i < (int) MEMBER_COUNT; i++)
			relids[i] = member(i);
		if (!OidIsValid(relids[0]))
			return InvalidOid;
		if (!writer_lock(relids, MEMBER_COUNT, relmode, InvalidOid,
						 SHARDID_LOCK_CLASS_DB_FENCE, wait))
			return InvalidOid;

		/* the locks brought in invalidations: are they still the members? */
		for (i = 0; i < (int) MEMBER_COUNT; i++)
			same &= member(i) == relids[i];
		if (same)
		{
			memcpy(db_locked, relids, sizeof(db_locked));
			return relids[0];
		}
		writer_unlock(relids, MEMBER_COUNT, relmode, InvalidOid,
					  SHARDID_LOCK_CLASS_DB_FENCE);
		if (!wait)
			return InvalidOid;
	}
}

Oid
db_fence_lock(bool wait)
{
	return db_fence_lock_mode(wait, RowExclusiveLock);
}

void
db_fence_unlock(Oid relid)
{
	Assert(relid == db_locked[0]);
	writer_unlock(db_locked, MEMBER_COUNT, RowExclusiveLock, InvalidOid,
				  SHARDID_LOCK_CLASS_DB_FENCE);
}

/* ----------------------------------------------------------------
 * The database's fence
 * ----------------------------------------------------------------
 */

/*
 * The epoch stored for the current database, Unix ms; *free says the
 * database has no epoch of its own (shardid 1.1, not yet updated), so that
 * each call keeps its own as it did there.
 */
static int64
stored_epoch_of(bool *free)
{
	Oid			relid = epoch_relid();
	int64		epoch = OidIsValid(relid) ? member_read(relid) : -1;

	if (free)
		*free = !OidIsValid(relid);
	return epoch >= 0 ? epoch : SHARDID_DEFAULT_EPOCH_UNIX_MS;
}

int64
shardid_fence_epoch(void)
{
	return stored_epoch_of(NULL);
}

/* The reach the stored fence was written with, or 0 if none is kept. */
static int64
stored_reach(void)
{
	Oid			relid = reach_relid();
	int64		reach = OidIsValid(relid) ? member_read(relid) : -1;

	return reach > 0 ? reach : 0;
}

int64
shardid_fence_stored(void)
{
	Oid			relid = fence_relid();

	return OidIsValid(relid) ? member_read(relid) : -1;
}

/*
 * Store value as the database's fence in relid unless the stored one is
 * already at or past it, with the reach it is written with; not flushed.
 * The caller holds the fence lock, so that the compare and the write are
 * one step for every writer of the database.  Returns the stored fence,
 * which is at least value.
 */
int64
db_fence_store(Oid relid, int64 value, int64 reach)
{
	int64		disk = member_read(relid);
	Oid			lrelid;
	int64		reach_disk = -1;

	if (value <= disk)
		return disk;
	if (shardid_debug_fence_write_delay > 0)
		shardid_clock_sleep_ms(shardid_debug_fence_write_delay);

	/*
	 * The kept reach must never say less than the reach of the stored
	 * fence, whichever write a crash keeps: a larger reach is written
	 * before the fence, a smaller one after it.  What the clock asked of
	 * every sequence's fence is at or before the database's, so the
	 * record covers theirs too.
	 */
	lrelid = reach_relid();
	if (OidIsValid(lrelid))
		reach_disk = member_read(lrelid);
	if (OidIsValid(lrelid) && reach > reach_disk)
		seq_write(lrelid, reach);
	seq_write(relid, value);
	if (OidIsValid(lrelid) && reach < reach_disk)
		seq_write(lrelid, reach);
	return value;
}

/*
 * Before a write with this reach: remember it, so
 * that a start at a value it leaves behind, even if its wait is cancelled,
 * is judged by it.
 */
static void
db_reach_written(GuardDb *db, int64 reach)
{
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db) && reach > db->reach_written)
		db->reach_written = reach;
	SpinLockRelease(&db->mutex);
}

/* After a write that took took_ms: remember it, and count it. */
static void
db_wrote(GuardDb *db, int64 took_ms, bool db_write, bool required, bool timed_out)
{
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db))
	{
		db->write_lag_ms = Min(took_ms, 60 * 1000);
		db->fence_writes += db_write;
		db->write_waits += required;
		db->standby_timeouts += timed_out;
	}
	SpinLockRelease(&db->mutex);
}

/* The next call in this database reads its fence again. */
void
request_reload(void)
{
	GuardDb    *db;

	if (!shardid_shared)
		return;
	db = shardid_db_current();
	if (db == NULL)
		return;
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db) &&
		pg_atomic_read_u32(&db->state) != GUARD_FENCE_UNKNOWN)
		pg_atomic_write_u32(&db->state, GUARD_FENCE_RELOAD);
	SpinLockRelease(&db->mutex);
	shardid_db_touch(db);
}

/* A database without a fence (shardid 1.0): say so, and go on without. */
static void
db_fence_none(GuardDb *db)
{
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db))
	{
		db->epoch = SHARDID_DEFAULT_EPOCH_UNIX_MS;
		db->epoch_free = true;
		pg_atomic_write_u32(&db->state, GUARD_FENCE_NONE);
	}
	SpinLockRelease(&db->mutex);
	shardid_db_touch(db);

	/* a statement still running when DROP EXTENSION committed: no advice */
	if (!OidIsValid(get_extension_oid("shardid", true)))
		return;
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("database \"%s\" has no durable fence for shardid",
					get_database_name(MyDatabaseId)),
			 errdetail("Extension shardid is older than version 1.1 here: each sequence keeps its own fence, but a sequence that is set back or made again after it was dropped is not held back by the database's."),
			 errhint("Run ALTER EXTENSION shardid UPDATE in this database.")));
}

/*
 * The fence stored in relid, made good for use: the server knows what was
 * issued here and the fence it published (other backends may have issued
 * up to that without the lock), and a fence read back (after CREATE
 * EXTENSION, or from another entry) must cover both: the lead past the
 * IDs, and at least the published fence, but not the lead past that,
 * which would put it further ahead of the clock than its kept reach
 * says.  A fence this backend did not write may not be durable yet (the
 * write of a backend whose wait for the standbys was cancelled, or a
 * commit made with synchronous_commit off): it is written again, one
 * small record after every record it depends on, and flushed before it is
 * used.  *wrote says whether a record was written, *timed_out whether a
 * standby was given up on.
 */
static int64
db_fence_read_back(GuardDb *db, Oid relid, int64 disk, bool transactional,
				   bool *wrote, bool *timed_out)
{
	int64		known = shardid_db_known_max(db);
	int64		published = guard_fence_read(db);
	int64		fence = disk;

	*wrote = false;
	*timed_out = false;
	if (Max(known, published) > disk)
	{
		int64		value = Max(known + shardid_fence_lead, published);

		fence = db_fence_store(relid, Min(value, SHARDID_MAX_TIME_MS),
							   shardid_fence_reach);
		*wrote = true;
	}
	else if (!transactional && disk >= 0)
	{
		seq_write(relid, disk);
		*wrote = true;
	}
	if (*wrote)
		*timed_out = !fence_flush(XactLastRecEnd);
	return fence;
}

void
shardid_fence_load(GuardDb *db)
{
	Oid			relid;
	int64		disk;
	int64		fence;
	int64		epoch;
	int64		reach;
	bool		wrote;
	bool		timed_out;
	bool		transactional;
	bool		epoch_free;
	bool		again = false;
	uint32		state;
	TimestampTz started = GetCurrentTimestamp();

	/* the fence lock serializes loads and writes; its wait can be cancelled */
	relid = db_fence_lock(true);

	state = pg_atomic_read_u32(&db->state);
	if (!db_is_mine(db) ||
		(state != GUARD_FENCE_UNKNOWN && state != GUARD_FENCE_RELOAD))
	{
		if (OidIsValid(relid))
			db_fence_unlock(relid);
		return;
	}
	if (!OidIsValid(relid))
	{
		db_fence_none(db);
		return;
	}

	transactional = is_transactional(relid);
	disk = member_read(relid);
	epoch = stored_epoch_of(&epoch_free);
	reach = stored_reach();
	fence = db_fence_read_back(db, relid, disk, transactional, &wrote, &timed_out);
	if (transactional)
		reload_at_xact_end = true;

	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db) && pg_atomic_read_u32(&db->state) != state)
		again = true;			/* handed over and back meanwhile: read it again */
	else if (db_is_mine(db))
	{
		if (state == GUARD_FENCE_UNKNOWN)
		{
			/* judged by the reach the stored fence was written with */
			db->start = Max(db->start, disk);
			db->start_reach = reach;
		}
		db->epoch = epoch;
		db->epoch_free = epoch_free;
		/* a fence a rollback could undo is published to no one */
		if (!transactional)
			pg_atomic_write_u64(&db->fence, (uint64) fence);
		/* the fence read holds any cover pending before */
		db->cover_pending = -1;
		pg_atomic_write_u32(&db->state, GUARD_FENCE_LOADED);
	}
	SpinLockRelease(&db->mutex);
	if (wrote && !again)
		db_wrote(db, (GetCurrentTimestamp() - started) / 1000, true, false, timed_out);
	db_fence_unlock(relid);
	if (!again)
		shardid_db_touch(db);
}

/*
 * A stored fence later than this server knows (a write through another
 * entry of this database, a load's, or one whose wait was cancelled): the
 * database's slots start again from it, as after a restart, judged by the
 * reach it was written with.
 */
static void
db_start_at_stored(GuardDb *db, int64 disk)
{
	int64		disk_reach = stored_reach();

	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db))
	{
		db->start = Max(db->start, disk);
		db->start_reach = disk_reach;
	}
	SpinLockRelease(&db->mutex);
	shardid_db_touch(db);
}

/* What db_fence_cover() found. */
typedef enum DbCover
{
	DB_COVERED,					/* *limit: the fence published, or written
								 * (*publish) under the lock *relid */
	DB_NONE,					/* no database fence to keep */
	DB_MINE,					/* a fence new in this transaction, written:
								 * this backend's alone until it commits */
	DB_BUSY						/* the lock is taken: wait for it with no
								 * other lock held, then try again */
} DbCover;

/*
 * Within a sequence's fence write, with the sequence's lock held: make the
 * database's fence cover seq_fence, if the database has one to keep.
 * Writes, does not flush: the caller flushes once for both, and then
 * publishes *publish (with the lock *relid still held, which the caller
 * releases).  *limit is the database fence the slot's fence may go up to
 * for every backend.  Never waits for the database fence's lock, which a
 * transaction that dropped the extension holds to its end while it may
 * want this sequence's: DB_BUSY tells the caller to let go of the
 * sequence first.
 */
static DbCover
db_fence_cover(GuardDb *db, int64 seq_fence, bool required, bool wait,
			   Oid *relid, int64 *publish, int64 *limit)
{
	int64		published;
	int64		disk;
	int64		value;

	*relid = InvalidOid;
	*publish = -1;
	*limit = INT64_MAX;
	if (pg_atomic_read_u32(&db->state) == GUARD_FENCE_NONE)
		return DB_NONE;
	published = guard_fence_read(db);
	*limit = published;
	if (seq_fence <= published)
		return DB_COVERED;

	/* early writers skip the lock while another write is under way */
	if (!required && pg_atomic_read_u32(&db->writing) != 0)
		return DB_COVERED;
	*relid = db_fence_lock(wait);
	if (!OidIsValid(*relid))
	{
		if (!OidIsValid(fence_relid()))
		{
			*limit = INT64_MAX;
			return DB_NONE;
		}
		return required ? DB_BUSY : DB_COVERED;
	}

	/*
	 * The stored fence may be later than this server knows: a write
	 * through another entry of this database, or one whose wait for the
	 * standbys was cancelled.  The database's slots start again from it,
	 * as after a restart, judged by the reach it was written with.  What
	 * this server published is read again under the lock: a write
	 * published between the first read and the lock is not one of those
	 * (taken for one, it made every slot of the database start again at
	 * the fence, a reach ahead of the clock, at nearly every write of a
	 * database with many sequences: 1.6 inserts a second on 64 shards).
	 */
	published = guard_fence_read(db);
	*limit = published;
	if (seq_fence <= published)
	{
		*publish = -1;
		db_fence_unlock(*relid);
		*relid = InvalidOid;
		return DB_COVERED;
	}
	disk = member_read(*relid);
	if (disk > published && !is_transactional(*relid))
	{
		db_start_at_stored(db, disk);
		published = disk;
		*limit = disk;
		if (seq_fence <= disk)
		{
			*publish = disk;
			return DB_COVERED;
		}
	}

	value = Min(seq_fence + shardid_fence_refresh, SHARDID_MAX_TIME_MS);
	if (is_transactional(*relid))
	{
		/*
		 * The fence this transaction made: written, so that it covers the
		 * sequence once the transaction commits, and published to no one,
		 * as a rollback takes it back.  Other backends keep to the fence
		 * they know.
		 */
		(void) db_fence_store(*relid, value, shardid_fence_reach);
		return DB_MINE;
	}
	pg_atomic_write_u32(&db->writing, 1);
	*publish = db_fence_store(*relid, value, shardid_fence_reach);
	SHARDID_FAULT("db_after_insert");
	*limit = *publish;
	return DB_COVERED;
}

/*
 * Fences of sequences that this backend alone may issue up to, until its
 * transaction ends: written under a database fence new in the transaction
 * (DROP and CREATE EXTENSION in one transaction, not yet committed), which
 * no other backend may rely on.
 */
typedef struct OwnFence
{
	Oid			seqid;
	int64		fence;
} OwnFence;

static OwnFence own_fences[XACT_SEQS_MAX];
static int	own_nfences = 0;

static void
own_fence_set(Oid seqid, int64 fence)
{
	int			i;

	for (i = 0; i < own_nfences; i++)
	{
		if (own_fences[i].seqid == seqid)
		{
			own_fences[i].fence = Max(own_fences[i].fence, fence);
			return;
		}
	}
	if (own_nfences < XACT_SEQS_MAX)
	{
		own_fences[own_nfences].seqid = seqid;
		own_fences[own_nfences].fence = fence;
		own_nfences++;
	}
}

int64
shardid_fence_own(Oid seqid)
{
	int			i;

	for (i = 0; i < own_nfences; i++)
		if (own_fences[i].seqid == seqid)
			return own_fences[i].fence;
	return -1;
}

/* ----------------------------------------------------------------
 * A sequence's fence
 * ----------------------------------------------------------------
 */

/* Remember that this transaction wrote the fence of a sequence new in it. */
static void
remember_xact_seq(Oid seqid)
{
	int			i;

	for (i = 0; i < xact_nseqs; i++)
		if (xact_seqs[i] == seqid)
			return;
	if (xact_nseqs == xact_seqs_size)
	{
		int			size = Max(16, 2 * xact_seqs_size);
		Oid		   *seqs = MemoryContextAlloc(TopTransactionContext,
											  size * sizeof(Oid));

		if (xact_nseqs > 0)
			memcpy(seqs, xact_seqs, xact_nseqs * sizeof(Oid));
		xact_seqs = seqs;
		xact_seqs_size = size;
	}
	xact_seqs[xact_nseqs++] = seqid;
}

/* Let go of an early write that will not happen. */
static void
early_write_off(GuardSlot *slot, uint64 key)
{
	SpinLockAcquire(&slot->mutex);
	if (guard_slot_key_word(slot) == key)
		guard_slot_early_off(slot);
	SpinLockRelease(&slot->mutex);
}

/*
 * Take the sequence's lock, the one writer of its fence, and say whether a
 * write is still needed: another backend may have written meanwhile.
 * With the lock held and true, *seq_hi and *hi_cached are the slot's.
 */
static bool
seq_fence_begin(GuardSlot *slot, uint64 key, Oid seqid, int64 field,
				bool required, bool mine, int64 *seq_hi, int64 *hi_cached)
{
	bool		needed;
	int64		fence;

	if (!seq_lock(seqid, false))
	{
		if (!required)
		{
			early_write_off(slot, key);
			return false;
		}
		(void) seq_lock(seqid, true);
	}
	SpinLockAcquire(&slot->mutex);
	/* mine: judged as the guard judges, by the slot's fence (its own) */
	fence = mine ? slot->fence : slot->seq_fence;
	needed = guard_slot_key_word(slot) == key &&
		field > (required ? Max(fence, shardid_fence_own(seqid)) :
				 fence - shardid_fence_refresh);
	*seq_hi = slot->seq_hi;
	*hi_cached = slot->hi_cached;
	if (!needed && guard_slot_key_word(slot) == key && !required)
		guard_slot_early_off(slot);
	SpinLockRelease(&slot->mutex);
	if (!needed)
		seq_unlock(seqid);
	return needed;
}

/* What seq_fence_write() did to the sequence. */
typedef struct SeqWrite
{
	int64		fence;			/* the fence written */
	int64		clock_fence;	/* the part of it the clock asks for */
	int64		hi_cached;		/* the sequence's blocks of cached values */
	bool		moved;			/* its value carried a fence this server did
								 * not write: the slot starts after it */
	int64		moved_fence;	/* that fence */
	int64		moved_block;	/* and its block */
} SeqWrite;

/*
 * Write the sequence's new fence, the lead past the ID (or the clock),
 * never further however long a write takes, and past every value of it
 * seen, so that the value only goes forward.  Always a record of this
 * backend's own, after every record the value depends on, so that one
 * flush of it makes the fence durable.  The sequence's lock is held.
 *
 * take: the call takes the setval's value (seq_write_fence), and no
 * nextval came before it to show the slot a value set with is_called
 * false, so the stored value is read whatever its is_called; and nothing
 * is written (w.fence -1) where the value would not go forward past
 * every value of the sequence or out of its bounds: nextval then says
 * what it says of such a sequence, and the guard decides on its value.
 */
static SeqWrite
seq_fence_write(GuardSlot *slot, uint64 key, Oid seqid, int64 field, int64 epoch,
				int64 seq_hi, int64 hi_cached, bool take)
{
	GuardDb    *db = slot->db;
	SeqWrite	w;
	bool		called;
	int64		value = seq_read(seqid, &called);
	int64		value_fence;
	int64		now_field = shardid_clock_now_ms() - epoch;
	int64		target;

	/* a value not yet returned still carries the fence it was set with */
	if (take && !called)
	{
		value = seq_read_stored(seqid);
		called = true;
	}
	value_fence = called ? shardid_value_fence(value) : -1;

	/*
	 * A value that jumped past what this server knows (a setval, a
	 * restore while the server runs) is a fence this server did not
	 * write.  (Where a nextval came first, a value set with is_called
	 * false reads as none: that nextval told the slot of it.)
	 */
	w.moved = called && (value >> SHARDID_SEQ_BITS) > seq_hi + hi_cached;
	w.moved_fence = value_fence;
	w.moved_block = value >> SHARDID_SEQ_BITS;

	w.clock_fence = Min(Max(field, now_field) + shardid_fence_lead,
						SHARDID_MAX_TIME_MS);
	target = Min(Max(w.clock_fence, Max(value_fence + 1, seq_hi)),
				 SHARDID_MAX_TIME_MS);
	if (take && (Max(value_fence + 1, seq_hi) > target ||
				 !seq_holds(seqid, (target + 1) << SHARDID_SEQ_BITS)))
	{
		w.fence = -1;
		return w;
	}
	w.hi_cached = seq_check_carries_fence(seqid, (target + 1) << SHARDID_SEQ_BITS);
	db_reach_written(db, shardid_fence_reach);

	/*
	 * From the setval on, the sequence's other callers may take values of
	 * the new fence's block, before the flush and the publication: they
	 * are this server's own, not a move (slot_moved), or each such call
	 * would start the slot after the new fence and wait for the clock to
	 * pass it, a lead ahead.
	 */
	SpinLockAcquire(&slot->mutex);
	if (guard_slot_key_word(slot) == key)
		guard_slot_writing(slot, target);
	SpinLockRelease(&slot->mutex);
	seq_write_fence(seqid, target, take);
	if (is_transactional(seqid))
		remember_xact_seq(seqid);
	w.fence = target;
	return w;
}

/*
 * Publish the sequence's new fence in its slot, as far as the database's
 * fence lets every backend use it (db_limit), or, if the slot was evicted
 * meanwhile, in what it left behind.
 */
static void
seq_fence_publish(GuardSlot *slot, uint64 key, Oid seqid, const SeqWrite *w,
				  int64 db_limit, bool reread)
{
	SpinLockAcquire(&slot->mutex);
	if (reread)
		db_limit = Min(db_limit, guard_fence_read(slot->db));	/* slot_covered */
	if (guard_slot_key_word(slot) != key)
	{
		SpinLockRelease(&slot->mutex);
		shardid_ghost_wrote(seqid, w->fence, Min(w->fence, db_limit));
		return;
	}
	guard_slot_publish(slot, w->fence, w->hi_cached, w->moved, w->moved_fence,
					   w->moved_block, db_limit);
	SpinLockRelease(&slot->mutex);
}

/* After the flush: publish the database's new fence, and let go of it. */
static void
db_fence_publish(GuardDb *db, DbCover cover, Oid db_relid, int64 db_publish)
{
	if (db_publish >= 0)
	{
		SpinLockAcquire(&db->mutex);
		if (db_is_mine(db) && db_publish > guard_fence_read(db))
			pg_atomic_write_u64(&db->fence, (uint64) db_publish);
		SpinLockRelease(&db->mutex);
		SHARDID_FAULT("db_after_publish");
	}
	if (OidIsValid(db_relid))
	{
		if (cover == DB_COVERED && db_publish >= 0)
			pg_atomic_write_u32(&db->writing, 0);
		db_fence_unlock(db_relid);
	}
}

/*
 * The write under way in this backend, so that an error in it (a cancel
 * of its wait for the standbys, say) lets go of what it holds in shared
 * memory: its early-write flag in the slot, and the database's "writing"
 * flag, which would otherwise keep every early writer of the database
 * from trying until some required write clears them.
 */
static struct
{
	GuardSlot  *slot;			/* the slot of an early write, or NULL */
	uint64		key;
	GuardDb    *db;				/* the database whose writing flag this
								 * write set, or NULL */
}			pending;

/* After an error in a fence write: let go of its flags. */
static void
pending_write_off(void)
{
	if (pending.slot != NULL)
		early_write_off(pending.slot, pending.key);
	if (pending.db != NULL)
		pg_atomic_write_u32(&pending.db->writing, 0);
	pending.slot = NULL;
	pending.db = NULL;
}

/*
 * Make the database's fence cover seq_fence, waiting for its lock with no
 * other lock held: written, flushed and published, or nothing to do (the
 * database's fence went away meanwhile, or already covers it).  Returns
 * the database fence the slot's fence may go up to for every backend.
 */
static int64
db_cover_alone(GuardDb *db, int64 seq_fence)
{
	Oid			relid;
	int64		publish;
	int64		limit;
	bool		timed_out = false;
	TimestampTz started = GetCurrentTimestamp();
	DbCover		cover = db_fence_cover(db, seq_fence, true, true,
									   &relid, &publish, &limit);

	if (cover == DB_COVERED && OidIsValid(relid) && publish >= 0)
	{
		pending.db = db;
		timed_out = !fence_flush(XactLastRecEnd);
		shardid_require_postmaster();
	}
	db_fence_publish(db, cover, relid, publish);
	pending.db = NULL;
	if (OidIsValid(relid) && publish >= 0)
		db_wrote(db, (GetCurrentTimestamp() - started) / 1000, true, true, timed_out);
	if (cover == DB_COVERED)
		limit = Max(limit, guard_fence_read(db));
	return limit;
}

/*
 * A fence write in a transaction that made the database's fence anew (DROP
 * and CREATE EXTENSION, not yet committed): that fence is not durable
 * until the commit, so the sequence's is flushed and waited for before
 * this backend issues up to it, and published to this backend alone
 * (shardid_fence_own).
 */
static void
seq_fence_advance_mine(GuardSlot *slot, uint64 key, Oid seqid, int64 field,
					   int64 epoch, bool required)
{
	GuardDb    *db = slot->db;
	int64		seq_hi;
	int64		hi_cached;
	int64		db_limit;
	int64		db_publish;
	Oid			db_relid;
	DbCover		cover;
	SeqWrite	w;
	bool		timed_out;
	bool		seq_locked = true;
	TimestampTz started;

	pending.slot = required ? NULL : slot;
	pending.key = key;
	if (!seq_fence_begin(slot, key, seqid, field, required, true,
						 &seq_hi, &hi_cached))
	{
		pending.slot = NULL;
		return;
	}
	started = GetCurrentTimestamp();
	w = seq_fence_write(slot, key, seqid, field, epoch, seq_hi, hi_cached, false);
	SHARDID_FAULT("seq_after_insert");

	/*
	 * The database's fence after the IDs the clock lets this write issue,
	 * where it can be: not after what the sequence's value asked for, which
	 * its owner controls.  The database's fence is every sequence's, and
	 * its IDs stop at it (db_limit): a role that sets its own sequence far
	 * ahead stops only that sequence.
	 */
	cover = db_fence_cover(db, w.clock_fence, required, false,
						   &db_relid, &db_publish, &db_limit);
	if (cover == DB_COVERED && OidIsValid(db_relid) && db_publish >= 0)
		pending.db = db;
	if (cover == DB_BUSY)
	{
		/*
		 * Its lock is taken, and is never waited for with the sequence's
		 * held: let go of the sequence's, wait for the database's and
		 * cover this write from there.  The sequence's record, written
		 * before, is flushed below with (or after) the database's.  (Going
		 * back to write the sequence again chased a target that moves with
		 * the clock while the writers queue: they handed the lock to each
		 * other for minutes.)  Another writer of the sequence may publish
		 * a later fence meanwhile; publishing keeps the larger.
		 */
		seq_unlock(seqid);
		seq_locked = false;
		db_limit = db_cover_alone(db, w.clock_fence);
		cover = DB_COVERED;
		db_relid = InvalidOid;
		db_publish = -1;
	}

	timed_out = !fence_flush(XactLastRecEnd);
	shardid_require_postmaster();
	db_fence_publish(db, cover, db_relid, db_publish);
	if (cover == DB_MINE)
	{
		own_fence_set(seqid, w.fence);
		reload_at_xact_end = true;
	}
	pending.db = NULL;
	seq_fence_publish(slot, key, seqid, &w, db_limit, false);
	pending.slot = NULL;
	SHARDID_FAULT("after_publish");
	db_wrote(db, (GetCurrentTimestamp() - started) / 1000,
			 db_publish >= 0 && OidIsValid(db_relid), required, timed_out);
	if (seq_locked)
		seq_unlock(seqid);
}

/* ----------------------------------------------------------------
 * The cover: the database's fence kept ahead of the clock
 * ----------------------------------------------------------------
 *
 * docs/design.md, "The cover kept ahead".  The database's fence D is
 * appended ahead of the clock (cover_append: the clock and the lead, under
 * its lock, not flushed) when the published cover C is less than the
 * refresh ahead of it, by whichever backend finds it so; a
 * commit's flush carries the record, and once the log is flushed past it
 * and the standbys have it, whoever looks next publishes C := D
 * (cover_publish).  A backend whose ID is past C waits: for the pending
 * cover, which it flushes itself, or for one it appends (cover_flush).
 * No ID goes past C, so after a crash or a promotion the database's slots,
 * which start at D, start after every ID issued; a sequence's own fence is
 * then written without a flush or a wait.
 */

/* The pending cover, or -1, with its record's end and when it was seen flushed. */
static int64
cover_pending_read(GuardDb *db, XLogRecPtr *lsn, TimestampTz *flushed)
{
	int64		pending;

	SpinLockAcquire(&db->mutex);
	pending = db_is_mine(db) ? db->cover_pending : -1;
	*lsn = db->cover_lsn;
	*flushed = db->cover_flushed;
	SpinLockRelease(&db->mutex);
	return pending;
}

/*
 * Publish the pending cover whose record ends at lsn, now durable, unless
 * it is no longer pending (published by another backend, or forgotten by a
 * reload or a lowering).  A database whose fence is to be read again
 * publishes none: the load reads the stored fence, this cover or later.
 */
static void
cover_published(GuardDb *db, int64 pending, XLogRecPtr lsn, bool timed_out)
{
	shardid_require_postmaster();
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db) && db->cover_pending == pending && db->cover_lsn == lsn)
	{
		if (pg_atomic_read_u32(&db->state) == GUARD_FENCE_LOADED &&
			pending > guard_fence_read(db))
			pg_atomic_write_u64(&db->fence, (uint64) pending);
		db->cover_pending = -1;
		db->standby_timeouts += timed_out;
	}
	SpinLockRelease(&db->mutex);
	SHARDID_FAULT("db_after_publish");
}

/* cover_publish: the pending cover, if durable now; never waits. */
static void
cover_publish(GuardDb *db)
{
	XLogRecPtr	lsn;
	TimestampTz flushed;
	TimestampTz seen;
	bool		timed_out;
	bool		received;
	int64		pending = cover_pending_read(db, &lsn, &flushed);

	if (pending < 0)
		return;
	seen = flushed;
	received = fence_received(lsn, &seen, &timed_out);
	if (received)
		cover_published(db, pending, lsn, timed_out);
	else if (seen != flushed)
	{
		/* the standbys' wait runs from the flush this backend saw */
		SpinLockAcquire(&db->mutex);
		if (db_is_mine(db) && db->cover_pending == pending &&
			db->cover_lsn == lsn && db->cover_flushed == 0)
			db->cover_flushed = seen;
		SpinLockRelease(&db->mutex);
	}
}

/* Make value the pending cover, its record ending at lsn. */
static void
cover_pending_set(GuardDb *db, int64 value, XLogRecPtr lsn, bool wrote)
{
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db))
	{
		db->cover_pending = value;
		db->cover_lsn = lsn;
		db->cover_flushed = 0;
		db->fence_writes += wrote;
	}
	SpinLockRelease(&db->mutex);
}

/*
 * cover_append, with the database fence's lock held (not on a fence new in
 * this transaction, which the caller leaves to seq_fence_advance_mine):
 * unless the cover published or pending reaches need already, append
 * target as the database's fence, pending.  A stored fence later than this
 * server knows (a write through another entry of this database, or one
 * whose pending record an error forgot) is written again, one small record
 * after every record it depends on, as the load does, and is pending
 * instead; the database's slots start again from it, as after a restart,
 * judged by the reach it was written with.  Returns the pending cover, or
 * the published one.
 */
static int64
cover_append(GuardDb *db, Oid relid, int64 need, int64 target)
{
	int64		published = guard_fence_read(db);
	XLogRecPtr	lsn;
	TimestampTz flushed;
	int64		pending = cover_pending_read(db, &lsn, &flushed);
	int64		known = Max(published, pending);
	int64		disk;
	int64		value;

	if (known >= need)
		return known;
	disk = member_read(relid);
	if (disk > known)
	{
		db_start_at_stored(db, disk);
		seq_write(relid, disk);
		cover_pending_set(db, disk, XactLastRecEnd, false);
		return disk;
	}
	value = db_fence_store(relid, Min(target, SHARDID_MAX_TIME_MS),
						   shardid_fence_reach);
	if (value <= known)
		return known;			/* the clock behind the cover: nothing written */
	SHARDID_FAULT("db_after_insert");
	cover_pending_set(db, value, XactLastRecEnd, true);
	return value;
}

/*
 * cover_flush: with the database fence's lock held, make the pending
 * cover durable (flush, the standbys' wait) and publish it.  For a backend
 * whose ID is past the published cover.
 */
static void
cover_flush(GuardDb *db)
{
	XLogRecPtr	lsn;
	TimestampTz flushed;
	TimestampTz started = GetCurrentTimestamp();
	int64		pending = cover_pending_read(db, &lsn, &flushed);
	bool		timed_out;

	if (pending < 0)
		return;
	timed_out = !fence_flush(lsn);
	cover_published(db, pending, lsn, timed_out);
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db))
	{
		db->write_lag_ms = Min((GetCurrentTimestamp() - started) / 1000, 60 * 1000);
		db->write_waits++;
	}
	SpinLockRelease(&db->mutex);
}

/* What db_cover() found. */
typedef enum CoverState
{
	COVER_HELD,					/* the cover returned */
	COVER_NONE,					/* no database fence to keep (shardid 1.0,
								 * or dropped): the old rule, each fence
								 * flushed */
	COVER_MINE,					/* a database fence new in this transaction:
								 * seq_fence_advance_mine */
	COVER_LOAD					/* the fence is to be read again (or the
								 * entry was handed over): nothing written
								 * before the load */
} CoverState;

/*
 * The database's cover for field (of epoch): the pending one published if
 * durable, a new one appended if it runs short (never waiting for the
 * lock), and with required, waited for until it holds field (the lock
 * waited for with no other held).  *cover is the cover the slots' fences
 * may go up to.  A database whose fence is to be read again (or whose
 * entry was handed over) says so, COVER_LOAD: nothing may be written
 * under a cover that is not known yet.
 */
static CoverState
db_cover(GuardDb *db, int64 field, int64 epoch, bool required, int64 *cover)
{
	for (;;)
	{
		int64		published;
		int64		pending;
		int64		now_field;
		XLogRecPtr	lsn;
		TimestampTz flushed;
		Oid			relid;
		uint32		state = pg_atomic_read_u32(&db->state);

		*cover = guard_fence_read(db);
		if (state == GUARD_FENCE_NONE)
			return COVER_NONE;
		if (state != GUARD_FENCE_LOADED || !db_is_mine(db))
			return COVER_LOAD;
		cover_publish(db);
		published = guard_fence_read(db);
		*cover = published;
		pending = cover_pending_read(db, &lsn, &flushed);
		now_field = shardid_clock_now_ms() - epoch;

		if (!required || field <= published)
		{
			/*
			 * due when less than the refresh ahead of the clock: one write
			 * per lead less the refresh, however many slots call
			 */
			int64		due = now_field + shardid_fence_refresh;

			if (Max(published, pending) < due)
			{
				relid = db_fence_lock(false);
				if (!OidIsValid(relid))
					return OidIsValid(fence_relid()) ? COVER_HELD : COVER_NONE;
				if (is_transactional(relid))
				{
					db_fence_unlock(relid);
					return COVER_MINE;
				}
				(void) cover_append(db, relid, due, now_field + shardid_fence_lead);
				db_fence_unlock(relid);
			}
			return COVER_HELD;
		}

		/* past the cover: never more than the lead ahead of the clock */
		if (field > now_field + shardid_fence_lead)
		{
			shardid_clock_sleep_until(field - shardid_fence_lead + epoch);
			continue;
		}
		relid = db_fence_lock(true);
		if (!OidIsValid(relid))
		{
			if (!OidIsValid(fence_relid()))
				return COVER_NONE;
			continue;
		}
		if (is_transactional(relid))
		{
			db_fence_unlock(relid);
			return COVER_MINE;
		}
		if (field > guard_fence_read(db) &&
			cover_append(db, relid, field, shardid_clock_now_ms() - epoch +
						 shardid_fence_lead) >= field)
			cover_flush(db);
		db_fence_unlock(relid);
		*cover = guard_fence_read(db);
		if (field <= *cover)
			return COVER_HELD;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The slot's fence, as far as its sequence's and the cover let it go; the
 * cover read again under the slot's mutex, so that one lowered meanwhile
 * (shardid_db_lower, which lowers the slots' fences after the database's)
 * is not gone past.
 */
static void
slot_covered(GuardSlot *slot, uint64 key, int64 cover, bool reread)
{
	SpinLockAcquire(&slot->mutex);
	if (reread)
		cover = Min(cover, guard_fence_read(slot->db));
	if (guard_slot_key_word(slot) == key)
		guard_slot_cover(slot, cover);
	SpinLockRelease(&slot->mutex);
}

/*
 * The fence step of an ID at field (required: it is past the slot's fence;
 * else within the refresh of it): the database's cover first, with no
 * other lock held, then the sequence's own fence, written (setval, before
 * the ID in WAL order) and published at once, neither flushed nor waited
 * for: the cover holds every ID a crash or a failover could forget.  In a
 * transaction that made the database's fence anew, the old way
 * (seq_fence_advance_mine); in a database without one (shardid 1.0, or
 * the extension dropped), the sequence's fence is flushed and the
 * standbys waited for before it is used, as before the cover.
 *
 * take (a required write before the call has a value: guard.c's
 * shardid_guard_value): the covered path alone, whose setval gives the
 * call its value, *take (docs/design.md, "One record a call"); false, and
 * nothing written, where another path or no write is due.
 *
 * No fence is written into a sequence that this transaction gave a new
 * file (seq_rewritten_in_xact): a rollback would take it back while the
 * IDs it covered are out, and a dump reads the old file meanwhile.  An ID
 * past the fence it has is refused (55000) until the transaction ends.
 */
bool
shardid_seq_fence_advance(GuardSlot *slot, uint64 key, Oid seqid, int64 field,
						  int64 epoch, bool required, int64 *take)
{
	int64		cover;
	int64		seq_hi;
	int64		hi_cached;
	SeqWrite	w;
	CoverState	state;

	if (seq_rewritten_in_xact(seqid))
	{
		if (take != NULL)
			return false;
		if (!required)
		{
			early_write_off(slot, key);
			return true;
		}
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot issue an ID past the fence of sequence \"%s\" in the transaction that altered it",
						get_rel_name(seqid)),
				 errdetail("A change to the sequence in this transaction (ALTER SEQUENCE, TRUNCATE ... RESTART IDENTITY) gave it a new file: a rollback would take back a fence written into it, while the IDs it covers are out."),
				 errhint("Commit the change to the sequence, then take its IDs.")));
	}
	if (reload_at_xact_end && OidIsValid(fence_relid()) &&
		is_transactional(fence_relid()))
		state = COVER_MINE;
	else
	{
		pending.slot = required ? NULL : slot;
		pending.key = key;
		state = db_cover(slot->db, field, epoch, required, &cover);
	}
	if (take != NULL && state != COVER_HELD)
	{
		pending.slot = NULL;
		return false;
	}
	if (state == COVER_MINE)
	{
		pending.slot = NULL;
		seq_fence_advance_mine(slot, key, seqid, field, epoch, required);
		return true;
	}
	if (state == COVER_LOAD)
	{
		/* the guard decides again, after the load */
		pending.slot = NULL;
		if (!required)
			early_write_off(slot, key);
		else if (db_is_mine(slot->db))
			shardid_fence_load(slot->db);
		return true;
	}

	/*
	 * Without a cover, a fence is judged as the guard judges it, by the
	 * slot's fence, which only a flushed write raises there: the
	 * sequence's own may be a write of the covered path, not flushed.
	 */
	if (!seq_fence_begin(slot, key, seqid, field, required, state == COVER_NONE,
						 &seq_hi, &hi_cached))
	{
		pending.slot = NULL;
		if (state == COVER_HELD)
			slot_covered(slot, key, cover, true);
		return take == NULL;
	}
	w = seq_fence_write(slot, key, seqid, field, epoch, seq_hi, hi_cached,
						take != NULL);
	if (w.fence < 0)
	{
		/* not taken: nothing written */
		pending.slot = NULL;
		seq_unlock(seqid);
		return false;
	}
	SHARDID_FAULT("seq_after_insert");
	if (state == COVER_NONE)
	{
		TimestampTz started = GetCurrentTimestamp();
		bool		timed_out = !fence_flush(XactLastRecEnd);

		db_wrote(slot->db, (GetCurrentTimestamp() - started) / 1000, false,
				 required, timed_out);
		cover = INT64_MAX;
	}
	shardid_require_postmaster();
	seq_fence_publish(slot, key, seqid, &w, cover, state == COVER_HELD);
	pending.slot = NULL;
	SHARDID_FAULT("after_publish");
	seq_unlock(seqid);
	if (take != NULL)
		*take = (w.fence + 1) << SHARDID_SEQ_BITS;
	return true;
}

/* ----------------------------------------------------------------
 * Transactions
 * ----------------------------------------------------------------
 */

void
shardid_fence_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (reload_at_xact_end)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that created or changed shardid's durable fence"),
						 errhint("Run CREATE or ALTER EXTENSION shardid and shardid_set_epoch in a transaction of their own.")));
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			SHARDID_FAULT("xact_abort");
			pending_write_off();
			/* the values of sequences new in this transaction went with it */
			if (shardid_shared && xact_nseqs > 0)
				shardid_slots_forget_fence(xact_seqs, xact_nseqs);
			SHARDID_FALLTHROUGH;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			if (event == XACT_EVENT_COMMIT)
				SHARDID_FAULT("xact_commit");
			/* the list was in the transaction's memory */
			xact_seqs = NULL;
			xact_nseqs = 0;
			xact_seqs_size = 0;
			own_nfences = 0;
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
 * after the savepoint), or the value of a sequence made after it: read
 * the fence again, and write those sequences' fences again.
 */
void
shardid_fence_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							   SubTransactionId parentSubid, void *arg)
{
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	pending_write_off();
	own_nfences = 0;
	if (shardid_shared && xact_nseqs > 0)
		shardid_slots_forget_fence(xact_seqs, xact_nseqs);
	if (reload_at_xact_end)
		request_reload();
}
