/*-------------------------------------------------------------------------
 *
 * state.c
 *	  The guard's counters across restarts.
 *
 * The postmaster writes every slot's counters and the time of its last ID
 * to PGSTAT_STAT_PERMANENT_DIRECTORY/shardid.state, through a temporary
 * file and durable_rename(), when it exits and when it resets shared
 * memory after a backend crashed; the next start reads the file back and
 * removes it, as pg_stat_statements does, so that a base backup or a
 * later crash never finds an old copy.
 *
 * Uniqueness does not depend on this file.  What keeps IDs apart across
 * restarts, crashes, failovers and restores is the durable fence that each
 * database keeps in its own sequence (guard.c, fence.c): after any start
 * every sequence starts at its database's fence.  A lost or damaged file
 * costs the counters, nothing else.
 *
 * One exception: the file shardid 1.0 wrote at its last clean shutdown,
 * which the 1.1 library reads once, on the start that installs it.  1.0
 * kept uniqueness across restarts with that file alone, so where each
 * slot stood is kept too (its last millisecond read as a time field in the
 * default epoch), until ALTER EXTENSION shardid UPDATE gives the database
 * a fence past it.
 *
 * src/state.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "pgstat.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "rule.h"
#include "state.h"

#define STATE_FILE			PGSTAT_STAT_PERMANENT_DIRECTORY "/shardid.state"
#define STATE_FILE_MAGIC	0x53484944	/* "SHID" */
#define STATE_FILE_VERSION	2		/* 1.1: counters only */
#define STATE_FILE_VERSION_1_0 1	/* 1.0: and each slot's last millisecond */

/* A slot as shardid 1.0 saved it. */
typedef struct GuardSavedSlot_1_0
{
	GuardKey	key;
	int64		last_ms;		/* Unix ms */
	int64		last_block;
	int64		issued;
	int64		exhausted_waits;
	int64		clock_waits;
	int64		clock_refusals;
} GuardSavedSlot_1_0;

void
shardid_state_save(const GuardShared *shared, int max_sequences)
{
	FILE	   *file;
	uint32		header[2] = {STATE_FILE_MAGIC, STATE_FILE_VERSION};
	int32		count = 0;
	int			nslots = Min(Max(shared->slot_count, 0), max_sequences);
	int			i;

	for (i = 0; i < nslots; i++)
	{
		if (shared->slots[i].in_use)
			count++;
	}

	file = AllocateFile(STATE_FILE ".tmp", PG_BINARY_W);
	if (file == NULL)
		goto error;

	if (fwrite(header, sizeof(header), 1, file) != 1 ||
		fwrite(&shared->evictions, sizeof(int64), 1, file) != 1 ||
		fwrite(&count, sizeof(int32), 1, file) != 1)
		goto error;

	for (i = 0; i < nslots; i++)
	{
		const GuardSlot *slot = &shared->slots[i];
		GuardSavedSlot saved;

		if (!slot->in_use)
			continue;
		memset(&saved, 0, sizeof(saved));
		saved.key = slot->key;
		saved.last_issued_ms = guard_slot_last_ms(slot);
		saved.counters = slot->counters;
		if (fwrite(&saved, sizeof(saved), 1, file) != 1)
			goto error;
	}

	if (FreeFile(file))
	{
		file = NULL;
		goto error;
	}

	(void) durable_rename(STATE_FILE ".tmp", STATE_FILE, LOG);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m", STATE_FILE ".tmp")));
	if (file)
		FreeFile(file);
	unlink(STATE_FILE ".tmp");
}

GuardLoadedSlot *
shardid_state_load(int *count, int64 *evictions)
{
	FILE	   *file;
	uint32		header[2];
	int32		n;
	int64		floor_ms = 0;
	GuardLoadedSlot *loaded = NULL;
	int			i;

	*count = 0;
	*evictions = 0;

	file = AllocateFile(STATE_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", STATE_FILE)));
		return NULL;
	}

	if (fread(header, sizeof(header), 1, file) != 1)
		goto read_error;
	if (header[0] != STATE_FILE_MAGIC ||
		(header[1] != STATE_FILE_VERSION && header[1] != STATE_FILE_VERSION_1_0))
	{
		ereport(LOG,
				(errmsg("ignoring file \"%s\": it was not written by this version of shardid",
						STATE_FILE)));
		goto done;
	}
	if ((header[1] == STATE_FILE_VERSION_1_0 &&
		 fread(&floor_ms, sizeof(int64), 1, file) != 1) ||
		fread(evictions, sizeof(int64), 1, file) != 1 ||
		fread(&n, sizeof(int32), 1, file) != 1 || n < 0 ||
		(Size) n >= MaxAllocSize / sizeof(GuardLoadedSlot))
		goto read_error;

	loaded = palloc0(sizeof(GuardLoadedSlot) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		GuardLoadedSlot *l = &loaded[i];

		if (header[1] == STATE_FILE_VERSION)
		{
			if (fread(&l->saved, sizeof(GuardSavedSlot), 1, file) != 1)
				goto read_error;
		}
		else
		{
			GuardSavedSlot_1_0 old;

			if (fread(&old, sizeof(old), 1, file) != 1)
				goto read_error;
			l->saved.key = old.key;
			l->saved.last_issued_ms = old.last_block == SHARDID_NO_BLOCK ?
				GUARD_NEVER : old.last_ms;
			l->saved.counters.issued = old.issued;
			l->saved.counters.exhausted_waits = old.exhausted_waits;
			l->saved.counters.clock_waits = old.clock_waits;
			l->saved.counters.clock_refusals = old.clock_refusals;
			l->has_position = true;
			l->last = Max(old.last_ms, floor_ms) - SHARDID_DEFAULT_EPOCH_UNIX_MS;
			l->last_block = old.last_block;
		}
	}
	*count = n;
	goto done;

read_error:
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("could not read file \"%s\": it is truncated or unreadable",
					STATE_FILE),
			 errdetail("The counters of shardid_stats start from zero.  Uniqueness does not depend on this file.")));
	if (loaded)
		pfree(loaded);
	loaded = NULL;
	*count = 0;
	*evictions = 0;

done:
	FreeFile(file);
	unlink(STATE_FILE);
	return loaded;
}
