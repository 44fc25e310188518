/*-------------------------------------------------------------------------
 *
 * guard.c
 *	  The shared-memory guard that keeps shardid_next from ever issuing the
 *	  same ID twice: across sessions, clock steps and restarts.
 *
 * The published scheme takes nextval() % 1024 beside the current
 * millisecond.  A caller faster than 1,024 IDs per millisecond, or a clock
 * that steps back, makes it repeat itself.  shardid keeps, per (database,
 * sequence), the last millisecond issued and the block of sequence values
 * that millisecond holds; rule.c decides from that state and the clock
 * where each value goes.
 *
 * The block alone keeps IDs apart only while the sequence moves forward.  A
 * sequence that cycles (MAXVALUE 1023 CYCLE, say) or is set back hands out
 * a value of the same block again, and the rule would put it beside its
 * first use in the same millisecond.  So each slot also keeps a bitmap of
 * the ten-bit values issued in last_ms, and a value whose bit is taken
 * there is treated as a new block: it goes to a later millisecond.
 *
 * The state lives in a fixed array of slots, each with its own LWLock; a
 * shared hash table maps (database, sequence) to its slot.  Each backend
 * remembers which slot its sequences use, so the usual call takes a single
 * lock, the slot's.
 *
 * Locking protocol
 *
 *	- guard->lock (a named LWLock) protects the hash table and the fields
 *	  of GuardShared.  Looking a slot up takes it shared; handing out a
 *	  slot, evicting or resetting takes it exclusive.
 *	- A slot's lock protects its key, state, bitmap and counters.  A backend
 *	  may take it with or without guard->lock; it then checks that the slot
 *	  still holds its key, since the slot may have been evicted since the
 *	  backend remembered it.  Eviction holds guard->lock exclusively and
 *	  then takes the victim's lock: never the other order.
 *	- No lock is held while calling nextval (the caller did that before
 *	  coming here), while sleeping, or while raising an error.
 *
 * The table is bounded by shardid.max_sequences.  When every slot is taken
 * the one that issued least recently is evicted.  Its last millisecond is
 * folded into floor_ms, and every new slot starts at floor_ms, so a
 * sequence that comes back after eviction can never reuse a millisecond it
 * already used.
 *
 The postmaster writes every slot to PGSTAT_STAT_PERMANENT_DIRECTORY,
 * through a temporary file and durable_rename(), when it exits and when it
 * resets shared memory after a backend crashed; startup reads it back.
 * Only when the postmaster itself dies (or the machine) is the file older
 * than the last ID issued; its milliseconds are then a lower bound.
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

/* 64-bit words in the bitmap of one millisecond's ten-bit values */
#define GUARD_BITMAP_WORDS	(SHARDID_SEQ_PER_MS / 64)

typedef struct GuardSlot
{
	LWLock		lock;
	bool		in_use;
	GuardState	s;
	uint64		issued[GUARD_BITMAP_WORDS]; /* values issued in s.last_ms */
} GuardSlot;

typedef struct GuardHashEntry
{
	GuardKey	key;			/* hash key: keep it first */
	int			slotno;
} GuardHashEntry;

typedef struct GuardShared
{
	LWLock	   *lock;
	int			slot_tranche;
	int			nslots;			/* slots handed out so far */
	int64		floor_ms;		/* where new slots start (Unix ms) */
	int64		evictions;
	TimestampTz stats_reset;
	GuardSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} GuardShared;

/*
 * Backend-local memory of the slot each sequence uses, indexed by the
 * sequence's OID.  Only a hint: the slot's key is checked under its lock.
 */
#define GUARD_CACHE_SIZE 64

typedef struct GuardCacheEntry
{
	Oid			seqid;
	int			slotno;
} GuardCacheEntry;

/* GUCs */
static int	guard_max_sequences = 1024;
static int	guard_max_clock_regression = 1000;

/* Links to shared memory, set in every process that has the library. */
static GuardShared *guard = NULL;
static HTAB *guard_htab = NULL;
static bool guard_tranche_registered = false;

