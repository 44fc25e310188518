/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  shardid's shared memory: the guard's slots and database entries,
 *	  finding and handing them out, and evicting when they are all taken.
 *
 * A slot keeps, for one (database, sequence), where the guard stands: the
 * last time field issued, the block of sequence values it holds and which
 * ten-bit values it holds (see guard.c for how they are used).  A shared
 * hash table maps (database, sequence) to its slot; guard.c remembers
 * which slot its sequences use, so that the usual call takes no lock but
 * the slot's own spinlock.
 *
 * A database entry keeps what this server knows of one database's durable
 * fence: the fence itself (a time field at or before which the database
 * issues no ID again, stored in the database and read by fence.c), where
 * the database's slots start (the fence as it was read after this server
 * started), and a floor raised by its evicted slots.
 *
 * Both tables are bounded (shardid.max_sequences, shardid.max_databases).
 * When every slot is taken, the one that issued least recently is evicted:
 * its last field raises its database's floor, and every new slot of that
 * database starts at or after the floor, so a sequence that comes back
 * cannot reuse a field it already used.  When every database entry is
 * taken, the least recently used one is emptied of its slots and reused;
 * when its database comes back, it starts again from its durable fence,
 * which every ID it ever issued lies at or before.
 *
 * The postmaster saves the counters when it exits (state.c).
 *
 * The locking protocol is in shmem.h.
 *
 * src/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"

#include "compat.h"
#include "fault.h"
#include "report.h"
#include "rule.h"
#include "shmem.h"
#include "slot.h"
#include "state.h"

typedef struct GuardHashEntry
{
	GuardKey	key;			/* hash key: keep it first */
	int			slotno;
} GuardHashEntry;

/* GUCs */
int			shardid_max_sequences = 16384;
int			shardid_max_databases = 64;

GuardShared *shardid_shared = NULL;
static HTAB *guard_htab = NULL;

shmem_request_hook_type shardid_prev_shmem_request_hook = NULL;
shmem_startup_hook_type shardid_prev_shmem_startup_hook = NULL;

static void shmem_shutdown(int code, Datum arg);
static int	slot_create(const GuardKey *key);

static Size
slots_size(void)
{
	return add_size(offsetof(GuardShared, slots),
					mul_size(shardid_max_sequences, sizeof(GuardSlot)));
}

static Size
dbs_size(void)
{
	return mul_size(shardid_max_databases, sizeof(GuardDb));
}

static int
memo_count(void)
{
	return shardid_max_databases * SHARDID_MEMOS_PER_DB;
}

static Size
memos_size(void)
{
	return mul_size(memo_count(), sizeof(GuardMemo));
}

static int
ghost_count(void)
{
	return shardid_max_sequences * SHARDID_GHOSTS_PER_SLOT;
}

static Size
ghosts_size(void)
{
	return mul_size(ghost_count(), sizeof(GuardGhost));
}

/* The place of key's ghost. */
static GuardGhost *
ghost_of(const GuardKey *key)
{
	uint32		h = hash_bytes((const unsigned char *) key, sizeof(GuardKey));

	return &shardid_shared->ghosts[h % (uint32) ghost_count()];
}

void
shardid_shmem_request(void)
{
	if (shardid_prev_shmem_request_hook)
		shardid_prev_shmem_request_hook();

	RequestAddinShmemSpace(add_size(add_size(add_size(add_size(MAXALIGN(slots_size()),
															   MAXALIGN(dbs_size())),
													  MAXALIGN(memos_size())),
											 MAXALIGN(ghosts_size())),
									hash_estimate_size(shardid_max_sequences,
													   sizeof(GuardHashEntry))));
	RequestNamedLWLockTranche("shardid", 1);
}

static void
db_clear(GuardDb *db)
{
	db->dbid = InvalidOid;
	db->nslots = 0;
	pg_atomic_write_u32(&db->state, GUARD_FENCE_UNKNOWN);
	pg_atomic_write_u64(&db->fence, (uint64) INT64CONST(-1));
	db->start = -1;
	db->floor = -1;
	db->start_reach = 0;
	db->write_lag_ms = 0;
	db->reach_written = 0;
	db->epoch = GUARD_DEFAULT_EPOCH;
	db->epoch_free = false;
	db->fence_writes = 0;
	db->write_waits = 0;
	db->standby_timeouts = 0;
	db->last_used = 0;
	db->cover_pending = -1;
	db->cover_lsn = InvalidXLogRecPtr;
	db->cover_flushed = 0;
}

