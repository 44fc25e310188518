/*-------------------------------------------------------------------------
 *
 * guard.c
 *	  The shared-memory guard that keeps shardid_next from ever issuing the
 *	  same ID twice: across sessions, clock steps and restarts.
 *
 * The published scheme takes nextval() % 1024 beside the current
 * millisecond.  A caller faster than 1,024 IDs per millisecond, or a clock
 * that steps back, makes it repeat itself.  shardid keeps one entry per
 * (database, sequence) in shared memory with the last millisecond issued
 * and the block of sequence values that millisecond holds; rule.c decides
 * from that state and the clock where each value goes.
 *
 * The block alone keeps IDs apart only while the sequence moves forward.  A
 * sequence that cycles (MAXVALUE 1023 CYCLE, say) or is set back hands out
 * a value of the same block again, and the rule would put it beside its
 * first use in the same millisecond.  So each entry also keeps a bitmap of
 * the slots issued in last_ms, and a value whose slot is taken there is
 * treated as a new block: it goes to a later millisecond.
 *
 * Locking protocol
 *
 *	- guard->lock (a named LWLock) protects the hash table's structure and
 *	  the fields of GuardShared.  Looking an entry up takes it shared;
 *	  creating, evicting or resetting takes it exclusive.
 *	- Each entry has an LWLock of its own protecting its state and counters.
 *	  It is taken only while guard->lock is held (shared is enough), so an
 *	  exclusive holder of guard->lock knows nobody holds an entry lock and
 *	  may evict or reinitialise entries freely.
 *	- Neither lock is held while calling nextval (the caller did that
 *	  before coming here), while sleeping, or while raising an error.
 *
 * The table is bounded by shardid.max_sequences.  When it is full the entry
 * that issued least recently is evicted.  Its last millisecond is folded
 * into floor_ms, and every new entry starts at floor_ms, so a sequence that
 * comes back after eviction can never reuse a millisecond it already used.
 *
 * A clean shutdown writes every entry to PGSTAT_STAT_PERMANENT_DIRECTORY,
 * through a temporary file and durable_rename(); startup reads it back.
 * After a crash the file of the last clean shutdown is read again: its
 * milliseconds are a lower bound of what was issued since.
 *
 * src/guard.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "rule.h"
#include "shardid.h"

#define GUARD_DUMP_FILE		PGSTAT_STAT_PERMANENT_DIRECTORY "/shardid.state"
#define GUARD_FILE_MAGIC	0x53484944	/* "SHID" */
#define GUARD_FILE_VERSION	1

/* Longest single sleep, so that a long wait notices interrupts promptly. */
#define GUARD_MAX_SLEEP_US	10000

typedef struct GuardKey
{
	Oid			dbid;
	Oid			seqid;
} GuardKey;

/* What an entry counts; saved and reset as one. */
typedef struct GuardCounters
{
	int64		issued;			/* IDs issued */
	int64		exhausted_waits;	/* calls that waited for the next ms */
	int64		clock_waits;	/* calls that waited out a clock step */
	int64		clock_refusals; /* calls refused for a clock step */
} GuardCounters;

/* The part of an entry that survives a restart. */
typedef struct GuardState
{
	GuardKey	key;
	int64		last_ms;		/* last millisecond issued (Unix ms) */
	int64		last_block;		/* block of last_ms, or SHARDID_NO_BLOCK */
	GuardCounters counters;
} GuardState;

/* 64-bit words in the bitmap of one millisecond's slots */
#define GUARD_SLOT_WORDS	(SHARDID_SEQ_PER_MS / 64)

typedef struct GuardEntry
{
	GuardState	s;				/* s.key is the hash key: keep it first */
	uint64		slots[GUARD_SLOT_WORDS];	/* slots issued in s.last_ms */
	LWLock		lock;
} GuardEntry;

typedef struct GuardShared
{
	LWLock	   *lock;
	int			entry_tranche;
	int64		floor_ms;		/* where new entries start (Unix ms) */
	int64		evictions;
	TimestampTz stats_reset;
} GuardShared;

/* GUCs */
static int	guard_max_sequences = 1024;
static int	guard_max_clock_regression = 1000;

/* Links to shared memory, set in every process that has the library. */
static GuardShared *guard = NULL;
static HTAB *guard_htab = NULL;
static bool guard_tranche_registered = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void guard_shmem_request(void);
static void guard_shmem_startup(void);
static void guard_shmem_shutdown(int code, Datum arg);
static void guard_load(void);
static GuardEntry *guard_entry_create(const GuardKey *key);
static void guard_sleep_until(int64 unix_ms, int64 now_us);

PG_FUNCTION_INFO_V1(shardid_stats);
PG_FUNCTION_INFO_V1(shardid_stats_info);
PG_FUNCTION_INFO_V1(shardid_stats_reset);

