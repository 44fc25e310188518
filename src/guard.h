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

/*
 * The ID for sequence value `value` of sequence seqid in the current
 * database.  The caller has checked shard and epoch and called nextval.
 */
extern SHARDID_INTERNAL int64 shardid_guard_next(Oid seqid, int32 shard,
												 int64 value, int64 epoch_ms);

/*
 * Make the next call in the current database read its fence again: for
 * ALTER EXTENSION UPDATE and CREATE EXTENSION, which create the fence.
 */
extern SHARDID_INTERNAL void shardid_guard_reload_fence(void);

/* shardid.fence_lead, for the statistics */
extern SHARDID_INTERNAL int shardid_fence_lead;

#endif							/* SHARDID_GUARD_H */
