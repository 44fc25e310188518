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
 * src/state.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "pgstat.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "state.h"

#define STATE_FILE			PGSTAT_STAT_PERMANENT_DIRECTORY "/shardid.state"
#define STATE_FILE_MAGIC	0x53484944	/* "SHID" */
#define STATE_FILE_VERSION	2		/* 1.1: counters only */

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
		saved.last_issued_ms = slot->last_issued_ms;
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

GuardSavedSlot *
shardid_state_load(int *count, int64 *evictions)
{
	FILE	   *file;
	uint32		header[2];
	int32		n;
	GuardSavedSlot *saved = NULL;

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
	if (header[0] != STATE_FILE_MAGIC || header[1] != STATE_FILE_VERSION)
	{
		ereport(LOG,
				(errmsg("ignoring file \"%s\": it was not written by this version of shardid",
						STATE_FILE)));
		goto done;
	}
	if (fread(evictions, sizeof(int64), 1, file) != 1 ||
		fread(&n, sizeof(int32), 1, file) != 1 || n < 0 ||
		(Size) n >= MaxAllocSize / sizeof(GuardSavedSlot))
		goto read_error;

	saved = palloc(sizeof(GuardSavedSlot) * Max(n, 1));
	if (n > 0 && fread(saved, sizeof(GuardSavedSlot), n, file) != (size_t) n)
		goto read_error;
	*count = n;
	goto done;

read_error:
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("could not read file \"%s\": it is truncated or unreadable",
					STATE_FILE),
			 errdetail("The counters of shardid_stats start from zero.  Uniqueness does not depend on this file.")));
	if (saved)
		pfree(saved);
	saved = NULL;
	*count = 0;
	*evictions = 0;

done:
	FreeFile(file);
	unlink(STATE_FILE);
	return saved;
}
