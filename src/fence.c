/*-------------------------------------------------------------------------
 *
 * fence.c
 *	  The durable fences: where they are kept, and when they are read,
 *	  advanced and stored.
 *
 * What the fences are, why they live in sequences, when each is written
 * and what every path (a crash, a failover, a dump, DROP EXTENSION)
 * carries: docs/design.md, "The durable fences".  What the code here
 * relies on:
 *
 *	- Where: a sequence's fence is its own value, (value >> 10) - 1
 *	  (shardid_value_fence, fence.h), written as setval((f + 1) << 10,
 *	  false); the database's is the value of the extension's sequence
 *	  shardid_internal.shardid_fence, and the reach it was written with
 *	  that of shardid_internal.shardid_fence_lead (written before the
 *	  fence when the reach grows, after it when it shrinks).
 *	- Invariants: no slot issues past its sequence's fence or the
 *	  database's as this server published them; a fence is published
 *	  only once its record is flushed and the standbys have it (or
 *	  shardid.standby_wait ran out); the code here moves a fence only
 *	  forward, but in shardid_fence_lower_db and shardid_fence_lower_seq.
 *	- Rollbacks: setval's record outlives one, as it must (the IDs it
 *	  covers may be out).  A sequence made, or given a new file, in the
 *	  current transaction takes its value back with one (is_transactional):
 *	  the database's fence covers its IDs, and a rollback makes its slot
 *	  write again.  A database fence new in the transaction is written but
 *	  published to no one: this backend alone issues up to the fences
 *	  written under it (shardid_fence_own) until the transaction ends.
 *	- Locking order: the sequence's fence writers' lock, then the
 *	  database fence's (each a RowExclusiveLock on the sequence that keeps
 *	  the fence, for the database's also on the other sequences its
 *	  writers read, then a lock tag of shardid's own: writer_lock).  The
 *	  database fence's is never waited for with a sequence's held (a
 *	  transaction that dropped the extension holds it and may want the
 *	  sequence's): db_fence_cover says DB_BUSY, and the writer lets go of
 *	  the sequence's first.  No spinlock or LWLock is
 *	  held across a write, a flush or a wait.
 *	- Rights: every read and write of a sequence runs as its owner, in a
 *	  security-restricted operation (become_owner); setval and a
 *	  sequence's read run no code any role defined.
 *
 * The protocol's model, and which function here is which step of it:
 * docs/design.md, "The model".
 *
 * src/fence.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_sequence.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "replication/slot.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "compat.h"
#include "fault.h"
#include "fence.h"
#include "report.h"

/* The value of the last fence a sequence can carry: the horizon's */
#define SHARDID_FENCE_VALUE_MAX ((SHARDID_MAX_TIME_MS + 1) << SHARDID_SEQ_BITS)

/* Settings */
int			shardid_fence_lead = 500;
int			shardid_standby_wait = 1000;
int			shardid_debug_fence_write_delay = 0;
int64		shardid_fence_refresh = 125;
int64		shardid_fence_reach = 625;

void
shardid_fence_lead_assign(int newval, void *extra)
{
	shardid_fence_refresh = Max(newval / 4, 1);
	shardid_fence_reach = newval + shardid_fence_refresh;
}

/*
 * This transaction created, updated or set the epoch of the database's
 * fence: when it ends, whichever way, the next call in the database reads
 * the fence again.  Whoever commits a prepared transaction would not tell
 * the guard, so such a transaction cannot be prepared.
 */
static bool reload_at_xact_end = false;

/*
 * Sequences whose fence this transaction wrote while they were new in it
 * (created, or given a new file): a rollback takes the value back, so
 * their slots must write again.  Every one of them, in the transaction's
 * memory: a rollback makes these slots write again and no other, however
 * many sequences a transaction makes (a bounded list that forgot every
 * slot's fence when it overflowed let any role make every other role's
 * sequences write at each call).
 */
static Oid *xact_seqs = NULL;
static int	xact_nseqs = 0;
static int	xact_seqs_size = 0;

/* Own fences (below) are kept for at most this many sequences. */
#define XACT_SEQS_MAX 16

/* ----------------------------------------------------------------
 * Where the database's fence is kept
 * ----------------------------------------------------------------
 */

Oid
shardid_extension_lookup(Oid *nspid, Oid *owner)
{
	Oid			extoid = get_extension_oid("shardid", true);
	HeapTuple	tuple;

	if (nspid)
		*nspid = InvalidOid;
	if (owner)
		*owner = InvalidOid;
	if (!OidIsValid(extoid))
		return InvalidOid;
	tuple = SearchSysCache1(EXTENSIONOID, ObjectIdGetDatum(extoid));
	if (!HeapTupleIsValid(tuple))
		return InvalidOid;
	if (nspid)
		*nspid = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	if (owner)
		*owner = ((Form_pg_extension) GETSTRUCT(tuple))->extowner;
	ReleaseSysCache(tuple);
	return extoid;
}

/*
 * The extension's own logged sequence named relname, or InvalidOid if the
 * extension or the sequence is absent.  It is looked for in the schema
 * shardid_internal, which no role but the extension's owner may use, so
 * that no other role can name it, nor so lock it (docs/design.md, "The
 * writers' locks"); then in the extension's schema, where it is in a
 * database still at 1.2 or before, which this library may serve before
 * ALTER EXTENSION UPDATE.  Found by name, a relation counts only if it is
 * the extension's own (CVE-2022-2625's class): anyone with CREATE on the
 * database can make a schema of that name, and in a database at 1.2,
 * anyone with CREATE on the extension's schema a relation there.  The
 * schema itself need not be the extension's: its owner may have taken it
 * out of the extension (ALTER EXTENSION ... DROP SCHEMA), and its
 * sequences are then still there, still the extension's.
 */
static Oid
member_lookup(const char *relname)
{
	Oid			nspids[2];
	Oid			extoid = shardid_extension_lookup(&nspids[1], NULL);
	int			i;

	if (!OidIsValid(extoid))
		return InvalidOid;
	nspids[0] = get_namespace_oid(SHARDID_MEMBER_NSPNAME, true);
	for (i = 0; i < (int) lengthof(nspids); i++)
	{
		Oid			relid;

		if (!OidIsValid(nspids[i]))
			continue;
		relid = get_relname_relid(relname, nspids[i]);
		if (OidIsValid(relid) &&
			getExtensionOfObject(RelationRelationId, relid) == extoid &&
			get_rel_relkind(relid) == RELKIND_SEQUENCE &&
			get_rel_persistence(relid) == RELPERSISTENCE_PERMANENT)
			return relid;
	}
	return InvalidOid;
}

/*
 * The sequences found, per backend (a backend serves one database).  A
 * relcache invalidation of one of them (DROP EXTENSION, ALTER, a rollback
 * of their creation) or of all relations forgets them all; a sequence not
 * found is looked up again each time.
 */
static const char *const member_names[] = {
	SHARDID_FENCE_RELNAME, SHARDID_EPOCH_RELNAME, SHARDID_LEAD_RELNAME
};
#define MEMBER_COUNT lengthof(member_names)
static Oid	member_cache[MEMBER_COUNT];

void
shardid_fence_invalidate(Oid relid)
{
	int			i;
	bool		hit = !OidIsValid(relid);

	for (i = 0; i < (int) MEMBER_COUNT; i++)
		hit |= member_cache[i] == relid;
	if (hit)
		memset(member_cache, 0, sizeof(member_cache));
}

static Oid
member(int i)
{
	if (!OidIsValid(member_cache[i]))
		member_cache[i] = member_lookup(member_names[i]);
	return member_cache[i];
}

#define fence_relid()	member(0)
#define epoch_relid()	member(1)
#define reach_relid()	member(2)	/* the sequence shardid_fence_lead */

/*
 * Is a write to relid undone if the current transaction rolls back?  True
 * for a sequence created, or given a new file, in this transaction.
 */
static bool
is_transactional(Oid relid)
{
	Relation	rel = RelationIdGetRelation(relid);
	bool		result;

	if (!RelationIsValid(rel))
		return false;
	result = rel->rd_createSubid != InvalidSubTransactionId ||
		rel->SHARDID_RD_FIRST_NEW_FILE_SUBID != InvalidSubTransactionId;
	RelationClose(rel);
	return result;
}

/*
 * The fence writers' locks.  One writer at a time per fence: of the
 * database's, and of each sequence's.  Each is two locks, taken in this
 * order and released together:
 *
 *	1. RowExclusiveLock on the sequence that holds the fence (the lock
 *	   nextval, setval and pg_sequence_last_value take on it anyway, and
 *	   keep to the end of the transaction), so that a DROP or ALTER
 *	   SEQUENCE under way is waited for, and one that committed is seen,
 *	   before the fence is read; for the database's fence, on the epoch's
 *	   and the lead's sequences too, after the fence's, which its writers
 *	   read and write under the tag;
 *	2. an ExclusiveLock on a lock tag of shardid's own, keyed by the
 *	   database and the sequence (0 for the database's fence): the mutex
 *	   of its writers.
 *
 * No SQL function makes the tag (pg_advisory_lock's tags have 1 or 2 in
 * field4, shardid's SHARDID_LOCK_CLASS_*), and no writer waits for a lock
 * on the sequences it reads while it holds the tag.  The DDL that
 * conflicts with RowExclusiveLock on a sequence (ALTER SEQUENCE, DROP,
 * SET LOGGED) checks ownership before it locks; CREATE RULE, CREATE
 * TRIGGER, PARTITION OF and REFERENCES lock the relation they name before
 * they check it, but name lookup checks USAGE on its schema first, and
 * the extension's sequences are in shardid_internal, which no role but
 * the extension's owner may use (docs/design.md, "The writers' locks").
 * A sequence of a role's own is in a schema of hers: whoever she lets use
 * it can queue in front of that sequence's writers, and of no other's.
 * The writers' mutex was once the sequence's ShareUpdateExclusiveLock,
 * which any role that can name the sequence queues for with COMMENT ON
 * SEQUENCE (its ownership is checked once the lock is granted): every
 * writer then queued behind her.  pg_locks shows the tag as an advisory
 * lock, database the database's OID, objid the sequence's (0 for the
 * database's fence), objsubid the class.
 */