/*
 * Define the GUCs; install the shared-memory hooks when preloaded.
 */
void
shardid_guard_define(void)
{
	DefineCustomIntVariable("shardid.max_sequences",
							"Sets the number of sequences whose last issued millisecond shardid tracks.",
							NULL,
							&guard_max_sequences,
							1024,
							16,
							1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("shardid.max_clock_regression",
							"Sets how far the clock may step back before shardid_next refuses instead of waiting.",
							NULL,
							&guard_max_clock_regression,
							1000,
							0,
							3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("shardid");

	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = guard_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = guard_shmem_startup;
}

static Size
guard_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(GuardShared)),
					hash_estimate_size(guard_max_sequences,
									   sizeof(GuardEntry)));
}

static void
guard_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(guard_shmem_size());
	RequestNamedLWLockTranche("shardid", 1);
}

static void
guard_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	guard = NULL;
	guard_htab = NULL;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);

	guard = ShmemInitStruct("shardid", sizeof(GuardShared), &found);
	if (!found)
	{
		guard->lock = &(GetNamedLWLockTranche("shardid"))->lock;
		guard->entry_tranche = LWLockNewTrancheId();
		guard->floor_ms = 0;
		guard->evictions = 0;
		guard->stats_reset = GetCurrentTimestamp();
	}

	info.keysize = sizeof(GuardKey);
	info.entrysize = sizeof(GuardEntry);
	guard_htab = ShmemInitHash("shardid hash",
							   guard_max_sequences, guard_max_sequences,
							   &info,
							   HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);

	LWLockRelease(AddinShmemInitLock);

	/* Only the postmaster loads and saves the state. */
	if (!IsUnderPostmaster)
		on_shmem_exit(guard_shmem_shutdown, (Datum) 0);

	if (!found)
		guard_load();
}

/*
 * Name the entry locks' tranche in this process, for wait events.
 */
static void
guard_register_tranche(void)
{
	if (!guard_tranche_registered)
	{
		LWLockRegisterTranche(guard->entry_tranche, "shardid_entry");
		guard_tranche_registered = true;
	}
}

/*
 * Raise the documented error unless the guard is in shared memory.
 */
void
shardid_guard_require(void)
{
	if (!guard || !guard_htab)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shardid must be loaded via \"shared_preload_libraries\""),
				 errdetail("shardid_next keeps the last millisecond issued for each sequence in shared memory, which is only set up at server start."),
				 errhint("Add shardid to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
	guard_register_tranche();
}

/*
 * Create the entry for key; the caller holds guard->lock exclusively.
 * Evicts the least recently issued entry when the table is full.
 */
static GuardEntry *
guard_entry_create(const GuardKey *key)
{
	GuardEntry *entry;
	bool		found;

	/*
	 * Another backend may have created it since the caller looked; evicting
	 * for it then would throw away a live entry's counters for nothing.
	 */
	entry = hash_search(guard_htab, key, HASH_FIND, NULL);
	if (entry != NULL)
		return entry;

	if (hash_get_num_entries(guard_htab) >= guard_max_sequences)
	{
		HASH_SEQ_STATUS seq;
		GuardEntry *e;
		GuardEntry *victim = NULL;

		hash_seq_init(&seq, guard_htab);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			if (victim == NULL || e->s.last_ms < victim->s.last_ms)
				victim = e;
		}
		Assert(victim != NULL);
		guard->floor_ms = Max(guard->floor_ms, victim->s.last_ms);
		guard->evictions++;
		hash_search(guard_htab, &victim->s.key, HASH_REMOVE, NULL);
	}

	entry = hash_search(guard_htab, key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of shared memory for shardid entries")));
	if (!found)
	{
		entry->s.last_ms = guard->floor_ms;
		entry->s.last_block = SHARDID_NO_BLOCK;
		memset(&entry->s.counters, 0, sizeof(GuardCounters));
		memset(entry->slots, 0, sizeof(entry->slots));
		LWLockInitialize(&entry->lock, guard->entry_tranche);
	}
	return entry;
}

/*
 * Sleep until the clock reads unix_ms, at most GUARD_MAX_SLEEP_US at a
 * time, then service interrupts (statement_timeout, pg_cancel_backend).
 */
static void
guard_sleep_until(int64 unix_ms, int64 now_us)
{
	int64		us = unix_ms * 1000 - now_us;

	if (us > GUARD_MAX_SLEEP_US)
		us = GUARD_MAX_SLEEP_US;
	if (us > 0)
	{
		pgstat_report_wait_start(PG_WAIT_EXTENSION);
		pg_usleep((long) us);
		pgstat_report_wait_end();
	}
	CHECK_FOR_INTERRUPTS();
}

