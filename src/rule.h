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
 *
 * A value is issued in the current field when the clock has moved past
 * last.  Otherwise it joins last if it belongs to last's block, or takes
 * last + 1 if it starts a new block.  Either way the chosen field may run
 * at most one millisecond ahead of the clock: that lead lets a fast caller
 * start the next block without sleeping, and it keeps one millisecond from
 * mixing two blocks, so the IDs follow the sequence and the primary key
 * appends at its right edge.
 *
 * A value whose low ten bits last already holds (a sequence that cycled or
 * was set back) is treated as the start of a new block, so it too moves on
 * to a later field: last never holds the same ten bits twice.
 *
 * When the chosen field would be further ahead than that, the caller
 * waits.  A clock behind last by no more than the lead is expected: the
 * millisecond is exhausted, or the guard started at a fence that runs
 * ahead of the clock.  A clock further behind went back: up to
 * max_regression beyond the lead is waited out, more is refused.
 *
 * Pure and inline: it is unit-tested on its own (test/unit), and it is on
 * the hot path of shardid_next.
 */
static inline ShardidRule
shardid_rule_decide(int64_t last, int64_t last_block, bool value_taken,
					int64_t now, int64_t block, int64_t lead,
					int64_t max_regression,
					int64_t *issue, int64_t *wait_until,
					int64_t *regression)
{
	int64_t		target;
	int64_t		lag;

	if (now > last)
	{
		*issue = now;
		return SHARDID_ISSUE;
	}

	target = (block == last_block && !value_taken) ? last : last + 1;
	if (target <= now + 1)
	{
		*issue = target;
		return SHARDID_ISSUE;
	}

	/* the clock has to reach target - 1 before target may be used */
	*wait_until = target - 1;

	lag = last - now;
	*regression = lag;
	if (lag <= lead)
		return SHARDID_WAIT_LEAD;

	/*
	 * With a lead of 1 this refuses a lag of more than max_regression, as
	 * the setting says; a larger lead moves the limit out by as much.
	 */
	return lag - (lead - 1) > max_regression ? SHARDID_REFUSE : SHARDID_WAIT_CLOCK;
}

#endif							/* SHARDID_RULE_H */
