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

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "layout.h"
#include "rule.h"

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

/* GuardSlot.flags */
#define GUARD_SLOT_START	0x01	/* last is a start, not an ID issued */
#define GUARD_SLOT_WRITING	0x02	/* a write of the sequence's fence is
									 * under way: early writers stay out */
#define GUARD_SLOT_STALE	0x04	/* the database entry changed: look at it
									 * again before the next ID */
#define GUARD_SLOT_EPOCH_FREE 0x08	/* shardid 1.1 there: each call's epoch */

/*
 * A guard slot: where one (database, sequence)'s IDs stand.  Its state
 * changes through slot.h's transitions alone, under its mutex.
 */
typedef struct GuardSlot
{
	slock_t		mutex;
	uint8		flags;			/* GUARD_SLOT_* */
	bool		in_use;
	GuardKey	key;			/* all zero while not in use */
	struct GuardDb *db;			/* its database entry */
	int			dbno;			/* the same, as a number */
	int64		epoch_ms;		/* the database's epoch, Unix ms */
	int64		last;			/* last time field issued, or the start */
	int64		last_block;		/* block of last, or SHARDID_NO_BLOCK */
	int64		fence;			/* the sequence's own durable fence, as far
								 * as this server made it durable: no ID
								 * past it before a new one is */
	int64		seq_fence;		/* the sequence's own fence as this server
								 * wrote it (fence is the lower of it and
								 * the database's cover), or -1: past it
								 * the next ID writes one */
	int64		fence_early;	/* fence less a quarter of the lead: past it
								 * an ID has the fence written after it */
	int64		seq_hi;			/* highest block of a value of the sequence
								 * seen, or of the fence written into it */
	int64		written;		/* the last fence this server wrote into the
								 * sequence, or -1 (fence may be lower: the
								 * database's fence bounds it) */
	int64		writing;		/* the last fence this server set the
								 * sequence to, published or not yet (the
								 * sequence's other callers may take values
								 * of its block before written says it), or
								 * -1 */
	int64		hi_cached;		/* how many blocks a value may jump past
								 * seq_hi before it counts as moved */
	int64		start_reach;	/* reach of a start; 0: the GUC's */
	int64		db_reach;		/* the reach the database's fence was
								 * written with, to judge starts by */
	int64		issued;			/* with GUARD_SLOT_START: the last field
								 * issued before the start, or GUARD_NEVER */
	int64		saved_last_ms;	/* the Unix ms of its last ID before this
								 * server started (state.c), for the
								 * statistics only */
	int64		ghost_written;	/* from an evicted slot of the same key: the
								 * fence it wrote, or -1 (see GuardGhost) */
	int64		ghost_fence;	/* its fence */
	int64		ghost_issued;	/* its last field: its start or the last
								 * field it issued */
	int64		ghost_seq_hi;	/* and the highest block it saw */
	uint32		taken_words;	/* which words of taken hold bits */
	uint64		taken[GUARD_BITMAP_WORDS];	/* ten-bit values issued in last */
	GuardCounters counters;
	int64		fence_writes;	/* writes of the sequence's fence */
} GuardSlot;

/* a slot that has issued nothing */
#define GUARD_NEVER			INT64_MIN

/* seq_hi of a slot that knows nothing of its sequence yet */
#define GUARD_SEQ_HI_NONE	(INT64_MIN / 4)

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
	pg_atomic_uint64 fence;		/* the durable fence, a time field, as int64 */
	int64		start;			/* where this database's slots start */
	int64		floor;			/* last field of its evicted slots */
	int64		start_reach;	/* how far start may be ahead of the IDs;
								 * 0: as shardid.fence_lead says */
	int64		epoch;			/* the database's epoch, Unix ms */
	bool		epoch_free;		/* shardid 1.1 there: every call its own */
	int64		fence_writes;	/* fence records written */
	int64		write_waits;	/* calls that waited for a fence write */
	int64		standby_timeouts;	/* fence writes used before every
									 * standby had them */
	TimestampTz last_used;		/* for choosing an entry to reuse */
	int64		write_lag_ms;	/* how long the last fence write took */
	int64		reach_written;	/* the largest reach (and lag)
								 * any fence was written with since this
								 * server started: what a start found in a
								 * sequence's value may be judged by */
	pg_atomic_uint32 writing;	/* a fence write is under way: early
								 * writers need not try the lock */
	int64		cover_pending;	/* a cover appended ahead and not yet
								 * published, or -1 (fence.c, "The cover") */
	XLogRecPtr	cover_lsn;		/* the end of its record */
	TimestampTz cover_flushed;	/* when this server first saw it flushed,
								 * or 0 */
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

