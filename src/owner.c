/*-------------------------------------------------------------------------
 *
 * owner.c
 *	  Reading a table another role owns, as that role.
 *
 * Planning a query over a table runs code its owner wrote: the
 * predicates and expressions of its indexes go through
 * eval_const_expressions, its row security policies into the plan, and
 * executing it runs its triggers.  Run by a more privileged role (a
 * superuser reading shardid_partition_status, or running partition
 * maintenance or shardid_adopt over another role's table), that code
 * would run with the reader's rights.  PostgreSQL closed this class for
 * VACUUM, ANALYZE, CLUSTER, REINDEX and REFRESH MATERIALIZED VIEW
 * (CVE-2022-1552, CVE-2024-7348); shardid reads its users' tables the way
 * they do:
 *
 *	- the caller's right to the read is checked first, before anything is
 *	  planned: SELECT (DELETE for a delete) on the table, and no row
 *	  security that would apply to the caller but not to the owner;
 *	- the table is locked as the caller, in the mode the query takes, so
 *	  that the caller's lock_timeout bounds the wait;
 *	- the query then runs as the table's owner, in a security-restricted
 *	  operation (SET ROLE, temporary objects and the like refused), at a
 *	  new GUC nesting level with search_path restricted to pg_catalog,
 *	  pg_temp; both are undone when the query ends, or by the abort of the
 *	  (sub)transaction if it fails.
 *
 * The queries are fixed: each SQL function below runs one shape, the
 * table named by its OID and quoted here, the column quoted, the bounds
 * passed as parameters.  Only tables and partitioned tables are read.
 *
 * src/owner.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/syscache.h"

#include "compat.h"

PG_FUNCTION_INFO_V1(shardid_rows_count);
PG_FUNCTION_INFO_V1(shardid_rows_exist);
PG_FUNCTION_INFO_V1(shardid_rows_min);
PG_FUNCTION_INFO_V1(shardid_rows_bounds);
PG_FUNCTION_INFO_V1(shardid_as_owner);

/*
 * A query to run as a table's owner: pre, the table's name, post (the name
 * is looked up as the owner, who may use a schema the caller may not), or
 * sql as it is; and up to two int8 bounds.
 */
typedef struct OwnerQuery
{
	Oid			relid;
	const char *pre;
	const char *post;
	const char *sql;
	int			nargs;
	Datum		args[2];
	char		nulls[2];
} OwnerQuery;

/*
 * Check that the caller may read relation relid, then lock it as the
 * caller (the wait bounded by the caller's lock_timeout).  Returns the
 * table's owner.  Everything is checked in the catalogs: nothing of the
 * table's is planned or run.
 */
static Oid
owner_check_catalog(Oid relid, AclMode mode)
{
	Oid			caller = GetUserId();
	HeapTuple	tuple;
	Form_pg_class form;
	Oid			owner;
	char		relkind;
	char	   *relname;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	form = (Form_pg_class) GETSTRUCT(tuple);
	owner = form->relowner;
	relkind = form->relkind;
	relname = pstrdup(NameStr(form->relname));
	ReleaseSysCache(tuple);

	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", relname),
				 errdetail("shardid reads the rows of tables and partitioned tables only.")));
	if (pg_class_aclcheck(relid, caller, mode) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", relname)));
	/* As the owner, the owner's row security would apply, not the caller's. */
	if (caller != owner && check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("row security applies to the caller on table %s", relname),
				 errdetail("shardid reads a table as its owner, whose row security differs from the caller's."),
				 errhint("Read it as the table's owner.")));
	return owner;
}

/*
 * Check the caller's right to read relid (owner_check_catalog), lock it,
 * and check again: the lock takes in the invalidations of whatever
 * committed meanwhile (a new owner, a revoked grant, row security turned
 * on), and nothing can change them while it is held.  The first check
 * keeps a role from taking a lock on a table it may not read.
 */
static Oid
owner_check(Oid relid, AclMode mode, LOCKMODE lockmode)
{
	Oid			owner = owner_check_catalog(relid, mode);

	LockRelationOid(relid, lockmode);
	if (owner_check_catalog(relid, mode) != owner)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the owner of table %s changed while it was being read",
						get_rel_name(relid))));
	return owner;
}

