/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  The one source of time for shardid, and conversions to Unix time.
 *
 * shardid_next reads the wall clock through shardid_clock_now_us() (in
 * clock.h, inline) and nowhere else: the same clock that clock_timestamp()
 * reports, not the transaction start of now().
 * Everything else in shardid works in milliseconds after the Unix epoch,
 * floored, so that a time and the millisecond it falls in agree also
 * before 1970.
 *
 * src/clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "clock.h"
#include "codec.h"

int64
shardid_timestamptz_to_unix_ms(TimestampTz ts)
{
	return shardid_floor_div(ts, 1000) + UNIX_TO_POSTGRES_MS;
}

TimestampTz
shardid_unix_ms_to_timestamptz(int64 unix_ms)
{
	return (unix_ms - UNIX_TO_POSTGRES_MS) * 1000;
}
