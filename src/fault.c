/*-------------------------------------------------------------------------
 *
 * fault.c
 *	  The fault points of a `make FAULTS=1` build (src/fault.h): their
 *	  settings, and what a point does when it is armed.  Not in the
 *	  objects of any other build (the Makefile adds it with FAULTS=1).
 *
 * src/fault.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/resource.h>
#include <stdlib.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/pmsignal.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "fault.h"

#ifdef SHARDID_FAULTS

enum
{
	FAULT_CRASH,
	FAULT_STALL
};

static const struct config_enum_entry fault_actions[] = {
	{"crash", FAULT_CRASH, false},
	{"stall", FAULT_STALL, false},
	{NULL, 0, false}
};

static const char *const fault_points[] = {SHARDID_FAULT_POINTS};

static char *fault_point = NULL;
static int	fault_action = FAULT_CRASH;
static int	fault_stall_ms = 5000;

/* this arming fired in this backend */
static bool fired = false;

static bool
fault_point_check(char **newval, void **extra, GucSource source)
{
	StringInfoData names;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	for (size_t i = 0; i < lengthof(fault_points); i++)
		if (strcmp(*newval, fault_points[i]) == 0)
			return true;
	initStringInfo(&names);
	for (size_t i = 0; i < lengthof(fault_points); i++)
		appendStringInfo(&names, "%s%s", i > 0 ? ", " : "", fault_points[i]);
	GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
	GUC_check_errdetail("shardid's fault points are: %s.", names.data);
	return false;
}

static void
fault_rearm(const char *newval, void *extra)
{
	fired = false;
}

static void
fault_rearm_int(int newval, void *extra)
{
	fired = false;
}

void
shardid_fault_define(void)
{
	DefineCustomStringVariable("shardid.fault_point",
							   "Arms a fault point (a FAULTS=1 build's, for the crash sweep).",
							   NULL,
							   &fault_point,
							   "",
							   PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							   fault_point_check, fault_rearm, NULL);
	DefineCustomEnumVariable("shardid.fault_action",
							 "Sets what an armed fault point does: crash (abort()) or stall.",
							 NULL,
							 &fault_action,
							 FAULT_CRASH, fault_actions,
							 PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							 NULL, fault_rearm_int, NULL);
	DefineCustomIntVariable("shardid.fault_stall",
							"Sets how long a stalled fault point sleeps.",
							NULL,
							&fault_stall_ms,
							5000, 0, 600 * 1000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
}

/*
 * A point: nothing unless armed with its name and not yet fired in this
 * backend since it was armed.  A crash is abort(), with no core file (the
 * sweep makes dozens); a stall sleeps, checking for interrupts (held off
 * in the transaction callbacks, so bounded there by its length alone),
 * and ends early if the postmaster dies, the code then going on as it
 * would after a slow disk.
 */
void
shardid_fault(const char *point)
{
	TimestampTz until;

	if (fired || fault_point == NULL || strcmp(fault_point, point) != 0)
		return;
	fired = true;
	ereport(LOG,
			(errmsg("shardid fault point %s fired: %s", point,
					fault_action == FAULT_CRASH ? "crash" : "stall")));
	if (fault_action == FAULT_CRASH)
	{
		struct rlimit none = {0, 0};

		(void) setrlimit(RLIMIT_CORE, &none);
		abort();
	}
	until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), fault_stall_ms);
	while (GetCurrentTimestamp() < until && PostmasterIsAlive())
	{
		pg_usleep(10 * 1000L);
		CHECK_FOR_INTERRUPTS();
	}
}

#endif							/* SHARDID_FAULTS */
