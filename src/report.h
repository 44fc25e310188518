/*-------------------------------------------------------------------------
 *
 * report.h
 *	  Errors raised by more than one of shardid's files.
 *
 * src/report.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_REPORT_H
#define SHARDID_REPORT_H

#include "codec.h"
#include "compat.h"

/* Raise the error for a codec status; never returns. */
extern SHARDID_INTERNAL SHARDID_NORETURN void shardid_report(ShardidStatus status,
															 int64 unix_ms,
															 int64 epoch_ms,
															 int64 shard,
															 int64 seq);

/* Raise the error for a function that needs the preloaded library. */
extern SHARDID_INTERNAL SHARDID_NORETURN void shardid_report_not_preloaded(void);

/* A Unix millisecond as text, in a fresh palloc'd string. */
extern SHARDID_INTERNAL char *shardid_unix_ms_to_str(int64 unix_ms);

#endif							/* SHARDID_REPORT_H */
