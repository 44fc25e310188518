/*-------------------------------------------------------------------------
 *
 * shardid.c
 *	  SQL entry points of shardid: Instagram-style 64-bit IDs.
 *
 *	  | 0 | 41 bits: ms since the epoch | 13 bits: shard | 10 bits: seq |
 *
 * This file turns SQL arguments into the plain integers that codec.c works
 * on, checks them, and turns codec statuses into errors with SQLSTATEs
 * (report.c).  shardid_next also calls nextval and hands the value to the
 * guard (guard.c), which picks the millisecond.
 *
 * Every function taking an epoch has a twin without it.  The pure ones'
 * twins use the default epoch, 2011-01-01 00:00:00 UTC; shardid_next
 * issues under the database's epoch (shardid_epoch()) with or without
 * one, and refuses any other.
 *
 * src/shardid.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "catalog/pg_class.h"
#include "commands/sequence.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "compat.h"
#include "fault.h"
#include "fence.h"
#include "guard.h"
#include "public_id.h"
#include "report.h"
#include "shmem.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(shardid_next);
PG_FUNCTION_INFO_V1(shardid_encode);
PG_FUNCTION_INFO_V1(shardid_decode);
PG_FUNCTION_INFO_V1(shardid_shard);
PG_FUNCTION_INFO_V1(shardid_seq);
PG_FUNCTION_INFO_V1(shardid_created_at);
PG_FUNCTION_INFO_V1(shardid_floor);
PG_FUNCTION_INFO_V1(shardid_horizon);
PG_FUNCTION_INFO_V1(shardid_to_shortcode);
PG_FUNCTION_INFO_V1(shardid_from_shortcode);
PG_FUNCTION_INFO_V1(shardid_fence_reload);
PG_FUNCTION_INFO_V1(shardid_epoch);
PG_FUNCTION_INFO_V1(shardid_set_epoch);
PG_FUNCTION_INFO_V1(shardid_fence_set);
PG_FUNCTION_INFO_V1(shardid_sequence_lower);

static void checked_sequences_invalidate(Datum arg, Oid relid);
static Datum shardid_next_epoch(FunctionCallInfo fcinfo);
static void checked_sequences_xact(XactEvent event, void *arg);
static void shardid_process_utility(PlannedStmt *pstmt, const char *queryString,
									bool readOnlyTree, ProcessUtilityContext context,
									ParamListInfo params, QueryEnvironment *queryEnv,
									DestReceiver *dest, QueryCompletion *qc);

static ProcessUtility_hook_type prev_process_utility_hook = NULL;

void		_PG_init(void);

/*
 * Everything shardid sets up when it is loaded, in one place: every
 * setting, then the reserved prefix, then the shared-memory hooks (when
 * preloaded), then the callbacks.
 */