/*
 * The table's name, schema-qualified and quoted, checked to name relid
 * (which the caller holds locked, so that it cannot be renamed), as the
 * role that runs the query.
 */
static char *
owner_relname(Oid relid)
{
	char	   *nspname = get_namespace_name(get_rel_namespace(relid));
	char	   *relname = get_rel_name(relid);

	if (nspname == NULL || relname == NULL ||
		RangeVarGetRelid(makeRangeVar(nspname, relname, -1), NoLock, true) != relid)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u cannot be named", relid),
				 errdetail("Its schema or name changed while it was being read.")));
	return quote_qualified_identifier(nspname, relname);
}

/*
 * Run q as role owner, in a security-restricted operation, with
 * search_path restricted: a query of one row of ncols values, into
 * values/isnull, or (ncols 0) a statement.  The rows it processed.
 * Every value must be of type restype, the type the SQL function returns:
 * a column of another type (numeric's min is a pointer) never passes
 * through as an int8.
 */
static uint64
owner_run(Oid owner, OwnerQuery *q, int ncols, Datum *values, bool *isnull,
		  Oid restype)
{
	uint64		processed;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	Oid			argtypes[2] = {INT8OID, INT8OID};
	int			rc;
	int			i;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();
	shardid_restrict_search_path();
	if (q->sql == NULL)
		q->sql = psprintf("%s%s%s", q->pre, owner_relname(q->relid), q->post);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute_with_args(q->sql, q->nargs, argtypes, q->args, q->nulls,
							   ncols > 0, ncols > 0 ? 1 : 0);
	if (rc < 0 ||
		(ncols > 0 && (rc != SPI_OK_SELECT || SPI_processed != 1 ||
					   SPI_tuptable->tupdesc->natts != ncols)))
		elog(ERROR, "query \"%s\" failed: %d", q->sql, rc);
	processed = SPI_processed;
	for (i = 0; i < ncols; i++)
		if (SPI_gettypeid(SPI_tuptable->tupdesc, i + 1) != restype)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column of table %s is of type %s, not %s",
							get_rel_name(q->relid),
							format_type_be(SPI_gettypeid(SPI_tuptable->tupdesc, i + 1)),
							format_type_be(restype))));
	for (i = 0; i < ncols; i++)
	{
		values[i] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &isnull[i]);
		/* by value (int8, bool): survives SPI_finish */
	}
	SPI_finish();

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return processed;
}

/* The table of argument 0; it must not be null. */
static Oid
owner_relid(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table must not be null")));
	return PG_GETARG_OID(0);
}

/* The column named by argument argno, quoted; it must not be null. */
static const char *
owner_column(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column name must not be null")));
	return quote_identifier(NameStr(*PG_GETARG_NAME(argno)));
}

/* Argument argno as a bound of q ($n); null for none. */
static void
owner_bound(FunctionCallInfo fcinfo, OwnerQuery *q, int argno)
{
	int			n = q->nargs++;

	q->nulls[n] = PG_ARGISNULL(argno) ? 'n' : ' ';
	q->args[n] = PG_ARGISNULL(argno) ? (Datum) 0 : PG_GETARG_DATUM(argno);
}

/*
 * shardid_rows_count(rel regclass) returns int8: the rows of rel itself
 * (ONLY), counted as its owner.
 */
Datum
shardid_rows_count(PG_FUNCTION_ARGS)
{
	Oid			relid = owner_relid(fcinfo);
	Oid			owner = owner_check(relid, ACL_SELECT, AccessShareLock);
	OwnerQuery	q = {0};
	Datum		value;
	bool		isnull;

	q.relid = relid;
	q.pre = "SELECT pg_catalog.count(*) FROM ONLY ";
	q.post = "";
	(void) owner_run(owner, &q, 1, &value, &isnull, INT8OID);
	PG_RETURN_DATUM(value);
}