void
shardid_shmem_startup(void)
{
	bool		found;
	bool		dbs_found;
	HASHCTL		info;
	GuardShared *shared;
	GuardDb    *dbs;
	GuardMemo  *memos;
	bool		memos_found;
	GuardGhost *ghosts;
	bool		ghosts_found;

	if (shardid_prev_shmem_startup_hook)
		shardid_prev_shmem_startup_hook();

	shardid_shared = NULL;
	guard_htab = NULL;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);

	shared = ShmemInitStruct("shardid", slots_size(), &found);
	dbs = ShmemInitStruct("shardid databases", dbs_size(), &dbs_found);
	memos = ShmemInitStruct("shardid memos", memos_size(), &memos_found);
	ghosts = ShmemInitStruct("shardid ghosts", ghosts_size(), &ghosts_found);
	if (!found)
	{
		int			i;

		Assert(!dbs_found && !memos_found && !ghosts_found);
		shared->dbs = dbs;
		shared->memos = memos;
		shared->ghosts = ghosts;
		memset(ghosts, 0, ghosts_size());
		for (i = 0; i < memo_count(); i++)
			memos[i].dbid = InvalidOid;
		shared->lock = &(GetNamedLWLockTranche("shardid"))->lock;
		shared->slot_count = 0;
		shared->evictions = 0;
		memset(&shared->evicted, 0, sizeof(GuardCounters));
		shared->stats_reset = GetCurrentTimestamp();
		pg_atomic_init_u64(&shared->standby_behind, 0);
		for (i = 0; i < shardid_max_sequences; i++)
		{
			SpinLockInit(&shared->slots[i].mutex);
			shared->slots[i].in_use = false;
			memset(&shared->slots[i].key, 0, sizeof(GuardKey));
		}
		for (i = 0; i < shardid_max_databases; i++)
		{
			GuardDb    *db = &shared->dbs[i];

			SpinLockInit(&db->mutex);
			pg_atomic_init_u32(&db->state, GUARD_FENCE_UNKNOWN);
			pg_atomic_init_u64(&db->fence, (uint64) INT64CONST(-1));
			pg_atomic_init_u32(&db->writing, 0);
			db_clear(db);
		}
	}

	info.keysize = sizeof(GuardKey);
	info.entrysize = sizeof(GuardHashEntry);
	guard_htab = SHARDID_SHMEM_INIT_HASH("shardid hash",
										 shardid_max_sequences,
										 &info,
										 HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);

	LWLockRelease(AddinShmemInitLock);

	shardid_shared = shared;

	/* Only the postmaster loads and saves the counters. */
	if (!IsUnderPostmaster)
		on_shmem_exit(shmem_shutdown, (Datum) 0);

	if (!found)
	{
		int			count;
		int64		evictions;
		GuardLoadedSlot *loaded = shardid_state_load(&count, &evictions);
		int			i;

		/* only the postmaster runs now: no locks needed */
		shared->evictions = evictions;
		for (i = 0; i < count; i++)
		{
			GuardSlot  *slot = &shared->slots[slot_create(&loaded[i].saved.key)];

			guard_slot_restore(slot, &loaded[i].saved.counters,
							   loaded[i].saved.last_issued_ms, loaded[i].has_position,
							   loaded[i].last, loaded[i].last_block);
		}
		if (loaded)
			pfree(loaded);
	}
}

/*
 * Postmaster exit, and crash restart: save the counters.  Unlike
 * pg_stat_statements, shardid saves also when shared memory is reset after
 * a backend crashed (code != 0): the counters only ever grow, and a
 * backend that died holding a slot's mutex has made the postmaster
 * restart, not changed what the file holds about it.
 */
static void
shmem_shutdown(int code, Datum arg)
{
	if (!shardid_shared || !guard_htab)
		return;
	shardid_state_save(shardid_shared, shardid_max_sequences);
}

void
shardid_shmem_require(void)
{
	if (!shardid_shared || !guard_htab)
		shardid_report_not_preloaded();
}