static GuardCacheEntry guard_cache[GUARD_CACHE_SIZE];

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void guard_shmem_request(void);
static void guard_shmem_startup(void);
static void guard_shmem_shutdown(int code, Datum arg);
static void guard_load(void);
static int	guard_slot_create(const GuardKey *key);
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

	/*
	 * shardid.max_sequences sizes shared memory, so it exists only when
	 * shardid is preloaded.  Defining a PGC_POSTMASTER variable later, as
	 * CREATE EXTENSION or the first call would, is a FATAL error.
	 */
	if (process_shared_preload_libraries_in_progress)
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

	MarkGUCPrefixReserved("shardid");

	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = guard_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = guard_shmem_startup;
}

static Size
guard_struct_size(void)
{
	return add_size(offsetof(GuardShared, slots),
					mul_size(guard_max_sequences, sizeof(GuardSlot)));
}

static void
guard_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(add_size(MAXALIGN(guard_struct_size()),
									hash_estimate_size(guard_max_sequences,
													   sizeof(GuardHashEntry))));
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

	guard = ShmemInitStruct("shardid", guard_struct_size(), &found);
	if (!found)
	{
		int			i;

		guard->lock = &(GetNamedLWLockTranche("shardid"))->lock;
		guard->slot_tranche = LWLockNewTrancheId();
		guard->nslots = 0;
		guard->floor_ms = 0;
		guard->evictions = 0;
		guard->stats_reset = GetCurrentTimestamp();
		for (i = 0; i < guard_max_sequences; i++)
		{
			LWLockInitialize(&guard->slots[i].lock, guard->slot_tranche);
			guard->slots[i].in_use = false;
		}
	}

	info.keysize = sizeof(GuardKey);
	info.entrysize = sizeof(GuardHashEntry);
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
 * Name the slot locks' tranche in this process, for wait events.
 */
