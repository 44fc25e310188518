/*-------------------------------------------------------------------------
 *
 * rule.c
 *	  The guard's decision, as a pure function of its state and the clock.
 *
 * A value is issued in the current millisecond when the clock has moved
 * past last_ms.  Otherwise it joins last_ms if it belongs to last_ms's
 * block, or takes last_ms + 1 if it starts a new block.  Either way the
 * chosen millisecond may run at most one millisecond ahead of the clock:
 * that lead lets a fast caller start the next block without sleeping, and
 * it keeps one millisecond from mixing two blocks, so the IDs follow the
 * sequence and the primary key appends at its right edge.
 *
 A value whose low ten bits last_ms already holds (a sequence that cycled
 * or was set back) is treated as the start of a new block, so it too moves
 * on to a later millisecond: last_ms never holds the same ten bits twice.
 *
 * When the chosen millisecond would be further ahead than that, the caller
 * waits.  A clock one millisecond behind last_ms is the guard's own lead:
 * the millisecond is exhausted.  A clock further behind went back: up to
 * max_regression_ms behind it is waited out, beyond that it is refused.
 *
 * src/rule.c
 *
 *-------------------------------------------------------------------------
 */
#include "rule.h"

ShardidRule
shardid_rule_decide(int64_t last_ms, int64_t last_block, bool value_taken,
					int64_t now_ms, int64_t block, int64_t max_regression_ms,
					int64_t *issue_ms, int64_t *wait_until_ms,
					int64_t *regression_ms)
{
	int64_t		target;
	int64_t		regression;

	if (now_ms > last_ms)
	{
		*issue_ms = now_ms;
		return SHARDID_ISSUE;
	}

	target = (block == last_block && !value_taken) ? last_ms : last_ms + 1;
	if (target <= now_ms + 1)
	{
		*issue_ms = target;
		return SHARDID_ISSUE;
	}

	/* the clock has to reach target - 1 before target may be used */
	*wait_until_ms = target - 1;

	/*
	 * No millisecond is ever issued more than one ahead of the clock, so a
	 * steady clock reads at least last_ms - 1: a lag of one is the guard's
	 * own lead.  A larger lag means the clock went back.
	 */
	regression = last_ms - now_ms;
	*regression_ms = regression;
	if (regression <= 1)
		return SHARDID_WAIT_EXHAUSTED;
	return regression > max_regression_ms ? SHARDID_REFUSE : SHARDID_WAIT_CLOCK;
}
