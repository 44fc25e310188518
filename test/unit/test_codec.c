/*
 * test_codec.c
 *	  Unit tests of src/codec.c and the rule in src/rule.h, outside the server.
 *
 * Checks the published example, the horizon, shortcode round trips over
 * every bit width, and the guard's rule by simulation: a fast caller on a
 * steady clock, then a clock that steps back.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "rule.h"

int			test_speck(int *failed);	/* test_speck.c */

static int	passed;
static int	failed;

#define CHECK(cond) \
	do { \
		if (cond) \
			passed++; \
		else \
		{ \
			failed++; \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

/* 2026-10-23 09:20:00 UTC in Unix ms */
#define EXAMPLE_MS INT64_C(1792747200000)

static void
test_example(void)
{
	int64_t		id = 0;
	int64_t		ms;
	int32_t		shard;
	int32_t		seq;

	CHECK(shardid_compose(EXAMPLE_MS, SHARDID_DEFAULT_EPOCH_UNIX_MS, 1341, 1001, &id) == SHARDID_OK);
	CHECK(id == INT64_C(4185136929178974185));
	CHECK(shardid_split(id, SHARDID_DEFAULT_EPOCH_UNIX_MS, &ms, &shard, &seq) == SHARDID_OK);
	CHECK(ms == EXAMPLE_MS && shard == 1341 && seq == 1001);
}

static void
test_ranges(void)
{
	int64_t		e = SHARDID_DEFAULT_EPOCH_UNIX_MS;
	int64_t		id = 0;

	CHECK(shardid_horizon_ms(e) == INT64_C(2393351627775));	/* 2045-11-03 19:53:47.775 */
	CHECK(shardid_compose(shardid_horizon_ms(e), e, 8191, 1023, &id) == SHARDID_OK);
	CHECK(id == INT64_MAX);
	CHECK(shardid_compose(shardid_horizon_ms(e) + 1, e, 0, 0, &id) == SHARDID_PAST_HORIZON);
	CHECK(shardid_compose(e - 1, e, 0, 0, &id) == SHARDID_BEFORE_EPOCH);
	CHECK(shardid_compose(e, e, 0, 0, &id) == SHARDID_OK && id == 0);
	CHECK(shardid_compose(e, e, -1, 0, &id) == SHARDID_SHARD_OUT_OF_RANGE);
	CHECK(shardid_compose(e, e, 8192, 0, &id) == SHARDID_SHARD_OUT_OF_RANGE);
	CHECK(shardid_compose(e, e, 0, -1, &id) == SHARDID_SEQ_OUT_OF_RANGE);
	CHECK(shardid_compose(e, e, 0, 1024, &id) == SHARDID_SEQ_OUT_OF_RANGE);
	CHECK(shardid_split(-1, e, NULL, NULL, NULL) == SHARDID_NEGATIVE_ID);
	CHECK(shardid_seq_block(-1) == -1 && shardid_seq_slot(-1) == 1023);
	CHECK(shardid_seq_block(1023) == 0 && shardid_seq_block(1024) == 1);
	CHECK(shardid_seq_slot(INT64_MIN) == 0 && shardid_seq_slot(INT64_MAX) == 1023);
}

static void
test_shortcode(void)
{
	char		buf[SHARDID_SHORTCODE_MAXLEN + 1];
	int64_t		id = 0;
	size_t		bad = 0;
	int			bits;

	CHECK(shardid_shortcode_encode(0, buf) == 1 && strcmp(buf, "A") == 0);
	CHECK(shardid_shortcode_encode(63, buf) == 1 && strcmp(buf, "_") == 0);
	CHECK(shardid_shortcode_encode(64, buf) == 2 && strcmp(buf, "BA") == 0);
	CHECK(shardid_shortcode_encode(INT64_MAX, buf) == 11 && strcmp(buf, "H__________") == 0);
	CHECK(shardid_shortcode_encode(INT64_C(4185136929178974185), buf) == 11 &&
		  strcmp(buf, "DoUl90AFPfp") == 0);

	/* every width from 1 to 63 bits, and neighbours, round trip */
	for (bits = 1; bits <= 63; bits++)
	{
		int64_t		v = (int64_t) ((UINT64_C(1) << bits) - 1);
		int64_t		cand[3] = {v, v / 2 + 1, v ^ 0x5555555555555555LL};
		int			i;

		for (i = 0; i < 3; i++)
		{
			int64_t		x = cand[i] < 0 ? -cand[i] : cand[i];
			size_t		n = shardid_shortcode_encode(x, buf);

			CHECK(shardid_shortcode_decode(buf, n, &id, &bad) == SHARDID_OK && id == x);
		}
	}

	CHECK(shardid_shortcode_decode("", 0, &id, &bad) == SHARDID_CODE_EMPTY);
	CHECK(shardid_shortcode_decode("AB", 2, &id, &bad) == SHARDID_CODE_LEADING_ZERO);
	CHECK(shardid_shortcode_decode("A", 1, &id, &bad) == SHARDID_OK && id == 0);
	CHECK(shardid_shortcode_decode("ab+c", 4, &id, &bad) == SHARDID_CODE_BAD_CHAR && bad == 2);
	CHECK(shardid_shortcode_decode("ab=", 3, &id, &bad) == SHARDID_CODE_BAD_CHAR && bad == 2);
	CHECK(shardid_shortcode_decode("BAAAAAAAAAAA", 12, &id, &bad) == SHARDID_CODE_TOO_LONG);
	CHECK(shardid_shortcode_decode("IAAAAAAAAAA", 11, &id, &bad) == SHARDID_CODE_OVERFLOW);
	CHECK(shardid_shortcode_decode("__________", 10, &id, &bad) == SHARDID_OK &&
		  id == (INT64_C(1) << 60) - 1);
}

/*
 * The two parts of the rule as one decision, as guard.c makes it: the
 * field (shardid_rule_field), or why and until when to wait
 * (shardid_rule_wait).
 */
#define RULE_ISSUE (-1)
typedef int RuleResult;

static RuleResult
rule_decide(int64_t last, int64_t last_block, bool taken, int64_t now,
			int64_t block, int64_t ahead, int64_t max_regression,
			int64_t *issue, int64_t *until, int64_t *regression)
{
	ShardidRuleIn in = {last, now, block == last_block && !taken};
	int64_t		field = shardid_rule_field(&in);
	ShardidWaitIn w = {last, now, in.joins, ahead, max_regression};
	ShardidWaitOut out;

	if (field != SHARDID_RULE_WAIT)
	{
		*issue = field;
		return RULE_ISSUE;
	}
	out = shardid_rule_wait(&w);
	*until = out.until;
	*regression = out.regression;
	return (RuleResult) out.kind;
}

/*
 * Simulate a caller that takes one value every step_ns simulated
 * nanoseconds from one sequence, on a steady clock, and check the guard's
 * promises: never more than one ms ahead, time never back, IDs strictly
 * increasing, at most 1,024 per ms.  Returns how often it had to wait.
 */
static int
rule_fast_caller(int64_t step_ns)
{
	int64_t		last_ms = 0;
	int64_t		last_block = SHARDID_NO_BLOCK;
	int64_t		now_ns = INT64_C(1700000000000000000);
	int64_t		value;
	int64_t		prev_id = -1;
	int64_t		per_ms = 0;
	int64_t		prev_ms = -1;
	int			ok = 1;
	int			waits = 0;

	for (value = 1; value <= 100000; value++)
	{
		for (;;)
		{
			int64_t		issue = 0,
						until = 0,
						reg = 0;
			RuleResult r = rule_decide(last_ms, last_block, false, now_ns / 1000000,
												shardid_seq_block(value), 1, 1000,
												&issue, &until, &reg);

			if (r == RULE_ISSUE)
			{
				int64_t		id = 0;

				if (issue > now_ns / 1000000 + 1 || issue < last_ms)
					ok = 0;
				if (shardid_compose(issue, SHARDID_DEFAULT_EPOCH_UNIX_MS, 5,
									shardid_seq_slot(value), &id) != SHARDID_OK)
					ok = 0;
				if (id <= prev_id)
					ok = 0;
				prev_id = id;
				per_ms = (issue == prev_ms) ? per_ms + 1 : 1;
				if (per_ms > SHARDID_SEQ_PER_MS)
					ok = 0;
				prev_ms = issue;
				last_ms = issue;
				last_block = shardid_seq_block(value);
				break;
			}
			if (r != (RuleResult) SHARDID_WAIT_AHEAD)
				ok = 0;
			waits++;
			now_ns = until * 1000000;	/* sleep exactly until then */
		}
		now_ns += step_ns;
	}
	CHECK(ok);
	return waits;
}

/*
 * A sequence that cycles through `period` values (MAXVALUE period - 1
 * CYCLE), taken as fast as possible: with the bitmap of values issued in
 * last_ms, as guard.c keeps it, no (millisecond, value) pair repeats.
 */
static void
test_rule_cycle(int period)
{
	int64_t		last_ms = 0;
	int64_t		last_block = SHARDID_NO_BLOCK;
	uint64_t	issued[SHARDID_SEQ_PER_MS / 64] = {0};
	int64_t		now_ns = INT64_C(1700000000000000000);
	int64_t		prev_ms = -1;
	int			i;
	int			ok = 1;
	static unsigned char seen[8192][1024 / 8];

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 20000; i++)
	{
		int64_t		value = i % period;
		int32_t		v10 = shardid_seq_slot(value);

		for (;;)
		{
			int64_t		issue = 0,
						until = 0,
						reg = 0;
			bool		taken = (issued[v10 / 64] >> (v10 % 64)) & 1;
			RuleResult r = rule_decide(last_ms, last_block, taken,
												now_ns / 1000000,
												shardid_seq_block(value), 1, 1000,
												&issue, &until, &reg);

			if (r == RULE_ISSUE)
			{
				int64_t		rel = issue - INT64_C(1700000000000);

				if (issue < prev_ms || rel < 0 || rel >= 8192)
					ok = 0;
				else if (seen[rel][v10 / 8] & (1 << (v10 % 8)))
					ok = 0;		/* a duplicate ID */
				else
					seen[rel][v10 / 8] |= 1 << (v10 % 8);
				if (issue != last_ms || shardid_seq_block(value) != last_block)
					memset(issued, 0, sizeof(issued));
				issued[v10 / 64] |= UINT64_C(1) << (v10 % 64);
				last_ms = prev_ms = issue;
				last_block = shardid_seq_block(value);
				break;
			}
			if (r != (RuleResult) SHARDID_WAIT_AHEAD)
				ok = 0;
			now_ns = until * 1000000;
		}
		now_ns += 100;			/* ten thousand a millisecond */
	}
	CHECK(ok);
}

static void
test_rule_clock(void)
{
	int64_t		issue = 0,
				until = 0,
				reg = 0;

	/* steady: next ms issues at once */
	CHECK(rule_decide(100, 7, false, 101, 7, 1, 1000, &issue, &until, &reg) == RULE_ISSUE && issue == 101);
	/* same ms, same block: joins it */
	CHECK(rule_decide(100, 7, false, 100, 7, 1, 1000, &issue, &until, &reg) == RULE_ISSUE && issue == 100);
	/* same ms, new block: one ahead */
	CHECK(rule_decide(100, 7, false, 100, 8, 1, 1000, &issue, &until, &reg) == RULE_ISSUE && issue == 101);
	/* already one ahead, new block: exhausted, wait for 100 */
	CHECK(rule_decide(101, 8, false, 100, 9, 1, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_WAIT_AHEAD &&
		  until == 101 && reg == 1);
	/* one ahead, same block: fine */
	CHECK(rule_decide(101, 8, false, 100, 8, 1, 1000, &issue, &until, &reg) == RULE_ISSUE && issue == 101);
	/* clock 5 ms back: waited out */
	CHECK(rule_decide(100, 7, false, 95, 7, 1, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_WAIT_CLOCK &&
		  reg == 5 && until == 99);
	/* clock an hour back: refused, with the size */
	CHECK(rule_decide(3600100, 7, false, 100, 7, 1, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_REFUSE &&
		  reg == 3600000);
	/* exactly at the limit: still waited out */
	CHECK(rule_decide(1100, 7, false, 100, 7, 1, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_WAIT_CLOCK);
	CHECK(rule_decide(1101, 7, false, 100, 7, 1, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_REFUSE);
	/* a value whose ten bits last_ms holds moves on, in its own block too */
	CHECK(rule_decide(100, 7, true, 100, 7, 1, 1000, &issue, &until, &reg) == RULE_ISSUE && issue == 101);
	CHECK(rule_decide(101, 7, true, 100, 7, 1, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_WAIT_AHEAD);
	/* limit 0 refuses any step back */
	CHECK(rule_decide(100, 7, false, 98, 7, 1, 0, &issue, &until, &reg) == (RuleResult) SHARDID_REFUSE);
	/* a stale value from an older block moves on, never back */
	CHECK(rule_decide(100, 8, false, 100, 7, 1, 1000, &issue, &until, &reg) == RULE_ISSUE && issue == 101);
	/* a fresh entry starts at the floor */
	CHECK(rule_decide(100, SHARDID_NO_BLOCK, false, 100, 0, 1, 1000, &issue, &until, &reg) == RULE_ISSUE &&
		  issue == 101);

	/*
	 * A start at a fence that runs 625 ms ahead (reach 625): a clock up to
	 * 625 behind it waits for it; the regression limit counts from there.
	 */
	CHECK(rule_decide(10000, SHARDID_NO_BLOCK, true, 9375, 0, 625, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_WAIT_AHEAD &&
		  until == 10000 && reg == 625);
	CHECK(rule_decide(10000, SHARDID_NO_BLOCK, true, 9374, 0, 625, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_WAIT_CLOCK &&
		  reg == 626);
	CHECK(rule_decide(10000, SHARDID_NO_BLOCK, true, 8376, 0, 625, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_WAIT_CLOCK);
	CHECK(rule_decide(10000, SHARDID_NO_BLOCK, true, 8375, 0, 625, 1000, &issue, &until, &reg) == (RuleResult) SHARDID_REFUSE &&
		  reg == 1625);
	/* at the fence the first ID takes the field after it, one ahead */
	CHECK(rule_decide(10000, SHARDID_NO_BLOCK, true, 10000, 0, 625, 1000, &issue, &until, &reg) == RULE_ISSUE &&
		  issue == 10001);
	/* with limit 0 a clock behind a fence is still waited out within its reach */
	CHECK(rule_decide(10000, SHARDID_NO_BLOCK, true, 9500, 0, 625, 0, &issue, &until, &reg) == (RuleResult) SHARDID_WAIT_AHEAD);
	CHECK(rule_decide(10000, SHARDID_NO_BLOCK, true, 9374, 0, 625, 0, &issue, &until, &reg) == (RuleResult) SHARDID_REFUSE);
}

int
main(void)
{
	test_example();
	test_ranges();
	test_shortcode();
	CHECK(rule_fast_caller(1000000) == 0);	/* one a millisecond */
	CHECK(rule_fast_caller(1400) == 0); /* about 714 a millisecond */
	CHECK(rule_fast_caller(800) > 0);	/* 1,250 a millisecond: must wait */
	CHECK(rule_fast_caller(1) > 0); /* a million a millisecond */
	test_rule_clock();
	test_rule_cycle(4);
	test_rule_cycle(1024);
	test_rule_cycle(1500);
	passed += test_speck(&failed);

	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
