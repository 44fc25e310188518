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
 * When the chosen millisecond would be further ahead than that, the caller
 * waits.  A wait of up to one millisecond is an exhausted millisecond.  A
 * longer one means the clock reads earlier than an ID already issued, that
 * is, the clock went back: within max_regression_ms it is waited out,
 * beyond that it is refused.
 *
 * src/rule.c
 *
 *-------------------------------------------------------------------------
 */
#include "rule.h"

ShardidRule
shardid_rule_decide(int64_t last_ms, int64_t last_block, int64_t now_ms,
					int64_t block, int64_t max_regression_ms,
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

	target = (block == last_block) ? last_ms : last_ms + 1;
	if (target <= now_ms + 1)
	{
		*issue_ms = target;
		return SHARDID_ISSUE;
	}

	/* the clock has to reach target - 1 before target may be used */
	*wait_until_ms = target - 1;

	/*
	 * No millisecond is ever issued more than one ahead of the clock, so a
	 * steady clock reads at least last_ms - 1.  Anything less went back.
	 */
	regression = last_ms - 1 - now_ms;
	if (regression <= 0)
	{
		*regression_ms = 0;
		return SHARDID_WAIT_EXHAUSTED;
	}
	*regression_ms = regression;
	return regression > max_regression_ms ? SHARDID_REFUSE : SHARDID_WAIT_CLOCK;
}