void
_PG_init(void)
{
	/* Settings */
	DefineCustomIntVariable("shardid.max_clock_regression",
							"Sets how far the clock may step back before shardid_next refuses instead of waiting.",
							NULL,
							&shardid_max_clock_regression,
							1000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("shardid.fence_lead",
							"Sets how far ahead of the IDs it issues shardid writes each sequence's and each database's durable fence.",
							NULL,
							&shardid_fence_lead,
							500, 10, 60 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, shardid_fence_lead_assign, NULL);
	DefineCustomIntVariable("shardid.standby_wait",
							"Sets how long a fence write waits for every connected streaming standby to receive it before it is used anyway.",
							NULL,
							&shardid_standby_wait,
							1000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("shardid.debug_fence_write_delay",
							"Sets a delay before each fence write, for tests that force a race.",
							NULL,
							&shardid_debug_fence_write_delay,
							0, 0, 60 * 1000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomStringVariable("shardid.public_id_keys",
							   "Sets the keys of public IDs, as a list of VERSION:HEX32 entries.",
							   NULL,
							   &shardid_public_id_keys,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE |
							   GUC_DISALLOW_IN_AUTO_FILE,
							   NULL, shardid_public_id_keys_assign, NULL);
	if (process_shared_preload_libraries_in_progress)
	{
		/*
		 * These size shared memory, so they exist only when shardid is
		 * preloaded: defining a PGC_POSTMASTER variable later, as CREATE
		 * EXTENSION or the first call would, is a FATAL error.
		 */
		DefineCustomIntVariable("shardid.max_sequences",
								"Sets the number of sequences whose last issued millisecond shardid tracks.",
								NULL,
								&shardid_max_sequences,
								16384, 16, 1000000,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);
		DefineCustomIntVariable("shardid.max_databases",
								"Sets the number of databases whose durable fence shardid keeps in shared memory.",
								NULL,
								&shardid_max_databases,
								64, 4, 100000,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);
	}
#ifdef SHARDID_FAULTS
	/* the fault points' settings: a FAULTS=1 build's only (src/fault.h) */
	shardid_fault_define();
#endif
	MarkGUCPrefixReserved("shardid");

	/* Shared memory: the guard's slots and database entries */
	if (process_shared_preload_libraries_in_progress)
	{
		shardid_prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = shardid_shmem_request;
		shardid_prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = shardid_shmem_startup;
	}

	/* The log hook that keeps the public ID keys out of the log */
	shardid_prev_emit_log_hook = emit_log_hook;
	emit_log_hook = shardid_public_id_emit_log;

	/* The statements that may drop the extension (see may_drop_shardid) */
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = shardid_process_utility;

	/* Callbacks: the fences' transactions, and the checked sequences */
	RegisterXactCallback(shardid_fence_xact_callback, NULL);
	RegisterSubXactCallback(shardid_fence_subxact_callback, NULL);
	RegisterXactCallback(checked_sequences_xact, NULL);
	CacheRegisterRelcacheCallback(checked_sequences_invalidate, (Datum) 0);
}

/*
 * May this statement drop extension shardid?  DROP EXTENSION naming it,
 * DROP SCHEMA ... CASCADE naming its schema, DROP OWNED naming its owner:
 * before any of them, the sequences take the database's fence into their
 * values (fence.c), whether or not the statement then drops the extension.
 */
static bool
may_drop_shardid(Node *parsetree)
{
	Oid			nspid;
	Oid			owner;
	ListCell   *lc;

	if (!IsA(parsetree, DropStmt) && !IsA(parsetree, DropOwnedStmt))
		return false;
	if (!OidIsValid(shardid_extension_lookup(&nspid, &owner)))
		return false;

	if (IsA(parsetree, DropOwnedStmt))
	{
		foreach(lc, ((DropOwnedStmt *) parsetree)->roles)
			if (get_rolespec_oid(lfirst(lc), true) == owner)
				return true;
		return false;
	}
	else
	{
		DropStmt   *stmt = (DropStmt *) parsetree;
		char	   *want;

		if (stmt->removeType == OBJECT_EXTENSION)
			want = "shardid";
		else if (stmt->removeType == OBJECT_SCHEMA && stmt->behavior == DROP_CASCADE)
			want = get_namespace_name(nspid);
		else
			return false;
		foreach(lc, stmt->objects)
		{
			Node	   *name = lfirst(lc);

			if (want != NULL && IsA(name, String) && strcmp(strVal(name), want) == 0)
				return true;
		}
	}
	return false;
}

static void
shardid_process_utility(PlannedStmt *pstmt, const char *queryString,
						bool readOnlyTree, ProcessUtilityContext context,
						ParamListInfo params, QueryEnvironment *queryEnv,
						DestReceiver *dest, QueryCompletion *qc)
{
	if (may_drop_shardid(pstmt->utilityStmt))
		shardid_fence_before_drop();
	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context,
								  params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

/*
 * The epoch argument at argno, or the default epoch if the function was
 * called without one, in Unix ms.  An epoch must be finite, a whole
 * millisecond, and leave room for its horizon in timestamptz.
 */
static int64
epoch_arg(FunctionCallInfo fcinfo, int argno)
{
	TimestampTz epoch;
	TimestampTz horizon;

	if (PG_NARGS() <= argno)
		return SHARDID_DEFAULT_EPOCH_UNIX_MS;

	epoch = PG_GETARG_TIMESTAMPTZ(argno);
	if (TIMESTAMP_NOT_FINITE(epoch))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epoch %s is not finite", timestamptz_to_str(epoch)),
				 errdetail("The epoch must be a finite timestamp.")));

	if (epoch % 1000 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epoch %s is not a whole millisecond",
						timestamptz_to_str(epoch)),
				 errdetail("IDs count whole milliseconds since the epoch.")));

	if (pg_add_s64_overflow(epoch, SHARDID_MAX_TIME_MS * 1000, &horizon) ||
		!IS_VALID_TIMESTAMP(horizon))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("epoch %s is out of range", timestamptz_to_str(epoch)),
				 errdetail("The epoch's horizon, %lld ms later, must be a valid timestamp.",
						   (long long) SHARDID_MAX_TIME_MS)));

	return shardid_timestamptz_to_unix_ms(epoch);
}