#define SHARDID_LOCK_CLASS_DB_FENCE		0x5344	/* the database's fence */
#define SHARDID_LOCK_CLASS_SEQ_FENCE	0x5345	/* a sequence's fence */

static void
writer_tag(LOCKTAG *tag, Oid seqid, uint16 class)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, 0, seqid, class);
}

/* Let go of relmode on the first n of relids (InvalidOid: none taken). */
static void
rels_unlock(const Oid *relids, int n, LOCKMODE relmode)
{
	int			i;

	for (i = n - 1; i >= 0; i--)
		if (OidIsValid(relids[i]))
			UnlockRelationOid(relids[i], relmode);
}

/*
 * Take the writers' lock of the fence kept in sequence relids[0] (with
 * class SHARDID_LOCK_CLASS_DB_FENCE, the database's; with tagged, the
 * sequence the tag names): relmode on each of the nrels sequences of
 * relids in their order (an InvalidOid is skipped), then the tag.  With
 * wait false, false if any is taken; else the waits are the lock
 * manager's, which a cancel, lock_timeout, statement_timeout or a
 * deadlock ends.  After a wait for the tag, the invalidations committed
 * meanwhile are read.
 */
static bool
writer_lock(const Oid *relids, int nrels, LOCKMODE relmode, Oid tagged,
			uint16 class, bool wait)
{
	LOCKTAG		tag;
	int			i;

	for (i = 0; i < nrels; i++)
	{
		if (!OidIsValid(relids[i]) ||
			ConditionalLockRelationOid(relids[i], relmode))
			continue;
		if (!wait)
		{
			rels_unlock(relids, i, relmode);
			return false;
		}
		LockRelationOid(relids[i], relmode);
	}
	writer_tag(&tag, tagged, class);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
	{
		if (!wait)
		{
			rels_unlock(relids, nrels, relmode);
			return false;
		}
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
		AcceptInvalidationMessages();
	}
	return true;
}

static void
writer_unlock(const Oid *relids, int nrels, LOCKMODE relmode, Oid tagged,
			  uint16 class)
{
	LOCKTAG		tag;

	writer_tag(&tag, tagged, class);
	(void) LockRelease(&tag, ExclusiveLock, false);
	rels_unlock(relids, nrels, relmode);
}

/* The writers' lock of sequence seqid's own fence. */
static bool
seq_lock(Oid seqid, bool wait)
{
	return writer_lock(&seqid, 1, RowExclusiveLock, seqid,
					   SHARDID_LOCK_CLASS_SEQ_FENCE, wait);
}

static void
seq_unlock(Oid seqid)
{
	writer_unlock(&seqid, 1, RowExclusiveLock, seqid,
				  SHARDID_LOCK_CLASS_SEQ_FENCE);
}

/*
 * The extension's sequences whose locks the database fence's lock takes,
 * in member() order: the fence, the epoch, the lead.  db_locked holds
 * those taken by the lock this backend holds, for db_fence_unlock: a
 * sequence not found then (a database at 1.0) is not let go of, should it
 * be found by then.
 */
static Oid	db_locked[MEMBER_COUNT];

/*
 * Take the lock that serializes every reader and writer of the current
 * database's fence, and return the fence's relid; InvalidOid if the
 * database has no fence or, with wait false, another backend holds the
 * lock.  relmode, on the fence, the epoch and the lead in that order
 * before the tag, is RowExclusiveLock, but for a DROP of the extension:
 * AccessExclusiveLock, which it is about to take anyway, so that it never
 * holds the writers' tag while it waits for a writer's RowExclusiveLock.
 * Every writer holds the three before the tag, and reads or writes no
 * other sequence of the extension's under it: none waits for a lock on
 * them with the tag held.
 */
static Oid
db_fence_lock_mode(bool wait, LOCKMODE relmode)
{
	for (;;)
	{
		Oid			relids[MEMBER_COUNT];
		bool		same = true;
		int			i;

		for (i = 0; i < (int) MEMBER_COUNT; i++)
			relids[i] = member(i);
		if (!OidIsValid(relids[0]))
			return InvalidOid;
		if (!writer_lock(relids, MEMBER_COUNT, relmode, InvalidOid,
						 SHARDID_LOCK_CLASS_DB_FENCE, wait))
			return InvalidOid;

		/* the locks brought in invalidations: are they still the members? */
		for (i = 0; i < (int) MEMBER_COUNT; i++)
			same &= member(i) == relids[i];
		if (same)
		{
			memcpy(db_locked, relids, sizeof(db_locked));
			return relids[0];
		}
		writer_unlock(relids, MEMBER_COUNT, relmode, InvalidOid,
					  SHARDID_LOCK_CLASS_DB_FENCE);
		if (!wait)
			return InvalidOid;
	}
}

static Oid
db_fence_lock(bool wait)
{
	return db_fence_lock_mode(wait, RowExclusiveLock);
}

static void
db_fence_unlock(Oid relid)
{
	Assert(relid == db_locked[0]);
	writer_unlock(db_locked, MEMBER_COUNT, RowExclusiveLock, InvalidOid,
				  SHARDID_LOCK_CLASS_DB_FENCE);
}

/* ----------------------------------------------------------------
 * Reading and writing a sequence, as its owner
 * ----------------------------------------------------------------
 */

/* The owner of relation relid. */
static Oid
rel_owner(Oid relid)
{
	HeapTuple	tuple;
	Oid			owner;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

/* Switch to the owner of relid; returns what to switch back to. */
static Oid
become_owner(Oid relid, Oid *save_userid, int *save_sec_context)
{
	Oid			owner = rel_owner(relid);

	GetUserIdAndSecContext(save_userid, save_sec_context);
	SetUserIdAndSecContext(owner, *save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	return owner;
}

/* The value of sequence relid, or *called false if it has none yet. */
static int64
seq_read(Oid relid, bool *called)
{
	LOCAL_FCINFO(fcinfo, 1);
	Oid			save_userid;
	int			save_sec_context;
	Datum		result;

	(void) become_owner(relid, &save_userid, &save_sec_context);
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(relid);
	fcinfo->args[0].isnull = false;
	result = pg_sequence_last_value(fcinfo);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	/* NULL: never set since the sequence was created */
	*called = !fcinfo->isnull;
	return fcinfo->isnull ? 0 : DatumGetInt64(result);
}

/* The value stored in one of the extension's sequences, or -1 if none. */
static int64
member_read(Oid relid)
{
	bool		called;
	int64		value = seq_read(relid, &called);

	return called ? value : -1;
}

/*
 * Set sequence relid to value, as its owner (setval(relid, value,
 * is_called)); not yet flushed.
 */
static void
seq_set(Oid relid, int64 value, bool is_called)
{
	Oid			save_userid;
	int			save_sec_context;

	(void) become_owner(relid, &save_userid, &save_sec_context);
	(void) DirectFunctionCall3(setval3_oid, ObjectIdGetDatum(relid),
							   Int64GetDatum(value), BoolGetDatum(is_called));
	SetUserIdAndSecContext(save_userid, save_sec_context);
}

/* Store value in sequence relid, as its owner; not yet flushed. */
static void
seq_write(Oid relid, int64 value)
{
	seq_set(relid, value, true);
}

/*
 * Write the fence f into a user's sequence, as its owner: setval(seq,
 * (f + 1) << 10, false), so that the next nextval returns the first value
 * of the block after f.  is_called false leaves the session's currval and
 * lastval at the value its own nextval returned, as if the guard had not
 * been there; pg_dump carries it as it is.
 */
static void
seq_write_fence(Oid seqid, int64 f)
{
	seq_set(seqid, (f + 1) << SHARDID_SEQ_BITS, false);
}

/* Refuse an unlogged sequence: see fence.h. */
void
shardid_fence_refuse_unlogged(Oid seqid)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("sequence \"%s\" cannot carry the durable fence of its IDs",
					get_rel_name(seqid)),
			 errdetail("Sequence \"%s\" is unlogged: a crash resets it to its start, a standby and pg_dump --no-unlogged-table-data do not carry its value, and shardid_next keeps each sequence's fence in its value.",
					   get_rel_name(seqid)),
			 errhint("Make it logged: ALTER SEQUENCE %s SET LOGGED.",
					 quote_identifier(get_rel_name(seqid)))));
}

