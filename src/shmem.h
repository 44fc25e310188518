/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  shardid's shared memory: the guard's slots, one per (database,
 *	  sequence), and its database entries, one per database, which hold
 *	  the durable fence as this server knows it.
 *
 * Locking protocol
 *
 *	- shared->lock (a named LWLock) protects the hash table from keys to
 *	  slots, which slots and database entries are handed out, and each
 *	  database entry's nslots.  Finding a slot takes it shared; handing
 *	  one out, evicting or resetting takes it exclusive.
 *	- A slot's spinlock (mutex) protects everything in the slot.  It is
 *	  held for a handful of instructions: no call that can fail, sleep or
 *	  take another lock is made under it, but one: a database entry's
 *	  mutex may be taken inside a slot's, never the other way round.
 *	  Since a slot may have been evicted between finding it and locking
 *	  it, its key is checked under its mutex.
 *	- A database entry's mutex protects its dbid, start, floor and
 *	  counters.  Its fence, state and gen are atomics, read without a
 *	  lock: a stale fence is only ever lower than the true one, which is
 *	  safe.  They are written under the mutex, after checking that the
 *	  entry still belongs to the writer's database: an entry may be
 *	  reused for another database at any time, and the change of its dbid
 *	  under the mutex is what hands it over.
 *	- A database's durable fence is read and written under a
 *	  self-conflicting heavyweight lock on its sequence (fence.c), which
 *	  every reader and writer of the database takes, whichever entry it
 *	  works through: so the stored fence never goes down, and a backend
 *	  waiting for it (or, holding it, for the disk or the standbys) can be
 *	  cancelled.  No LWLock or spinlock is held meanwhile.
 *	- Eviction holds shared->lock exclusively, then takes the victim's
 *	  mutex: never the other order.
 *	- The memos (one per database that ever had an entry) are read and
 *	  written only under shared->lock held exclusively.
 *
 * src/shmem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_SHMEM_H
#define SHARDID_SHMEM_H

#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "layout.h"

typedef struct GuardKey
{
	Oid			dbid;
	Oid			seqid;
} GuardKey;

/* What a slot counts; saved and reset as one. */
typedef struct GuardCounters
{
	int64		issued;			/* IDs issued */
	int64		exhausted_waits;	/* calls that waited for the next ms */
	int64		clock_waits;	/* calls that waited out a clock step */
	int64		clock_refusals; /* calls refused for a clock step */
	int64		fence_waits;	/* calls that waited for the clock to pass
								 * the fence */
} GuardCounters;

/* 64-bit words in the bitmap of one field's ten-bit values */
#define GUARD_BITMAP_WORDS	(SHARDID_SEQ_PER_MS / 64)

struct GuardDb;

typedef struct GuardSlot
{
	slock_t		mutex;
	bool		in_use;
	GuardKey	key;			/* all zero while not in use */
	int			dbno;			/* its database entry */
	struct GuardDb *db;			/* the same, as a pointer */
	uint32		gen;			/* the entry's gen this slot started from */
	int64		last;			/* last time field issued, or the start */
	int64		last_block;		/* block of last, or SHARDID_NO_BLOCK */
	bool		fenced;			/* last is a start at the fence, not an ID */
	bool		probe_pending;	/* the table's own floor is not read yet */
	bool		probed;			/* last is the table's floor, not issued */
	int64		unprobed_last;	/* last before the table's floor raised it */
	int64		start_slack;	/* lead of a fenced start; 0: the GUC's */
	int64		last_issued_ms; /* Unix ms of the last ID, or GUARD_NEVER */
	GuardCounters counters;
	uint32		taken_words;	/* which words of taken hold bits */
	uint64		taken[GUARD_BITMAP_WORDS];	/* ten-bit values issued in last */
} GuardSlot;

/* last_issued_ms of a slot that has issued nothing */
#define GUARD_NEVER			INT64_MIN

/* What a database entry knows of its fence. */
typedef enum GuardFenceState
{
	GUARD_FENCE_UNKNOWN = 0,	/* not read since the server started */
	GUARD_FENCE_LOADED,			/* read: fence and start hold */
	GUARD_FENCE_NONE,			/* the database has no fence (shardid 1.0) */
	GUARD_FENCE_RELOAD			/* read it again, the slots stay where they are */
} GuardFenceState;

typedef struct GuardDb
{
	slock_t		mutex;
	Oid			dbid;			/* InvalidOid: free */
	int			nslots;			/* slots of this database */
	pg_atomic_uint32 state;		/* GuardFenceState */
	pg_atomic_uint32 gen;		/* bumped when start rises */
	pg_atomic_uint64 fence;		/* the durable fence, a time field, as int64 */
	int64		start;			/* where this database's slots start */
	int64		floor;			/* last field of its evicted slots */
	int64		start_slack;	/* how far start may be ahead of the IDs;
								 * 0: as shardid.fence_lead says */
	pg_atomic_uint64 epoch;		/* the database's epoch, Unix ms */
	bool		epoch_free;		/* shardid 1.1 there: every call its own */
	int64		fence_writes;	/* fence records written */
	int64		fence_write_waits;	/* calls that waited for a write */
	TimestampTz last_used;		/* for choosing an entry to reuse */
	int64		write_lag_ms;	/* how long the last fence write took */
	pg_atomic_uint32 writing;	/* a fence write is under way: early
								 * writers need not try the lock */
} GuardDb;

