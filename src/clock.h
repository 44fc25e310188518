/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  The one source of time for shardid, and conversions to Unix time.
 *
 * src/clock.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CLOCK_H
#define SHARDID_CLOCK_H

#include "datatype/timestamp.h"
#include "utils/timestamp.h"

#include "layout.h"

/*
 * Milliseconds from 1970-01-01 to 2000-01-01, PostgreSQL's own epoch.
 * Conversions go through milliseconds so that no valid timestamptz, not
 * even one near the end of its range, overflows on the way.
 */
#define UNIX_TO_POSTGRES_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/*
 * The wall clock now, in microseconds after the Unix epoch: the one place
 * shardid reads the time.  Inline, as shardid_next reads it for every ID.
 */
static inline int64
shardid_clock_now_us(void)
{
	return GetCurrentTimestamp() + UNIX_TO_POSTGRES_MS * 1000;
}

/* Conversions between timestamptz and Unix milliseconds (floored). */
extern SHARDID_INTERNAL int64 shardid_timestamptz_to_unix_ms(TimestampTz ts);
extern SHARDID_INTERNAL TimestampTz shardid_unix_ms_to_timestamptz(int64 unix_ms);

#endif							/* SHARDID_CLOCK_H */