/*
 * Can a user's sequence carry a fence, before the guard writes one into
 * it?  That it is logged, that its values go up by 1 to 1024 (a fence in
 * a sequence that goes down, or jumps blocks, would not hold), that its
 * maximum holds value, that one backend's cache spans no more than a
 * refresh, and that its owner may setval it; an error if not.  Returns
 * how many blocks one backend's cached values span, which a value may run
 * ahead of the others'.
 */
static int64
seq_check_carries_fence(Oid seqid, int64 value)
{
	HeapTuple	tuple;
	Form_pg_sequence seq;
	int64		increment;
	int64		max;
	int64		cache;
	Oid			owner;

	tuple = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("sequence with OID %u does not exist", seqid)));
	seq = (Form_pg_sequence) GETSTRUCT(tuple);
	increment = seq->seqincrement;
	if (get_rel_persistence(seqid) == RELPERSISTENCE_UNLOGGED)
		shardid_fence_refuse_unlogged(seqid);
	max = seq->seqmax;
	cache = seq->seqcache;
	ReleaseSysCache(tuple);

	if (increment < 1 || increment > SHARDID_SEQ_PER_MS)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sequence \"%s\" cannot carry the durable fence of its IDs",
						get_rel_name(seqid)),
				 errdetail("shardid_next keeps each sequence's fence in its value, which must go up by 1 to %d a call; sequence \"%s\" has INCREMENT BY %lld.",
						   SHARDID_SEQ_PER_MS, get_rel_name(seqid),
						   (long long) increment),
				 errhint("Use a sequence with INCREMENT BY 1: ALTER SEQUENCE %s INCREMENT BY 1.",
						 quote_identifier(get_rel_name(seqid)))));
	if (Max(value, SHARDID_FENCE_VALUE_MAX) > max)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sequence \"%s\" cannot carry the durable fence of its IDs",
						get_rel_name(seqid)),
				 errdetail("shardid_next keeps each sequence's fence in its value, which reaches %lld (2^50) by the horizon; the sequence's maximum is %lld.",
						   (long long) SHARDID_FENCE_VALUE_MAX, (long long) max),
				 errhint("Use a bigint sequence without a lower MAXVALUE: ALTER SEQUENCE %s AS bigint NO MAXVALUE.",
						 quote_identifier(get_rel_name(seqid)))));

	owner = rel_owner(seqid);
	if (pg_class_aclcheck(seqid, owner, ACL_UPDATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("the owner of sequence \"%s\" may not update it",
						get_rel_name(seqid)),
				 errdetail("shardid_next writes each sequence's durable fence into it as its owner, \"%s\", who lacks the UPDATE privilege on it.",
						   GetUserNameFromId(owner, false)),
				 errhint("GRANT UPDATE ON SEQUENCE %s TO %s.",
						 quote_identifier(get_rel_name(seqid)),
						 quote_identifier(GetUserNameFromId(owner, false)))));

	/*
	 * Backends that cache values each take a run of cache values at once,
	 * and hand them out in any order with the others': a value may come
	 * some runs ahead of the highest one the guard has seen, and the
	 * sequence's stored value, where its fence is read from, a run ahead
	 * of every value handed out.  A run longer than the refresh would put
	 * the fence past the lead, and a start after a restart further ahead
	 * of the clock than the reach it is judged by.
	 */
	if (Max(cache, 1) > shardid_fence_refresh * SHARDID_SEQ_PER_MS / increment)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sequence \"%s\" cannot carry the durable fence of its IDs",
						get_rel_name(seqid)),
				 errdetail("The values one backend caches at CACHE %lld and INCREMENT BY %lld span more than %lld blocks of %d, a quarter of shardid.fence_lead: the sequence's stored value, which carries its fence, would run that far ahead of its IDs.",
						   (long long) cache, (long long) increment,
						   (long long) shardid_fence_refresh, SHARDID_SEQ_PER_MS),
				 errhint("Use a smaller cache: ALTER SEQUENCE %s CACHE 1.",
						 quote_identifier(get_rel_name(seqid)))));
	return 2 * ((Max(cache, 1) * increment + SHARDID_SEQ_PER_MS - 1) / SHARDID_SEQ_PER_MS) + 2;
}

/* ----------------------------------------------------------------
 * Flushing, and waiting for the standbys
 * ----------------------------------------------------------------
 */

/*
 * Are synchronous standbys configured?  As synchronous_standby_names
 * says, whatever this session's synchronous_commit: a role that sets it
 * to local must not publish, for every session of the database, a fence
 * the standbys may not have.  SyncRepConfig is this backend's parsed
 * synchronous_standby_names (NULL when it is empty), the setting
 * SyncRepGetCandidateStandbys chooses the standbys by.
 */
static bool
sync_standbys_defined(void)
{
	return max_wal_senders > 0 && SyncRepConfig != NULL;
}

/*
 * Have the synchronous standbys flushed lsn?  SyncRepGetCandidateStandbys
 * (syncrep.h, for walsenders and user backends) returns the synchronous
 * standbys connected now: with FIRST n (or a list without a method), the n
 * of highest priority; with ANY n, every one listed.  Either way a commit
 * waits for n of them, so lsn is theirs once n have flushed it.  Flushed,
 * whatever this session's synchronous_commit: a fence needs to survive a
 * failover, not to be visible there, and a role that asked for
 * remote_apply, while a query of hers holds up the standby's replay,
 * would otherwise make the write as slow as she likes.
 */
static bool
sync_standbys_have(XLogRecPtr lsn)
{
	SyncRepStandbyData *standbys;
	int			n = SyncRepGetCandidateStandbys(&standbys);
	int			flushed = 0;

	for (int i = 0; i < n; i++)
		flushed += standbys[i].flush >= lsn;
	pfree(standbys);
	return SyncRepConfig == NULL || flushed >= SyncRepConfig->num_sync;
}

/*
 * The rows of the set-returning builtin fn (which takes no argument), in a
 * tuplestore made in the current memory context, and their descriptor in
 * *desc: the call an SQL query makes, in materialize mode.
 */
static Tuplestorestate *
builtin_rows(Oid fn, TupleDesc *desc)
{
	LOCAL_FCINFO(fcinfo, 0);
	FmgrInfo	flinfo;
	ReturnSetInfo rsinfo;

	fmgr_info(fn, &flinfo);
	MemSet(&rsinfo, 0, sizeof(rsinfo));
	rsinfo.type = T_ReturnSetInfo;
	rsinfo.econtext = CreateStandaloneExprContext();
	rsinfo.allowedModes = (int) SFRM_Materialize;
	rsinfo.returnMode = SFRM_ValuePerCall;
	rsinfo.isDone = ExprSingleResult;
	InitFunctionCallInfoData(*fcinfo, &flinfo, 0, InvalidOid, NULL,
							 (Node *) &rsinfo);
	(void) FunctionCallInvoke(fcinfo);
	FreeExprContext(rsinfo.econtext, true);
	if (rsinfo.returnMode != SFRM_Materialize || rsinfo.setDesc == NULL)
		elog(ERROR, "function %u did not return its rows in a tuplestore", fn);
	*desc = rsinfo.setDesc;
	return rsinfo.setResult;	/* NULL: no row */
}

