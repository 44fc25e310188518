/*-------------------------------------------------------------------------
 *
 * fault.h
 *	  Named fault points in the fence protocol, for the crash sweep
 *	  (test/t/082_crash_points.pl).  Compiled in only by `make FAULTS=1`
 *	  (-DSHARDID_FAULTS); in every other build SHARDID_FAULT(name) is
 *	  nothing at all, and the points' names are not in the objects.
 *
 *	  Armed by two settings that exist only in that build,
 *	  shardid.fault_point (a point's name) and shardid.fault_action
 *	  (crash: abort(), which the postmaster takes as any backend's crash
 *	  and restarts everything; stall: a sleep of shardid.fault_stall,
 *	  interruptible), superuser only.  A point fires once per arming in a
 *	  backend: setting either again arms it again.  Every point that fires
 *	  logs "shardid fault point NAME fired: ACTION" first.
 *
 *	  PostgreSQL's own INJECTION_POINT exists only in servers of 17 and
 *	  later built with --enable-injection-points, which Debian's are not:
 *	  these are shardid's own, on every version.
 *
 * src/fault.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_FAULT_H
#define SHARDID_FAULT_H

#ifdef SHARDID_FAULTS

#include "layout.h"

/*
 * The points, in the order of a fence write.  Keep docs/development.md's
 * list and test/t/082_crash_points.pl's in step.
 */
#define SHARDID_FAULT_POINTS \
	"seq_after_insert", "db_after_insert", "after_flush", \
	"before_standby_wait", "after_standby_wait", "db_after_publish", \
	"after_publish", "xact_commit", "xact_abort", "slot_start", "slot_evict"

extern SHARDID_INTERNAL void shardid_fault_define(void);
extern SHARDID_INTERNAL void shardid_fault(const char *point);

#define SHARDID_FAULT(point) shardid_fault(point)

#else

#define SHARDID_FAULT(point) ((void) 0)

#endif							/* SHARDID_FAULTS */

#endif							/* SHARDID_FAULT_H */
