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

#include "storage/pmsignal.h"

#include "codec.h"
#include "compat.h"

/* Raise the error for a codec status; never returns. */
SHARDID_NORETURN extern SHARDID_INTERNAL void shardid_report(ShardidStatus status,
															 int64 unix_ms,
															 int64 epoch_ms,
															 int64 shard,
															 int64 seq);

/* Raise the error for a function that needs the preloaded library. */
SHARDID_NORETURN extern SHARDID_INTERNAL void shardid_report_not_preloaded(void);

/*
 * The postmaster died: this backend issues no ID and publishes no fence
 * again (its fences may not reach the standby that replaces the server).
 */
SHARDID_NORETURN extern SHARDID_INTERNAL void shardid_report_orphaned(void);

/* Raise shardid_report_orphaned's error if the postmaster died. */
#define shardid_require_postmaster() \
	do { \
		if (unlikely(!PostmasterIsAlive())) \
			shardid_report_orphaned(); \
	} while (0)

/* A Unix millisecond as text, in a fresh palloc'd string. */
extern SHARDID_INTERNAL char *shardid_unix_ms_to_str(int64 unix_ms);

#endif							/* SHARDID_REPORT_H */