/*
 * Refuse an epoch in the future, or one whose horizon the clock has passed
 * (shard: for the message).
 */
static void
check_epoch_now(int64 epoch_ms, int32 shard)
{
	int64		now_ms = shardid_clock_now_ms();

	if (epoch_ms > now_ms)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epoch %s is in the future", shardid_unix_ms_to_str(epoch_ms)),
				 errdetail("The clock reads %s.", shardid_unix_ms_to_str(now_ms))));
	if (now_ms > shardid_horizon_ms(epoch_ms))
		shardid_report(SHARDID_PAST_HORIZON, now_ms, epoch_ms, shard, 0);
}

/* A timestamptz argument in Unix ms, refusing infinity. */
static int64
time_arg(FunctionCallInfo fcinfo, int argno)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(argno);

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("time %s is not finite", timestamptz_to_str(ts)),
				 errdetail("IDs encode finite times only.")));
	return shardid_timestamptz_to_unix_ms(ts);
}

static void
check_shard(int32 shard)
{
	if (shard < 0 || shard > SHARDID_MAX_SHARD)
		shardid_report(SHARDID_SHARD_OUT_OF_RANGE, 0, 0, shard, 0);
}

/* An ID argument, refusing negative values. */
static int64
id_arg(FunctionCallInfo fcinfo, int argno)
{
	int64		id = PG_GETARG_INT64(argno);

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID %lld is negative", (long long) id),
				 errdetail("IDs made by shardid are never negative: bit 63 is always 0.")));
	return id;
}

/*
 * Sequences this backend has checked and called nextval on in its current
 * transaction, indexed by OID.  nextval keeps its lock on the sequence
 * until the top transaction ends, even across a rolled-back savepoint, so
 * no other session can drop it or turn it into something else meanwhile.
 * This session can: DROP SEQUENCE in the same transaction, or a rollback
 * to a savepoint taken before the sequence was created.  Both send a
 * relcache invalidation for it, which forgets the check.  The end of the
 * transaction forgets them all.  Apart from the guard's slot cache
 * (guard.c), though indexed alike: that one outlives the transaction, and
 * is only a hint, checked under the slot's mutex.
 */
#define CHECKED_CACHE_SIZE 64

static Oid	checked_sequences[CHECKED_CACHE_SIZE];
static bool checked_any = false;

/* The end of the transaction forgets every check. */
static void
checked_sequences_xact(XactEvent event, void *arg)
{
	if (checked_any)
	{
		memset(checked_sequences, 0, sizeof(checked_sequences));
		checked_any = false;
	}
}

/* Was seqid checked (and given to nextval) in this transaction? */
static inline bool
sequence_checked(Oid seqid)
{
	return checked_sequences[seqid % CHECKED_CACHE_SIZE] == seqid && OidIsValid(seqid);
}

/*
 * Make sure seqid names a sequence (its relkind), and a logged one, with a
 * clear error if not.  Takes the lock nextval takes (RowExclusiveLock, which also brings in pending
 * invalidations), so that a concurrent DROP cannot slip in between the
 * check and nextval.  Once per transaction: see remember_sequence().
 */
static pg_noinline void
check_is_logged_sequence(Oid seqid)
{
	HeapTuple	tuple;
	char		relkind;
	char		persistence;

	LockRelationOid(seqid, RowExclusiveLock);
	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(seqid));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", seqid)));
	relkind = ((Form_pg_class) GETSTRUCT(tuple))->relkind;
	persistence = ((Form_pg_class) GETSTRUCT(tuple))->relpersistence;
	ReleaseSysCache(tuple);
	if (relkind != RELKIND_SEQUENCE)
	{
		char	   *relname = get_rel_name(seqid);

		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a sequence", relname ? relname : "?"),
				 errhint("Pass the sequence that numbers this table's IDs.")));
	}
	if (persistence == RELPERSISTENCE_UNLOGGED)
		shardid_fence_refuse_unlogged(seqid);
}