/* The number of the column called name in desc. */
static AttrNumber
column_named(TupleDesc desc, const char *name)
{
	for (int i = 0; i < desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			return (AttrNumber) (i + 1);
	elog(ERROR, "no column \"%s\" in a builtin function's result", name);
	return InvalidAttrNumber;	/* keep the compiler quiet */
}

/*
 * The PIDs of the walsenders streaming to a standby that has not received
 * lsn (written it to its WAL), as pg_stat_replication shows them: state
 * streaming and write_lsn before lsn (or none yet).  Returns their number.
 */
static int
walsenders_behind(XLogRecPtr lsn, int32 *pids)
{
	TupleDesc	desc;
	Tuplestorestate *rows = builtin_rows(F_PG_STAT_GET_WAL_SENDERS, &desc);
	TupleTableSlot *slot;
	AttrNumber	pid_col;
	AttrNumber	state_col;
	AttrNumber	write_col;
	int			n = 0;

	if (rows == NULL)
		return 0;
	pid_col = column_named(desc, "pid");
	state_col = column_named(desc, "state");
	write_col = column_named(desc, "write_lsn");
	slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	while (n < max_wal_senders &&
		   tuplestore_gettupleslot(rows, true, false, slot))
	{
		bool		isnull;
		Datum		state = slot_getattr(slot, state_col, &isnull);
		Datum		write;

		if (isnull || strcmp(TextDatumGetCString(state), "streaming") != 0)
			continue;
		write = slot_getattr(slot, write_col, &isnull);
		if (!isnull && DatumGetLSN(write) >= lsn)
			continue;
		pids[n++] = DatumGetInt32(slot_getattr(slot, pid_col, &isnull));
	}
	ExecDropSingleTupleTableSlot(slot);
	tuplestore_end(rows);
	return n;
}

/*
 * Is the walsender pid one of a logical subscriber?  Logical decoding
 * always holds a logical slot, and pg_replication_slots shows its active
 * PID; a physical standby holds a physical slot or none.
 */
static bool
walsender_is_logical(const int32 *logical, int nlogical, int32 pid)
{
	for (int i = 0; i < nlogical; i++)
		if (logical[i] == pid)
			return true;
	return false;
}

/* The active PIDs of the logical slots, as pg_replication_slots shows them. */
static int
logical_slot_pids(int32 **pids)
{
	TupleDesc	desc;
	Tuplestorestate *rows = builtin_rows(F_PG_GET_REPLICATION_SLOTS, &desc);
	TupleTableSlot *slot;
	AttrNumber	type_col;
	AttrNumber	pid_col;
	int			n = 0;

	*pids = palloc(Max(max_replication_slots, 1) * sizeof(int32));
	if (rows == NULL)
		return 0;
	type_col = column_named(desc, "slot_type");
	pid_col = column_named(desc, "active_pid");
	slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	while (n < max_replication_slots &&
		   tuplestore_gettupleslot(rows, true, false, slot))
	{
		bool		isnull;
		Datum		type = slot_getattr(slot, type_col, &isnull);
		Datum		pid;

		if (isnull || strcmp(TextDatumGetCString(type), "logical") != 0)
			continue;
		pid = slot_getattr(slot, pid_col, &isnull);
		if (!isnull)
			(*pids)[n++] = DatumGetInt32(pid);
	}
	ExecDropSingleTupleTableSlot(slot);
	tuplestore_end(rows);
	return n;
}

/*
 * Has every connected streaming standby received lsn (written it to its
 * WAL)?  Logical walsenders do not count: a subscriber replays no
 * sequence.  Read as pg_stat_replication and pg_replication_slots read
 * it, through their functions, which show the LSNs only to a member of
 * pg_read_all_stats: called as the bootstrap superuser, in a
 * security-restricted operation (they run no code any role defined).
 * A few microseconds: this runs only while a fence write waits for the
 * standbys, about every millisecond, never per ID.
 */
static bool
standbys_received(XLogRecPtr lsn)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "shardid standbys",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Oid			save_userid;
	int			save_sec_context;
	volatile bool received = true;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID, save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		int32	   *behind = palloc(Max(max_wal_senders, 1) * sizeof(int32));
		int			nbehind = walsenders_behind(lsn, behind);

		if (nbehind > 0)
		{
			int32	   *logical;
			int			nlogical = logical_slot_pids(&logical);

			for (int i = 0; i < nbehind && received; i++)
				received = walsender_is_logical(logical, nlogical, behind[i]);
		}
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec_context);
		MemoryContextSwitchTo(old);
	}
	PG_END_TRY();
	MemoryContextDelete(cxt);
	return received;
}

/*
 * Is a streaming standby known to be stalled: one that did not receive a
 * fence record within shardid.standby_wait, and has not received it since?
 * Such a standby is not waited for again until it has caught up, so that
 * a stall costs the primary one wait, not one per fence write.
 */
static bool
standby_stalled(void)
{
	XLogRecPtr	behind;

	if (!shardid_shared)
		return false;
	behind = (XLogRecPtr) pg_atomic_read_u64(&shardid_shared->standby_behind);
	if (behind == InvalidXLogRecPtr)
		return false;
	if (!standbys_received(behind))
		return true;
	/* caught up: wait for it again */
	(void) pg_atomic_compare_exchange_u64(&shardid_shared->standby_behind,
										  (uint64 *) &behind, 0);
	ereport(LOG,
			(errmsg("every connected streaming standby has received shardid's fences again"),
			 errdetail("Fence writes wait for the standbys again, for at most shardid.standby_wait.")));
	return false;
}

/*
 * A standby did not receive lsn within shardid.standby_wait: say so once.
 * True for the one wait that began the stall (the others that waited with
 * it count it no more).
 */
static bool
standby_stall_begins(XLogRecPtr lsn)
{
	uint64		expected = 0;

	if (!shardid_shared)
		return true;
	if (!pg_atomic_compare_exchange_u64(&shardid_shared->standby_behind,
										&expected, (uint64) lsn))
		return false;
	ereport(LOG,
			(errmsg("a streaming standby did not receive shardid's fence within shardid.standby_wait (%d ms)",
					shardid_standby_wait),
			 errdetail("Fences are used without waiting for the standbys until every connected standby has received WAL up to %X/%X; a failover to it meanwhile may repeat IDs.",
					   LSN_FORMAT_ARGS(lsn))));
	return true;
}

/*
 * Flush this backend's WAL up to lsn and wait for the standbys: until the
 * synchronous ones have flushed it, whatever this session's
 * synchronous_commit says, and
 * until every other connected streaming standby has received it, for at
 * most shardid.standby_wait, unless one is known to be stalled (then not
 * at all, until it has caught up).  Polls rather than queues as a commit
 * does: a fence write is rare, and a cancel, statement_timeout or the
 * postmaster's death must end this wait (57014), with nothing published
 * past what the synchronous standbys hold.  Returns false if a standby
 * stopped this wait at shardid.standby_wait, and this wait began the
 * stall: once per stall.
 */
static bool
fence_flush_wait(XLogRecPtr lsn)
{
	TimestampTz until;

	XLogFlush(lsn);
	SHARDID_FAULT("after_flush");
	if (sync_standbys_defined() ||
		(shardid_standby_wait > 0 && max_wal_senders > 0))
		SHARDID_FAULT("before_standby_wait");
	while (sync_standbys_defined() && !sync_standbys_have(lsn))
		shardid_clock_pause(1000);

	if (shardid_standby_wait <= 0 || max_wal_senders == 0 || standbys_received(lsn))
		return true;
	if (standby_stalled())
		return true;
	until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), shardid_standby_wait);
	for (int i = 0;; i++)
	{
		/* a standby nearby answers within a fraction of a millisecond */
		shardid_clock_pause(i < 20 ? 50 : 1000);
		if (standbys_received(lsn))
			return true;
		if (GetCurrentTimestamp() >= until)
			return !standby_stall_begins(lsn);
	}
}

static bool
fence_flush(XLogRecPtr lsn)
{
	bool		caught_up = fence_flush_wait(lsn);

	SHARDID_FAULT("after_standby_wait");
	return caught_up;
}

/* ----------------------------------------------------------------
 * The database's fence
 * ----------------------------------------------------------------
 */

static inline bool
db_is_mine(GuardDb *db)
{
	return db->dbid == MyDatabaseId;
}

/*
 * The epoch stored for the current database, Unix ms; *free says the
 * database has no epoch of its own (shardid 1.1, not yet updated), so that
 * each call keeps its own as it did there.
 */
static int64
stored_epoch_of(bool *free)
{
	Oid			relid = epoch_relid();
	int64		epoch = OidIsValid(relid) ? member_read(relid) : -1;

	if (free)
		*free = !OidIsValid(relid);
	return epoch >= 0 ? epoch : SHARDID_DEFAULT_EPOCH_UNIX_MS;
}

int64
shardid_fence_epoch(void)
{
	return stored_epoch_of(NULL);
}

/* The reach the stored fence was written with, or 0 if none is kept. */
static int64
stored_reach(void)
{
	Oid			relid = reach_relid();
	int64		reach = OidIsValid(relid) ? member_read(relid) : -1;

	return reach > 0 ? reach : 0;
}

int64
shardid_fence_stored(void)
{
	Oid			relid = fence_relid();

	return OidIsValid(relid) ? member_read(relid) : -1;
}

/*
 * Store value as the database's fence in relid unless the stored one is
 * already at or past it, with the reach it is written with; not flushed.
 * The caller holds the fence lock, so that the compare and the write are
 * one step for every writer of the database.  Returns the stored fence,
 * which is at least value.
 */
static int64
db_fence_store(Oid relid, int64 value, int64 reach)
{
	int64		disk = member_read(relid);
	Oid			lrelid;
	int64		reach_disk = -1;

	if (value <= disk)
		return disk;
	if (shardid_debug_fence_write_delay > 0)
		shardid_clock_sleep_ms(shardid_debug_fence_write_delay);

	/*
	 * The kept reach must never say less than the reach of the stored
	 * fence, whichever write a crash keeps: a larger reach is written
	 * before the fence, a smaller one after it.  What the clock asked of
	 * every sequence's fence is at or before the database's, so the
	 * record covers theirs too.
	 */
	lrelid = reach_relid();
	if (OidIsValid(lrelid))
		reach_disk = member_read(lrelid);
	if (OidIsValid(lrelid) && reach > reach_disk)
		seq_write(lrelid, reach);
	seq_write(relid, value);
	if (OidIsValid(lrelid) && reach < reach_disk)
		seq_write(lrelid, reach);
	return value;
}

/*
 * Before a write with this reach: remember it, so
 * that a start at a value it leaves behind, even if its wait is cancelled,
 * is judged by it.
 */
static void
db_reach_written(GuardDb *db, int64 reach)
{
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db) && reach > db->reach_written)
		db->reach_written = reach;
	SpinLockRelease(&db->mutex);
}

/* After a write that took took_ms: remember it, and count it. */
static void
db_wrote(GuardDb *db, int64 took_ms, bool db_write, bool required, bool timed_out)
{
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db))
	{
		db->write_lag_ms = Min(took_ms, 60 * 1000);
		db->fence_writes += db_write;
		db->write_waits += required;
		db->standby_timeouts += timed_out;
	}
	SpinLockRelease(&db->mutex);
}

