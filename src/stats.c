/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  What the guard did: the SQL functions behind shardid_stats,
 *	  shardid_stats_info, shardid_stats_reset and shardid_fence_status.
 *
 * As in pg_stat_statements, a role with the privileges of
 * pg_read_all_stats sees every row; any other role sees only the rows of
 * sequences in the current database that it may SELECT from, and only the
 * current database's fence.
 *
 * src/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "clock.h"
#include "rule.h"
#include "shmem.h"

PG_FUNCTION_INFO_V1(shardid_stats);
PG_FUNCTION_INFO_V1(shardid_stats_1_1);
PG_FUNCTION_INFO_V1(shardid_stats_info);
PG_FUNCTION_INFO_V1(shardid_stats_reset);
PG_FUNCTION_INFO_V1(shardid_stats_1_3);
PG_FUNCTION_INFO_V1(shardid_fence_status);
PG_FUNCTION_INFO_V1(shardid_fence_status_1_3);

/*
 * Columns of shardid_stats() in 1.0, in 1.1 (adds fence_waits), and in 1.3
 * (adds the sequence's fence and its writes).
 */
#define STATS_COLS_1_0	7
#define STATS_COLS_1_1	8
#define STATS_COLS_1_3	10

static bool
sees_all(void)
{
	return has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
}

/* May the current role see the row of key? */
static bool
row_visible(const GuardKey *key, bool all)
{
	bool		missing = false;

	if (all)
		return true;
	if (key->dbid != MyDatabaseId)
		return false;
	return pg_class_aclcheck_ext(key->seqid, GetUserId(), ACL_SELECT,
								 &missing) == ACLCHECK_OK && !missing;
}

static void
stats_rows(FunctionCallInfo fcinfo, int ncols)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GuardShared *shared;
	GuardSlot  *copy;
	int			n = 0;
	int			i;
	bool		all = sees_all();

	shardid_shmem_require();
	shared = shardid_shared;
	InitMaterializedSRF(fcinfo, 0);

	/* copy under the locks; check privileges (catalog lookups) after */
	LWLockAcquire(shared->lock, LW_SHARED);
	copy = palloc(sizeof(GuardSlot) * Max(shared->slot_count, 1));
	for (i = 0; i < shared->slot_count; i++)
	{
		GuardSlot  *slot = &shared->slots[i];

		SpinLockAcquire(&slot->mutex);
		if (slot->in_use)
			copy[n++] = *slot;
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(shared->lock);

	for (i = 0; i < n; i++)
	{
		Datum		values[STATS_COLS_1_3];
		bool		nulls[STATS_COLS_1_3] = {0};
		GuardSlot  *s = &copy[i];
		int64		last_ms = guard_slot_last_ms(s);

		if (!row_visible(&s->key, all))
			continue;
		values[0] = ObjectIdGetDatum(s->key.dbid);
		values[1] = ObjectIdGetDatum(s->key.seqid);
		values[2] = Int64GetDatum(s->counters.issued);
		values[3] = Int64GetDatum(s->counters.exhausted_waits);
		values[4] = Int64GetDatum(s->counters.clock_waits);
		values[5] = Int64GetDatum(s->counters.clock_refusals);
		if (last_ms == GUARD_NEVER)
			nulls[6] = true;
		else
			values[6] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(last_ms));
		if (ncols > STATS_COLS_1_0)
			values[7] = Int64GetDatum(s->counters.fence_waits);
		if (ncols > STATS_COLS_1_1)
		{
			/* the sequence's fence as this server made it durable */
			if (s->fence < 0)
				nulls[8] = true;
			else
				values[8] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(s->fence + s->epoch_ms));
			values[9] = Int64GetDatum(s->fence_writes);
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(copy);
}

/*
 * shardid_stats(): one row per tracked sequence, as shardid 1.0 declares
 * it; 1.1 declares shardid_stats_1_1, which adds fence_waits.
 */
Datum
shardid_stats(PG_FUNCTION_ARGS)
{
	stats_rows(fcinfo, STATS_COLS_1_0);
	return (Datum) 0;
}

Datum
shardid_stats_1_1(PG_FUNCTION_ARGS)
{
	stats_rows(fcinfo, STATS_COLS_1_1);
	return (Datum) 0;
}

Datum
shardid_stats_1_3(PG_FUNCTION_ARGS)
{
	stats_rows(fcinfo, STATS_COLS_1_3);
	return (Datum) 0;
}

/*
 * shardid_stats_info(): the tables as a whole.  floor_ms is the highest
 * eviction floor of any database, a time field shown in the default epoch.
 */
