/*-------------------------------------------------------------------------
 *
 * guard.c
 *	  The guard: where shardid_next's IDs go in time, so that none is ever
 *	  issued twice, across sessions, clock steps, restarts, crashes,
 *	  failovers and restores.
 *
 * The published scheme takes nextval() % 1024 beside the current
 * millisecond.  A caller faster than 1,024 IDs per millisecond, or a clock
 * that steps back, makes it repeat itself.  shardid keeps, per (database,
 * sequence), a slot in shared memory (shmem.c) with the last time field
 * issued, the block of sequence values that field holds and a bitmap of
 * the ten-bit values it holds; rule.h decides from that state and the
 * clock where each value goes.  Everything is compared as time fields
 * (milliseconds since the database's epoch, which shardid_next may not
 * change: an earlier epoch's larger fields would carry the fences ahead of
 * the clock).
 *
 * Shared memory does not survive the postmaster: each sequence carries its
 * own durable fence in its value, and each database one more, which
 * fence.c keeps.  Here, no ID goes past its sequence's fence as this
 * server made it durable; an ID within a quarter of the lead of it has
 * the fence written after it, and an ID past it waits for the write.  A
 * new slot, and one whose sequence's value jumped past what the slot knew,
 * starts after the fence the value carries.  A call whose clock is past
 * its slot's fence writes it before it has a value, and takes the
 * value of that setval (shardid_guard_value): one record a call.
 *
 * Each call decides, then acts.  Under the slot's spinlock one decision
 * (decide) reads the slot and returns one step: issue this field (and
 * perhaps write the fence early), or wait, refuse, load the database's
 * fence, write the sequence's, or find the slot again.  The spinlock is
 * released once, and the step is acted on outside it, looping where a
 * step needs another decision.  No lock is held while calling nextval
 * (the caller did that before coming here), while sleeping, writing a
 * fence or raising an error, and every wait ends on a cancel, a
 * statement_timeout or the postmaster's death.  See shmem.h.
 *
 * src/guard.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "commands/dbcommands.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "citus.h"
#include "clock.h"
#include "compat.h"
#include "fence.h"
#include "guard.h"
#include "report.h"
#include "rule.h"
#include "shmem.h"
#include "slot.h"

/* Settings */
int			shardid_max_clock_regression = 1000;

/* Backend-local memory of the slot each sequence uses: see guard.h. */
GuardCacheEntry shardid_guard_cache[GUARD_CACHE_SIZE];

/* What a call does next: see decide(). */
typedef enum GuardStep
{
	STEP_ISSUE,					/* issue the field */
	STEP_ISSUE_WRITE,			/* issue it, then write the fence early */
	STEP_WAIT,					/* sleep until the clock reaches wait.until */
	STEP_REFUSE,				/* the clock went back too far */
	STEP_ADVANCE,				/* write the fence: the field is past it */
	STEP_LOAD,					/* read the database's fence first */
	STEP_EVICTED,				/* the slot went to another sequence */
	STEP_OTHER_EPOCH,			/* an epoch that is not the database's */
	STEP_EARLY_EPOCH,			/* in a 1.1 database, an epoch too early */
	STEP_BEFORE_EPOCH,			/* the clock reads before the epoch */
	STEP_HORIZON				/* the field is past the horizon */
} GuardStep;

/* What decide() tells the step it returns. */
typedef struct GuardDecision
{
	int64		field;			/* the field to issue, or that waits */
	int64		epoch_ms;		/* the epoch of this call, Unix ms */
	int64		db_epoch_ms;	/* the database's */
	int64		last;			/* the slot's last, for the messages */
	bool		start;			/* last is a start, not an ID */
	int64		ahead;			/* how far last may be ahead of the clock */
	ShardidWaitOut wait;		/* STEP_WAIT and STEP_REFUSE */
} GuardDecision;

/*
 * What a call waited for, counted in its slot once it issues: once, by the
 * gravest of its waits (a call that was waiting out an exhausted
 * millisecond when the clock stepped back waited out the step).
 */
