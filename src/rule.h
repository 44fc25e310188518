/*-------------------------------------------------------------------------
 *
 * rule.h
 *	  The guard's decision, as pure functions of its state and the clock.
 *
 * All times here are time fields: milliseconds since the ID's epoch, the
 * number an ID actually carries.  Comparing fields rather than wall-clock
 * milliseconds is what keeps one sequence used under two epochs from
 * repeating itself: a second epoch's smaller fields look like a clock that
 * went back, and are waited out or refused as such.
 *
 * For each sequence the guard remembers the last field it issued (last)
 * and which 1,024-aligned block of sequence values that field holds.  A
 * field never holds values from two blocks, and values within one block
 * differ in their low ten bits, so no two IDs of one sequence can be equal
 * while the sequence moves forward; a value whose ten bits the field
 * already holds (a sequence that cycled or was set back) does not join it.
 *
 * The decision comes in two parts: shardid_rule_field(), on the hot path,
 * says which field a value goes in, or that none may be used yet; and
 * shardid_rule_wait(), on the slow path, says what kind of wait that is.
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

/* shardid_rule_field(): no field may be used yet, the caller waits */
#define SHARDID_RULE_WAIT INT64_MIN

/* What the rule needs to know about one value. */
typedef struct ShardidRuleIn
{
	int64_t		last;			/* the last field issued, or a start */
	int64_t		now;			/* the clock, as a field */
	bool		joins;			/* the value may share last: it is of last's
								 * block, and last does not hold its ten bits */
} ShardidRuleIn;

/*
 * The field for a value.  When the clock has moved past last, the clock's
 * field.  Otherwise last itself if the value joins it, or last + 1: a new
 * block, or ten bits last already holds, move on.  Either way the field
 * may run at most one millisecond ahead of the clock: that millisecond lets a
 * fast caller start the next block without sleeping, and keeps one
 * millisecond from mixing two blocks, so the IDs follow the sequence and
 * the primary key appends at its right edge.  Further ahead than that:
 * SHARDID_RULE_WAIT.
 *
 * Pure and inline: it is unit-tested on its own (test/unit), and it is on
 * the hot path of shardid_next.
 */
static inline int64_t
shardid_rule_field(const ShardidRuleIn *in)
{
	int64_t		target;

	if (in->now > in->last)
		return in->now;
	target = in->joins ? in->last : in->last + 1;
	return target <= in->now + 1 ? target : SHARDID_RULE_WAIT;
}

typedef enum ShardidWait
{
	SHARDID_WAIT_AHEAD,			/* clock behind last, but within ahead */
	SHARDID_WAIT_CLOCK,			/* clock went back, within the limit */
	SHARDID_REFUSE				/* clock went back too far */
} ShardidWait;

/* What the rule needs to know about a value that must wait. */
typedef struct ShardidWaitIn
{
	int64_t		last;			/* as for shardid_rule_field() */
	int64_t		now;
	bool		joins;
	int64_t		ahead;			/* how far last may lie ahead of a clock that
								 * did not go back */
	int64_t		max_regression; /* shardid.max_clock_regression */
} ShardidWaitIn;

/* What shardid_rule_wait() found. */
typedef struct ShardidWaitOut
{
	ShardidWait kind;
	int64_t		until;			/* the clock reading to wait for */
	int64_t		regression;		/* how far the clock reads behind last */
} ShardidWaitOut;

/*
 * Why a value that shardid_rule_field() could not place waits, and until
 * when: the clock has to reach the field before the one it will take.
 *
 * ahead is 1 when last is an ID the guard issued (it runs at most one
 * millisecond ahead of the clock), more when last is a start the guard was
 * given, such as a durable fence after a restart, which runs ahead by
 * design.  A clock behind last by no more than ahead is expected: the
 * millisecond is exhausted, or the guard started at a fence that has not
 * been passed yet (SHARDID_WAIT_AHEAD).  A clock further behind went back:
 * up to max_regression beyond ahead is waited out (SHARDID_WAIT_CLOCK),
 * more is refused (SHARDID_REFUSE).  With ahead 1 this refuses a lag
 * of more than max_regression, as the setting says; a larger ahead moves
 * the limit out by as much.
 */
static inline ShardidWaitOut
shardid_rule_wait(const ShardidWaitIn *in)
{
	ShardidWaitOut out;
	int64_t		lag = in->last - in->now;

	out.until = (in->joins ? in->last : in->last + 1) - 1;
	out.regression = lag;
	if (lag <= in->ahead)
		out.kind = SHARDID_WAIT_AHEAD;
	else if (lag - (in->ahead - 1) > in->max_regression)
		out.kind = SHARDID_REFUSE;
	else
		out.kind = SHARDID_WAIT_CLOCK;
	return out;
}

#endif							/* SHARDID_RULE_H */