static void
guard_register_tranche(void)
{
	if (!guard_tranche_registered)
	{
		LWLockRegisterTranche(guard->slot_tranche, "shardid_slot");
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
 * Hand out a slot for key and return its number; the caller holds
 * guard->lock exclusively and has checked that key has none.  When every
 * slot is taken, the one that issued least recently is evicted, and its
 * last millisecond raises the floor where new slots start.
 */
static int
guard_slot_create(const GuardKey *key)
{
	GuardHashEntry *hentry;
	GuardSlot  *slot;
	int			slotno;

	if (guard->nslots < guard_max_sequences)
	{
		slotno = guard->nslots;
		slot = &guard->slots[slotno];
		hentry = hash_search(guard_htab, key, HASH_ENTER_NULL, NULL);
		if (hentry == NULL)
			elog(ERROR, "shardid hash table is full with %d of %d slots in use",
				 guard->nslots, guard_max_sequences);
		guard->nslots++;
		LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	}
	else
	{
		int			i;

		/* unlocked reads only pick the victim; its lock guards the rest */
		slotno = 0;
		for (i = 1; i < guard->nslots; i++)
		{
			if (guard->slots[i].s.last_ms < guard->slots[slotno].s.last_ms)
				slotno = i;
		}
		slot = &guard->slots[slotno];
		LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
		guard->floor_ms = Max(guard->floor_ms, slot->s.last_ms);
		guard->evictions++;
		hash_search(guard_htab, &slot->s.key, HASH_REMOVE, NULL);
		/* the entry just freed makes room, so this cannot fail */
		hentry = hash_search(guard_htab, key, HASH_ENTER_NULL, NULL);
		if (hentry == NULL)
		{
			slot->in_use = false;
			LWLockRelease(&slot->lock);
			elog(ERROR, "shardid hash table has no room after an eviction");
		}
	}

	hentry->slotno = slotno;
	slot->in_use = true;
	slot->s.key = *key;
	slot->s.last_ms = guard->floor_ms;
	slot->s.last_block = SHARDID_NO_BLOCK;
	memset(&slot->s.counters, 0, sizeof(GuardCounters));
	memset(slot->issued, 0, sizeof(slot->issued));
	LWLockRelease(&slot->lock);
	return slotno;
}

/*
 * Find key's slot, creating it if need be, and return it locked
 * exclusively.
 */
static GuardSlot *
guard_slot_lock(const GuardKey *key)
{
	GuardCacheEntry *cached = &guard_cache[key->seqid % GUARD_CACHE_SIZE];
	GuardHashEntry *hentry;
	GuardSlot  *slot;
	int			slotno;

	/* the usual case: the slot this backend used last time */
	if (cached->seqid == key->seqid)
	{
		slot = &guard->slots[cached->slotno];
		LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
		if (slot->in_use && memcmp(&slot->s.key, key, sizeof(GuardKey)) == 0)
			return slot;
		LWLockRelease(&slot->lock);
	}

	LWLockAcquire(guard->lock, LW_SHARED);
	hentry = hash_search(guard_htab, key, HASH_FIND, NULL);
	if (hentry != NULL)
		slotno = hentry->slotno;
	else
	{
		LWLockRelease(guard->lock);
		LWLockAcquire(guard->lock, LW_EXCLUSIVE);
		/* another backend may have created it meanwhile */
		hentry = hash_search(guard_htab, key, HASH_FIND, NULL);
		slotno = hentry ? hentry->slotno : guard_slot_create(key);
	}
	slot = &guard->slots[slotno];
	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	LWLockRelease(guard->lock);

	cached->seqid = key->seqid;
	cached->slotno = slotno;
	return slot;
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

/* Was this ten-bit value issued in the slot's last_ms? */
static inline bool
guard_value_taken(const GuardSlot *slot, int32 value10)
{
	return (slot->issued[value10 / 64] & (UINT64CONST(1) << (value10 % 64))) != 0;
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
	int32		value10 = shardid_seq_slot(value);
	bool		waited_exhausted = false;
	bool		waited_clock = false;

	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.seqid = seqid;

	for (;;)
	{
		GuardSlot  *slot;
		ShardidRule rule;
		ShardidStatus status;
		int64		now_us;
		int64		issue_ms = 0;
		int64		wait_until_ms = 0;
		int64		regression_ms = 0;
		int64		last_ms;
		int64		id = 0;

		slot = guard_slot_lock(&key);
		now_us = shardid_clock_now_us();
		last_ms = slot->s.last_ms;
		rule = shardid_rule_decide(last_ms, slot->s.last_block,
								   guard_value_taken(slot, value10),
								   shardid_floor_div(now_us, 1000), block,
								   guard_max_clock_regression,
								   &issue_ms, &wait_until_ms, &regression_ms);

		if (rule == SHARDID_ISSUE)
		{
			status = shardid_compose(issue_ms, epoch_ms, shard, value10, &id);
			if (status == SHARDID_OK)
			{
				GuardCounters *c = &slot->s.counters;

				if (issue_ms != slot->s.last_ms || block != slot->s.last_block)
					memset(slot->issued, 0, sizeof(slot->issued));
				slot->issued[value10 / 64] |= UINT64CONST(1) << (value10 % 64);
				slot->s.last_ms = issue_ms;
				slot->s.last_block = block;
				c->issued++;
				if (waited_exhausted)
					c->exhausted_waits++;
				if (waited_clock)
					c->clock_waits++;
			}
			LWLockRelease(&slot->lock);
			if (status != SHARDID_OK)
				shardid_report(status, issue_ms, epoch_ms, shard, value10);
			return id;
		}

		if (rule == SHARDID_REFUSE)
			slot->s.counters.clock_refusals++;
		LWLockRelease(&slot->lock);

		if (rule == SHARDID_REFUSE)
		{
			char	   *seqname = get_rel_name(seqid);

			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("system clock moved backwards by %lld ms",
							(long long) regression_ms),
					 errdetail("Sequence \"%s\" may not issue IDs before %s, but the clock reads %s, and shardid.max_clock_regression is %d ms.",
							   seqname ? seqname : "(dropped)",
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
 * Postmaster exit, and crash restart: save every slot.
 *
 * Unlike pg_stat_statements, shardid saves also when shared memory is
 * reset after a backend crashed (code != 0): the slots only ever move
 * forward, a backend that died holding a slot lock returned no ID from
 * it, and a stale file would forget every millisecond issued since the
 * last clean shutdown.  Slots that look damaged are saved at the floor
 * instead, and logged.
 */
static void
guard_shmem_shutdown(int code, Datum arg)
{
	FILE	   *file;
	uint32		header[2] = {GUARD_FILE_MAGIC, GUARD_FILE_VERSION};
	int64		sane_limit_ms;
	int32		count = 0;
	int			nslots;
	int			i;

	if (!guard || !guard_htab)
		return;

	/* no legitimate slot is further ahead of the clock than this */
	sane_limit_ms = shardid_floor_div(shardid_clock_now_us(), 1000) +
		3600 * 1000 + 1;
	nslots = Min(Max(guard->nslots, 0), guard_max_sequences);
	for (i = 0; i < nslots; i++)
	{
		if (guard->slots[i].in_use)
			count++;
	}

	file = AllocateFile(GUARD_DUMP_FILE ".tmp", PG_BINARY_W);
	if (file == NULL)
		goto error;

	if (fwrite(header, sizeof(header), 1, file) != 1 ||
		fwrite(&guard->floor_ms, sizeof(int64), 1, file) != 1 ||
		fwrite(&guard->evictions, sizeof(int64), 1, file) != 1 ||
		fwrite(&count, sizeof(int32), 1, file) != 1)
		goto error;

	for (i = 0; i < nslots; i++)
	{
		GuardState	st = guard->slots[i].s;

		if (!guard->slots[i].in_use)
			continue;
		if (st.last_ms < 0 || st.last_ms > sane_limit_ms)
		{
			ereport(LOG,
					(errmsg("shardid saves sequence %u of database %u at the floor: its last millisecond %lld is out of range",
							st.key.seqid, st.key.dbid, (long long) st.last_ms)));
			st.last_ms = guard->floor_ms;
			st.last_block = SHARDID_NO_BLOCK;
		}
		if (fwrite(&st, sizeof(GuardState), 1, file) != 1)
			goto error;
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
 * Postmaster start: read the slots saved last.  The file stays, so that
 * if the postmaster dies later on, the next start reads it again.
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
		GuardSlot  *slot;

		if (fread(&saved, sizeof(GuardState), 1, file) != 1)
			goto read_error;
		/* only the postmaster runs now: no locks needed */
		slot = &guard->slots[guard_slot_create(&saved.key)];
		slot->s = saved;
		/* which values of last_ms were issued is not saved: assume all */
		memset(slot->issued, 0xFF, sizeof(slot->issued));
	}
	FreeFile(file);
	return;

read_error:
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
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
	int			i;

	shardid_guard_require();
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(guard->lock, LW_SHARED);
	for (i = 0; i < guard->nslots; i++)
	{
		Datum		values[7];
		bool		nulls[7] = {0};
		GuardState	s;
		bool		in_use;

		LWLockAcquire(&guard->slots[i].lock, LW_SHARED);
		in_use = guard->slots[i].in_use;
		s = guard->slots[i].s;
		LWLockRelease(&guard->slots[i].lock);
		if (!in_use)
			continue;

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
	int			i;

	shardid_guard_require();

	LWLockAcquire(guard->lock, LW_EXCLUSIVE);
	for (i = 0; i < guard->nslots; i++)
	{
		LWLockAcquire(&guard->slots[i].lock, LW_EXCLUSIVE);
		memset(&guard->slots[i].s.counters, 0, sizeof(GuardCounters));
		LWLockRelease(&guard->slots[i].lock);
	}
	guard->evictions = 0;
	guard->stats_reset = GetCurrentTimestamp();
	LWLockRelease(guard->lock);

	PG_RETURN_VOID();
}
