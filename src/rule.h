/*-------------------------------------------------------------------------
 *
 * rule.h
 *	  The guard's decision, as a pure function of its state and the clock.
 *
 * For each sequence the guard remembers the last millisecond it issued
 * (last_ms) and which 1,024-aligned block of sequence values that
 * millisecond holds (last_block).  A millisecond never holds values from
 * two blocks, and values within one block differ in their low ten bits, so
 * no two IDs of one sequence can be equal while the sequence moves forward.
 *
 * src/rule.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_RULE_H
#define SHARDID_RULE_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"

/* last_block of an entry that has not issued since it was (re)created */
#define SHARDID_NO_BLOCK INT64_MIN

typedef enum ShardidRule
{
	SHARDID_ISSUE,				/* issue at *issue_ms */
	SHARDID_WAIT_EXHAUSTED,		/* next millisecond needed; clock is fine */
	SHARDID_WAIT_CLOCK,			/* clock went back, within the limit */
	SHARDID_REFUSE				/* clock went back too far */
} ShardidRule;

/*
 * Decide where a sequence value of block `block` goes, given the current
 * time now_ms.  value_taken says whether last_ms already holds a value with
 * the same low ten bits (the sequence cycled or was set back): such a value
 * cannot join last_ms even if its block matches.
 *
 * On SHARDID_ISSUE, *issue_ms is the millisecond to use (after last_ms, or
 * last_ms itself; never after now_ms + 1).  Otherwise *wait_until_ms is the
 * clock reading to wait for, and *regression_ms how far the clock reads
 * behind last_ms (at most 1, the guard's own lead, for an exhausted
 * millisecond).
 */
extern SHARDID_INTERNAL ShardidRule shardid_rule_decide(int64_t last_ms, int64_t last_block,
									   bool value_taken,
									   int64_t now_ms, int64_t block,
									   int64_t max_regression_ms,
									   int64_t *issue_ms,
									   int64_t *wait_until_ms,
									   int64_t *regression_ms);

#endif							/* SHARDID_RULE_H */
