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

/* The other sequences of version 1.2, beside the fence */
#define SHARDID_EPOCH_RELNAME	"shardid_epoch"
#define SHARDID_LEAD_RELNAME	"shardid_fence_lead"

/*
 * The extension's own sequence named relname in the current database, or
 * InvalidOid if there is none (extension shardid absent, or older than
 * the version that made it).  A relation of that name that is not the
 * extension's own (any role with CREATE on the schema could make one in a
 * database still at an older version) counts as none.
 */
extern SHARDID_INTERNAL Oid shardid_fence_member(const char *relname);

/*
 * Forget the sequences found by shardid_fence_member if relid is one of
 * them (InvalidOid: all relations); from a relcache callback.
 */
extern SHARDID_INTERNAL void shardid_fence_invalidate(Oid relid);

/*
 * Is relid the current database's fence?  Never raises an error: for the
 * object access hook, which sees every DROP.
 */
extern SHARDID_INTERNAL bool shardid_fence_is(Oid relid);

/* The fence sequence of the current database, as shardid_fence_member. */
extern SHARDID_INTERNAL Oid shardid_fence_relid(void);

/*
 * Is a write to relid undone if the current transaction rolls back?  True
 * for a sequence created, or given a new file, in this transaction.
 */
extern SHARDID_INTERNAL bool shardid_fence_is_transactional(Oid relid);

/*
 * Take the lock that serializes every reader and writer of the current
 * database's fence, and return the fence's relid; InvalidOid if the
 * database has no fence or, with wait false, another backend holds the
 * lock.  *waited (if not NULL) says whether it had to wait.  Release it
 * with shardid_fence_unlock as soon as the write is done.
 */
extern SHARDID_INTERNAL Oid shardid_fence_lock(bool wait, bool *waited);
extern SHARDID_INTERNAL void shardid_fence_unlock(Oid relid);

/* The value stored in sequence relid, or -1 if none was stored. */
extern SHARDID_INTERNAL int64 shardid_seq_read(Oid relid);

/* Store value in sequence relid, as its owner; not yet flushed. */
extern SHARDID_INTERNAL void shardid_seq_write(Oid relid, int64 value);

/*
 * Flush what this backend wrote to the WAL, and, if the server has
 * synchronous standbys, wait until they have flushed it (applied it, with
 * synchronous_commit = remote_apply), whatever this session's
 * synchronous_commit says.  A cancel or statement_timeout ends the wait
 * with an error (57014).
 */
extern SHARDID_INTERNAL void shardid_fence_flush(void);

#endif							/* SHARDID_FENCE_H */