/* Add what one slot counted to sum (shardid_stats_info's evicted_*). */
static inline void
counters_add(GuardCounters *sum, const GuardCounters *c)
{
	sum->issued += c->issued;
	sum->exhausted_waits += c->exhausted_waits;
	sum->clock_waits += c->clock_waits;
	sum->clock_refusals += c->clock_refusals;
	sum->fence_waits += c->fence_waits;
}

/*
 * The memo of dbid, or with create a new one (reusing the least recently
 * used), or NULL.  The caller holds shared->lock exclusively.
 */
static GuardMemo *
memo_find(Oid dbid, bool create)
{
	GuardMemo  *memos = shardid_shared->memos;
	int			victim = -1;
	int			i;

	for (i = 0; i < memo_count(); i++)
	{
		if (memos[i].dbid == dbid)
			return &memos[i];
		/* a free memo, else the least recently used */
		if (victim < 0 ||
			(memos[victim].dbid != InvalidOid &&
			 (memos[i].dbid == InvalidOid || memos[i].used < memos[victim].used)))
			victim = i;
	}
	if (!create)
		return NULL;
	memos[victim].dbid = dbid;
	memos[victim].high = -1;
	return &memos[victim];
}

/*
 * The highest field of database entry dbno that any of its slots issued or
 * started at, and its floor, and with with_start its start; the caller
 * holds shared->lock.
 */
static int64
db_high(int dbno, bool with_start)
{
	GuardShared *shared = shardid_shared;
	GuardDb    *db = &shared->dbs[dbno];
	int64		high;
	int			i;

	SpinLockAcquire(&db->mutex);
	high = with_start ? Max(db->floor, db->start) : db->floor;
	SpinLockRelease(&db->mutex);
	for (i = 0; i < shared->slot_count; i++)
	{
		GuardSlot  *slot = &shared->slots[i];

		SpinLockAcquire(&slot->mutex);
		if (slot->in_use && slot->dbno == dbno)
			high = Max(high, guard_slot_issued(slot));
		SpinLockRelease(&slot->mutex);
	}
	return high;
}

/*
 * The database entry of dbid, handed out if need be; the caller holds
 * shared->lock exclusively.  When every entry is taken, the one used least
 * recently is emptied of its slots and reused.
 */
static int
db_find_or_create(Oid dbid)
{
	GuardShared *shared = shardid_shared;
	int			i;
	int			victim = -1;

	for (i = 0; i < shardid_max_databases; i++)
	{
		if (shared->dbs[i].dbid == dbid)
			return i;
	}
	for (i = 0; i < shardid_max_databases; i++)
	{
		GuardDb    *db = &shared->dbs[i];

		if (db->dbid == InvalidOid)
		{
			victim = i;
			break;
		}
		/* prefer an entry without slots, then the least recently used */
		if (victim < 0 ||
			(db->nslots == 0) > (shared->dbs[victim].nslots == 0) ||
			((db->nslots == 0) == (shared->dbs[victim].nslots == 0) &&
			 db->last_used < shared->dbs[victim].last_used))
			victim = i;
	}

	/* remember how far the victim's database went: see GuardMemo */
	if (shared->dbs[victim].dbid != InvalidOid)
	{
		int64		high = db_high(victim, true);

		if (high >= 0)
		{
			GuardMemo  *memo = memo_find(shared->dbs[victim].dbid, true);

			memo->high = Max(memo->high, high);
			memo->used = GetCurrentTimestamp();
		}
	}

	if (shared->dbs[victim].dbid != InvalidOid &&
		shared->dbs[victim].nslots > 0)
	{
		/* free every slot of the victim's database */
		for (i = 0; i < shared->slot_count; i++)
		{
			GuardSlot  *slot = &shared->slots[i];
			GuardKey	old;
			bool		drop;

			SpinLockAcquire(&slot->mutex);
			drop = slot->in_use && slot->dbno == victim;
			if (drop)
			{
				old = slot->key;
				counters_add(&shared->evicted, &slot->counters);
				guard_slot_end(slot, ghost_of(&old));
			}
			SpinLockRelease(&slot->mutex);
			if (drop)
			{
				hash_search(guard_htab, &old, HASH_REMOVE, NULL);
				shared->evictions++;
			}
		}
	}

	/*
	 * A backend may still be reading or writing the victim's fence: it
	 * publishes what it found only if the entry still has its dbid (see
	 * the locking protocol), so the change of dbid under the mutex is
	 * what hands the entry over.
	 */
	{
		GuardMemo  *memo = memo_find(dbid, false);
		GuardDb    *db = &shared->dbs[victim];

		SpinLockAcquire(&db->mutex);
		db_clear(db);
		db->dbid = dbid;
		if (memo != NULL && memo->high >= 0)
		{
			/*
			 * The database was here before: its slots start where they
			 * stopped, and the fence is read again without moving them.
			 */
			db->start = memo->high;
			db->floor = memo->high;
			pg_atomic_write_u32(&db->state, GUARD_FENCE_RELOAD);
		}
		SpinLockRelease(&db->mutex);
	}
	return victim;
}

