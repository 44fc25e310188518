/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  The one source of time for shardid, the conversions to Unix time,
 *	  and every sleep.
 *
 * shardid_next reads the wall clock through shardid_clock_now_ms() (in
 * clock.h, inline) and nowhere else: the same clock that clock_timestamp()
 * reports, not the transaction start of now().  Everything else in
 * shardid works in milliseconds after the Unix epoch, floored, so that a
 * time and the millisecond it falls in agree also before 1970.
 *
 * Every wait of shardid ends on a cancel, a statement_timeout or the
 * postmaster's death, and no lock is held while it sleeps: the sleeps are
 * here, and their callers (guard.c, fence.c) release every spinlock and
 * LWLock first.
 *
 * src/clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/pmsignal.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "codec.h"
#include "report.h"

/* Longest single sleep, so that a long wait notices interrupts promptly. */
#define CLOCK_MAX_SLEEP_US	10000

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

void
shardid_clock_pause(int64 us)
{
	/*
	 * An orphaned backend ends with shardid's own FATAL 57P01 (report.h),
	 * not silently, whichever wait it was in when its postmaster died.
	 */
	if (us >= 1000)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_POSTMASTER_DEATH,
						 (long) (us / 1000), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	else if (us > 0)
	{
		pgstat_report_wait_start(PG_WAIT_EXTENSION);
		pg_usleep((long) us);
		pgstat_report_wait_end();
	}
	shardid_require_postmaster();
	CHECK_FOR_INTERRUPTS();
}

void
shardid_clock_sleep_until(int64 unix_ms)
{
	int64		us = unix_ms * 1000 - shardid_clock_now_us();

	shardid_clock_pause(Min(us, CLOCK_MAX_SLEEP_US));
}

void
shardid_clock_sleep_ms(int64 ms)
{
	int64		until = shardid_clock_now_us() + ms * 1000;
	int64		now;

	/* the whole time, whatever sets the latch meanwhile */
	while ((now = shardid_clock_now_us()) < until)
		shardid_clock_pause(Min(until - now, CLOCK_MAX_SLEEP_US));
}