/*
 * What the server remembers of an evicted slot: the fence it wrote into
 * its sequence and its last field (its start, or the last field it
 * issued, whichever is later).  When the sequence comes back, its first
 * value carries that fence, which runs ahead of its IDs by up to the lead:
 * knowing that this server wrote it, and where its IDs stopped (or where
 * they were to start), the new slot starts there, without a wait.  A lossy cache:
 * SHARDID_GHOSTS_PER_SLOT per slot, each key in one place, overwritten by
 * another key that hashes there; a ghost lost costs a wait at most.
 */
typedef struct GuardGhost
{
	GuardKey	key;			/* all zero: none */
	int64		written;
	int64		fence;
	int64		issued;
	int64		seq_hi;
} GuardGhost;

#define SHARDID_GHOSTS_PER_SLOT	4

typedef struct GuardShared
{
	LWLock	   *lock;
	int			slot_count;		/* slots handed out so far */
	int64		evictions;
	GuardCounters evicted;		/* what evicted slots had counted */
	TimestampTz stats_reset;
	GuardDb    *dbs;			/* shardid.max_databases entries */
	GuardMemo  *memos;			/* SHARDID_MEMOS_PER_DB times as many */
	GuardGhost *ghosts;			/* SHARDID_GHOSTS_PER_SLOT per slot */
	pg_atomic_uint64 standby_behind;	/* a fence record a streaming
										 * standby did not receive within
										 * shardid.standby_wait; 0: none
										 * (fence.c) */
	GuardSlot	slots[FLEXIBLE_ARRAY_MEMBER];	/* shardid.max_sequences */
} GuardShared;

/* Set in every process that has shardid in shared_preload_libraries. */
extern SHARDID_INTERNAL GuardShared *shardid_shared;
extern SHARDID_INTERNAL int shardid_max_sequences;
extern SHARDID_INTERNAL int shardid_max_databases;

/* The shared-memory hooks, and those they chain to; set by _PG_init. */
extern SHARDID_INTERNAL shmem_request_hook_type shardid_prev_shmem_request_hook;
extern SHARDID_INTERNAL shmem_startup_hook_type shardid_prev_shmem_startup_hook;
extern SHARDID_INTERNAL void shardid_shmem_request(void);
extern SHARDID_INTERNAL void shardid_shmem_startup(void);

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
 * The last field a slot issued, or GUARD_NEVER: its last, unless last is
 * a start.  A start is never what a database reached: one taken from a
 * sequence's value is whatever that sequence's writers put there, and
 * holds back only that sequence, never its database's floor or fence.
 */
static inline int64
guard_slot_issued(const GuardSlot *slot)
{
	return (slot->flags & GUARD_SLOT_START) ? slot->issued : slot->last;
}

/* The Unix ms of a slot's last ID, or GUARD_NEVER: for eviction and stats */
static inline int64
guard_slot_last_ms(const GuardSlot *slot)
{
	int64		issued = guard_slot_issued(slot);

	return issued == GUARD_NEVER ? slot->saved_last_ms : issued + slot->epoch_ms;
}

/* The database's published fence, read without a lock. */
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

/*
 * A fence write of sequence seqid in the current database ended after its
 * slot was evicted: the slot's ghost, if there is one, learns of it.
 */
extern SHARDID_INTERNAL void shardid_ghost_wrote(Oid seqid, int64 written, int64 fence);

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

/*
 * Lower what the slot of seqid in the current database knows of the
 * sequence's fence to field, or to the last field it issued since this
 * server started if that is later; for shardid_sequence_lower.  Returns
 * the field it lowered to.
 */
extern SHARDID_INTERNAL int64 shardid_slot_lower(Oid seqid, int64 field);

/*
 * Tell every slot of database entry db to look at it again before its
 * next ID: its state, start or epoch changed.  Takes shared->lock and
 * each slot's mutex: call it with no spinlock held.
 */
extern SHARDID_INTERNAL void shardid_db_touch(GuardDb *db);

/*
 * The fences of these sequences of the current database are no longer
 * durable: a rollback took their values back.  Their slots write again
 * before the next ID; no other slot is touched.
 */
extern SHARDID_INTERNAL void shardid_slots_forget_fence(const Oid *seqids, int n);

/*
 * The sequences of the current database that have a slot or a ghost: every
 * sequence this server issued from there since it started, but for ghosts
 * lost (a lossy cache).
 */
extern SHARDID_INTERNAL List *shardid_db_sequences(void);

/*
 * This backend wrote fence into sequence seqid outside a fence write: its
 * slot takes the values after it for its own, not for a move.
 */
extern SHARDID_INTERNAL void shardid_slot_wrote(Oid seqid, int64 fence);

/* The database entry of the current database, or NULL if it has none. */
extern SHARDID_INTERNAL GuardDb *shardid_db_current(void);

#endif							/* SHARDID_SHMEM_H */
