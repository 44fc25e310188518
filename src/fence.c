/*-------------------------------------------------------------------------
 *
 * fence.c
 *	  The durable fence: where each database keeps it, and how it is read
 *	  and written.
 *
 * A database's fence is a time field at or before which the database
 * issues no ID again (guard.c keeps every issued ID at or before it).  It
 * lives in the database itself, as the value of the sequence
 * shardid_fence that extension shardid 1.1 creates in its schema, so that
 * PostgreSQL carries it every way it carries the data:
 *
 *	- setval() writes a WAL record, which crash recovery, streaming and
 *	  cascading standbys and point-in-time recovery replay;
 *	- pg_basebackup copies the sequence with the rest of the data
 *	  directory, and the WAL that comes with the backup;
 *	- pg_dump dumps its value (the extension marks it with
 *	  pg_extension_config_dump), and pg_restore sets it;
 *	- pg_upgrade carries it as it carries every sequence.
 *
 * A sequence is written outside transactions: a fence written by a
 * transaction that rolls back stays written, as it must, since the IDs it
 * covered may already have been handed out.  setval() does not wait for
 * its WAL record to reach the disk, so shardid_fence_write() flushes it,
 * and waits for synchronous standbys as a commit would, before it
 * returns.
 *
 * The sequence belongs to the extension's owner and no one else may read
 * or write it; the functions here switch to the owner for the one call
 * that does, as SECURITY DEFINER would.
 *
 * src/fence.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "fence.h"

/* The schema of extension extoid. */
static Oid
extension_schema(Oid extoid)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			nspid = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		nspid = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nspid;
}

Oid
shardid_fence_relid(void)
{
	Oid			extoid = get_extension_oid("shardid", true);
	Oid			nspid;
	Oid			relid;

	if (!OidIsValid(extoid))
		return InvalidOid;
	nspid = extension_schema(extoid);
	if (!OidIsValid(nspid))
		return InvalidOid;
	relid = get_relname_relid(SHARDID_FENCE_RELNAME, nspid);
	if (!OidIsValid(relid))
		return InvalidOid;

	/* found by name: make sure it is the extension's own, logged sequence */
	if (getExtensionOfObject(RelationRelationId, relid) != extoid ||
		get_rel_relkind(relid) != RELKIND_SEQUENCE ||
		get_rel_persistence(relid) != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("relation \"%s.%s\" is not shardid's fence",
						get_namespace_name(nspid), SHARDID_FENCE_RELNAME),
				 errdetail("The fence is a logged sequence that belongs to extension shardid."),
				 errhint("Drop or rename the relation and run ALTER EXTENSION shardid UPDATE.")));
	return relid;
}

/* Switch to the owner of relid; returns what to switch back to. */
static void
become_owner(Oid relid, Oid *save_userid, int *save_sec_context)
{
	HeapTuple	tuple;
	Oid			owner;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("shardid's fence sequence (OID %u) does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);

	GetUserIdAndSecContext(save_userid, save_sec_context);
	SetUserIdAndSecContext(owner, *save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

int64
shardid_fence_read(Oid relid)
{
	LOCAL_FCINFO(fcinfo, 1);
	Oid			save_userid;
	int			save_sec_context;
	Datum		result;

	become_owner(relid, &save_userid, &save_sec_context);
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(relid);
	fcinfo->args[0].isnull = false;
	result = pg_sequence_last_value(fcinfo);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	/* NULL: never set since the sequence was created */
	return fcinfo->isnull ? -1 : DatumGetInt64(result);
}

void
shardid_fence_write(Oid relid, int64 value)
{
	Oid			save_userid;
	int			save_sec_context;
	XLogRecPtr	lsn;

	become_owner(relid, &save_userid, &save_sec_context);
	(void) DirectFunctionCall2(setval_oid, ObjectIdGetDatum(relid),
							   Int64GetDatum(value));
	SetUserIdAndSecContext(save_userid, save_sec_context);

	/*
	 * setval's record is the last this backend wrote.  Interrupts stay
	 * held while waiting for the standbys, as they are for a commit: a
	 * cancelled wait returns as the commit's would, with a WARNING.
	 */
	lsn = XactLastRecEnd;
	XLogFlush(lsn);
	HOLD_INTERRUPTS();
	SyncRepWaitForLSN(lsn, false);
	RESUME_INTERRUPTS();
}
