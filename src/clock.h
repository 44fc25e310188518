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

#include "layout.h"

/* The wall clock now, in microseconds after the Unix epoch. */
extern SHARDID_INTERNAL int64 shardid_clock_now_us(void);

/* Conversions between timestamptz and Unix milliseconds (floored). */
extern SHARDID_INTERNAL int64 shardid_timestamptz_to_unix_ms(TimestampTz ts);
extern SHARDID_INTERNAL TimestampTz shardid_unix_ms_to_timestamptz(int64 unix_ms);

#endif							/* SHARDID_CLOCK_H */
