/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  The one source of time for shardid, the conversions to Unix time,
 *	  and every sleep.
 *
 * src/clock.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CLOCK_H
#define SHARDID_CLOCK_H

#include <sys/time.h>

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
 * shardid reads the time, from gettimeofday() as GetCurrentTimestamp()
 * does (and libfaketime fakes it as it does the rest).  Inline, as
 * shardid_next reads it for every ID.
 */
static inline int64
shardid_clock_now_us(void)
{
	struct timeval tp;

	gettimeofday(&tp, NULL);
	return (int64) tp.tv_sec * 1000000 + tp.tv_usec;
}

/*
 * The same in whole milliseconds, floored: what shardid_next compares.  A
 * clock before 1970 is not one a server runs on; the division then
 * truncates towards zero, which only moves such a reading up by less than
 * a millisecond.  The reading goes into a static rather than onto the
 * stack (a backend has one thread), so that the hot path that reads it
 * needs no stack protector.
 */
static struct timeval shardid_clock_tv;

static inline int64
shardid_clock_now_ms(void)
{
	gettimeofday(&shardid_clock_tv, NULL);
	return (int64) shardid_clock_tv.tv_sec * 1000 + shardid_clock_tv.tv_usec / 1000;
}

/* Conversions between timestamptz and Unix milliseconds (floored). */
extern SHARDID_INTERNAL int64 shardid_timestamptz_to_unix_ms(TimestampTz ts);
extern SHARDID_INTERNAL TimestampTz shardid_unix_ms_to_timestamptz(int64 unix_ms);

/*
 * Sleep us microseconds at most, then service interrupts
 * (statement_timeout, pg_cancel_backend).  A sleep of a millisecond or
 * more waits on the latch, which ends it at once if the postmaster dies; a
 * shorter one checks for that after it.  Either way a backend whose
 * postmaster is gone exits here.
 */
extern SHARDID_INTERNAL void shardid_clock_pause(int64 us);

/*
 * Sleep until the clock reads unix_ms, or for 10 ms if that is sooner,
 * then service interrupts and the postmaster's death: the caller looks at
 * the clock again and decides anew.
 */
extern SHARDID_INTERNAL void shardid_clock_sleep_until(int64 unix_ms);

/* Sleep ms milliseconds in all, servicing interrupts meanwhile. */
extern SHARDID_INTERNAL void shardid_clock_sleep_ms(int64 ms);

#endif							/* SHARDID_CLOCK_H */