/*
 * shardid_rows_exist(rel regclass, col name, lo int8, hi int8) returns
 * bool: whether rel itself (ONLY) has a row with lo <= col < hi (a null
 * bound is none), as its owner.
 */
Datum
shardid_rows_exist(PG_FUNCTION_ARGS)
{
	Oid			relid = owner_relid(fcinfo);
	const char *col = owner_column(fcinfo, 1);
	Oid			owner = owner_check(relid, ACL_SELECT, AccessShareLock);
	OwnerQuery	q = {0};
	Datum		value;
	bool		isnull;

	owner_bound(fcinfo, &q, 2);
	owner_bound(fcinfo, &q, 3);
	q.relid = relid;
	q.pre = "SELECT EXISTS (SELECT FROM ONLY ";
	q.post = psprintf(" AS d WHERE ($1 IS NULL OR d.%s OPERATOR(pg_catalog.>=) $1)"
					  " AND ($2 IS NULL OR d.%s OPERATOR(pg_catalog.<) $2))",
					  col, col);
	(void) owner_run(owner, &q, 1, &value, &isnull, BOOLOID);
	PG_RETURN_DATUM(value);
}

/*
 * shardid_rows_min(rel regclass, col name, lo int8) returns int8: the
 * least col of rel itself (ONLY) at or above lo, or null, as its owner.
 */
Datum
shardid_rows_min(PG_FUNCTION_ARGS)
{
	Oid			relid = owner_relid(fcinfo);
	const char *col = owner_column(fcinfo, 1);
	Oid			owner = owner_check(relid, ACL_SELECT, AccessShareLock);
	OwnerQuery	q = {0};
	Datum		value;
	bool		isnull;

	owner_bound(fcinfo, &q, 2);
	q.relid = relid;
	q.pre = psprintf("SELECT pg_catalog.min(d.%s) FROM ONLY ", col);
	q.post = psprintf(" AS d WHERE $1 IS NULL OR d.%s OPERATOR(pg_catalog.>=) $1", col);
	(void) owner_run(owner, &q, 1, &value, &isnull, INT8OID);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(value);
}

/*
 * shardid_rows_bounds(rel regclass, col name, OUT lo int8, OUT hi int8):
 * the least and greatest col of rel and the tables that inherit from it,
 * as int8, as its owner.
 */
Datum
shardid_rows_bounds(PG_FUNCTION_ARGS)
{
	Oid			relid = owner_relid(fcinfo);
	const char *col = owner_column(fcinfo, 1);
	Oid			owner = owner_check(relid, ACL_SELECT, AccessShareLock);
	OwnerQuery	q = {0};
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		isnull[2];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	q.relid = relid;
	q.pre = psprintf("SELECT pg_catalog.min(d.%s)::pg_catalog.int8, pg_catalog.max(d.%s)::pg_catalog.int8"
					 " FROM ", col, col);
	q.post = " AS d";
	(void) owner_run(owner, &q, 2, values, isnull, INT8OID);
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, isnull)));
}

/*
 * shardid_as_owner(rel regclass, statement text) returns int8: run one
 * statement of the extension's making (partition maintenance's ATTACH
 * PARTITION) as the owner of rel, in a security-restricted operation;
 * the rows it processed.  Only for a caller who may act as the owner
 * already (a member of the owning role with its privileges and, on
 * PostgreSQL 16 and later, the SET option; or a superuser): it can only
 * lessen the rights the statement runs with, never add to them.
 * The statement names everything it touches schema-qualified (search_path
 * is pg_catalog, pg_temp).
 */
Datum
shardid_as_owner(PG_FUNCTION_ARGS)
{
	Oid			relid = owner_relid(fcinfo);
	Oid			owner;
	OwnerQuery	q = {0};
	HeapTuple	tuple;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("statement must not be null")));
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	if (!shardid_can_act_as(GetUserId(), owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s", get_rel_name(relid)),
				 errdetail("A statement runs as a table's owner only for a role that may act as the owner.")));
	q.sql = text_to_cstring(PG_GETARG_TEXT_PP(1));
	PG_RETURN_INT64((int64) owner_run(owner, &q, 0, NULL, NULL, InvalidOid));
}
