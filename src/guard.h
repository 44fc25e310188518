/*-------------------------------------------------------------------------
 *
 * guard.h
 *	  The guard: where shardid_next's IDs go in time, so that none is ever
 *	  issued twice.
 *
 * src/guard.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_GUARD_H
#define SHARDID_GUARD_H

#include "layout.h"
#include "shmem.h"

/* shardid.max_clock_regression */
extern SHARDID_INTERNAL int shardid_max_clock_regression;

/* Raise the documented error unless shardid is preloaded. */
#define shardid_guard_require() \
	do { \
		if (unlikely(shardid_shared == NULL)) \
			shardid_shmem_require(); \
	} while (0)

/*
 * Backend-local memory of the slot each sequence uses, indexed by the
 * sequence's OID (a backend serves one database), with the slot's key,
 * and the clock (Unix ms) past which a call may have to write the
 * sequence's fence first (the slot's fence as this backend last saw it,
 * INT64_MIN if it does not know).  Only a hint: the slot's key and fence
 * are checked under its mutex.
 */
#define GUARD_CACHE_SIZE 64

typedef struct GuardCacheEntry
{
	Oid			seqid;
	uint64		key;
	GuardSlot  *slot;
	int64		due_ms;
} GuardCacheEntry;

extern SHARDID_INTERNAL GuardCacheEntry shardid_guard_cache[GUARD_CACHE_SIZE];

/* The cache entry seqid would have. */
static inline GuardCacheEntry *
shardid_guard_entry(Oid seqid)
{
	return &shardid_guard_cache[seqid % GUARD_CACHE_SIZE];
}

/*
 * May a call of seqid at now_ms (Unix ms) have to write its sequence's
 * fence first?  Then its value comes from shardid_guard_value, not from
 * nextval.
 */
static inline bool
shardid_guard_due(Oid seqid, int64 now_ms)
{
	const GuardCacheEntry *entry = shardid_guard_entry(seqid);

	return entry->seqid != seqid || now_ms > entry->due_ms;
}

/*
 * The sequence value for a call of shardid_next that may be due
 * (shardid_guard_due): the value of its fence's setval where it writes
 * one first, else nextval's.  The caller has checked the sequence.
 */
extern SHARDID_INTERNAL int64 shardid_guard_value(Oid seqid, int64 now_ms);

/* epoch_ms of shardid_guard_next: the database's own epoch */
#define SHARDID_EPOCH_OF_DATABASE	INT64_MIN

/*
 * The ID for sequence value `value` of sequence seqid in the current
 * database, under the database's epoch, with the clock at now_ms (Unix
 * ms, shardid_clock_now_ms(), read just before nextval).  The caller has
 * checked the shard and called nextval.
 */
extern SHARDID_INTERNAL int64 shardid_guard_next(Oid seqid, int32 shard,
												 int64 value, int64 now_ms);

/*
 * The same under epoch_ms (Unix ms), which must be the database's (but in
 * a database still at 1.1, where each call has its own).
 */
extern SHARDID_INTERNAL int64 shardid_guard_next_epoch(Oid seqid, int32 shard,
													   int64 value, int64 epoch_ms);

#endif							/* SHARDID_GUARD_H */