/*
 * The slot to hand out: a free one, or the one that issued least recently,
 * emptied, its last field raising its database's floor and what it knew
 * of its sequence kept as a ghost.  The caller holds shared->lock
 * exclusively (or is the postmaster at startup).
 */
static int
slot_take(void)
{
	GuardShared *shared = shardid_shared;
	GuardSlot  *slot;
	int			slotno = -1;
	int			i;

	if (shared->slot_count < shardid_max_sequences)
		return shared->slot_count++;
	for (i = 0; i < shared->slot_count; i++)
	{
		if (!shared->slots[i].in_use)
			return i;
		if (slotno < 0 ||
			guard_slot_last_ms(&shared->slots[i]) < guard_slot_last_ms(&shared->slots[slotno]))
			slotno = i;
	}
	slot = &shared->slots[slotno];

	SpinLockAcquire(&slot->mutex);
	if (slot->in_use)
	{
		GuardDb    *old_db = &shared->dbs[slot->dbno];
		GuardKey	old = slot->key;
		int64		old_last = guard_slot_issued(slot);

		counters_add(&shared->evicted, &slot->counters);
		guard_slot_end(slot, ghost_of(&old));
		SpinLockRelease(&slot->mutex);

		SpinLockAcquire(&old_db->mutex);
		old_db->floor = Max(old_db->floor, old_last);
		SpinLockRelease(&old_db->mutex);
		old_db->nslots--;
		hash_search(guard_htab, &old, HASH_REMOVE, NULL);
		shared->evictions++;
	}
	else
		SpinLockRelease(&slot->mutex);
	return slotno;
}

/*
 * Hand out a slot for key and return its number; the caller holds
 * shared->lock exclusively (or is the postmaster at startup) and has
 * checked that key has none.
 */
static int
slot_create(const GuardKey *key)
{
	GuardShared *shared = shardid_shared;
	GuardHashEntry *hentry;
	int			dbno = db_find_or_create(key->dbid);
	int			slotno = slot_take();
	GuardGhost *ghost;

	/* the entry just freed, if any, makes room */
	hentry = hash_search(guard_htab, key, HASH_ENTER_NULL, NULL);
	if (hentry == NULL)
		elog(ERROR, "shardid hash table is full with %d of %d slots in use",
			 shared->slot_count, shardid_max_sequences);
	hentry->slotno = slotno;
	shared->dbs[dbno].nslots++;
	ghost = ghost_of(key);
	guard_slot_begin(&shared->slots[slotno], key, dbno, &shared->dbs[dbno],
					 memcmp(&ghost->key, key, sizeof(GuardKey)) == 0 ? ghost : NULL);
	return slotno;
}

void
shardid_ghost_wrote(Oid seqid, int64 written, int64 fence)
{
	GuardShared *shared = shardid_shared;
	GuardKey	key;
	GuardGhost *g;

	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.seqid = seqid;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	g = ghost_of(&key);
	if (memcmp(&g->key, &key, sizeof(GuardKey)) == 0)
	{
		g->written = Max(g->written, written);
		g->fence = Max(g->fence, fence);
		g->seq_hi = Max(g->seq_hi, written + 1);
	}
	LWLockRelease(shared->lock);
}

