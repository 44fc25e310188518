/*
 * bench/speck_bench.c: how many public ID permutations (P, src/speck.c)
 * one core computes per second, net of the loop and call overhead.
 *
 * In one run, repeated REPS times with the two loops interleaved:
 *   base  the same loop over the same IDs, calling a function that does
 *         nothing but return its argument mixed (not inlined)
 *   P     shardid_pubid_permute under the spec's test key 1
 *   Q     shardid_pubid_unpermute of the same values
 * and reports the median of each, P's and Q's rate net of the baseline,
 * and their ratio to the baseline.  Times are the thread's CPU time, so
 * that other processes on a shared machine do not count.  Built and run by bench/public_ids.sh.
 *
 * Usage: speck_bench [N [REPS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "speck.h"

#define MAX_REPS 31

static double
now_s(void)
{
	struct timespec ts;

	/* this thread's CPU time: a shared machine's other load stays out */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the baseline's callee: as cheap as a call gets, kept out of line */
__attribute__((noinline)) static int64_t
base_call(const ShardidSpeckKey *ks, int64_t v)
{
	__asm__ volatile("" : : "r"(ks) : "memory");
	return v ^ 0x5bd1e995;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return v[n / 2];
}

int
main(int argc, char **argv)
{
	long		n = argc > 1 ? atol(argv[1]) : 20000000;
	int			reps = argc > 2 ? atoi(argv[2]) : 7;
	ShardidPubidKeys keys;
	int			entry;
	double		t_base[MAX_REPS];
	double		t_p[MAX_REPS];
	double		t_q[MAX_REPS];
	uint64_t	sink = 0;
	int			r;
	double		base,
				p,
				q;

	if (n < 1 || reps < 1 || reps > MAX_REPS)
	{
		fprintf(stderr, "usage: speck_bench [N [REPS <= %d]]\n", MAX_REPS);
		return 2;
	}
	if (shardid_pubid_keys_parse("1:000102030405060708090a0b0c0d0e0f", &keys, &entry) != SHARDID_KEYS_OK)
		return 1;

	for (r = 0; r < reps; r++)
	{
		double		t0;
		long		i;

		/* IDs spread over [0, 2^63): i times an odd constant, bit 63 cleared */
		t0 = now_s();
		for (i = 0; i < n; i++)
			sink += (uint64_t) base_call(&keys.ks[1], (int64_t) (((uint64_t) i * UINT64_C(0x9e3779b97f4a7c15)) >> 1));
		t_base[r] = now_s() - t0;

		t0 = now_s();
		for (i = 0; i < n; i++)
			sink += (uint64_t) shardid_pubid_permute(&keys.ks[1], (int64_t) (((uint64_t) i * UINT64_C(0x9e3779b97f4a7c15)) >> 1));
		t_p[r] = now_s() - t0;

		t0 = now_s();
		for (i = 0; i < n; i++)
			sink += (uint64_t) shardid_pubid_unpermute(&keys.ks[1], (int64_t) (((uint64_t) i * UINT64_C(0x9e3779b97f4a7c15)) >> 1));
		t_q[r] = now_s() - t0;
	}
	base = median(t_base, reps);
	p = median(t_p, reps);
	q = median(t_q, reps);

	printf("values per loop: %ld, repetitions: %d (medians)\n", n, reps);
	printf("baseline loop: %.1f M calls/s (%.2f ns a call)\n", n / base / 1e6, base / n * 1e9);
	printf("P: %.1f M/s gross, %.1f M/s net of the baseline (%.2f ns net a call), %.2fx the baseline's time\n",
		   n / p / 1e6, n / (p - base) / 1e6, (p - base) / n * 1e9, p / base);
	printf("Q: %.1f M/s gross, %.1f M/s net of the baseline (%.2f ns net a call), %.2fx the baseline's time\n",
		   n / q / 1e6, n / (q - base) / 1e6, (q - base) / n * 1e9, q / base);
	printf("(checksum %llx)\n", (unsigned long long) sink);
	return 0;
}
