/*-------------------------------------------------------------------------
 *
 * state.h
 *	  The guard's counters across restarts: a file the postmaster writes
 *	  when it exits and reads when it starts.
 *
 * src/state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_STATE_H
#define SHARDID_STATE_H

#include "shmem.h"

/* What the file keeps of a slot. */
typedef struct GuardSavedSlot
{
	GuardKey	key;
	int64		last_issued_ms;
	GuardCounters counters;
} GuardSavedSlot;

/*
 * What shardid_state_load returns of a slot: the saved part, and, from a
 * file that shardid 1.0 wrote, where the slot stood.
 */
typedef struct GuardLoadedSlot
{
	GuardSavedSlot saved;
	bool		has_position;	/* from a 1.0 file */
	int64		last;			/* time field, in the default epoch */
	int64		last_block;
} GuardLoadedSlot;

/* Write every slot in use to the file (postmaster only). */
extern SHARDID_INTERNAL void shardid_state_save(const GuardShared *shared,
												int max_sequences);

/*
 * Read the file and remove it; returns the slots it held (palloc'd), or
 * NULL with *count 0 if there is none or it is unusable.
 */
extern SHARDID_INTERNAL GuardLoadedSlot *shardid_state_load(int *count,
															int64 *evictions);

#endif							/* SHARDID_STATE_H */
