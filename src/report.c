/*-------------------------------------------------------------------------
 *
 * report.c
 *	  Errors raised by more than one of shardid's files: the SQL entry
 *	  points (shardid.c), the guard (guard.c) and the statistics (stats.c)
 *	  all report through here, and this file calls none of them.
 *
 * src/report.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "clock.h"
#include "report.h"

char *
shardid_unix_ms_to_str(int64 unix_ms)
{
	return pstrdup(timestamptz_to_str(shardid_unix_ms_to_timestamptz(unix_ms)));
}

void
shardid_report(ShardidStatus status, int64 unix_ms, int64 epoch_ms,
			   int64 shard, int64 seq)
{
	switch (status)
	{
		case SHARDID_SHARD_OUT_OF_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("shard ID %lld is out of range", (long long) shard),
					 errdetail("Valid shard IDs are 0 to %d.", SHARDID_MAX_SHARD)));
			break;
		case SHARDID_SEQ_OUT_OF_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("sequence number %lld is out of range", (long long) seq),
					 errdetail("Valid sequence numbers are 0 to %d.", SHARDID_MAX_SEQ)));
			break;
		case SHARDID_BEFORE_EPOCH:
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("time %s is before the epoch", shardid_unix_ms_to_str(unix_ms)),
					 errdetail("IDs encode milliseconds since the epoch %s.",
							   shardid_unix_ms_to_str(epoch_ms))));
			break;
		case SHARDID_PAST_HORIZON:
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("time %s is past the horizon of the epoch",
							shardid_unix_ms_to_str(unix_ms)),
					 errdetail("With the epoch %s, the last millisecond that encodes to a positive bigint is %s.",
							   shardid_unix_ms_to_str(epoch_ms),
							   shardid_unix_ms_to_str(shardid_horizon_ms(epoch_ms))),
					 errhint("Use a later epoch for new IDs.")));
			break;
		default:
			elog(ERROR, "unexpected shardid status %d", (int) status);
	}
	pg_unreachable();
}

void
shardid_report_orphaned(void)
{
	ereport(FATAL,
			(errcode(ERRCODE_ADMIN_SHUTDOWN),
			 errmsg("terminating connection because the postmaster died"),
			 errdetail("shardid issues no ID and writes no fence once the server's postmaster is gone: what it wrote may not reach the standby that takes the server's place.")));
	pg_unreachable();
}

void
shardid_report_not_preloaded(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("shardid must be loaded via \"shared_preload_libraries\""),
			 errdetail("shardid_next keeps the last millisecond issued for each sequence in shared memory, which is only set up at server start."),
			 errhint("Add shardid to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
	pg_unreachable();
}
