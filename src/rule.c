/*-------------------------------------------------------------------------
 *
 * rule.c
 *	  The guard's decision, as a pure function of its state and the clock.
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
 * src/rule.c
 *
 *-------------------------------------------------------------------------
 */
#include "rule.h"

ShardidRule
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