int
shardid_slot_lookup(Oid dbid, Oid seqid)
{
	GuardShared *shared = shardid_shared;
	GuardHashEntry *hentry;
	GuardKey	key;
	int			slotno;
#ifdef SHARDID_FAULTS
	bool		created = false;
	int64		evictions = 0;
#endif

	memset(&key, 0, sizeof(key));
	key.dbid = dbid;
	key.seqid = seqid;

	LWLockAcquire(shared->lock, LW_SHARED);
	hentry = hash_search(guard_htab, &key, HASH_FIND, NULL);
	if (hentry != NULL)
		slotno = hentry->slotno;
	else
	{
		LWLockRelease(shared->lock);
		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		/* another backend may have created it meanwhile */
		hentry = hash_search(guard_htab, &key, HASH_FIND, NULL);
#ifdef SHARDID_FAULTS
		created = hentry == NULL;
		evictions = shared->evictions;
#endif
		slotno = hentry ? hentry->slotno : slot_create(&key);
#ifdef SHARDID_FAULTS
		evictions = shared->evictions - evictions;
#endif
	}
	shared->dbs[shared->slots[slotno].dbno].last_used = GetCurrentTimestamp();
	LWLockRelease(shared->lock);
#ifdef SHARDID_FAULTS
	/* outside the lock: a stall holds up this backend alone */
	if (evictions > 0)
		SHARDID_FAULT("slot_evict");
	if (created)
		SHARDID_FAULT("slot_start");
#endif
	return slotno;
}

void
shardid_shmem_reset_counters(void)
{
	GuardShared *shared = shardid_shared;
	int			i;

	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	for (i = 0; i < shared->slot_count; i++)
	{
		SpinLockAcquire(&shared->slots[i].mutex);
		memset(&shared->slots[i].counters, 0, sizeof(GuardCounters));
		shared->slots[i].fence_writes = 0;
		SpinLockRelease(&shared->slots[i].mutex);
	}
	for (i = 0; i < shardid_max_databases; i++)
	{
		SpinLockAcquire(&shared->dbs[i].mutex);
		shared->dbs[i].fence_writes = 0;
		shared->dbs[i].write_waits = 0;
		shared->dbs[i].standby_timeouts = 0;
		SpinLockRelease(&shared->dbs[i].mutex);
	}
	shared->evictions = 0;
	memset(&shared->evicted, 0, sizeof(GuardCounters));
	shared->stats_reset = GetCurrentTimestamp();
	LWLockRelease(shared->lock);
}

int64
shardid_db_known_max(GuardDb *db)
{
	GuardShared *shared = shardid_shared;
	int64		known;

	LWLockAcquire(shared->lock, LW_SHARED);
	known = db_high(db - shared->dbs, false);
	LWLockRelease(shared->lock);
	return known;
}

GuardDb *
shardid_db_current(void)
{
	GuardShared *shared = shardid_shared;
	GuardDb    *found = NULL;
	int			i;

	LWLockAcquire(shared->lock, LW_SHARED);
	for (i = 0; i < shardid_max_databases; i++)
	{
		if (shared->dbs[i].dbid == MyDatabaseId)
		{
			found = &shared->dbs[i];
			break;
		}
	}
	LWLockRelease(shared->lock);
	return found;
}

int64
shardid_db_lower(GuardDb *db, int64 field)
{
	GuardShared *shared = shardid_shared;
	int			dbno = db - shared->dbs;
	GuardMemo  *memo;
	int64		target = field;
	int			i;

	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	if (db->dbid == MyDatabaseId)
	{
		/*
		 * Publish the low fence first.  Then never below an ID this server
		 * issued: each slot is read under its mutex, which every issuer
		 * holds from its decision to its update, so none is missed.  Each
		 * sequence keeps its own fence, which holds its IDs back: a slot
		 * lowered here starts at the lower field, and its next ID past its
		 * own fence writes one again.
		 */
		SpinLockAcquire(&db->mutex);
		pg_atomic_write_u64(&db->fence, (uint64) Min(field, guard_fence_read(db)));
		/* a cover appended before is not published over the lowered one */
		db->cover_pending = -1;
		SpinLockRelease(&db->mutex);
		pg_memory_barrier();
		for (i = 0; i < shared->slot_count; i++)
		{
			GuardSlot  *slot = &shared->slots[i];

			SpinLockAcquire(&slot->mutex);
			if (slot->in_use && slot->dbno == dbno)
				target = Max(target, guard_slot_issued(slot));
			SpinLockRelease(&slot->mutex);
		}
		for (i = 0; i < shared->slot_count; i++)
		{
			GuardSlot  *slot = &shared->slots[i];

			SpinLockAcquire(&slot->mutex);
			if (slot->in_use && slot->dbno == dbno)
				guard_slot_lower_cover(slot, target);
			SpinLockRelease(&slot->mutex);
		}
		SpinLockAcquire(&db->mutex);
		db->start = Min(db->start, target);
		db->floor = Min(db->floor, target);
		pg_atomic_write_u64(&db->fence, (uint64) target);
		SpinLockRelease(&db->mutex);
	}
	memo = memo_find(MyDatabaseId, false);
	if (memo != NULL)
		memo->high = Min(memo->high, target);
	LWLockRelease(shared->lock);
	return target;
}