#define WAITED_EXHAUSTED	1
#define WAITED_FENCE		2
#define WAITED_CLOCK		3

/* ----------------------------------------------------------------
 * The slot cache
 * ----------------------------------------------------------------
 */

/*
 * Find (or make) seqid's slot, and remember it.  The first time a backend
 * meets a sequence (and again after its slot was evicted), and never on
 * the usual call: first the refusal of a Citus worker (citus.c), before
 * the slot, its fence or its clock are looked at, so that it neither
 * counts as the clock's fault nor suggests changing the sequence.
 */
static pg_noinline void
cache_fill(GuardCacheEntry *entry, Oid seqid)
{
	int			slotno;

	shardid_citus_check(seqid);
	slotno = shardid_slot_lookup(MyDatabaseId, seqid);

	entry->slot = &shardid_shared->slots[slotno];
	entry->key = guard_key_word(MyDatabaseId, seqid);
	entry->due_ms = INT64_MIN;
	entry->seqid = seqid;
}

/* ----------------------------------------------------------------
 * Deciding, under the slot's spinlock
 * ----------------------------------------------------------------
 */

/* A call with an epoch of its own: the database's, or refused. */
static pg_noinline GuardStep
decide_epoch(GuardSlot *slot, int64 requested, int64 now_ms, GuardDecision *d)
{
	d->db_epoch_ms = slot->epoch_ms;
	if (requested == slot->epoch_ms)
		return STEP_ISSUE;
	if (!(slot->flags & GUARD_SLOT_EPOCH_FREE))
		return STEP_OTHER_EPOCH;

	/*
	 * A database still at 1.1 takes each call's epoch, as 1.1 did, but
	 * not one that puts the field further past the clock than a fence may
	 * run ahead of it: an earlier epoch gives larger fields, and would
	 * carry the fences (and every sequence after the next restart) that
	 * far ahead.
	 */
	if (requested < slot->epoch_ms - shardid_fence_reach)
		return STEP_EARLY_EPOCH;
	return STEP_ISSUE;
}

/*
 * The value must wait: until when, and why.  How far last may be ahead
 * of the clock tells a wait from a clock fault, never whether to issue: a
 * start is judged by the reach its fence was written with.
 */
static pg_noinline GuardStep
decide_wait(GuardSlot *slot, int64 now, bool joins, GuardDecision *d)
{
	ShardidWaitIn in;

	d->start = (slot->flags & GUARD_SLOT_START) != 0;
	d->last = slot->last;
	d->ahead = !d->start ? 1 :
		slot->start_reach > 0 ? slot->start_reach : shardid_fence_reach;
	in.last = slot->last;
	in.now = now;
	in.joins = joins;
	in.ahead = d->ahead;
	in.max_regression = shardid_max_clock_regression;
	d->wait = shardid_rule_wait(&in);
	if (d->wait.kind == SHARDID_REFUSE)
	{
		slot->counters.clock_refusals++;
		return STEP_REFUSE;
	}
	return STEP_WAIT;
}

/*
 * The usual decision, inline: the field for the value, or GUARD_SLOW when
 * the slot needs more than the rule (a flag set, a value past what the
 * slot knows of its sequence, a wait, a fence to write, another key).
 */
#define GUARD_SLOW INT64_MIN

static inline int64
decide_fast(const GuardSlot *slot, uint64 key, const GuardValue *v, int64 now_ms)
{
	ShardidRuleIn in;
	int64		field;

	if (unlikely(guard_slot_key_word(slot) != key || slot->flags != 0 ||
				 v->block > slot->seq_hi))
		return GUARD_SLOW;
	in.last = slot->last;
	in.now = now_ms - slot->epoch_ms;
	in.joins = guard_slot_joins(slot, v);
	field = shardid_rule_field(&in);
	if (unlikely(field > slot->fence_early))
		return GUARD_SLOW;		/* the fence first, or SHARDID_RULE_WAIT */
	return field;
}

/*
 * The whole decision, with the slot's mutex held, for every call the usual
 * one did not take: no call that can fail or sleep.
 */
