/*-------------------------------------------------------------------------
 *
 * codec.h
 *	  Pure arithmetic on shardid IDs: composing, splitting, shortcodes.
 *
 * Nothing here calls into PostgreSQL, so the same object file links into
 * the unit tests and the fuzzer under test/unit.  Times are integer
 * milliseconds after the Unix epoch.
 *
 * src/codec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CODEC_H
#define SHARDID_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

typedef enum ShardidStatus
{
	SHARDID_OK = 0,
	SHARDID_SHARD_OUT_OF_RANGE,
	SHARDID_SEQ_OUT_OF_RANGE,
	SHARDID_BEFORE_EPOCH,
	SHARDID_PAST_HORIZON,
	SHARDID_NEGATIVE_ID,
	SHARDID_CODE_EMPTY,
	SHARDID_CODE_BAD_CHAR,
	SHARDID_CODE_LEADING_ZERO,
	SHARDID_CODE_TOO_LONG,
	SHARDID_CODE_OVERFLOW
} ShardidStatus;

/*
 * Floor division for a positive divisor.  Inline, as it is on the hot path
 * of shardid_next, where a constant divisor becomes a multiplication.
 */
static inline int64_t
shardid_floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	/* a >= 0, as a clock reading is: truncation is the floor */
	if (a >= 0)
		return q;
	if (a % b != 0)
		q--;
	return q;
}

/*
 * The 1,024-aligned block a sequence value belongs to, floor(value / 1024),
 * and its ten-bit slot, value mod 1024 (0 to 1023 also for negative
 * values of a descending sequence).  The arithmetic shift and the mask are
 * that floor and that modulus in two's complement, which every compiler
 * PostgreSQL supports uses.
 */
static inline int64_t
shardid_seq_block(int64_t value)
{
	return value >> SHARDID_SEQ_BITS;
}

static inline int32_t
shardid_seq_slot(int64_t value)
{
	return (int32_t) (value & SHARDID_SEQ_MASK);
}

/*
 * The ID of a time field, a shard and a ten-bit sequence slot, all known
 * to be in range.  Inline, for the hot path of shardid_next, whose guard
 * has checked them.
 */
static inline int64_t
shardid_id_from_field(int64_t field, int32_t shard, int32_t seq)
{
	return (field << SHARDID_TIME_SHIFT) |
		((int64_t) shard << SHARDID_SHARD_SHIFT) |
		(int64_t) seq;
}

/*
 * Build an ID from a time, a shard and a 10-bit sequence slot.  Checks every
 * part; on failure *id is left alone.
 */
extern SHARDID_INTERNAL ShardidStatus shardid_compose(int64_t unix_ms, int64_t epoch_ms,
									 int32_t shard, int32_t seq, int64_t *id);

/* Split a non-negative ID into its parts. */
extern SHARDID_INTERNAL ShardidStatus shardid_split(int64_t id, int64_t epoch_ms,
								   int64_t *unix_ms, int32_t *shard,
								   int32_t *seq);

/* The last millisecond (Unix ms) that still encodes to a positive ID. */
extern SHARDID_INTERNAL int64_t shardid_horizon_ms(int64_t epoch_ms);

/*
 * Write the shortcode of a non-negative id into buf (at least
 * SHARDID_SHORTCODE_MAXLEN + 1 bytes), NUL-terminated; returns its length.
 */
extern SHARDID_INTERNAL size_t shardid_shortcode_encode(int64_t id, char *buf);

/*
 * Parse a shortcode of len bytes.  On SHARDID_CODE_BAD_CHAR, *bad_pos is the
 * offset of the first bad byte.
 */
extern SHARDID_INTERNAL ShardidStatus shardid_shortcode_decode(const char *code, size_t len,
											  int64_t *id, size_t *bad_pos);

#endif							/* SHARDID_CODEC_H */
