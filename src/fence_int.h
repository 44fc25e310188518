/*-------------------------------------------------------------------------
 *
 * fence_int.h
 *	  What the files of the fence protocol share with each other alone:
 *	  fence.c (the protocol), seqio.c (the extension's sequences found,
 *	  and any sequence read and written as its owner), standby.c (the
 *	  flush and the standbys' wait) and fence_admin.c (what the
 *	  extension's DDL and the administrators' functions do).
 *
 * src/fence_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_FENCE_INT_H
#define SHARDID_FENCE_INT_H

#include "access/xlogdefs.h"
#include "miscadmin.h"
#include "storage/lockdefs.h"

#include "fence.h"

/* The value of the last fence a sequence can carry: the horizon's */
#define SHARDID_FENCE_VALUE_MAX ((SHARDID_MAX_TIME_MS + 1) << SHARDID_SEQ_BITS)

/* seqio.c: the extension's sequences, found by name, each cached */
#define MEMBER_COUNT	3
extern SHARDID_INTERNAL Oid member(int i);
#define fence_relid()	member(0)
#define epoch_relid()	member(1)
#define reach_relid()	member(2)	/* the sequence shardid_fence_lead */

/* seqio.c: a sequence read and written as its owner */
extern SHARDID_INTERNAL bool is_transactional(Oid relid);
extern SHARDID_INTERNAL bool seq_rewritten_in_xact(Oid relid);
extern SHARDID_INTERNAL Oid rel_owner(Oid relid);
extern SHARDID_INTERNAL Oid become_owner(Oid relid, Oid *save_userid,
										 int *save_sec_context);
extern SHARDID_INTERNAL int64 seq_read(Oid relid, bool *called);
extern SHARDID_INTERNAL int64 seq_read_stored(Oid relid);
extern SHARDID_INTERNAL bool seq_holds(Oid seqid, int64 value);
extern SHARDID_INTERNAL int64 member_read(Oid relid);
extern SHARDID_INTERNAL void seq_write(Oid relid, int64 value);
extern SHARDID_INTERNAL void seq_write_fence(Oid seqid, int64 f, bool take);
extern SHARDID_INTERNAL int64 seq_check_carries_fence(Oid seqid, int64 value);

/* standby.c: flush to lsn and wait for the standbys (its comment) */
extern SHARDID_INTERNAL bool fence_flush(XLogRecPtr lsn);
extern SHARDID_INTERNAL bool fence_received(XLogRecPtr lsn, TimestampTz *flushed,
											bool *timed_out);

/* fence.c: the writers' locks, and the database's fence */
extern SHARDID_INTERNAL bool seq_lock(Oid seqid, bool wait);
extern SHARDID_INTERNAL void seq_unlock(Oid seqid);
extern SHARDID_INTERNAL Oid db_fence_lock_mode(bool wait, LOCKMODE relmode);
extern SHARDID_INTERNAL Oid db_fence_lock(bool wait);
extern SHARDID_INTERNAL void db_fence_unlock(Oid relid);
extern SHARDID_INTERNAL int64 db_fence_store(Oid relid, int64 value, int64 reach);
extern SHARDID_INTERNAL void request_reload(void);
extern SHARDID_INTERNAL void reload_at_xact_end_set(void);

/* Is db's entry the current database's? */
static inline bool
db_is_mine(GuardDb *db)
{
	return db->dbid == MyDatabaseId;
}

#endif							/* SHARDID_FENCE_INT_H */