static GuardStep
decide(GuardSlot *slot, uint64 key, Oid seqid, const GuardValue *v, int64 now_ms,
	   int64 requested_epoch, GuardDecision *d)
{
	ShardidRuleIn in;
	int64		now;
	int64		field;

	if (guard_slot_key_word(slot) != key)
		return STEP_EVICTED;
	if ((slot->flags & GUARD_SLOT_STALE) && !guard_slot_sync(slot))
		return STEP_LOAD;
	d->epoch_ms = slot->epoch_ms;
	if (requested_epoch != SHARDID_EPOCH_OF_DATABASE)
	{
		GuardStep	step = decide_epoch(slot, requested_epoch, now_ms, d);

		if (step != STEP_ISSUE)
			return step;
		d->epoch_ms = requested_epoch;
	}
	if (v->block > slot->seq_hi)
		guard_slot_seen(slot, v->block);

	now = now_ms - d->epoch_ms;
	in.last = slot->last;
	in.now = now;
	in.joins = guard_slot_joins(slot, v);
	field = shardid_rule_field(&in);
	d->field = field;
	if (field == SHARDID_RULE_WAIT)
		return now < 0 ? STEP_BEFORE_EPOCH : decide_wait(slot, now, in.joins, d);

	/*
	 * Nothing past the fence until a new one is durable (or, in a
	 * transaction that made the database's fence anew, this backend's own).
	 */
	if (field > slot->fence_early)
	{
		int64		own = shardid_fence_own(seqid);

		if (field > slot->fence && field > own)
			return field > SHARDID_MAX_TIME_MS ? STEP_HORIZON : STEP_ADVANCE;
		if (field > own - shardid_fence_refresh && guard_slot_claim_early(slot))
			return STEP_ISSUE_WRITE;
	}
	return STEP_ISSUE;
}

/* ----------------------------------------------------------------
 * The refusals
 * ----------------------------------------------------------------
 */

static pg_noinline void
report_other_epoch(int64 epoch_ms, int64 db_epoch)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("epoch %s is not the epoch of database \"%s\"",
					shardid_unix_ms_to_str(epoch_ms),
					get_database_name(MyDatabaseId)),
			 errdetail("The database issues IDs under the epoch %s, and its durable fence counts time from it: IDs under another epoch could repeat its IDs or carry its fence ahead of the clock.",
					   shardid_unix_ms_to_str(db_epoch)),
			 errhint("Call shardid_next without an epoch.  A superuser or the owner of extension shardid can change the database's epoch with SELECT shardid_set_epoch('%s').",
					 shardid_unix_ms_to_str(epoch_ms))));
}

static pg_noinline void
report_early_epoch(int64 epoch_ms, int64 db_epoch)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("epoch %s would carry the durable fences of database \"%s\" past the clock",
					shardid_unix_ms_to_str(epoch_ms),
					get_database_name(MyDatabaseId)),
			 errdetail("Extension shardid is at version 1.1 here, so each call may give its own epoch, but not one more than %lld ms before %s: its time fields would run ahead of the clock by more than a fence may.",
					   (long long) shardid_fence_reach, shardid_unix_ms_to_str(db_epoch)),
			 errhint("Run ALTER EXTENSION shardid UPDATE in this database, then give it its epoch with shardid_set_epoch.")));
}