/* The next call in this database reads its fence again. */
static void
request_reload(void)
{
	GuardDb    *db;

	if (!shardid_shared)
		return;
	db = shardid_db_current();
	if (db == NULL)
		return;
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db) &&
		pg_atomic_read_u32(&db->state) != GUARD_FENCE_UNKNOWN)
		pg_atomic_write_u32(&db->state, GUARD_FENCE_RELOAD);
	SpinLockRelease(&db->mutex);
	shardid_db_touch(db);
}

/* A database without a fence (shardid 1.0): say so, and go on without. */
static void
db_fence_none(GuardDb *db)
{
	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db))
	{
		db->epoch = SHARDID_DEFAULT_EPOCH_UNIX_MS;
		db->epoch_free = true;
		pg_atomic_write_u32(&db->state, GUARD_FENCE_NONE);
	}
	SpinLockRelease(&db->mutex);
	shardid_db_touch(db);
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("database \"%s\" has no durable fence for shardid",
					get_database_name(MyDatabaseId)),
			 errdetail("Extension shardid is older than version 1.1 here: each sequence keeps its own fence, but a sequence that is set back or made again after it was dropped is not held back by the database's."),
			 errhint("Run ALTER EXTENSION shardid UPDATE in this database.")));
}

/*
 * The fence stored in relid, made good for use: the server knows what was
 * issued here and the fence it published (other backends may have issued
 * up to that without the lock), and a fence read back (after CREATE
 * EXTENSION, or from another entry) must cover both: the lead past the
 * IDs, and at least the published fence, but not the lead past that,
 * which would put it further ahead of the clock than its kept reach
 * says.  A fence this backend did not write may not be durable yet (the
 * write of a backend whose wait for the standbys was cancelled, or a
 * commit made with synchronous_commit off): it is written again, one
 * small record after every record it depends on, and flushed before it is
 * used.  *wrote says whether a record was written, *timed_out whether a
 * standby was given up on.
 */
static int64
db_fence_read_back(GuardDb *db, Oid relid, int64 disk, bool transactional,
				   bool *wrote, bool *timed_out)
{
	int64		known = shardid_db_known_max(db);
	int64		published = guard_fence_read(db);
	int64		fence = disk;

	*wrote = false;
	*timed_out = false;
	if (Max(known, published) > disk)
	{
		int64		value = Max(known + shardid_fence_lead, published);

		fence = db_fence_store(relid, Min(value, SHARDID_MAX_TIME_MS),
							   shardid_fence_reach);
		*wrote = true;
	}
	else if (!transactional && disk >= 0)
	{
		seq_write(relid, disk);
		*wrote = true;
	}
	if (*wrote)
		*timed_out = !fence_flush(XactLastRecEnd);
	return fence;
}

void
shardid_fence_load(GuardDb *db)
{
	Oid			relid;
	int64		disk;
	int64		fence;
	int64		epoch;
	int64		reach;
	bool		wrote;
	bool		timed_out;
	bool		transactional;
	bool		epoch_free;
	bool		again = false;
	uint32		state;
	TimestampTz started = GetCurrentTimestamp();

	/* the fence lock serializes loads and writes; its wait can be cancelled */
	relid = db_fence_lock(true);

	state = pg_atomic_read_u32(&db->state);
	if (!db_is_mine(db) ||
		(state != GUARD_FENCE_UNKNOWN && state != GUARD_FENCE_RELOAD))
	{
		if (OidIsValid(relid))
			db_fence_unlock(relid);
		return;
	}
	if (!OidIsValid(relid))
	{
		db_fence_none(db);
		return;
	}

	transactional = is_transactional(relid);
	disk = member_read(relid);
	epoch = stored_epoch_of(&epoch_free);
	reach = stored_reach();
	fence = db_fence_read_back(db, relid, disk, transactional, &wrote, &timed_out);
	if (transactional)
		reload_at_xact_end = true;

	SpinLockAcquire(&db->mutex);
	if (db_is_mine(db) && pg_atomic_read_u32(&db->state) != state)
		again = true;			/* handed over and back meanwhile: read it again */
	else if (db_is_mine(db))
	{
		if (state == GUARD_FENCE_UNKNOWN)
		{
			/* judged by the reach the stored fence was written with */
			db->start = Max(db->start, disk);
			db->start_reach = reach;
		}
		db->epoch = epoch;
		db->epoch_free = epoch_free;
		/* a fence a rollback could undo is published to no one */
		if (!transactional)
			pg_atomic_write_u64(&db->fence, (uint64) fence);
		pg_atomic_write_u32(&db->state, GUARD_FENCE_LOADED);
	}
	SpinLockRelease(&db->mutex);
	if (wrote && !again)
		db_wrote(db, (GetCurrentTimestamp() - started) / 1000, true, false, timed_out);
	db_fence_unlock(relid);
	if (!again)
		shardid_db_touch(db);
}

/* What db_fence_cover() found. */
typedef enum DbCover
{
	DB_COVERED,					/* *limit: the fence published, or written
								 * (*publish) under the lock *relid */
	DB_NONE,					/* no database fence to keep */
	DB_MINE,					/* a fence new in this transaction, written:
								 * this backend's alone until it commits */
	DB_BUSY						/* the lock is taken: wait for it with no
								 * other lock held, then try again */
} DbCover;

/*
 * Within a sequence's fence write, with the sequence's lock held: make the
 * database's fence cover seq_fence, if the database has one to keep.
 * Writes, does not flush: the caller flushes once for both, and then
 * publishes *publish (with the lock *relid still held, which the caller
 * releases).  *limit is the database fence the slot's fence may go up to
 * for every backend.  Never waits for the database fence's lock, which a
 * transaction that dropped the extension holds to its end while it may
 * want this sequence's: DB_BUSY tells the caller to let go of the
 * sequence first.
 */
static DbCover
db_fence_cover(GuardDb *db, int64 seq_fence, bool required, bool wait,
			   Oid *relid, int64 *publish, int64 *limit)
{
	int64		published;
	int64		disk;
	int64		value;

	*relid = InvalidOid;
	*publish = -1;
	*limit = INT64_MAX;
	if (pg_atomic_read_u32(&db->state) == GUARD_FENCE_NONE)
		return DB_NONE;
	published = guard_fence_read(db);
	*limit = published;
	if (seq_fence <= published)
		return DB_COVERED;

	/* early writers skip the lock while another write is under way */
	if (!required && pg_atomic_read_u32(&db->writing) != 0)
		return DB_COVERED;
	*relid = db_fence_lock(wait);
	if (!OidIsValid(*relid))
	{
		if (!OidIsValid(fence_relid()))
		{
			*limit = INT64_MAX;
			return DB_NONE;
		}
		return required ? DB_BUSY : DB_COVERED;
	}

	/*
	 * The stored fence may be later than this server knows: a write
	 * through another entry of this database, or one whose wait for the
	 * standbys was cancelled.  The database's slots start again from it,
	 * as after a restart, judged by the reach it was written with.  What
	 * this server published is read again under the lock: a write
	 * published between the first read and the lock is not one of those
	 * (taken for one, it made every slot of the database start again at
	 * the fence, a reach ahead of the clock, at nearly every write of a
	 * database with many sequences: 1.6 inserts a second on 64 shards).
	 */
	published = guard_fence_read(db);
	*limit = published;
	if (seq_fence <= published)
	{
		*publish = -1;
		db_fence_unlock(*relid);
		*relid = InvalidOid;
		return DB_COVERED;
	}
	disk = member_read(*relid);
	if (disk > published && !is_transactional(*relid))
	{
		int64		disk_reach = stored_reach();

		SpinLockAcquire(&db->mutex);
		if (db_is_mine(db))
		{
			db->start = Max(db->start, disk);
			db->start_reach = disk_reach;
		}
		SpinLockRelease(&db->mutex);
		shardid_db_touch(db);
		published = disk;
		*limit = disk;
		if (seq_fence <= disk)
		{
			*publish = disk;
			return DB_COVERED;
		}
	}

	value = Min(seq_fence + shardid_fence_refresh, SHARDID_MAX_TIME_MS);
	if (is_transactional(*relid))
	{
		/*
		 * The fence this transaction made: written, so that it covers the
		 * sequence once the transaction commits, and published to no one,
		 * as a rollback takes it back.  Other backends keep to the fence
		 * they know.
		 */
		(void) db_fence_store(*relid, value, shardid_fence_reach);
		return DB_MINE;
	}
	pg_atomic_write_u32(&db->writing, 1);
	*publish = db_fence_store(*relid, value, shardid_fence_reach);
	SHARDID_FAULT("db_after_insert");
	*limit = *publish;
	return DB_COVERED;
}

/*
 * Fences of sequences that this backend alone may issue up to, until its
 * transaction ends: written under a database fence new in the transaction
 * (DROP and CREATE EXTENSION in one transaction, not yet committed), which
 * no other backend may rely on.
 */
typedef struct OwnFence
{
	Oid			seqid;
	int64		fence;
} OwnFence;

static OwnFence own_fences[XACT_SEQS_MAX];
static int	own_nfences = 0;

