/*-------------------------------------------------------------------------
 *
 * seqio.c
 *	  The extension's own sequences found, and any sequence read and
 *	  written as its owner.
 *
 * Which sequences count as the extension's (CVE-2022-2625's class), and why
 * they live in shardid_internal: docs/design.md, "The writers' locks".
 * Every read and write of a sequence here runs as its owner, in a
 * security-restricted operation (become_owner): setval and a sequence's
 * read run no code any role defined.  The rules a sequence must meet to
 * carry a fence: docs/design.md, "Each sequence's own fence".
 *
 * src/seqio.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_sequence.h"
#include "commands/extension.h"
#include "commands/sequence.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "fence.h"
#include "fence_int.h"

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
StaticAssertDecl(lengthof(member_names) == MEMBER_COUNT, "one name per member");
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

Oid
member(int i)
{
	if (!OidIsValid(member_cache[i]))
		member_cache[i] = member_lookup(member_names[i]);
	return member_cache[i];
}

/*
 * What the current transaction did to relid's file: nothing (XACT_FILE_OLD),
 * made it with the relation, or gave it a new file that a rollback takes
 * with the relation whole (XACT_FILE_WHOLE), or gave it a new file that a
 * rollback takes back while the relation stays (XACT_FILE_REWRITTEN).
 * ALTER SEQUENCE and TRUNCATE ... RESTART IDENTITY do the last to a
 * sequence made before the subtransaction that changes it: what is
 * written into the new file goes with it, and other sessions (pg_dump)
 * read the old one meanwhile (docs/design.md, "A sequence altered in an
 * open transaction").  Where every new file of it is as old as the
 * relation itself (made and changed in one subtransaction), a rollback
 * takes it whole.  The relcache forgets the latest change's
 * subtransaction after a savepoint's rollback (rel.h): then it is taken
 * for a change in an open savepoint.
 */
typedef enum XactFile
{
	XACT_FILE_OLD,
	XACT_FILE_WHOLE,
	XACT_FILE_REWRITTEN
} XactFile;

static XactFile
xact_file(Oid relid)
{
	Relation	rel = RelationIdGetRelation(relid);
	XactFile	result = XACT_FILE_OLD;

	if (!RelationIsValid(rel))
		return result;
	if (rel->SHARDID_RD_FIRST_NEW_FILE_SUBID != InvalidSubTransactionId &&
		(rel->SHARDID_RD_FIRST_NEW_FILE_SUBID != rel->rd_createSubid ||
		 rel->SHARDID_RD_NEW_FILE_SUBID != rel->rd_createSubid))
		result = XACT_FILE_REWRITTEN;
	else if (rel->rd_createSubid != InvalidSubTransactionId ||
			 rel->SHARDID_RD_FIRST_NEW_FILE_SUBID != InvalidSubTransactionId)
		result = XACT_FILE_WHOLE;
	RelationClose(rel);
	return result;
}

/*
 * Is a write to relid undone if the current transaction rolls back?  True
 * for a sequence created, or given a new file, in this transaction.
 */
bool
is_transactional(Oid relid)
{
	return xact_file(relid) != XACT_FILE_OLD;
}

/* Is a write to relid undone by a rollback that leaves relid in place? */
bool
seq_rewritten_in_xact(Oid relid)
{
	return xact_file(relid) == XACT_FILE_REWRITTEN;
}

/* ----------------------------------------------------------------
 * Reading and writing a sequence, as its owner
 * ----------------------------------------------------------------
 */

/* The owner of relation relid. */
Oid
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
Oid
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
int64
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

/*
 * The value stored in sequence relid, whatever its is_called:
 * pg_sequence_last_value gives none while is_called is false (a value set
 * so by a restore, RESTART or the owner, that no nextval has returned
 * yet).  Read as SELECT last_value FROM it reads it, by a scan of its one
 * tuple (its xmin frozen: every snapshot sees it), as its owner in a
 * security-restricted operation, as seq_read reads it; no code of
 * anyone's runs, and the caller holds a lock on it already (nextval's).
 */
int64
seq_read_stored(Oid relid)
{
	Oid			save_userid;
	int			save_sec_context;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tuple;
	int64		value;

	(void) become_owner(relid, &save_userid, &save_sec_context);
	rel = table_open(relid, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	tuple = systable_getnext(scan);

	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("sequence \"%s\" has no value", RelationGetRelationName(rel))));
	value = ((Form_pg_sequence_data) GETSTRUCT(tuple))->last_value;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return value;
}

/* Whether sequence seqid may take value: within its MINVALUE and MAXVALUE. */
bool
seq_holds(Oid seqid, int64 value)
{
	HeapTuple	tuple = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
	bool		holds;

	if (!HeapTupleIsValid(tuple))
		return false;
	holds = value >= ((Form_pg_sequence) GETSTRUCT(tuple))->seqmin &&
		value <= ((Form_pg_sequence) GETSTRUCT(tuple))->seqmax;
	ReleaseSysCache(tuple);
	return holds;
}

/* The value stored in one of the extension's sequences, or -1 if none. */
int64
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
void
seq_write(Oid relid, int64 value)
{
	seq_set(relid, value, true);
}

/*
 * Write the fence f into a user's sequence, as its owner: setval(seq,
 * (f + 1) << 10, false), so that the next nextval returns the first value
 * of the block after f.  is_called false leaves the session's currval and
 * lastval at the value its own nextval returned, as if the guard had not
 * been there; pg_dump carries it as it is.  take: setval(seq, (f + 1) <<
 * 10, true) instead, the value this call takes for its ID, as a nextval
 * after the setval would have returned it (its session's currval is
 * then that value, and its lastval what it was).
 */
void
seq_write_fence(Oid seqid, int64 f, bool take)
{
	seq_set(seqid, (f + 1) << SHARDID_SEQ_BITS, take);
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
int64
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
