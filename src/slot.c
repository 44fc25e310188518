/*-------------------------------------------------------------------------
 *
 * slot.c
 *	  A guard slot's transitions (slot.h says which, and the rules that
 *	  hold for each).
 *
 * A slot's state says where its sequence's IDs stand: the last field
 * (an ID issued, or a start no ID goes at or before), its fence (no ID
 * past it before a new one is durable), what this server wrote into the
 * sequence and saw of its values, and what an evicted slot of the same
 * key left behind (its ghost).  docs/design.md, "The guard" and "The
 * durable fences", says why each moves as it does; the model
 * (test/model/fence.pml) has a step for each.
 *
 * src/slot.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "compat.h"
#include "fence.h"
#include "slot.h"

/*
 * Move a slot to a start: IDs after it only.  Which ten-bit values the
 * start holds is not known, so none joins it (last_block says no block).
 */
static void
start_at(GuardSlot *slot, int64 start, int64 reach)
{
	if (start <= slot->last)
		return;
	if (!(slot->flags & GUARD_SLOT_START))
		slot->issued = slot->last;
	slot->last = start;
	slot->last_block = SHARDID_NO_BLOCK;
	slot->start_reach = reach;
	slot->flags |= GUARD_SLOT_START;
}

/* Set a slot's fence, and where its early write is due. */
static void
set_fence(GuardSlot *slot, int64 fence, int64 refresh)
{
	slot->fence = fence;
	slot->fence_early = fence - refresh;
}

/*
 * A new slot starts where its database's slots start, and after every
 * field its evicted slots used; the first value it is given tells it
 * where its sequence's own fence stands (seq_hi says it knows nothing of
 * the sequence yet, and the fence says nothing of it is durable), with
 * the ghost of an earlier slot of the same key, if there is one.  Its
 * first call looks at the database entry (STALE), which may not have
 * read its fence yet.  guard_slot_sync raises it again if the database's
 * start rises.
 */
void
guard_slot_begin(GuardSlot *slot, const GuardKey *key, int dbno, GuardDb *db,
				 GuardGhost *ghost)
{
	SpinLockAcquire(&slot->mutex);
	slot->key = *key;
	slot->dbno = dbno;
	slot->db = db;
	slot->flags = GUARD_SLOT_START | GUARD_SLOT_STALE;
	slot->issued = GUARD_NEVER;
	slot->saved_last_ms = GUARD_NEVER;
	slot->last = -1;
	slot->last_block = SHARDID_NO_BLOCK;
	SpinLockAcquire(&db->mutex);
	slot->epoch_ms = db->epoch;
	slot->db_reach = db->start_reach;
	start_at(slot, Max(db->start, db->floor), db->start_reach);
	SpinLockRelease(&db->mutex);
	set_fence(slot, -1, 1);
	slot->seq_fence = -1;
	slot->written = -1;
	slot->writing = -1;
	slot->seq_hi = GUARD_SEQ_HI_NONE;
	slot->hi_cached = 4;
	slot->ghost_written = -1;
	slot->ghost_fence = -1;
	slot->ghost_issued = GUARD_NEVER;
	slot->ghost_seq_hi = GUARD_SEQ_HI_NONE;
	if (ghost != NULL)
	{
		slot->ghost_written = ghost->written;
		slot->ghost_fence = ghost->fence;
		slot->ghost_issued = ghost->issued;
		slot->ghost_seq_hi = ghost->seq_hi;
		memset(ghost, 0, sizeof(GuardGhost));
	}
	slot->taken_words = 0;
	memset(&slot->counters, 0, sizeof(GuardCounters));
	slot->fence_writes = 0;
	slot->in_use = true;
	SpinLockRelease(&slot->mutex);
}

void
guard_slot_restore(GuardSlot *slot, const GuardCounters *counters, int64 saved_last_ms,
				   bool has_position, int64 last, int64 last_block)
{
	slot->counters = *counters;
	slot->saved_last_ms = saved_last_ms;
	if (has_position)
	{
		/* shardid 1.0's own state, an ID's position: see state.c */
		slot->last = last;
		slot->last_block = last_block;
		slot->flags &= ~GUARD_SLOT_START;
	}
}

/*
 * The ghost keeps the slot's last field, its start or the last field it
 * issued, whichever is later: a slot that started at its sequence's value
 * (a restore, a new database fence) and was evicted before its first ID
 * must come back at that start, not at no start at all (the model of the
 * protocol found the duplicate: test/model, its mutation
 * MUT_GHOST_NO_START).
 */
void
guard_slot_end(GuardSlot *slot, GuardGhost *ghost)
{
	if (slot->written >= 0)
	{
		ghost->key = slot->key;
		ghost->written = slot->written;
		ghost->fence = slot->fence;
		ghost->issued = slot->last;
		ghost->seq_hi = slot->seq_hi;
	}
	else if (slot->ghost_written >= 0)
	{
		/* evicted before its first call: the ghost it was given */
		ghost->key = slot->key;
		ghost->written = slot->ghost_written;
		ghost->fence = slot->ghost_fence;
		ghost->issued = Max(slot->last, slot->ghost_issued);
		ghost->seq_hi = slot->ghost_seq_hi;
	}
	slot->in_use = false;
	memset(&slot->key, 0, sizeof(GuardKey));
}

pg_noinline bool
guard_slot_sync(GuardSlot *slot)
{
	GuardDb    *db = slot->db;
	uint32		state;

	SpinLockAcquire(&db->mutex);
	state = pg_atomic_read_u32(&db->state);
	if (state != GUARD_FENCE_LOADED && state != GUARD_FENCE_NONE)
	{
		SpinLockRelease(&db->mutex);
		return false;
	}
	slot->epoch_ms = db->epoch;
	slot->db_reach = db->start_reach;
	if (db->epoch_free)
		slot->flags |= GUARD_SLOT_EPOCH_FREE;
	else
		slot->flags &= ~GUARD_SLOT_EPOCH_FREE;
	start_at(slot, db->start, db->start_reach);
	slot->flags &= ~GUARD_SLOT_STALE;
	SpinLockRelease(&db->mutex);
	return true;
}

