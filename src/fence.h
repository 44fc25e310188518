/*-------------------------------------------------------------------------
 *
 * fence.h
 *	  The durable fence: where each database keeps it, and how it is read
 *	  and written.
 *
 * src/fence.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_FENCE_H
#define SHARDID_FENCE_H

#include "layout.h"

/* The name of the sequence that holds the fence, in the extension's schema */
#define SHARDID_FENCE_RELNAME	"shardid_fence"

/*
 * The fence sequence of the current database, or InvalidOid if the
 * database has none (extension shardid absent, or at version 1.0).
 * Refuses a relation of that name that is not the extension's own.
 */
extern SHARDID_INTERNAL Oid shardid_fence_relid(void);

/* The fence stored in relid: a time field, or -1 if none was stored. */
extern SHARDID_INTERNAL int64 shardid_fence_read(Oid relid);

/*
 * Store value as the fence in relid and return once it is flushed to the
 * WAL (and, with synchronous replication, acknowledged by the standbys
 * that synchronous_commit waits for).
 */
extern SHARDID_INTERNAL void shardid_fence_write(Oid relid, int64 value);

#endif							/* SHARDID_FENCE_H */
