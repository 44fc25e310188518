/*-------------------------------------------------------------------------
 *
 * citus.c
 *	  Refusing to issue IDs on a Citus worker.
 *
 * Under Citus's schema-based sharding the coordinator issues every ID:
 * an INSERT through it evaluates the DEFAULT shardid_next(...) there, with
 * the coordinator's sequence, whose value carries the durable fence.  A
 * worker's copy of the sequence is Citus's, not the user's: Citus gives it
 * the range (group id << 48) + 1 to ((group id + 1) << 48) + 1, puts it
 * back on every metadata resync, and a value in that range read as a
 * fence is years ahead of the clock (or past the sequence's maximum).
 * Issuing there could neither keep a fence nor keep apart from the
 * coordinator's IDs, so shardid_next refuses, with one error that says
 * what to do instead (docs/citus.md).
 *
 * The check runs where a backend first meets a sequence (guard.c's
 * cache_fill, which then remembers the sequence's slot): never on the
 * usual call.  It is a worker when
 *   - relation pg_catalog.pg_dist_local_group exists, belongs to extension
 *     citus and to a superuser, and its row's groupid is not 0, the
 *     coordinator's; or
 *   - the sequence has exactly the range Citus gives a worker's copy
 *     (MINVALUE (g << 48) + 1 and MAXVALUE ((g + 1) << 48) + 1, g >= 1),
 *     whether or not Citus is there (a dump of a worker's tables restored
 *     elsewhere keeps it).
 *
 * src/citus.c
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
#include "catalog/pg_namespace.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "citus.h"

/* Citus's worker ranges: worker_data_fetch_protocol.c, 48 bits for bigint */
#define CITUS_SEQ_BITS	48

/*
 * The Citus group of this server in this database: the groupid of
 * pg_catalog.pg_dist_local_group when that is Citus's, else -1.
 */
static int32
citus_local_group(void)
{
	Oid			relid;
	HeapTuple	classtup;
	Oid			owner;
	Oid			extoid;
	char	   *extname;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tuple;
	TupleDesc	desc;
	int32		group = -1;

	relid = get_relname_relid("pg_dist_local_group", PG_CATALOG_NAMESPACE);
	if (!OidIsValid(relid))
		return -1;

	/* Citus's own: its extension's member, a superuser's, a plain table */
	classtup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(classtup))
		return -1;
	owner = ((Form_pg_class) GETSTRUCT(classtup))->relowner;
	if (((Form_pg_class) GETSTRUCT(classtup))->relkind != RELKIND_RELATION)
	{
		ReleaseSysCache(classtup);
		return -1;
	}
	ReleaseSysCache(classtup);
	if (!superuser_arg(owner))
		return -1;
	extoid = getExtensionOfObject(RelationRelationId, relid);
	if (!OidIsValid(extoid))
		return -1;
	extname = get_extension_name(extoid);
	if (extname == NULL || strcmp(extname, "citus") != 0)
		return -1;

	rel = table_open(relid, AccessShareLock);
	desc = RelationGetDescr(rel);
	if (desc->natts >= 1 &&
		strcmp(NameStr(TupleDescAttr(desc, 0)->attname), "groupid") == 0 &&
		TupleDescAttr(desc, 0)->atttypid == INT4OID)
	{
		scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
		tuple = systable_getnext(scan);
		if (HeapTupleIsValid(tuple))
		{
			bool		isnull;
			Datum		d = heap_getattr(tuple, 1, desc, &isnull);

			if (!isnull)
				group = DatumGetInt32(d);
		}
		systable_endscan(scan);
	}
	table_close(rel, AccessShareLock);
	return group;
}

/*
 * The g >= 1 whose Citus worker range sequence seqid has, or 0.
 */
static int64
citus_worker_range(Oid seqid)
{
	HeapTuple	tuple;
	Form_pg_sequence seq;
	int64		min;
	int64		max;
	int64		g;

	tuple = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
	if (!HeapTupleIsValid(tuple))
		return 0;
	seq = (Form_pg_sequence) GETSTRUCT(tuple);
	min = seq->seqmin;
	max = seq->seqmax;
	ReleaseSysCache(tuple);

	if (min <= 1 || ((min - 1) & ((INT64CONST(1) << CITUS_SEQ_BITS) - 1)) != 0)
		return 0;
	g = (min - 1) >> CITUS_SEQ_BITS;
	if (max != min + (INT64CONST(1) << CITUS_SEQ_BITS))
		return 0;
	return g;
}

void
shardid_citus_check(Oid seqid)
{
	int32		group = citus_local_group();
	int64		range = citus_worker_range(seqid);
	char	   *seqname;

	if (group <= 0 && range == 0)
		return;
	seqname = get_rel_name(seqid);
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("shardid_next issues no IDs on a Citus worker"),
			 group > 0 ?
			 errdetail("This server is in Citus group %d of database \"%s\", not the coordinator's (0).  Under Citus the coordinator issues every ID, from its own sequence, which carries the durable fence; the worker's copy of sequence \"%s\" has a range of Citus's, which can carry none and would repeat the coordinator's IDs.",
					   group, get_database_name(MyDatabaseId),
					   seqname ? seqname : "(dropped)") :
			 errdetail("Sequence \"%s\" has the range Citus gives a worker's copy of a sequence (group %lld): it can carry no durable fence, and IDs from it would repeat the coordinator's.",
					   seqname ? seqname : "(dropped)", (long long) range),
			 errhint("Insert through the Citus coordinator.  For INSERT ... SELECT from a distributed table, select the rows into a temporary table first, then insert from it (see shardid's docs/citus.md).")));
}
