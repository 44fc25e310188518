/*-------------------------------------------------------------------------
 *
 * slowsync.c
 *	  A slow disk for benchmarks: an LD_PRELOAD library that sleeps
 *	  SLOWSYNC_US microseconds (default 20,000) before each fsync and
 *	  fdatasync, then makes the real call.  PostgreSQL's WAL flushes use
 *	  fdatasync on Linux (wal_sync_method's default), so each flush, and
 *	  each commit that waits for one, pays the delay: a disk whose syncs
 *	  take 20 ms longer than this one's.
 *
 *	  Build: cc -shared -fPIC -O2 -o slowsync.so bench/slowsync.c -ldl
 *	  Use:   LD_PRELOAD=./slowsync.so SLOWSYNC_US=20000 pg_ctl start ...
 *
 * bench/slowsync.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static long
delay_us(void)
{
	static long us = -1;

	if (us < 0)
	{
		const char *s = getenv("SLOWSYNC_US");

		us = s != NULL ? atol(s) : 20000;
		if (us < 0)
			us = 0;
	}
	return us;
}

static void
slow_down(void)
{
	long		us = delay_us();
	struct timespec ts;

	if (us == 0)
		return;
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (us % 1000000) * 1000;
	while (nanosleep(&ts, &ts) != 0)
		;
}

int
fsync(int fd)
{
	static int	(*real) (int) = NULL;

	if (real == NULL)
		real = (int (*) (int)) dlsym(RTLD_NEXT, "fsync");
	slow_down();
	return real(fd);
}

int
fdatasync(int fd)
{
	static int	(*real) (int) = NULL;

	if (real == NULL)
		real = (int (*) (int)) dlsym(RTLD_NEXT, "fdatasync");
	slow_down();
	return real(fd);
}
