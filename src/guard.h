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
