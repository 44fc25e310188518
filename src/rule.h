/*-------------------------------------------------------------------------
 *
 * rule.h
 *	  The guard's decision, as a pure function of its state and the clock.
 *
 * All times here are time fields: milliseconds since the ID's epoch, the
 * number an ID actually carries.  Comparing fields rather than wall-clock
 * milliseconds is what keeps one sequence used under two epochs from
 * repeating itself: a second epoch's smaller fields look like a clock that
 * went back, and are waited out or refused as such.
 *
 * For each sequence the guard remembers the last field it issued (last)
 * and which 1,024-aligned block of sequence values that field holds
 * (last_block).  A field never holds values from two blocks, and values
 * within one block differ in their low ten bits, so no two IDs of one
 * sequence can be equal while the sequence moves forward.
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

/* last_block of an entry that has not issued since it was (re)started */
#define SHARDID_NO_BLOCK INT64_MIN

typedef enum ShardidRule
{
	SHARDID_ISSUE,				/* issue at *issue */
	SHARDID_WAIT_LEAD,			/* clock behind last, but within the lead */
	SHARDID_WAIT_CLOCK,			/* clock went back, within the limit */
	SHARDID_REFUSE				/* clock went back too far */
} ShardidRule;

/*
 * Decide where a sequence value of block `block` goes, given the clock as
 * a field, now.  value_taken says whether last already holds a value with
 * the same low ten bits (the sequence cycled or was set back): such a
 * value cannot join last even if its block matches.
 *
 * lead is how far last may lie ahead of a clock that did not go back: 1
 * when last is an ID the guard issued (it runs at most one millisecond
 * ahead of the clock), more when last is a start the guard was given, such
 * as the durable fence after a restart, which runs ahead by design.
 *
 * On SHARDID_ISSUE, *issue is the field to use (after last, or last
 * itself; never after now + 1).  Otherwise *wait_until is the clock
 * reading to wait for, and *regression how far the clock reads behind
 * last.  A lag of up to lead is SHARDID_WAIT_LEAD (an exhausted
 * millisecond, or a clock that has not yet passed the fence); beyond
 * that, up to max_regression more is SHARDID_WAIT_CLOCK, and more than
 * that is SHARDID_REFUSE.
 */
extern SHARDID_INTERNAL ShardidRule shardid_rule_decide(int64_t last, int64_t last_block,
														bool value_taken,
														int64_t now, int64_t block,
														int64_t lead,
														int64_t max_regression,
														int64_t *issue,
														int64_t *wait_until,
														int64_t *regression);

#endif							/* SHARDID_RULE_H */