/* Refuse a call whose time field is too far behind the slot's last. */
static pg_noinline void
report_refusal(Oid seqid, const GuardDecision *d, int64 now_ms)
{
	char	   *seqname = get_rel_name(seqid);

	if (d->start)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("system clock is %lld ms behind the durable fence",
						(long long) d->wait.regression),
				 errdetail("Sequence \"%s\" of database \"%s\" may issue no ID at or before %s, its durable fence after this server started, was promoted or was restored, or the sequence was set, but the clock reads %s; a fence runs at most %lld ms ahead of the IDs, and shardid.max_clock_regression is %d ms.",
						   seqname ? seqname : "(dropped)",
						   get_database_name(MyDatabaseId),
						   shardid_unix_ms_to_str(d->last + d->epoch_ms),
						   shardid_unix_ms_to_str(now_ms),
						   (long long) d->ahead, shardid_max_clock_regression),
				 errhint("Fix the clock, or wait until it passes the fence.  After a clock that ran fast, shardid_sequence_lower and shardid_fence_lower take the fences back down.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("system clock moved backwards by %lld ms",
					(long long) d->wait.regression),
			 errdetail("Sequence \"%s\" may not issue IDs before %s, but the clock reads %s, and shardid.max_clock_regression is %d ms.",
					   seqname ? seqname : "(dropped)",
					   shardid_unix_ms_to_str(d->last + d->epoch_ms),
					   shardid_unix_ms_to_str(now_ms),
					   shardid_max_clock_regression),
			 errhint("Fix the clock, or wait until it passes the last issued millisecond.  Use slewing, not stepping, for NTP.")));
}

/* ----------------------------------------------------------------
 * The issue path
 * ----------------------------------------------------------------
 */

static inline void
value_of(int64 value, GuardValue *v)
{
	v->block = shardid_seq_block(value);
	v->v10 = (uint32) shardid_seq_slot(value);
	v->word = (int) (v->v10 / 64);
	v->wbit = (uint32) 1 << v->word;
	v->bit = UINT64CONST(1) << (v->v10 % 64);
}

/*
 * Every call the usual path did not take: decide under the slot's lock,
 * release it once, act on the step, and decide again until one issues.
 */
static pg_noinline int64
guard_next_slow(Oid seqid, int32 shard, int64 value, int64 requested_epoch)
{
	GuardCacheEntry *entry = shardid_guard_entry(seqid);
	GuardValue	v;
	int			waited = 0;

	value_of(value, &v);
	for (int round = 0;; round++)
	{
		GuardSlot  *slot;
		uint64		key;
		int64		now_ms;
		GuardStep	step;
		GuardDecision d;

		/* a decision taken again: a cancel or statement_timeout ends it */
		if (round > 0)
			CHECK_FOR_INTERRUPTS();

		if (entry->seqid != seqid)
			cache_fill(entry, seqid);
		slot = entry->slot;
		key = entry->key;
		now_ms = shardid_clock_now_ms();

		SpinLockAcquire(&slot->mutex);
		step = decide(slot, key, seqid, &v, now_ms, requested_epoch, &d);
		if (step == STEP_ISSUE || step == STEP_ISSUE_WRITE)
		{
			guard_slot_issue(slot, d.field, &v);
			/* each call counts once, by the gravest of its waits */
			slot->counters.exhausted_waits += waited == WAITED_EXHAUSTED;
			slot->counters.clock_waits += waited == WAITED_CLOCK;
			slot->counters.fence_waits += waited == WAITED_FENCE;
		}
		SpinLockRelease(&slot->mutex);

		switch (step)
		{
			case STEP_ISSUE:
				return shardid_id_from_field(d.field, shard, (int32) v.v10);
			case STEP_ISSUE_WRITE:
				(void) shardid_seq_fence_advance(slot, key, seqid, d.field, d.epoch_ms, false, NULL);
				return shardid_id_from_field(d.field, shard, (int32) v.v10);
			case STEP_WAIT:
				waited = Max(waited,
							 d.wait.kind == SHARDID_WAIT_CLOCK ? WAITED_CLOCK :
							 d.start ? WAITED_FENCE : WAITED_EXHAUSTED);
				shardid_clock_sleep_until(d.wait.until + d.epoch_ms);
				break;
			case STEP_REFUSE:
				report_refusal(seqid, &d, now_ms);
				break;
			case STEP_ADVANCE:
				(void) shardid_seq_fence_advance(slot, key, seqid, d.field, d.epoch_ms, true, NULL);
				break;
			case STEP_LOAD:
				shardid_fence_load(slot->db);
				break;
			case STEP_EVICTED:
				/* evicted since this backend found it: find it again */
				entry->seqid = InvalidOid;
				break;
			case STEP_OTHER_EPOCH:
				report_other_epoch(requested_epoch, d.db_epoch_ms);
				break;
			case STEP_EARLY_EPOCH:
				report_early_epoch(requested_epoch, d.db_epoch_ms);
				break;
			case STEP_BEFORE_EPOCH:
				shardid_report(SHARDID_BEFORE_EPOCH, now_ms, d.epoch_ms, shard,
							   (int64) v.v10);
				break;
			case STEP_HORIZON:
				shardid_report(SHARDID_PAST_HORIZON, d.field + d.epoch_ms,
							   d.epoch_ms, shard, (int64) v.v10);
				break;
		}
	}
}