/*
 * What the server remembers of a database whose entry was reused: the
 * highest field its slots issued or started at.  When the database comes
 * back, its slots start there rather than at the stored fence, which lies
 * ahead of the IDs by up to the lead: so an entry's eviction costs no
 * wait.  SHARDID_MEMOS_PER_DB memos per database entry; when all are
 * taken, the least recently used is forgotten, and that database starts
 * at its stored fence again.
 */
typedef struct GuardMemo
{
	Oid			dbid;			/* InvalidOid: free */
	int64		high;
	TimestampTz used;
} GuardMemo;

#define SHARDID_MEMOS_PER_DB	16

typedef struct GuardShared
{
	LWLock	   *lock;
	int			slot_count;		/* slots handed out so far */
	int64		evictions;
	GuardCounters evicted;		/* what evicted slots had counted */
	TimestampTz stats_reset;
	GuardDb    *dbs;			/* shardid.max_databases entries */
	GuardMemo  *memos;			/* SHARDID_MEMOS_PER_DB times as many */
	GuardSlot	slots[FLEXIBLE_ARRAY_MEMBER];	/* shardid.max_sequences */
} GuardShared;

/* Set in every process that has shardid in shared_preload_libraries. */
extern SHARDID_INTERNAL GuardShared *shardid_shared;
extern SHARDID_INTERNAL int shardid_max_sequences;
extern SHARDID_INTERNAL int shardid_max_databases;

/* Define the sizing GUCs and install the hooks; from _PG_init. */
extern SHARDID_INTERNAL void shardid_shmem_define(void);

/* Raise the documented error unless shared memory is set up. */
extern SHARDID_INTERNAL void shardid_shmem_require(void);

/* The default epoch of a database, before its own is read. */
#define GUARD_DEFAULT_EPOCH		SHARDID_DEFAULT_EPOCH_UNIX_MS

/*
 * A slot's key as one word, compared on the hot path in one instruction:
 * a slot not in use has key 0, which no sequence has.
 */
static inline uint64
guard_key_word(Oid dbid, Oid seqid)
{
	GuardKey	key = {dbid, seqid};
	uint64		word;

	StaticAssertStmt(sizeof(GuardKey) == sizeof(uint64), "GuardKey is one word");
	memcpy(&word, &key, sizeof(word));
	return word;
}

static inline uint64
guard_slot_key_word(const GuardSlot *slot)
{
	uint64		word;

	memcpy(&word, &slot->key, sizeof(word));
	return word;
}

/*
 * The bitmap of ten-bit values a slot issued in its last field.  A new
 * field empties it with one store (taken_words = 0): a word of taken is
 * read only when its bit in taken_words says it was written since.
 */
static inline bool
guard_slot_taken(const GuardSlot *slot, int word, uint64 bit)
{
	return ((slot->taken_words >> word) & 1) != 0 && (slot->taken[word] & bit) != 0;
}

static inline void
guard_slot_take(GuardSlot *slot, int word, uint64 bit)
{
	uint64		old = ((slot->taken_words >> word) & 1) ? slot->taken[word] : 0;

	slot->taken[word] = old | bit;
	slot->taken_words |= (uint32) 1 << word;
}

/* A start whose values are not known: every value counts as taken. */
static inline void
guard_slot_take_all(GuardSlot *slot)
{
	memset(slot->taken, 0xFF, sizeof(slot->taken));
	slot->taken_words = ((uint32) 1 << GUARD_BITMAP_WORDS) - 1;
}

/*
 * What a slot tells its database it reached: its last field, but not one
 * raised by the table's floor that it has not issued since.  A table's
 * rows are whatever its writers put there, a huge ID included: they hold
 * back their own sequence, never the database's floor or its fence.
 */
static inline int64
guard_slot_reached(const GuardSlot *slot)
{
	return slot->probed ? slot->unprobed_last : slot->last;
}

/* A fence value stored in an atomic, and back. */
static inline int64
guard_fence_read(GuardDb *db)
{
	return (int64) pg_atomic_read_u64(&db->fence);
}

/*
 * The number of the slot of (dbid, seqid), created if need be.  The slot
 * is not locked: check its key under its mutex.
 */
extern SHARDID_INTERNAL int shardid_slot_lookup(Oid dbid, Oid seqid);

/* Zero every counter. */
extern SHARDID_INTERNAL void shardid_shmem_reset_counters(void);

/*
 * The largest field any slot of database entry db has issued or started
 * at, and its floor: what the server knows was issued there.
 */
extern SHARDID_INTERNAL int64 shardid_db_known_max(GuardDb *db);

/*
 * Lower everything database entry db knows it issued or started at, and
 * its published fence, to field, or to the largest field a slot of db
 * issued since this server started if that is later: for
 * shardid_fence_lower.  Returns the field it lowered to.
 */
extern SHARDID_INTERNAL int64 shardid_db_lower(GuardDb *db, int64 field);

/* The database entry of the current database, or NULL if it has none. */
extern SHARDID_INTERNAL GuardDb *shardid_db_current(void);

#endif							/* SHARDID_SHMEM_H */