/* Has slot been issued in the entry's last_ms? */
static inline bool
guard_slot_taken(const GuardEntry *entry, int32 slot)
{
	return (entry->slots[slot / 64] & (UINT64CONST(1) << (slot % 64))) != 0;
}

/*
 * Issue the ID for sequence value `value` of sequence seqid.
 *
 * The caller has checked shard and epoch and called nextval already.
 */
int64
shardid_guard_next(Oid seqid, int32 shard, int64 value, int64 epoch_ms)
{
	GuardKey	key;
	int64		block = shardid_seq_block(value);
	int32		slot = shardid_seq_slot(value);
	bool		waited_exhausted = false;
	bool		waited_clock = false;

	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.seqid = seqid;

	for (;;)
	{
		GuardEntry *entry;
		ShardidRule rule;
		ShardidStatus status;
		int64		now_us;
		int64		issue_ms = 0;
		int64		wait_until_ms = 0;
		int64		regression_ms = 0;
		int64		last_ms;
		int64		last_block;
		int64		id = 0;

		LWLockAcquire(guard->lock, LW_SHARED);
		entry = hash_search(guard_htab, &key, HASH_FIND, NULL);
		if (entry == NULL)
		{
			LWLockRelease(guard->lock);
			LWLockAcquire(guard->lock, LW_EXCLUSIVE);
			guard_entry_create(&key);
			LWLockRelease(guard->lock);
			continue;
		}

		LWLockAcquire(&entry->lock, LW_EXCLUSIVE);
		now_us = shardid_clock_now_us();
		last_ms = entry->s.last_ms;
		last_block = entry->s.last_block;

		/*
		 * A value whose slot last_ms already holds (the sequence cycled or
		 * was set back) cannot join last_ms: to the rule it starts a block.
		 */
		if (block == last_block && guard_slot_taken(entry, slot))
			last_block = SHARDID_NO_BLOCK;
		rule = shardid_rule_decide(last_ms, last_block,
								   shardid_floor_div(now_us, 1000), block,
								   guard_max_clock_regression,
								   &issue_ms, &wait_until_ms, &regression_ms);

		if (rule == SHARDID_ISSUE)
		{
			status = shardid_compose(issue_ms, epoch_ms, shard, slot, &id);
			if (status == SHARDID_OK)
			{
				GuardCounters *c = &entry->s.counters;

				if (issue_ms != entry->s.last_ms || block != entry->s.last_block)
					memset(entry->slots, 0, sizeof(entry->slots));
				entry->slots[slot / 64] |= UINT64CONST(1) << (slot % 64);
				entry->s.last_ms = issue_ms;
				entry->s.last_block = block;
				c->issued++;
				if (waited_exhausted)
					c->exhausted_waits++;
				if (waited_clock)
					c->clock_waits++;
			}
			LWLockRelease(&entry->lock);
			LWLockRelease(guard->lock);
			if (status != SHARDID_OK)
				shardid_report(status, issue_ms, epoch_ms, shard, slot);
			return id;
		}

		if (rule == SHARDID_REFUSE)
			entry->s.counters.clock_refusals++;
		LWLockRelease(&entry->lock);
		LWLockRelease(guard->lock);

		if (rule == SHARDID_REFUSE)
		{
			char	   *seqname = get_rel_name(seqid);

			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("system clock moved backwards by %lld ms",
							(long long) regression_ms),
					 errdetail("Sequence \"%s\" last issued an ID for %s; the clock now reads %s, and shardid.max_clock_regression is %d ms.",
							   seqname ? seqname : "?",
							   pstrdup(timestamptz_to_str(shardid_unix_ms_to_timestamptz(last_ms))),
							   pstrdup(timestamptz_to_str(shardid_unix_ms_to_timestamptz(shardid_floor_div(now_us, 1000)))),
							   guard_max_clock_regression),
					 errhint("Fix the clock, or wait until it passes the last issued millisecond.  Use slewing, not stepping, for NTP.")));
		}

		if (rule == SHARDID_WAIT_CLOCK)
			waited_clock = true;
		else
			waited_exhausted = true;
		guard_sleep_until(wait_until_ms, now_us);
	}
}

/*
 * Postmaster exit: save every entry, unless the server crashed.
 */
