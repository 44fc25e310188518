/*-------------------------------------------------------------------------
 *
 * shardid.h
 *	  Declarations shared by the SQL entry points and the guard.
 *
 * src/shardid.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_H
#define SHARDID_H

#include "codec.h"
#include "compat.h"

/* shardid.c: raise the error for a codec status; never returns */
pg_noreturn extern SHARDID_INTERNAL void shardid_report(ShardidStatus status,
											int64 unix_ms, int64 epoch_ms,
											int64 shard, int64 seq);

/* guard.c */
extern SHARDID_INTERNAL void shardid_guard_define(void);
extern SHARDID_INTERNAL void shardid_guard_require(void);
extern SHARDID_INTERNAL int64 shardid_guard_next(Oid seqid, int32 shard, int64 value,
								int64 epoch_ms);

#endif							/* SHARDID_H */
