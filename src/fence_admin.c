/*-------------------------------------------------------------------------
 *
 * fence_admin.c
 *	  What CREATE and ALTER EXTENSION, the administrators' functions and a
 *	  DROP of the extension do to the fences.
 *
 * Each path's rule: docs/design.md, "The durable fences" ("How each path
 * carries them"; "What its owner's setval means" for
 * shardid_sequence_lower; "Each database's fence" for
 * shardid_fence_lower).  The writers' locks are fence.c's (fence_int.h).
 *
 * src/fence_admin.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_sequence.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "clock.h"
#include "compat.h"
#include "fence.h"
#include "fence_int.h"
#include "report.h"

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
	reload_at_xact_end_set();
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
	reload_at_xact_end_set();
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
	seq_write_fence(seqid, target, false);
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
		seq_write_fence(seqid, fence, false);
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

	/*
	 * When the transaction ends, the database's fence is read again: a
	 * cover pending is forgotten (the sequences carry the stored fence,
	 * which holds it), and once the drop commits the database has no cover,
	 * and each sequence's fence is flushed before it is used.
	 */
	reload_at_xact_end_set();
}