static void
guard_shmem_shutdown(int code, Datum arg)
{
	FILE	   *file;
	HASH_SEQ_STATUS seq;
	GuardEntry *entry;
	uint32		header[2] = {GUARD_FILE_MAGIC, GUARD_FILE_VERSION};
	int32		count;

	if (code != 0 || !guard || !guard_htab)
		return;

	file = AllocateFile(GUARD_DUMP_FILE ".tmp", PG_BINARY_W);
	if (file == NULL)
		goto error;

	count = (int32) hash_get_num_entries(guard_htab);
	if (fwrite(header, sizeof(header), 1, file) != 1 ||
		fwrite(&guard->floor_ms, sizeof(int64), 1, file) != 1 ||
		fwrite(&guard->evictions, sizeof(int64), 1, file) != 1 ||
		fwrite(&count, sizeof(int32), 1, file) != 1)
		goto error;

	hash_seq_init(&seq, guard_htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		if (fwrite(&entry->s, sizeof(GuardState), 1, file) != 1)
		{
			hash_seq_term(&seq);
			goto error;
		}
	}

	if (FreeFile(file))
	{
		file = NULL;
		goto error;
	}

	(void) durable_rename(GUARD_DUMP_FILE ".tmp", GUARD_DUMP_FILE, LOG);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m",
					GUARD_DUMP_FILE ".tmp")));
	if (file)
		FreeFile(file);
	unlink(GUARD_DUMP_FILE ".tmp");
}

/*
 * Postmaster start: read the entries the last clean shutdown saved.  The
 * file stays, so that a crash later on reads it again.
 */
static void
guard_load(void)
{
	FILE	   *file;
	uint32		header[2];
	int64		floor_ms;
	int64		evictions;
	int32		count;
	int32		i;

	file = AllocateFile(GUARD_DUMP_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m",
							GUARD_DUMP_FILE)));
		return;
	}

	if (fread(header, sizeof(header), 1, file) != 1 ||
		fread(&floor_ms, sizeof(int64), 1, file) != 1 ||
		fread(&evictions, sizeof(int64), 1, file) != 1 ||
		fread(&count, sizeof(int32), 1, file) != 1)
		goto read_error;
	if (header[0] != GUARD_FILE_MAGIC || header[1] != GUARD_FILE_VERSION ||
		count < 0)
	{
		ereport(WARNING,
				(errmsg("ignoring file \"%s\": it was not written by this version of shardid",
						GUARD_DUMP_FILE)));
		FreeFile(file);
		return;
	}

	guard->floor_ms = floor_ms;
	guard->evictions = evictions;
	for (i = 0; i < count; i++)
	{
		GuardState	saved;
		GuardEntry *entry;

		if (fread(&saved, sizeof(GuardState), 1, file) != 1)
			goto read_error;
		entry = guard_entry_create(&saved.key);
		entry->s = saved;
		/* which slots of last_ms were issued is not saved: assume all */
		memset(entry->slots, 0xFF, sizeof(entry->slots));
	}
	FreeFile(file);
	return;

read_error:
	ereport(WARNING,
			(errcode_for_file_access(),
			 errmsg("could not read file \"%s\": it is truncated or unreadable",
					GUARD_DUMP_FILE)));
	FreeFile(file);
}

/*
 * shardid_stats(): one row per tracked sequence.
 */
Datum
shardid_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	GuardEntry *entry;

	shardid_guard_require();
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(guard->lock, LW_SHARED);
	hash_seq_init(&seq, guard_htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[7];
		bool		nulls[7] = {0};
		GuardState	s;

		LWLockAcquire(&entry->lock, LW_SHARED);
		s = entry->s;
		LWLockRelease(&entry->lock);

		values[0] = ObjectIdGetDatum(s.key.dbid);
		values[1] = ObjectIdGetDatum(s.key.seqid);
		values[2] = Int64GetDatum(s.counters.issued);
		values[3] = Int64GetDatum(s.counters.exhausted_waits);
		values[4] = Int64GetDatum(s.counters.clock_waits);
		values[5] = Int64GetDatum(s.counters.clock_refusals);
		if (s.last_block == SHARDID_NO_BLOCK)
			nulls[6] = true;
		else
			values[6] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(s.last_ms));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	LWLockRelease(guard->lock);

	return (Datum) 0;
}

/*
 * shardid_stats_info(): the table as a whole.
 */
Datum
shardid_stats_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {0};

	shardid_guard_require();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	LWLockAcquire(guard->lock, LW_SHARED);
	values[0] = Int32GetDatum((int32) hash_get_num_entries(guard_htab));
	values[1] = Int32GetDatum(guard_max_sequences);
	values[2] = Int64GetDatum(guard->evictions);
	if (guard->floor_ms == 0)
		nulls[3] = true;
	else
		values[3] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(guard->floor_ms));
	values[4] = TimestampTzGetDatum(guard->stats_reset);
	LWLockRelease(guard->lock);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * shardid_stats_reset(): zero the counters.  The milliseconds stay: they
 * are what keeps IDs unique.
 */
Datum
shardid_stats_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	GuardEntry *entry;

	shardid_guard_require();

	/* exclusive: nobody holds an entry lock now */
	LWLockAcquire(guard->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, guard_htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
		memset(&entry->s.counters, 0, sizeof(GuardCounters));
	guard->evictions = 0;
	guard->stats_reset = GetCurrentTimestamp();
	LWLockRelease(guard->lock);

	PG_RETURN_VOID();
}
