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

/* Define the GUCs and, when preloaded, the shared memory; from _PG_init. */
extern SHARDID_INTERNAL void shardid_guard_define(void);

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
 * database, under epoch_ms (Unix ms), which must be the database's, or
 * SHARDID_EPOCH_OF_DATABASE.  The caller has checked shard and epoch and
 * called nextval.
 */
extern SHARDID_INTERNAL int64 shardid_guard_next(Oid seqid, int32 shard,
												 int64 value, int64 epoch_ms);

/*
 * Make the next call in the current database read its fence again: for
 * ALTER EXTENSION UPDATE and CREATE EXTENSION, which create the fence.
 */
extern SHARDID_INTERNAL void shardid_guard_reload_fence(void);

/*
 * The database's epoch (Unix ms), and setting it (shardid_set_epoch: the
 * caller has checked the argument and the privilege).
 */
extern SHARDID_INTERNAL int64 shardid_guard_epoch(void);
extern SHARDID_INTERNAL void shardid_guard_set_epoch(int64 epoch_ms);

/*
 * Write field as the current database's fence, even below the stored one,
 * and lower what shared memory knows to it (shardid_fence_set; the caller
 * checked the privilege and the tables); never below a field this server
 * issued there since it started.  Returns the field written.
 */
extern SHARDID_INTERNAL int64 shardid_guard_fence_set(int64 field);

/* shardid.fence_lead, for the statistics */
extern SHARDID_INTERNAL int shardid_fence_lead;

#endif							/* SHARDID_GUARD_H */