static void
own_fence_set(Oid seqid, int64 fence)
{
	int			i;

	for (i = 0; i < own_nfences; i++)
	{
		if (own_fences[i].seqid == seqid)
		{
			own_fences[i].fence = Max(own_fences[i].fence, fence);
			return;
		}
	}
	if (own_nfences < XACT_SEQS_MAX)
	{
		own_fences[own_nfences].seqid = seqid;
		own_fences[own_nfences].fence = fence;
		own_nfences++;
	}
}

int64
shardid_fence_own(Oid seqid)
{
	int			i;

	for (i = 0; i < own_nfences; i++)
		if (own_fences[i].seqid == seqid)
			return own_fences[i].fence;
	return -1;
}

/* ----------------------------------------------------------------
 * A sequence's fence
 * ----------------------------------------------------------------
 */

/* Remember that this transaction wrote the fence of a sequence new in it. */
static void
remember_xact_seq(Oid seqid)
{
	int			i;

	for (i = 0; i < xact_nseqs; i++)
		if (xact_seqs[i] == seqid)
			return;
	if (xact_nseqs == xact_seqs_size)
	{
		int			size = Max(16, 2 * xact_seqs_size);
		Oid		   *seqs = MemoryContextAlloc(TopTransactionContext,
											  size * sizeof(Oid));

		if (xact_nseqs > 0)
			memcpy(seqs, xact_seqs, xact_nseqs * sizeof(Oid));
		xact_seqs = seqs;
		xact_seqs_size = size;
	}
	xact_seqs[xact_nseqs++] = seqid;
}

/* Let go of an early write that will not happen. */
static void
early_write_off(GuardSlot *slot, uint64 key)
{
	SpinLockAcquire(&slot->mutex);
	if (guard_slot_key_word(slot) == key)
		slot->flags &= ~GUARD_SLOT_WRITING;
	SpinLockRelease(&slot->mutex);
}

/*
 * Take the sequence's lock, the one writer of its fence, and say whether a
 * write is still needed: another backend may have written meanwhile.
 * With the lock held and true, *seq_hi and *hi_cached are the slot's.
 */
static bool
seq_fence_begin(GuardSlot *slot, uint64 key, Oid seqid, int64 field,
				bool required, int64 *seq_hi, int64 *hi_cached)
{
	bool		needed;

	if (!seq_lock(seqid, false))
	{
		if (!required)
		{
			early_write_off(slot, key);
			return false;
		}
		(void) seq_lock(seqid, true);
	}
	SpinLockAcquire(&slot->mutex);
	needed = guard_slot_key_word(slot) == key &&
		field > (required ? Max(slot->fence, shardid_fence_own(seqid)) :
				 slot->fence - shardid_fence_refresh);
	*seq_hi = slot->seq_hi;
	*hi_cached = slot->hi_cached;
	if (!needed && guard_slot_key_word(slot) == key && !required)
		slot->flags &= ~GUARD_SLOT_WRITING;
	SpinLockRelease(&slot->mutex);
	if (!needed)
		seq_unlock(seqid);
	return needed;
}

/* What seq_fence_write() did to the sequence. */
typedef struct SeqWrite
{
	int64		fence;			/* the fence written */
	int64		clock_fence;	/* the part of it the clock asks for */
	int64		hi_cached;		/* the sequence's blocks of cached values */
	bool		moved;			/* its value carried a fence this server did
								 * not write: the slot starts after it */
	int64		moved_fence;	/* that fence */
	int64		moved_block;	/* and its block */
} SeqWrite;

/*
 * Write the sequence's new fence, the lead past the ID (or the clock),
 * never further however long a write takes, and past every value of it
 * seen, so that the value only goes forward.  Always a record of this
 * backend's own, after every record the value depends on, so that one
 * flush of it makes the fence durable.  The sequence's lock is held.
 */
static SeqWrite
seq_fence_write(GuardSlot *slot, uint64 key, Oid seqid, int64 field, int64 epoch,
				int64 seq_hi, int64 hi_cached)
{
	GuardDb    *db = slot->db;
	SeqWrite	w;
	bool		called;
	int64		value = seq_read(seqid, &called);
	int64		value_fence = called ? shardid_value_fence(value) : -1;
	int64		now_field = shardid_clock_now_ms() - epoch;
	int64		target;

	/*
	 * A value that jumped past what this server knows (a setval, a
	 * restore while the server runs) is a fence this server did not
	 * write.  (A value set with is_called false reads as none; nextval
	 * tells the slot of it.)
	 */
	w.moved = called && (value >> SHARDID_SEQ_BITS) > seq_hi + hi_cached;
	w.moved_fence = value_fence;
	w.moved_block = value >> SHARDID_SEQ_BITS;

	w.clock_fence = Min(Max(field, now_field) + shardid_fence_lead,
						SHARDID_MAX_TIME_MS);
	target = Min(Max(w.clock_fence, Max(value_fence + 1, seq_hi)),
				 SHARDID_MAX_TIME_MS);
	w.hi_cached = seq_check_carries_fence(seqid, (target + 1) << SHARDID_SEQ_BITS);
	db_reach_written(db, shardid_fence_reach);

	/*
	 * From the setval on, the sequence's other callers may take values of
	 * the new fence's block, before the flush and the publication: they
	 * are this server's own, not a move (slot_moved), or each such call
	 * would start the slot after the new fence and wait for the clock to
	 * pass it, a lead ahead.
	 */
	SpinLockAcquire(&slot->mutex);
	if (guard_slot_key_word(slot) == key)
		slot->writing = Max(slot->writing, target);
	SpinLockRelease(&slot->mutex);
	seq_write_fence(seqid, target);
	if (is_transactional(seqid))
		remember_xact_seq(seqid);
	w.fence = target;
	return w;
}

/*
 * After the flush: publish the sequence's new fence in its slot, as far
 * as the database's fence lets every backend use it (db_limit), or, if
 * the slot was evicted meanwhile, in what it left behind.
 */
static void
seq_fence_publish(GuardSlot *slot, uint64 key, Oid seqid, const SeqWrite *w,
				  int64 db_limit)
{
	SpinLockAcquire(&slot->mutex);
	if (guard_slot_key_word(slot) != key)
	{
		SpinLockRelease(&slot->mutex);
		shardid_ghost_wrote(seqid, w->fence, Min(w->fence, db_limit));
		return;
	}
	if (w->moved)
	{
		guard_slot_start_at(slot, w->moved_fence, slot->db_reach);
		slot->seq_hi = Max(slot->seq_hi, w->moved_block);
	}
	guard_slot_set_fence(slot, Max(slot->fence, Min(w->fence, db_limit)),
						 shardid_fence_refresh);
	slot->written = Max(slot->written, w->fence);
	slot->seq_hi = Max(slot->seq_hi, w->fence + 1);
	slot->hi_cached = w->hi_cached;
	slot->fence_writes++;
	slot->flags &= ~GUARD_SLOT_WRITING;
	SpinLockRelease(&slot->mutex);
}

/* After the flush: publish the database's new fence, and let go of it. */
static void
db_fence_publish(GuardDb *db, DbCover cover, Oid db_relid, int64 db_publish)
{
	if (db_publish >= 0)
	{
		SpinLockAcquire(&db->mutex);
		if (db_is_mine(db) && db_publish > guard_fence_read(db))
			pg_atomic_write_u64(&db->fence, (uint64) db_publish);
		SpinLockRelease(&db->mutex);
		SHARDID_FAULT("db_after_publish");
	}
	if (OidIsValid(db_relid))
	{
		if (cover == DB_COVERED && db_publish >= 0)
			pg_atomic_write_u32(&db->writing, 0);
		db_fence_unlock(db_relid);
	}
}

/*
 * The write under way in this backend, so that an error in it (a cancel
 * of its wait for the standbys, say) lets go of what it holds in shared
 * memory: its early-write flag in the slot, and the database's "writing"
 * flag, which would otherwise keep every early writer of the database
 * from trying until some required write clears them.
 */
static struct
{
	GuardSlot  *slot;			/* the slot of an early write, or NULL */
	uint64		key;
	GuardDb    *db;				/* the database whose writing flag this
								 * write set, or NULL */
}			pending;

/* After an error in a fence write: let go of its flags. */
static void
pending_write_off(void)
{
	if (pending.slot != NULL)
		early_write_off(pending.slot, pending.key);
	if (pending.db != NULL)
		pg_atomic_write_u32(&pending.db->writing, 0);
	pending.slot = NULL;
	pending.db = NULL;
}

/*
 * Make the database's fence cover seq_fence, waiting for its lock with no
 * other lock held: written, flushed and published, or nothing to do (the
 * database's fence went away meanwhile, or already covers it).  Returns
 * the database fence the slot's fence may go up to for every backend.
 */
static int64
db_cover_alone(GuardDb *db, int64 seq_fence)
{
	Oid			relid;
	int64		publish;
	int64		limit;
	bool		timed_out = false;
	TimestampTz started = GetCurrentTimestamp();
	DbCover		cover = db_fence_cover(db, seq_fence, true, true,
									   &relid, &publish, &limit);

	if (cover == DB_COVERED && OidIsValid(relid) && publish >= 0)
	{
		pending.db = db;
		timed_out = !fence_flush(XactLastRecEnd);
		shardid_require_postmaster();
	}
	db_fence_publish(db, cover, relid, publish);
	pending.db = NULL;
	if (OidIsValid(relid) && publish >= 0)
		db_wrote(db, (GetCurrentTimestamp() - started) / 1000, true, true, timed_out);
	if (cover == DB_COVERED)
		limit = Max(limit, guard_fence_read(db));
	return limit;
}

