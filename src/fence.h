/*-------------------------------------------------------------------------
 *
 * fence.h
 *	  The durable fences: each sequence's own, kept in its value, and each
 *	  database's, kept in the extension's sequence.
 *
 * What they are and when they are written: docs/design.md, "The durable
 * fences"; what fence.c relies on (invariants, locking order): its header.
 *
 * src/fence.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_FENCE_H
#define SHARDID_FENCE_H

#include "access/xact.h"
#include "access/xlogdefs.h"

#include "compat.h"
#include "layout.h"
#include "shmem.h"

/*
 * The schema of the extension's own sequences (since 1.3), which no role
 * but the extension's owner may use: docs/design.md, "The writers' locks"
 */
#define SHARDID_MEMBER_NSPNAME	"shardid_internal"

/* The name of the sequence that holds the database's fence */
#define SHARDID_FENCE_RELNAME	"shardid_fence"

/* The other sequences of version 1.2, beside the fence */
#define SHARDID_EPOCH_RELNAME	"shardid_epoch"
#define SHARDID_LEAD_RELNAME	"shardid_fence_lead"

/*
 * The fence a sequence's value carries, a time field: the guard writes
 * the fence f as the value (f + 1) << 10, the first of the block after f.
 */
static inline int64
shardid_value_fence(int64 value)
{
	return (value >> SHARDID_SEQ_BITS) - 1;
}

/* Settings (defined in shardid.c's _PG_init) */
extern SHARDID_INTERNAL int shardid_fence_lead;
extern SHARDID_INTERNAL int shardid_standby_wait;
extern SHARDID_INTERNAL int shardid_debug_fence_write_delay;

/*
 * From shardid.fence_lead (the lead), the refresh (a quarter of it) and
 * the reach (the lead and the refresh), as docs/design.md defines them.
 */
extern SHARDID_INTERNAL int64 shardid_fence_refresh;
extern SHARDID_INTERNAL int64 shardid_fence_reach;
extern SHARDID_INTERNAL void shardid_fence_lead_assign(int newval, void *extra);

/* The transaction callbacks; registered by _PG_init. */
extern SHARDID_INTERNAL void shardid_fence_xact_callback(XactEvent event, void *arg);
extern SHARDID_INTERNAL void shardid_fence_subxact_callback(SubXactEvent event,
															SubTransactionId mySubid,
															SubTransactionId parentSubid,
															void *arg);

/*
 * Forget the extension's sequences found by name if relid is one of them
 * (InvalidOid: all relations); from a relcache callback.
 */
extern SHARDID_INTERNAL void shardid_fence_invalidate(Oid relid);

/*
 * Read the current database's fence into its entry (state UNKNOWN or
 * RELOAD): after this server started or the entry was taken, when the
 * database's slots then start at the fence, or again after CREATE
 * EXTENSION, ALTER EXTENSION UPDATE or an epoch change, when they stay.
 */
extern SHARDID_INTERNAL void shardid_fence_load(GuardDb *db);

/*
 * Make the fence of sequence seqid (its slot: slot, with key) cover field,
 * a time field under epoch (Unix ms: the call's, which is the database's
 * but in a database still at 1.1): the sequence's value, then the
 * database's fence where it has one, written and flushed (and received by
 * the standbys) before the slot publishes it.  required: an ID at field
 * waits for this, so wait for the locks; otherwise this is the early
 * write that keeps callers from waiting, skipped if another backend is at
 * it.  Every lock and wait here can be cancelled.  take non-NULL: a
 * required write before the call has a value, whose setval gives it the
 * value *take; false if none was written that way (the call takes
 * nextval's value).  Otherwise true.
 */
extern SHARDID_INTERNAL bool shardid_seq_fence_advance(GuardSlot *slot, uint64 key,
													   Oid seqid, int64 field,
													   int64 epoch, bool required,
													   int64 *take);

/*
 * The fence this backend alone may issue seqid's IDs up to in its current
 * transaction, or -1: one written under a database fence new in it.
 */
extern SHARDID_INTERNAL int64 shardid_fence_own(Oid seqid);

/*
 * For CREATE EXTENSION and ALTER EXTENSION UPDATE (shardid_fence_reload):
 * write the current database's fence past every ID this server knows of
 * there, and make the next call read it again, now and when the
 * transaction ends.
 */
extern SHARDID_INTERNAL void shardid_fence_reload_all(void);

/* The current database's epoch, Unix ms, as stored. */
extern SHARDID_INTERNAL int64 shardid_fence_epoch(void);

/*
 * Set the current database's epoch (shardid_set_epoch: the caller checked
 * the argument and the privilege).
 */
extern SHARDID_INTERNAL void shardid_fence_set_epoch(int64 epoch_ms);

/*
 * Write field as the current database's fence, even below the stored one,
 * and lower what shared memory knows to it (shardid_fence_set; the caller
 * checked the privilege and the sequences); never below a field this
 * server issued there since it started.  Returns the field written.
 */
extern SHARDID_INTERNAL int64 shardid_fence_lower_db(int64 field);

/*
 * Lower sequence seqid's fence to field (shardid_sequence_lower: the
 * caller checked the privilege), never below a field this server issued
 * from it since it started.  Returns the field written.
 */
extern SHARDID_INTERNAL int64 shardid_fence_lower_seq(Oid seqid, int64 field);

/* The current database's fence as stored, or -1 (none, or no extension). */
extern SHARDID_INTERNAL int64 shardid_fence_stored(void);

/*
 * Before a statement that may drop extension shardid: every sequence the
 * server issued from in this database, and every sequence a shardid_next
 * column default names, takes the database's fence into its value.
 */
extern SHARDID_INTERNAL void shardid_fence_before_drop(void);

/*
 * Extension shardid's OID in the current database, with its schema and
 * owner (either pointer may be NULL), read from its pg_extension row; or
 * InvalidOid, and InvalidOids, if it is not installed.
 */
extern SHARDID_INTERNAL Oid shardid_extension_lookup(Oid *nspid, Oid *owner);

/* Refuse an unlogged sequence, which cannot carry a fence (55000). */
SHARDID_NORETURN extern SHARDID_INTERNAL void shardid_fence_refuse_unlogged(Oid seqid);

#endif							/* SHARDID_FENCE_H */
