/*-------------------------------------------------------------------------
 *
 * slot.h
 *	  A guard slot's transitions: every change of a slot's state, in one
 *	  place (src/slot.c; the one on the issue path inline here).
 *
 * A slot (shmem.h) is born (guard_slot_begin, or guard_slot_restore for
 * what the postmaster saved), moves to a start (the database's:
 * guard_slot_sync; a value that carries a fence: guard_slot_moved,
 * guard_slot_seen), issues (guard_slot_issue), claims an early write of
 * its sequence's fence and lets go of it (guard_slot_claim_early,
 * guard_slot_early_off), says which fence it is writing
 * (guard_slot_writing), publishes it (guard_slot_publish) and the cover
 * over it (guard_slot_cover), is lowered (guard_slot_lower,
 * guard_slot_lower_cover), forgets its fence after a rollback
 * (guard_slot_forget_fence), looks at its database again
 * (guard_slot_stale), and ends, leaving a ghost (guard_slot_end).
 * shmem.c finds slots and hands them out, guard.c decides from them,
 * fence.c writes the fences: none of them changes a slot but through
 * these (the counters excepted, which count and decide nothing).
 *
 * Each is called with the slot's mutex held, but guard_slot_begin,
 * which takes it; none fails, sleeps or takes a lock but a database
 * entry's mutex (see the locking protocol in shmem.h).
 *
 * src/slot.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_SLOT_H
#define SHARDID_SLOT_H

#include "layout.h"
#include "shmem.h"

/* One sequence value, taken apart once. */
typedef struct GuardValue
{
	int64		block;			/* its 1,024-aligned block */
	uint32		v10;			/* its ten bits */
	int			word;			/* the word of the bitmap that holds them */
	uint32		wbit;			/* that word's bit in taken_words */
	uint64		bit;			/* their bit in that word */
} GuardValue;

/*
 * Whether a value may share the slot's last field: of its block, and its
 * ten bits not yet there.
 */
static inline bool
guard_slot_joins(const GuardSlot *slot, const GuardValue *v)
{
	return v->block == slot->last_block &&
		!((slot->taken_words & v->wbit) && (slot->taken[v->word] & v->bit));
}

/*
 * Issue field for value v from a slot with no flag set (the issue path's
 * usual call): the slot's state after it.  A new field starts its bitmap
 * with the value's bit, without reading it; the same field sets the bit
 * in its word.
 */
static inline void
guard_slot_issue_usual(GuardSlot *slot, int64 field, const GuardValue *v)
{
	/* never back, and never a field's ten bits twice */
	Assert(field >= slot->last);
	Assert(field != slot->last || guard_slot_joins(slot, v));
	if (field != slot->last)
	{
		slot->last = field;
		slot->last_block = v->block;
		slot->taken_words = v->wbit;
		slot->taken[v->word] = v->bit;
	}
	else if (slot->taken_words & v->wbit)
		slot->taken[v->word] |= v->bit;
	else
	{
		slot->taken_words |= v->wbit;
		slot->taken[v->word] = v->bit;
	}
	slot->counters.issued++;
}

/* The same from any slot: an ID issued ends a start. */
static inline void
guard_slot_issue(GuardSlot *slot, int64 field, const GuardValue *v)
{
	guard_slot_issue_usual(slot, field, v);
	slot->flags &= ~GUARD_SLOT_START;
}

/*
 * A new slot for key, of database entry db (number dbno): it starts where
 * the database's slots start and after every field its evicted slots
 * used, and learns from ghost (key's own, or NULL), which it empties.
 * Takes the slot's mutex, and the database entry's inside it.
 */
extern SHARDID_INTERNAL void guard_slot_begin(GuardSlot *slot, const GuardKey *key,
											  int dbno, GuardDb *db, GuardGhost *ghost);

/*
 * What the postmaster saved of a slot (state.c): its counters and the Unix
 * ms of its last ID, and with has_position shardid 1.0's position of it.
 * The postmaster alone runs: no lock.
 */
extern SHARDID_INTERNAL void guard_slot_restore(GuardSlot *slot, const GuardCounters *counters,
												int64 saved_last_ms, bool has_position,
												int64 last, int64 last_block);

/* The slot is taken from its sequence: ghost (key's place) keeps what it knew. */
extern SHARDID_INTERNAL void guard_slot_end(GuardSlot *slot, GuardGhost *ghost);

/*
 * Take the database entry's state, epoch and start.  False if the entry
 * has not read its fence yet.  Takes the entry's mutex.
 */
extern SHARDID_INTERNAL bool guard_slot_sync(GuardSlot *slot);

/*
 * A value of the sequence in block: past what the slot knew, the slot
 * knows it; further past than the sequence's cache explains, the value
 * moved the sequence (guard_slot_moved).
 */
extern SHARDID_INTERNAL void guard_slot_seen(GuardSlot *slot, int64 block);

/* The sequence's value moved to block: start after the fence it carries. */
extern SHARDID_INTERNAL void guard_slot_moved(GuardSlot *slot, int64 block);

/* Claim the early write of the sequence's fence: false if one is under way. */
extern SHARDID_INTERNAL bool guard_slot_claim_early(GuardSlot *slot);

/* Let go of the early write. */
extern SHARDID_INTERNAL void guard_slot_early_off(GuardSlot *slot);

/*
 * This server set the sequence to fence: the values of its block that the
 * sequence's callers take are its own, not a move.
 */
extern SHARDID_INTERNAL void guard_slot_writing(GuardSlot *slot, int64 fence);

/*
 * The sequence's fence written: fence, the sequence's blocks of cached
 * values hi_cached, and, with moved, a fence this server did not write
 * (moved_fence, of block moved_block) found in its value.  The slot uses
 * it as far as db_limit, the database's cover, lets it; the early write
 * is over.
 */
extern SHARDID_INTERNAL void guard_slot_publish(GuardSlot *slot, int64 fence, int64 hi_cached,
												bool moved, int64 moved_fence, int64 moved_block,
												int64 db_limit);

/* The slot's fence as far as its sequence's fence and cover let it go. */
extern SHARDID_INTERNAL void guard_slot_cover(GuardSlot *slot, int64 cover);

/*
 * Lower what the slot knows of its sequence's fence, and where it
 * stands, to target, but not below an ID it issued: returns the field
 * lowered to (shardid_sequence_lower).
 */
extern SHARDID_INTERNAL int64 guard_slot_lower(GuardSlot *slot, int64 target);

/*
 * The database's cover was lowered to target, at or past every ID the
 * slot issued: it stands and uses its fence no further.
 */
extern SHARDID_INTERNAL void guard_slot_lower_cover(GuardSlot *slot, int64 target);

/*
 * The sequence's fence is no longer durable (a rollback took its value
 * back): the next ID writes one.
 */
extern SHARDID_INTERNAL void guard_slot_forget_fence(GuardSlot *slot);

/* The database entry changed: look at it again before the next ID. */
extern SHARDID_INTERNAL void guard_slot_stale(GuardSlot *slot);

#endif							/* SHARDID_SLOT_H */