void
shardid_seq_fence_advance(GuardSlot *slot, uint64 key, Oid seqid, int64 field,
						  int64 epoch, bool required)
{
	GuardDb    *db = slot->db;
	int64		seq_hi;
	int64		hi_cached;
	int64		db_limit;
	int64		db_publish;
	Oid			db_relid;
	DbCover		cover;
	SeqWrite	w;
	bool		timed_out;
	bool		seq_locked = true;
	TimestampTz started;

	pending.slot = required ? NULL : slot;
	pending.key = key;
	if (!seq_fence_begin(slot, key, seqid, field, required, &seq_hi, &hi_cached))
	{
		pending.slot = NULL;
		return;
	}
	started = GetCurrentTimestamp();
	w = seq_fence_write(slot, key, seqid, field, epoch, seq_hi, hi_cached);
	SHARDID_FAULT("seq_after_insert");

	/*
	 * The database's fence after the IDs the clock lets this write issue,
	 * where it can be: not after what the sequence's value asked for, which
	 * its owner controls.  The database's fence is every sequence's, and
	 * its IDs stop at it (db_limit): a role that sets its own sequence far
	 * ahead stops only that sequence.
	 */
	cover = db_fence_cover(db, w.clock_fence, required, false,
						   &db_relid, &db_publish, &db_limit);
	if (cover == DB_COVERED && OidIsValid(db_relid) && db_publish >= 0)
		pending.db = db;
	if (cover == DB_BUSY)
	{
		/*
		 * Its lock is taken, and is never waited for with the sequence's
		 * held: let go of the sequence's, wait for the database's and
		 * cover this write from there.  The sequence's record, written
		 * before, is flushed below with (or after) the database's.  (Going
		 * back to write the sequence again chased a target that moves with
		 * the clock while the writers queue: they handed the lock to each
		 * other for minutes.)  Another writer of the sequence may publish
		 * a later fence meanwhile; publishing keeps the larger.
		 */
		seq_unlock(seqid);
		seq_locked = false;
		db_limit = db_cover_alone(db, w.clock_fence);
		cover = DB_COVERED;
		db_relid = InvalidOid;
		db_publish = -1;
	}

	timed_out = !fence_flush(XactLastRecEnd);
	shardid_require_postmaster();
	db_fence_publish(db, cover, db_relid, db_publish);
	if (cover == DB_MINE)
	{
		own_fence_set(seqid, w.fence);
		reload_at_xact_end = true;
	}
	pending.db = NULL;
	seq_fence_publish(slot, key, seqid, &w, db_limit);
	pending.slot = NULL;
	SHARDID_FAULT("after_publish");
	db_wrote(db, (GetCurrentTimestamp() - started) / 1000,
			 db_publish >= 0 && OidIsValid(db_relid), required, timed_out);
	if (seq_locked)
		seq_unlock(seqid);
}

/* ----------------------------------------------------------------
 * Transactions
 * ----------------------------------------------------------------
 */

void
shardid_fence_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (reload_at_xact_end)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that created or changed shardid's durable fence"),
						 errhint("Run CREATE or ALTER EXTENSION shardid and shardid_set_epoch in a transaction of their own.")));
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			SHARDID_FAULT("xact_abort");
			pending_write_off();
			/* the values of sequences new in this transaction went with it */
			if (shardid_shared && xact_nseqs > 0)
				shardid_slots_forget_fence(xact_seqs, xact_nseqs);
			SHARDID_FALLTHROUGH;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			if (event == XACT_EVENT_COMMIT)
				SHARDID_FAULT("xact_commit");
			/* the list was in the transaction's memory */
			xact_seqs = NULL;
			xact_nseqs = 0;
			xact_seqs_size = 0;
			own_nfences = 0;
			if (reload_at_xact_end)
			{
				reload_at_xact_end = false;
				request_reload();
			}
			break;
		default:
			break;
	}
}

/*
 * A rolled-back savepoint may take the fence sequence with it (created
 * after the savepoint), or the value of a sequence made after it: read
 * the fence again, and write those sequences' fences again.
 */
void
shardid_fence_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							   SubTransactionId parentSubid, void *arg)
{
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	pending_write_off();
	own_nfences = 0;
	if (shardid_shared && xact_nseqs > 0)
		shardid_slots_forget_fence(xact_seqs, xact_nseqs);
	if (reload_at_xact_end)
		request_reload();
}

/* ----------------------------------------------------------------
 * What CREATE and ALTER EXTENSION and the administrators' functions do
 * ----------------------------------------------------------------
 */

void
shardid_fence_reload_all(void)
{
	GuardDb    *db;
	Oid			relid;

	if (!shardid_shared)
		return;
	db = shardid_db_current();
	if (db == NULL)
		return;

	/*
	 * IDs this server issued here while the database had no fence (at
	 * 1.0, or before DROP and CREATE EXTENSION) get a fence past them now,
	 * in the same transaction that creates the fence: if it commits, no
	 * crash after it can forget them.
	 */
	relid = db_fence_lock(true);
	if (OidIsValid(relid))
	{
		int64		known = shardid_db_known_max(db);
		int64		published = guard_fence_read(db);

		if (db_is_mine(db) && Max(known, published) >= 0)
		{
			int64		value = Max(known + shardid_fence_lead, published);

			if (db_fence_store(relid, Min(value, SHARDID_MAX_TIME_MS),
							   shardid_fence_reach) >= 0)
				(void) fence_flush(XactLastRecEnd);
		}
		db_fence_unlock(relid);
	}

	/* the next call reads the fence, now and again when this ends */
	request_reload();
	reload_at_xact_end = true;
}

/* The fence's relid, locked, or the documented error. */
static Oid
db_fence_lock_or_error(void)
{
	Oid			relid = db_fence_lock(true);

	if (!OidIsValid(relid) || !OidIsValid(epoch_relid()))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension shardid is older than version 1.2 in database \"%s\"",
						get_database_name(MyDatabaseId)),
				 errhint("Run ALTER EXTENSION shardid UPDATE in this database.")));
	if (is_transactional(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the durable fence of database \"%s\" was created in this transaction",
						get_database_name(MyDatabaseId)),
				 errhint("Commit the CREATE EXTENSION or ALTER EXTENSION first.")));
	return relid;
}

void
shardid_fence_set_epoch(int64 epoch_ms)
{
	Oid			relid = db_fence_lock_or_error();
	GuardDb    *db = shardid_shared ? shardid_db_current() : NULL;
	int64		high = member_read(relid);
	int64		old_epoch = shardid_fence_epoch();

	if (db != NULL)
		high = Max(high, shardid_db_known_max(db));

	if (high >= 0 && epoch_ms != old_epoch)
	{
		/*
		 * The database has issued IDs.  Their fields, and the fences, stay
		 * as they are; a later epoch gives smaller fields, and the clock
		 * under it must not be further behind the fence than a start
		 * waits for.
		 */
		int64		now_ms = shardid_clock_now_ms();
		int64		behind = high - (now_ms - epoch_ms);

		if (behind > shardid_fence_reach)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("epoch %s would put the clock %lld ms behind the durable fence",
							shardid_unix_ms_to_str(epoch_ms), (long long) behind),
					 errdetail("Database \"%s\" has issued IDs up to time field %lld under the epoch %s; under the new epoch the clock gives time field %lld.",
							   get_database_name(MyDatabaseId), (long long) high,
							   shardid_unix_ms_to_str(old_epoch),
							   (long long) (now_ms - epoch_ms)),
					 errhint("Choose an epoch at or before %s.",
							 shardid_unix_ms_to_str(now_ms - high + shardid_fence_reach))));
	}

	seq_write(epoch_relid(), epoch_ms);
	(void) fence_flush(XactLastRecEnd);
	db_fence_unlock(relid);
	ereport(LOG,
			(errmsg("epoch of database \"%s\" set to %s (was %s)",
					get_database_name(MyDatabaseId),
					shardid_unix_ms_to_str(epoch_ms),
					shardid_unix_ms_to_str(old_epoch))));

	request_reload();
	reload_at_xact_end = true;
}

int64
shardid_fence_lower_db(int64 field)
{
	Oid			relid = db_fence_lock_or_error();
	GuardDb    *db = shardid_shared ? shardid_db_current() : NULL;
	int64		old = member_read(relid);
	int64		target = field;

	if (field > old)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("time field %lld is past the durable fence of database \"%s\"",
						(long long) field, get_database_name(MyDatabaseId)),
				 errdetail("The fence is at time field %lld; lowering it cannot raise it.",
						   (long long) old)));
	if (db != NULL)
		target = shardid_db_lower(db, field);
	seq_write(relid, target);
	(void) fence_flush(XactLastRecEnd);
	db_fence_unlock(relid);

	ereport(LOG,
			(errmsg("durable fence of database \"%s\" lowered from time field %lld to %lld",
					get_database_name(MyDatabaseId),
					(long long) old, (long long) target)));
	return target;
}

