/*-------------------------------------------------------------------------
 *
 * floor.c
 *	  The table's own floor: the largest ID already in the column that a
 *	  sequence numbers, read from its index.
 *
 * The durable fence lives in the extension's sequence, so it is lost with
 * the extension (DROP EXTENSION, then CREATE EXTENSION after a restart)
 * and is missing from dumps of part of a database (pg_dump -t, -n).  The
 * table is a durable record of its own IDs, carried by every path that
 * carries its rows.  When the guard first meets a sequence (a new slot),
 * it reads the largest ID of the column the sequence is OWNED BY, and
 * issues nothing at or before that ID's time field.
 *
 * One index probe: the column must lead a valid, non-partial B-tree index
 * with the built-in int8 operator class, so that no user code runs (the
 * probe reads as the server, whoever calls shardid_next).  A column
 * without one is not read, and the sequence keeps the fence alone, and so
 * is a table or index that another session holds locked: the probe never
 * waits.  Rows are read with a dirty snapshot: committed ones and those
 * of transactions still in progress.
 *
 * src/floor.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "nodes/pg_list.h"
#include "storage/lmgr.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "compat.h"
#include "floor.h"

/* Can index read the largest value of column attno, as the server? */
static bool
index_leads_with(Relation index, AttrNumber attno)
{
	Form_pg_index form = index->rd_index;

	return index->rd_rel->relam == BTREE_AM_OID &&
		form->indisvalid && form->indisready && form->indislive &&
		form->indnatts >= 1 && form->indkey.values[0] == attno &&
		heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL) &&
		index->rd_opfamily[0] == INTEGER_BTREE_FAM_OID &&
		index->rd_opcintype[0] == INT8OID;
}

/* The largest non-null value of column attno of heap, via index. */
static bool
index_max(Relation heap, Relation index, AttrNumber attno, int64 *max)
{
	ScanKeyData key;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	SnapshotData dirty;
	Snapshot	snapshot;
	bool		found = false;
	ScanDirection dir;

	/* the largest value is last in an ascending index, first in a DESC one */
	dir = (index->rd_indoption[0] & INDOPTION_DESC) ?
		ForwardScanDirection : BackwardScanDirection;

	ScanKeyEntryInitialize(&key, SK_ISNULL | SK_SEARCHNOTNULL, 1,
						   InvalidStrategy, InvalidOid, InvalidOid,
						   InvalidOid, (Datum) 0);
	/*
	 * A dirty snapshot: rows of transactions still in progress count too,
	 * and no predicate lock is taken (a serializable caller must not get
	 * 40001 for a probe it did not ask for).
	 */
	InitDirtySnapshot(dirty);
	snapshot = &dirty;
	slot = table_slot_create(heap, NULL);
	scan = shardid_index_beginscan(heap, index, snapshot, 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	if (index_getnext_slot(scan, dir, slot))
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, attno, &isnull);

		if (!isnull)
		{
			*max = DatumGetInt64(d);
			found = true;
		}
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return found;
}

/* The largest time field in column attname of plain table relid, or -1. */
static int64
leaf_floor(Oid relid, const char *attname)
{
	Relation	heap;
	AttrNumber	attno;
	List	   *indexes;
	ListCell   *lc;
	int64		result = -1;

	/*
	 * Never wait for the table: the probe runs inside an insert, which may
	 * already hold locks that a DROP or DETACH of a partition waits behind.
	 * A table locked by someone else is not read; the fence still holds.
	 */
	if (!ConditionalLockRelationOid(relid, AccessShareLock))
		return -1;
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
	{
		UnlockRelationOid(relid, AccessShareLock);
		return -1;
	}
	heap = table_open(relid, NoLock);
	attno = get_attnum(relid, attname);
	if (attno <= 0 || TupleDescAttr(RelationGetDescr(heap), attno - 1)->atttypid != INT8OID)
	{
		table_close(heap, AccessShareLock);
		return -1;
	}
	indexes = RelationGetIndexList(heap);
	foreach(lc, indexes)
	{
		Relation	index;
		int64		max;
		bool		usable;

		if (!ConditionalLockRelationOid(lfirst_oid(lc), AccessShareLock))
			continue;
		index = index_open(lfirst_oid(lc), NoLock);
		usable = index_leads_with(index, attno);
		if (usable && index_max(heap, index, attno, &max))
			result = Max(result, max >> SHARDID_TIME_SHIFT);
		index_close(index, AccessShareLock);
		if (usable)
			break;
	}
	list_free(indexes);
	table_close(heap, AccessShareLock);
	return result;
}

/*
 * The column sequence seqid belongs to: OWNED BY (an automatic dependency)
 * or identity (internal), as sequenceIsOwned() tells, in one scan of
 * pg_depend rather than one per kind.
 */
static bool
owning_column(Oid seqid, Oid *tableid, int32 *colid)
{
	Relation	rel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		found = false;

	rel = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&key[0], Anum_pg_depend_classid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(RelationRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_objid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(seqid));
	scan = systable_beginscan(rel, DependDependerIndexId, true, NULL, 2, key);
	while (!found && HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tuple);

		if (dep->refclassid == RelationRelationId &&
			dep->refobjsubid > 0 &&
			(dep->deptype == DEPENDENCY_AUTO || dep->deptype == DEPENDENCY_INTERNAL))
		{
			*tableid = dep->refobjid;
			*colid = dep->refobjsubid;
			found = true;
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

int64
shardid_table_floor(Oid seqid)
{
	Oid			tableid;
	int32		colid;
	char	   *attname;
	char		relkind;
	int64		result = -1;

	if (!owning_column(seqid, &tableid, &colid))
		return -1;
	attname = get_attname(tableid, (AttrNumber) colid, true);
	if (attname == NULL)
		return -1;

	relkind = get_rel_relkind(tableid);
	if (relkind == RELKIND_RELATION)
		result = leaf_floor(tableid, attname);
	else if (relkind == RELKIND_PARTITIONED_TABLE)
	{
		/* every leaf, by the column's name: attnums differ between them */
		List	   *rels = find_all_inheritors(tableid, NoLock, NULL);
		ListCell   *lc;

		foreach(lc, rels)
		{
			if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_RELATION)
				result = Max(result, leaf_floor(lfirst_oid(lc), attname));
		}
		list_free(rels);
	}
	return result;
}