/*
 * The usual call, all inline: the slot this backend remembers for the
 * sequence, one decision on the clock the caller read and the slot's
 * update under its spinlock, one release.  Anything else goes the slow way, which takes
 * the lock again and decides the whole way.
 */
int64
shardid_guard_next(Oid seqid, int32 shard, int64 value, int64 now_ms)
{
	GuardCacheEntry *entry = shardid_guard_entry(seqid);
	GuardValue	v;
	GuardSlot  *slot;
	int64		field;

	if (unlikely(entry->seqid != seqid))
		return guard_next_slow(seqid, shard, value, SHARDID_EPOCH_OF_DATABASE);
	value_of(value, &v);
	slot = entry->slot;

	SpinLockAcquire(&slot->mutex);
	field = decide_fast(slot, entry->key, &v, now_ms);
	if (likely(field != GUARD_SLOW))
		guard_slot_issue_usual(slot, field, &v);
	SpinLockRelease(&slot->mutex);

	if (likely(field != GUARD_SLOW))
		return shardid_id_from_field(field, shard, (int32) v.v10);
	return guard_next_slow(seqid, shard, value, SHARDID_EPOCH_OF_DATABASE);
}

/*
 * The value of a call that may have to write its sequence's fence first
 * (shardid_guard_due): where the clock is past its slot's fence, the
 * write's setval gives the call its value (shardid_seq_fence_advance's
 * take), one record where nextval and then the setval made two
 * (docs/design.md, "One record a call"); else nextval's.  Only as the
 * guard would take a required write before any value: the slot is the
 * sequence's and not at a start or stale, the clock is past its fence
 * (so past its last) and not past the horizon, and the caller may call
 * nextval here (its rights, not in a read-only or parallel transaction:
 * else nextval says why not).  The guard then decides on the value as on
 * nextval's.  Remembers the slot's fence as when the next call is due.
 */
int64
shardid_guard_value(Oid seqid, int64 now_ms)
{
	GuardCacheEntry *entry = shardid_guard_entry(seqid);
	GuardSlot  *slot;
	int64		epoch_ms;
	int64		field;
	int64		value;
	bool		first;

	if (XactReadOnly || IsInParallelMode() ||
		pg_class_aclcheck(seqid, GetUserId(), ACL_USAGE | ACL_UPDATE) != ACLCHECK_OK)
		return nextval_internal(seqid, true);
	if (entry->seqid != seqid)
		cache_fill(entry, seqid);
	slot = entry->slot;

	SpinLockAcquire(&slot->mutex);
	epoch_ms = slot->epoch_ms;
	field = now_ms - epoch_ms;
	first = guard_slot_key_word(slot) == entry->key &&
		!(slot->flags & (GUARD_SLOT_START | GUARD_SLOT_STALE));
	entry->due_ms = first ? slot->fence + epoch_ms : INT64_MIN;
	first = first && field > slot->fence && field <= SHARDID_MAX_TIME_MS;
	SpinLockRelease(&slot->mutex);

	if (first && shardid_seq_fence_advance(slot, entry->key, seqid, field,
										   epoch_ms, true, &value))
		return value;
	return nextval_internal(seqid, true);
}

/* A call that names an epoch: always the whole way. */
int64
shardid_guard_next_epoch(Oid seqid, int32 shard, int64 value, int64 epoch_ms)
{
	return guard_next_slow(seqid, shard, value, epoch_ms);
}