int64
shardid_fence_lower_seq(Oid seqid, int64 field)
{
	bool		called;
	int64		value;
	int64		old;
	int64		target = field;

	(void) seq_lock(seqid, true);
	value = seq_read(seqid, &called);
	old = called ? shardid_value_fence(value) : -1;
	if (field > old)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("time field %lld is past the durable fence of sequence \"%s\"",
						(long long) field, get_rel_name(seqid)),
				 errdetail("The sequence's fence is at time field %lld; lowering it cannot raise it.",
						   (long long) old)));
	if (shardid_shared)
		target = shardid_slot_lower(seqid, field);
	(void) seq_check_carries_fence(seqid, (target + 1) << SHARDID_SEQ_BITS);
	seq_write_fence(seqid, target);
	(void) fence_flush(XactLastRecEnd);
	seq_unlock(seqid);

	ereport(LOG,
			(errmsg("durable fence of sequence \"%s\" lowered from time field %lld to %lld",
					get_rel_name(seqid), (long long) old, (long long) target)));
	return target;
}

/* ----------------------------------------------------------------
 * Before the extension may be dropped
 * ----------------------------------------------------------------
 */

/*
 * The objects of class classid that depend on (refclassid, refobjid) with
 * deptype (0: any), from pg_depend alone.
 */
static List *
dependents_of(Oid refclassid, Oid refobjid, Oid classid, char deptype)
{
	Relation	rel = table_open(DependRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	List	   *result = NIL;

	ScanKeyInit(&key[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(refclassid));
	ScanKeyInit(&key[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(refobjid));
	scan = systable_beginscan(rel, DependReferenceIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tuple);

		if (dep->classid == classid && (deptype == 0 || dep->deptype == deptype))
			result = list_append_unique_oid(result, dep->objid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

/*
 * The sequences that the column default attrdef names, from pg_depend,
 * that the owner of the default's table may take values from (USAGE or
 * UPDATE, as nextval checks).  Making a default checks no right to the
 * sequences it names (a plain role can name anyone's, by OID), so a
 * sequence the table's owner could not call shardid_next on is none of
 * its IDs': the DROP hook must not move it forward.
 */
static List *
sequences_of_default(Oid attrdef, List *seqs)
{
	Relation	rel = table_open(DependRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			table = InvalidOid;
	Oid			owner;
	List	   *named = NIL;
	ListCell   *lc;

	ScanKeyInit(&key[0], Anum_pg_depend_classid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(AttrDefaultRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_objid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(attrdef));
	scan = systable_beginscan(rel, DependDependerIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tuple);

		if (dep->refclassid != RelationRelationId)
			continue;
		if (dep->refobjsubid != 0 && dep->deptype == DEPENDENCY_AUTO)
			table = dep->refobjid;	/* the column the default is of */
		else if (dep->refobjsubid == 0 &&
				 get_rel_relkind(dep->refobjid) == RELKIND_SEQUENCE)
			named = list_append_unique_oid(named, dep->refobjid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);

	if (!OidIsValid(table))
		return seqs;
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(table));
	if (!HeapTupleIsValid(tuple))
		return seqs;			/* dropped meanwhile */
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	foreach(lc, named)
	{
		Oid			seqid = lfirst_oid(lc);

		if (pg_class_aclcheck(seqid, owner, ACL_USAGE | ACL_UPDATE) == ACLCHECK_OK)
			seqs = list_append_unique_oid(seqs, seqid);
	}
	return seqs;
}

/*
 * Every sequence that a column default calling extension extoid's
 * shardid_next names: the functions are the extension's members, found
 * through pg_depend, never by name in a schema.
 */
static List *
default_fed_sequences(Oid extoid)
{
	List	   *seqs = NIL;
	ListCell   *lc;

	foreach(lc, dependents_of(ExtensionRelationId, extoid,
							  ProcedureRelationId, DEPENDENCY_EXTENSION))
	{
		Oid			funcid = lfirst_oid(lc);
		char	   *name = get_func_name(funcid);
		ListCell   *lc2;

		if (name == NULL || strcmp(name, "shardid_next") != 0)
			continue;
		foreach(lc2, dependents_of(ProcedureRelationId, funcid,
								   AttrDefaultRelationId, 0))
			seqs = sequences_of_default(lfirst_oid(lc2), seqs);
	}
	return seqs;
}

/*
 * Take a fence writer's lock on seqid, waiting at most a second: a role
 * that holds a lock on its own sequence delays a DROP by that much, then
 * fails it, never longer.
 */
static void
seq_lock_bounded(Oid seqid)
{
	for (int i = 0; !seq_lock(seqid, false); i++)
	{
		if (i >= 100)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not lock sequence \"%s\" to write the durable fence of its IDs into it",
							get_rel_name(seqid)),
					 errdetail("Before extension shardid is dropped, every sequence it issued from, and every sequence a shardid_next default names, is given the database's fence, so that a new CREATE EXTENSION does not issue their IDs again."),
					 errhint("Retry when the sequence's lock is free.")));
		shardid_clock_pause(10 * 1000);
	}
}

/*
 * Write fence into sequence seqid unless its value already carries it, as
 * the fence writes do: as its owner, forward only.  A sequence that cannot
 * carry a fence is passed over with a warning (it was refused at its
 * calls anyway).
 */
static void
seq_carry(Oid seqid, int64 fence)
{
	HeapTuple	tuple;
	Form_pg_sequence seq;
	int64		value = (fence + 1) << SHARDID_SEQ_BITS;
	bool		fits;
	bool		called;
	int64		stored;

	seq_lock_bounded(seqid);
	tuple = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
	if (!HeapTupleIsValid(tuple) || get_rel_relkind(seqid) != RELKIND_SEQUENCE)
	{
		/* dropped meanwhile */
		if (HeapTupleIsValid(tuple))
			ReleaseSysCache(tuple);
		seq_unlock(seqid);
		return;
	}
	seq = (Form_pg_sequence) GETSTRUCT(tuple);
	fits = seq->seqincrement >= 1 && seq->seqincrement <= SHARDID_SEQ_PER_MS &&
		seq->seqmax >= value;
	ReleaseSysCache(tuple);
	/*
	 * The owner needs UPDATE for setval, and SELECT or USAGE for the read
	 * (pg_sequence_last_value raises an error without either on older
	 * PostgreSQL releases: a role that revoked them from itself would fail a
	 * superuser's DROP EXTENSION).
	 */
	if (!fits || get_rel_persistence(seqid) != RELPERSISTENCE_PERMANENT ||
		pg_class_aclcheck(seqid, rel_owner(seqid), ACL_UPDATE) != ACLCHECK_OK ||
		pg_class_aclcheck(seqid, rel_owner(seqid), ACL_SELECT | ACL_USAGE) != ACLCHECK_OK)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("sequence \"%s\" cannot carry the durable fence of its IDs",
						get_rel_name(seqid)),
				 errdetail("Its IDs are not held back after extension shardid is created again.")));
		seq_unlock(seqid);
		return;
	}

	/*
	 * A value set with is_called false reads as none: take it with
	 * nextval, as the owner (a value skipped, never an ID), so that the
	 * write below can only go forward.
	 */
	stored = seq_read(seqid, &called);
	if (!called)
	{
		Oid			save_userid;
		int			save_sec_context;

		(void) become_owner(seqid, &save_userid, &save_sec_context);
		stored = nextval_internal(seqid, false);
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	if (stored < value)
	{
		seq_write_fence(seqid, fence);
		if (shardid_shared)
			shardid_slot_wrote(seqid, fence);
	}
	seq_unlock(seqid);
}

void
shardid_fence_before_drop(void)
{
	Oid			extoid = get_extension_oid("shardid", true);
	Oid			relid;
	int64		fence;
	List	   *seqs;
	ListCell   *lc;

	/*
	 * Only a role that may drop the extension: any other cannot, and must
	 * not hold the fence's lock (which every fence writer of the database
	 * may need) by running DROP SCHEMA or DROP OWNED in an open
	 * transaction.
	 */
	if (!OidIsValid(extoid) || !shardid_extension_ownercheck(extoid, GetUserId()) ||
		!OidIsValid(fence_relid()) || is_transactional(fence_relid()))
		return;

	/*
	 * The fence's lock, to the end of the transaction: no fence of the
	 * database moves past the one read here while the drop runs, so every
	 * ID issued meanwhile is at or before it.  With the AccessExclusiveLock
	 * the drop takes on the fence, the epoch and the lead anyway, taken
	 * first: writers wait for it before they take the writers' tag, never
	 * holding the tag while the drop waits for them.
	 */
	relid = db_fence_lock_mode(true, AccessExclusiveLock);
	if (!OidIsValid(relid))
		return;
	fence = member_read(relid);
	if (fence < 0)
		return;

	seqs = default_fed_sequences(extoid);
	if (shardid_shared)
		seqs = list_concat_unique_oid(seqs, shardid_db_sequences());
	foreach(lc, seqs)
	{
		/*
		 * Never the extension's own sequences (the fence, the epoch, the
		 * lead): they hold no IDs, and a write into them would outlive a
		 * DROP that fails or is rolled back.
		 */
		if (getExtensionOfObject(RelationRelationId, lfirst_oid(lc)) == extoid)
			continue;
		seq_carry(lfirst_oid(lc), fence);
	}
	(void) fence_flush(XactLastRecEnd);
}
