/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  The bit layout of a shardid ID, in one place.
 *
 *	  bit 63 | 62 ........ 23 | 22 ...... 10 | 9 ...... 0
 *	    0    | ms since epoch | logical shard| sequence
 *
 * The time field is nominally 41 bits wide, but an ID must stay a positive
 * signed 64-bit integer, so bit 63 (the top bit of the time field) is never
 * set: only 40 bits of milliseconds (about 34.8 years) are usable.
 *
 * This header is plain C (stdint only) so that the codec can be unit-tested
 * and fuzzed outside the server.
 *
 * src/layout.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_LAYOUT_H
#define SHARDID_LAYOUT_H

#include <stdint.h>

/*
 * Functions shared between shardid's own files, not with the server: kept
 * out of the library's dynamic symbol table, so that calls between them
 * are direct rather than through the PLT.
 */
#if defined(__GNUC__)
#define SHARDID_INTERNAL __attribute__((visibility("hidden")))
#else
#define SHARDID_INTERNAL
#endif

#define SHARDID_SEQ_BITS		10
#define SHARDID_SHARD_BITS		13
#define SHARDID_TIME_BITS		41	/* as published */
#define SHARDID_USABLE_TIME_BITS 40 /* keeps bit 63 clear */

#define SHARDID_SHARD_SHIFT		SHARDID_SEQ_BITS
#define SHARDID_TIME_SHIFT		(SHARDID_SEQ_BITS + SHARDID_SHARD_BITS)

#define SHARDID_SEQ_MASK		((INT64_C(1) << SHARDID_SEQ_BITS) - 1)
#define SHARDID_SHARD_MASK		((INT64_C(1) << SHARDID_SHARD_BITS) - 1)

#define SHARDID_MAX_SEQ			((int32_t) SHARDID_SEQ_MASK)	/* 1023 */
#define SHARDID_MAX_SHARD		((int32_t) SHARDID_SHARD_MASK)	/* 8191 */
#define SHARDID_SEQ_PER_MS		(SHARDID_MAX_SEQ + 1)	/* 1024 */

/* The largest time field that keeps the ID positive: 2^40 - 1 ms. */
#define SHARDID_MAX_TIME_MS		((INT64_C(1) << SHARDID_USABLE_TIME_BITS) - 1)

/* Default epoch: 2011-01-01 00:00:00 UTC, in ms after the Unix epoch. */
#define SHARDID_DEFAULT_EPOCH_UNIX_MS INT64_C(1293840000000)

/* Shortcodes: base 64, most significant digit first. */
#define SHARDID_SHORTCODE_BITS	6
#define SHARDID_SHORTCODE_MAXLEN 11 /* ceil(63 / 6) */

#endif							/* SHARDID_LAYOUT_H */