/*
 * After nextval succeeded on seqid: skip check_is_logged_sequence until
 * commit.
 */
static void
remember_sequence(Oid seqid)
{
	checked_sequences[seqid % CHECKED_CACHE_SIZE] = seqid;
	checked_any = true;
}

/* Relcache invalidation: forget the checks of relid (or of all). */
static void
checked_sequences_invalidate(Datum arg, Oid relid)
{
	int			i;

	for (i = 0; i < CHECKED_CACHE_SIZE; i++)
	{
		if (!OidIsValid(relid) || checked_sequences[i] == relid)
			checked_sequences[i] = InvalidOid;
	}
	shardid_fence_invalidate(relid);
}

/*
 * The value of a call whose sequence is not checked in this transaction
 * yet, or whose fence may be due: see shardid_guard_value.
 */
static pg_noinline int64
next_value_due(Oid seqid, int64 now_ms)
{
	int64		value;

	if (!sequence_checked(seqid))
		check_is_logged_sequence(seqid);
	if (shardid_guard_due(seqid, now_ms))
		value = shardid_guard_value(seqid, now_ms);
	else
		value = nextval_internal(seqid, true);
	remember_sequence(seqid);
	return value;
}

/*
 * shardid_next(shard integer, seq regclass [, epoch timestamptz]) -> bigint
 *
 * A new ID from the wall clock, the shard, and nextval(seq) mod 1024, never
 * the same twice for one sequence (see guard.c).
 */
Datum
shardid_next(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);
	Oid			seqid = PG_GETARG_OID(1);
	int64		value;
	int64		now_ms;
	int64		id;

	if (unlikely((uint32) shard > (uint32) SHARDID_MAX_SHARD))
		check_shard(shard);
	shardid_guard_require();
	if (unlikely(PG_NARGS() > 2))
		return shardid_next_epoch(fcinfo);

	/*
	 * The clock first, so that the guard's usual path makes no call: a
	 * reading a few microseconds old is the same millisecond or the one
	 * before, never one the value was not taken in.  Then the value:
	 * nextval's, with its own USAGE/UPDATE check, or, where the
	 * sequence's fence is due, its setval's (shardid_guard_value).
	 */
	now_ms = shardid_clock_now_ms();
	if (likely(sequence_checked(seqid) && !shardid_guard_due(seqid, now_ms)))
		value = nextval_internal(seqid, true);
	else
		value = next_value_due(seqid, now_ms);
	id = shardid_guard_next(seqid, shard, value, now_ms);

	/* an orphaned backend hands out nothing (see report.h) */
	shardid_require_postmaster();
	PG_RETURN_INT64(id);
}

/*
 * shardid_next(shard, seq, epoch): the same under an epoch named in the
 * call, which must be the database's (or, in a database still at 1.1, not
 * too early: see guard.c).  Refuse one in the future, or a clock past its
 * horizon, before spending a sequence value.
 */
static pg_noinline Datum
shardid_next_epoch(FunctionCallInfo fcinfo)
{
	int32		shard = PG_GETARG_INT32(0);
	Oid			seqid = PG_GETARG_OID(1);
	int64		epoch_ms = epoch_arg(fcinfo, 2);
	int64		value;
	int64		id;

	check_epoch_now(epoch_ms, shard);
	if (!sequence_checked(seqid))
		check_is_logged_sequence(seqid);
	value = nextval_internal(seqid, true);
	remember_sequence(seqid);
	id = shardid_guard_next_epoch(seqid, shard, value, epoch_ms);
	shardid_require_postmaster();
	PG_RETURN_INT64(id);
}

/*
 * shardid_encode(created_at, shard, seq [, epoch]) -> bigint
 */
Datum
shardid_encode(PG_FUNCTION_ARGS)
{
	int64		unix_ms = time_arg(fcinfo, 0);
	int32		shard = PG_GETARG_INT32(1);
	int32		seq = PG_GETARG_INT32(2);
	int64		epoch_ms = epoch_arg(fcinfo, 3);
	int64		id = 0;
	ShardidStatus status;

	status = shardid_compose(unix_ms, epoch_ms, shard, seq, &id);
	if (status != SHARDID_OK)
		shardid_report(status, unix_ms, epoch_ms, shard, seq);
	PG_RETURN_INT64(id);
}