Datum
shardid_stats_info(PG_FUNCTION_ARGS)
{
	GuardShared *shared;
	TupleDesc	tupdesc;
	Datum		values[9];
	bool		nulls[9] = {0};
	int64		floor = -1;
	int			entries = 0;
	int			i;

	shardid_shmem_require();
	shared = shardid_shared;
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	LWLockAcquire(shared->lock, LW_SHARED);
	for (i = 0; i < shared->slot_count; i++)
	{
		if (shared->slots[i].in_use)
			entries++;
	}
	for (i = 0; i < shardid_max_databases; i++)
	{
		GuardDb    *db = &shared->dbs[i];

		SpinLockAcquire(&db->mutex);
		if (db->dbid != InvalidOid && db->floor >= 0)
			floor = Max(floor, db->floor + db->epoch);
		SpinLockRelease(&db->mutex);
	}
	values[0] = Int32GetDatum(entries);
	values[1] = Int32GetDatum(shardid_max_sequences);
	values[2] = Int64GetDatum(shared->evictions);
	if (floor < 0)
		nulls[3] = true;
	else
		values[3] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(floor));
	values[4] = TimestampTzGetDatum(shared->stats_reset);
	/* 1.2: what the slots counted before they were evicted */
	values[5] = Int64GetDatum(shared->evicted.exhausted_waits);
	values[6] = Int64GetDatum(shared->evicted.clock_waits);
	values[7] = Int64GetDatum(shared->evicted.clock_refusals);
	values[8] = Int64GetDatum(shared->evicted.fence_waits);
	LWLockRelease(shared->lock);

	/* 1.0 and 1.1 declare the first five columns: the tuple has as many */

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * shardid_stats_reset(): zero the counters.  The fields issued and the
 * fences stay: they are what keeps IDs unique.
 */
Datum
shardid_stats_reset(PG_FUNCTION_ARGS)
{
	shardid_shmem_require();
	shardid_shmem_reset_counters();
	PG_RETURN_VOID();
}

/*
 * shardid_fence_status(): one row per database this server knows the
 * fence of, as 1.1 declares it; 1.3 declares shardid_fence_status_1_3,
 * which adds standby_timeouts: the tuple has as many columns as the
 * caller declares.
 */
static void
fence_status_rows(FunctionCallInfo fcinfo)
{
	static const char *const state_names[] = {"unknown", "loaded", "none", "reload"};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GuardShared *shared;
	bool		all = sees_all();
	int			i;

	shardid_shmem_require();
	shared = shardid_shared;
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(shared->lock, LW_SHARED);
	for (i = 0; i < shardid_max_databases; i++)
	{
		GuardDb    *db = &shared->dbs[i];
		Datum		values[9];
		bool		nulls[9] = {0};
		Oid			dbid;
		uint32		state;
		int64		fence;
		int64		start;
		int64		epoch;
		int64		writes;
		int64		write_waits;
		int64		standby_timeouts;
		int			nslots;

		SpinLockAcquire(&db->mutex);
		dbid = db->dbid;
		state = pg_atomic_read_u32(&db->state);
		fence = guard_fence_read(db);
		start = db->start;
		epoch = db->epoch;
		writes = db->fence_writes;
		write_waits = db->write_waits;
		standby_timeouts = db->standby_timeouts;
		nslots = db->nslots;
		SpinLockRelease(&db->mutex);

		if (dbid == InvalidOid || (!all && dbid != MyDatabaseId))
			continue;
		values[0] = ObjectIdGetDatum(dbid);
		values[1] = CStringGetTextDatum(state_names[Min(state, 3)]);
		if (state != GUARD_FENCE_LOADED || fence < 0)
			nulls[2] = nulls[3] = true;
		else
		{
			values[2] = Int64GetDatum(fence);
			values[3] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(fence + epoch));
		}
		if (state != GUARD_FENCE_LOADED || start < 0)
			nulls[4] = true;
		else
			values[4] = Int64GetDatum(start);
		values[5] = Int32GetDatum(nslots);
		values[6] = Int64GetDatum(writes);
		values[7] = Int64GetDatum(write_waits);
		values[8] = Int64GetDatum(standby_timeouts);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(shared->lock);
}

Datum
shardid_fence_status(PG_FUNCTION_ARGS)
{
	fence_status_rows(fcinfo);
	return (Datum) 0;
}

Datum
shardid_fence_status_1_3(PG_FUNCTION_ARGS)
{
	fence_status_rows(fcinfo);
	return (Datum) 0;
}