void
guard_slot_seen(GuardSlot *slot, int64 block)
{
	if (block <= slot->seq_hi)
		return;
	if (block > slot->seq_hi + slot->hi_cached)
		guard_slot_moved(slot, block);
	else
		slot->seq_hi = block;
}

/*
 * A value whose block is further past the highest this slot knew than the
 * sequence's cache explains: someone set the sequence (a restore, a copy
 * from another server, a setval) to a value that carries a fence.  No ID
 * of the sequence goes at or before that fence: the slot starts after it,
 * judged by the reach of the database's fence, and writes its own fence
 * before its next ID.  It holds back this sequence only.
 */
pg_noinline void
guard_slot_moved(GuardSlot *slot, int64 block)
{
	int64		written = Max(Max(slot->written, slot->writing), slot->ghost_written);
	int64		known = Max(written + 1, slot->ghost_seq_hi);

	if (written >= 0 && block <= known + slot->hi_cached)
	{
		/*
		 * The fence this server wrote into the sequence (before its slot
		 * was evicted, perhaps), and what the sequence's own writers took
		 * since: its IDs went no further than the slot's last field (the
		 * start it had, judged as a start, or the last field it issued).
		 * If the value is now below that fence, someone set it back, and
		 * the fence is no longer durable: the next ID writes one.  The
		 * ghost's fence is used as far as the database's published cover
		 * lets it go, as every fence a slot takes: shardid_db_lower may
		 * have lowered the cover since (it lowers the live slots' fences,
		 * not the ghosts').
		 */
		start_at(slot, slot->ghost_issued,
				 Max(slot->db_reach, slot->db->reach_written));
		if (slot->written < slot->ghost_written)
		{
			slot->written = slot->ghost_written;
			slot->seq_fence = Max(slot->seq_fence, slot->ghost_written);
			set_fence(slot, Max(slot->fence,
								Min(slot->ghost_fence, guard_fence_read(slot->db))),
					  shardid_fence_refresh);
		}
		if (block - 1 < written)
		{
			slot->seq_fence = -1;
			set_fence(slot, -1, shardid_fence_refresh);
		}
	}
	else
	{
		/*
		 * Judged by the largest reach this server wrote a fence with, too:
		 * a write whose wait was cancelled leaves its value in the
		 * sequence.
		 */
		start_at(slot, block - 1, Max(slot->db_reach, slot->db->reach_written));
	}
	slot->ghost_written = -1;
	slot->seq_hi = block;
}

bool
guard_slot_claim_early(GuardSlot *slot)
{
	if (slot->flags & GUARD_SLOT_WRITING)
		return false;
	slot->flags |= GUARD_SLOT_WRITING;
	return true;
}

void
guard_slot_early_off(GuardSlot *slot)
{
	slot->flags &= ~GUARD_SLOT_WRITING;
}

void
guard_slot_writing(GuardSlot *slot, int64 fence)
{
	slot->writing = Max(slot->writing, fence);
}

void
guard_slot_publish(GuardSlot *slot, int64 fence, int64 hi_cached, bool moved,
				   int64 moved_fence, int64 moved_block, int64 db_limit)
{
	if (moved)
	{
		start_at(slot, moved_fence, slot->db_reach);
		slot->seq_hi = Max(slot->seq_hi, moved_block);
	}
	slot->seq_fence = Max(slot->seq_fence, fence);
	set_fence(slot, Max(slot->fence, Min(slot->seq_fence, db_limit)),
			  shardid_fence_refresh);
	slot->written = Max(slot->written, fence);
	slot->seq_hi = Max(slot->seq_hi, fence + 1);
	slot->hi_cached = hi_cached;
	slot->fence_writes++;
	slot->flags &= ~GUARD_SLOT_WRITING;
}

void
guard_slot_cover(GuardSlot *slot, int64 cover)
{
	set_fence(slot, Max(slot->fence, Min(slot->seq_fence, cover)),
			  shardid_fence_refresh);
}

int64
guard_slot_lower(GuardSlot *slot, int64 target)
{
	/* never below an ID this server issued from it */
	target = Max(target, guard_slot_issued(slot));
	if (slot->last > target)
	{
		slot->last = target;
		slot->last_block = SHARDID_NO_BLOCK;
	}
	set_fence(slot, Min(slot->fence, target), slot->fence - slot->fence_early);
	slot->seq_fence = Min(slot->seq_fence, target);
	slot->written = Min(slot->written, target);
	slot->writing = Min(slot->writing, target);
	slot->seq_hi = Min(slot->seq_hi, target + 1);
	return target;
}

void
guard_slot_lower_cover(GuardSlot *slot, int64 target)
{
	if (slot->last > target)
	{
		slot->last = target;
		slot->last_block = SHARDID_NO_BLOCK;
	}
	/* no ID past the lowered cover before a new one is durable */
	if (slot->fence > target)
		set_fence(slot, target, slot->fence - slot->fence_early);
}

void
guard_slot_forget_fence(GuardSlot *slot)
{
	set_fence(slot, Min(slot->fence, slot->last), slot->fence - slot->fence_early);
	slot->seq_fence = -1;
	slot->written = -1;
	slot->writing = -1;
	slot->flags &= ~GUARD_SLOT_WRITING;
}

void
guard_slot_stale(GuardSlot *slot)
{
	slot->flags |= GUARD_SLOT_STALE;
}