/*
 * shardid_decode(id [, epoch]) -> (created_at timestamptz, shard int, seq int)
 */
Datum
shardid_decode(PG_FUNCTION_ARGS)
{
	int64		id = id_arg(fcinfo, 0);
	int64		epoch_ms = epoch_arg(fcinfo, 1);
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	int64		unix_ms;
	int32		shard;
	int32		seq;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	(void) shardid_split(id, epoch_ms, &unix_ms, &shard, &seq);
	values[0] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(unix_ms));
	values[1] = Int32GetDatum(shard);
	values[2] = Int32GetDatum(seq);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* shardid_shard(id) -> integer: (id >> 10) & 8191 */
Datum
shardid_shard(PG_FUNCTION_ARGS)
{
	int32		shard;

	(void) shardid_split(id_arg(fcinfo, 0), 0, NULL, &shard, NULL);
	PG_RETURN_INT32(shard);
}

/* shardid_seq(id) -> integer: id & 1023 */
Datum
shardid_seq(PG_FUNCTION_ARGS)
{
	int32		seq;

	(void) shardid_split(id_arg(fcinfo, 0), 0, NULL, NULL, &seq);
	PG_RETURN_INT32(seq);
}

/* shardid_created_at(id [, epoch]) -> timestamptz */
Datum
shardid_created_at(PG_FUNCTION_ARGS)
{
	int64		id = id_arg(fcinfo, 0);
	int64		unix_ms;

	(void) shardid_split(id, epoch_arg(fcinfo, 1), &unix_ms, NULL, NULL);
	PG_RETURN_TIMESTAMPTZ(shardid_unix_ms_to_timestamptz(unix_ms));
}

/*
 * shardid_floor(ts [, epoch]) -> bigint: the smallest ID of ts's
 * millisecond, shard 0 and seq 0.
 */
Datum
shardid_floor(PG_FUNCTION_ARGS)
{
	int64		unix_ms = time_arg(fcinfo, 0);
	int64		epoch_ms = epoch_arg(fcinfo, 1);
	int64		id = 0;
	ShardidStatus status;

	status = shardid_compose(unix_ms, epoch_ms, 0, 0, &id);
	if (status != SHARDID_OK)
		shardid_report(status, unix_ms, epoch_ms, 0, 0);
	PG_RETURN_INT64(id);
}

/* shardid_horizon([epoch]) -> timestamptz */
Datum
shardid_horizon(PG_FUNCTION_ARGS)
{
	int64		epoch_ms = epoch_arg(fcinfo, 0);

	PG_RETURN_TIMESTAMPTZ(shardid_unix_ms_to_timestamptz(shardid_horizon_ms(epoch_ms)));
}

/* shardid_to_shortcode(id) -> text */
Datum
shardid_to_shortcode(PG_FUNCTION_ARGS)
{
	char		buf[SHARDID_SHORTCODE_MAXLEN + 1];

	(void) shardid_shortcode_encode(id_arg(fcinfo, 0), buf);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

/* shardid_from_shortcode(code) -> bigint */
Datum
shardid_from_shortcode(PG_FUNCTION_ARGS)
{
	text	   *code = PG_GETARG_TEXT_PP(0);
	const char *s = VARDATA_ANY(code);
	size_t		len = VARSIZE_ANY_EXHDR(code);
	int64		id = 0;
	size_t		bad_pos = 0;

	switch (shardid_shortcode_decode(s, len, &id, &bad_pos))
	{
		case SHARDID_OK:
			break;
		case SHARDID_CODE_EMPTY:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("shortcode is empty"),
					 errdetail("A shortcode has 1 to %d characters.",
							   SHARDID_SHORTCODE_MAXLEN)));
			break;
		case SHARDID_CODE_BAD_CHAR:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid character in shortcode \"%s\"",
							text_to_cstring(code)),
					 errdetail("Byte %zu is not one of A-Z, a-z, 0-9, \"-\" and \"_\".",
							   bad_pos + 1)));
			break;
		case SHARDID_CODE_TOO_LONG:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("shortcode \"%s...\" is too long",
							pnstrdup(s, pg_mbcliplen(s, (int) len, SHARDID_SHORTCODE_MAXLEN))),
					 errdetail("A shortcode has at most %d characters.",
							   SHARDID_SHORTCODE_MAXLEN)));
			break;
		case SHARDID_CODE_LEADING_ZERO:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("shortcode \"%s\" has a leading \"A\"", text_to_cstring(code)),
					 errdetail("\"A\" is the digit zero; shortcodes are written without leading zeros, so each ID has one shortcode.")));
			break;
		case SHARDID_CODE_OVERFLOW:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("shortcode \"%s\" is out of range", text_to_cstring(code)),
					 errdetail("Shortcodes stand for IDs of at most 63 bits; the largest is \"H__________\".")));
			break;
		default:
			elog(ERROR, "unexpected shortcode status");
	}
	PG_RETURN_INT64(id);
}