int64
shardid_slot_lower(Oid seqid, int64 field)
{
	GuardShared *shared = shardid_shared;
	GuardHashEntry *hentry;
	GuardKey	key;
	int64		target = field;

	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.seqid = seqid;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	hentry = hash_search(guard_htab, &key, HASH_FIND, NULL);
	if (hentry != NULL)
	{
		GuardSlot  *slot = &shared->slots[hentry->slotno];

		SpinLockAcquire(&slot->mutex);
		if (slot->in_use && guard_slot_key_word(slot) == guard_key_word(key.dbid, key.seqid))
			target = guard_slot_lower(slot, target);
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(shared->lock);
	return target;
}

void
shardid_db_touch(GuardDb *db)
{
	GuardShared *shared = shardid_shared;
	int			dbno = db - shared->dbs;
	int			i;

	LWLockAcquire(shared->lock, LW_SHARED);
	for (i = 0; i < shared->slot_count; i++)
	{
		GuardSlot  *slot = &shared->slots[i];

		SpinLockAcquire(&slot->mutex);
		if (slot->in_use && slot->dbno == dbno)
			guard_slot_stale(slot);
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(shared->lock);
}

void
shardid_slots_forget_fence(const Oid *seqids, int n)
{
	GuardShared *shared = shardid_shared;
	int			i;

	/* each by its key: the other slots are not even looked at */
	LWLockAcquire(shared->lock, LW_SHARED);
	for (i = 0; i < n; i++)
	{
		GuardHashEntry *hentry;
		GuardSlot  *slot;
		GuardKey	key;

		memset(&key, 0, sizeof(key));
		key.dbid = MyDatabaseId;
		key.seqid = seqids[i];
		hentry = hash_search(guard_htab, &key, HASH_FIND, NULL);
		if (hentry == NULL)
			continue;
		slot = &shared->slots[hentry->slotno];
		SpinLockAcquire(&slot->mutex);
		if (slot->in_use &&
			guard_slot_key_word(slot) == guard_key_word(key.dbid, key.seqid))
			guard_slot_forget_fence(slot);
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(shared->lock);
}

List *
shardid_db_sequences(void)
{
	GuardShared *shared = shardid_shared;
	List	   *seqs = NIL;
	int			i;

	LWLockAcquire(shared->lock, LW_SHARED);
	for (i = 0; i < shared->slot_count; i++)
	{
		GuardSlot  *slot = &shared->slots[i];
		Oid			seqid = InvalidOid;

		SpinLockAcquire(&slot->mutex);
		if (slot->in_use && slot->key.dbid == MyDatabaseId)
			seqid = slot->key.seqid;
		SpinLockRelease(&slot->mutex);
		if (OidIsValid(seqid))
			seqs = list_append_unique_oid(seqs, seqid);
	}
	for (i = 0; i < ghost_count(); i++)
	{
		GuardGhost *ghost = &shared->ghosts[i];

		/* ghosts change under the exclusive lock only */
		if (ghost->key.dbid == MyDatabaseId && OidIsValid(ghost->key.seqid))
			seqs = list_append_unique_oid(seqs, ghost->key.seqid);
	}
	LWLockRelease(shared->lock);
	return seqs;
}

void
shardid_slot_wrote(Oid seqid, int64 fence)
{
	GuardShared *shared = shardid_shared;
	GuardHashEntry *hentry;
	GuardKey	key;

	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.seqid = seqid;
	LWLockAcquire(shared->lock, LW_SHARED);
	hentry = hash_search(guard_htab, &key, HASH_FIND, NULL);
	if (hentry != NULL)
	{
		GuardSlot  *slot = &shared->slots[hentry->slotno];

		SpinLockAcquire(&slot->mutex);
		if (slot->in_use &&
			guard_slot_key_word(slot) == guard_key_word(key.dbid, key.seqid))
			guard_slot_writing(slot, fence);
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(shared->lock);
}