/*
 * shardid_fence_reload() -> void: make the next shardid_next in this
 * database read its durable fence again.  The 1.1 install and update
 * script calls it after creating the fence, so that a server that
 * already issued IDs here writes a fence past them.
 */
Datum
shardid_fence_reload(PG_FUNCTION_ARGS)
{
	shardid_fence_reload_all();
	PG_RETURN_VOID();
}

/*
 * shardid_epoch() -> timestamptz: the epoch of the current database's IDs.
 */
Datum
shardid_epoch(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(shardid_unix_ms_to_timestamptz(shardid_fence_epoch()));
}

/*
 * shardid_set_epoch(epoch timestamptz) -> void: set the epoch of the
 * current database's IDs; superusers and the extension's owner only.
 */
Datum
shardid_set_epoch(PG_FUNCTION_ARGS)
{
	int64		epoch_ms = epoch_arg(fcinfo, 0);
	Oid			owner;

	(void) shardid_extension_lookup(NULL, &owner);
	if (!superuser() && GetUserId() != owner)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to set the epoch of database \"%s\"",
						get_database_name(MyDatabaseId)),
				 errdetail("Only superusers and the owner of extension shardid may set it.")));
	check_epoch_now(epoch_ms, 0);

	shardid_fence_set_epoch(epoch_ms);
	PG_RETURN_VOID();
}

/*
 * shardid_fence_set(field bigint) -> bigint: write the durable fence, even
 * lower than it is, and return the field written; superusers only, for
 * shardid_fence_lower, which checks the tables first.
 */
Datum
shardid_fence_set(PG_FUNCTION_ARGS)
{
	int64		field = PG_GETARG_INT64(0);

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for function shardid_fence_set"),
				 errdetail("Only superusers may lower the durable fence.")));
	if (field < -1 || field > SHARDID_MAX_TIME_MS)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("time field %lld is out of range", (long long) field),
				 errdetail("Time fields are -1 (none) to %lld.",
						   (long long) SHARDID_MAX_TIME_MS)));
	shardid_guard_require();
	PG_RETURN_INT64(shardid_fence_lower_db(field));
}

/*
 * shardid_sequence_lower(seq regclass, target timestamptz) -> bigint:
 * lower the durable fence that sequence seq carries to target's time
 * field, for its owner or a superuser (who may set the sequence anyway),
 * after a clock that ran fast; never below an ID this server issued from
 * it since it started while the guard tracks it (one it evicted goes to
 * target).  Returns the field written.
 */
Datum
shardid_sequence_lower(PG_FUNCTION_ARGS)
{
	Oid			seqid = PG_GETARG_OID(0);
	int64		unix_ms = time_arg(fcinfo, 1);
	int64		field;

	shardid_guard_require();
	check_is_logged_sequence(seqid);
	if (!shardid_rel_ownercheck(seqid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of sequence %s", get_rel_name(seqid)),
				 errdetail("Only the owner of a sequence and superusers may lower its durable fence: below it, IDs can be issued again.")));
	field = unix_ms - shardid_fence_epoch();
	if (field < -1 || field > SHARDID_MAX_TIME_MS)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("time %s is outside the range of time fields",
						shardid_unix_ms_to_str(unix_ms)),
				 errdetail("Time fields are from the database's epoch, %s, to its horizon.",
						   shardid_unix_ms_to_str(shardid_fence_epoch()))));
	PG_RETURN_INT64(shardid_fence_lower_seq(seqid, field));
}
