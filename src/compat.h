/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What differs between the PostgreSQL versions shardid builds against
 *	  (15, 17, 18 and 19), in one place, so that the rest of the code has no
 *	  version tests of its own.
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_COMPAT_H
#define SHARDID_COMPAT_H

#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/guc.h"

/* PostgreSQL 17 moved a backend's local transaction ID into MyProc->vxid. */
#if PG_VERSION_NUM >= 170000
#define SHARDID_MY_LXID		(MyProc->vxid.lxid)
#else
#define SHARDID_MY_LXID		(MyProc->lxid)
#endif

/*
 * PostgreSQL 18 replaced pg_attribute_noreturn(), written after a
 * declaration, with pg_noreturn, written before it.  SHARDID_NORETURN goes
 * before the declaration and means the same on every version.  It is the
 * first thing of the declaration, before "extern": PostgreSQL 19's
 * pg_noreturn is C23's [[noreturn]] where the compiler is in C23 mode (sid's
 * GCC by default), an attribute that may only open a declaration.
 */
#if PG_VERSION_NUM >= 180000
#define SHARDID_NORETURN	pg_noreturn
#elif defined(__GNUC__)
#define SHARDID_NORETURN	__attribute__((noreturn))
#else
#define SHARDID_NORETURN
#endif

/*
 * A case that falls through to the next on purpose.  PostgreSQL 19 builds
 * extensions with -Wimplicit-fallthrough=5, where only the attribute says
 * so (no comment does), and gives it as pg_fallthrough; before 19, the
 * compiler's attribute where it has one.  Written as a statement:
 * "SHARDID_FALLTHROUGH;".
 */
#if PG_VERSION_NUM >= 190000
#define SHARDID_FALLTHROUGH	pg_fallthrough
#elif defined(__has_attribute)
#if __has_attribute(fallthrough)
#define SHARDID_FALLTHROUGH	__attribute__((fallthrough))
#else
#define SHARDID_FALLTHROUGH	((void) 0)
#endif
#else
#define SHARDID_FALLTHROUGH	((void) 0)
#endif

/*
 * PostgreSQL 19's ShmemInitHash takes one number of entries, where earlier
 * versions took an initial and a maximum size; shardid's table is made at
 * its full size (HASH_FIXED_SIZE) on every version.
 */
#if PG_VERSION_NUM >= 190000
#define SHARDID_SHMEM_INIT_HASH(name, nelems, info, flags) \
	ShmemInitHash((name), (nelems), (info), (flags))
#else
#define SHARDID_SHMEM_INIT_HASH(name, nelems, info, flags) \
	ShmemInitHash((name), (nelems), (nelems), (info), (flags))
#endif

/*
 * PostgreSQL 16 renamed the relcache fields that say a relation got a new
 * file in the current transaction (relfilenode became relfilelocator).
 */
#if PG_VERSION_NUM >= 160000
#define SHARDID_RD_FIRST_NEW_FILE_SUBID	rd_firstRelfilelocatorSubid
#define SHARDID_RD_NEW_FILE_SUBID	rd_newRelfilelocatorSubid
#else
#define SHARDID_RD_FIRST_NEW_FILE_SUBID	rd_firstRelfilenodeSubid
#define SHARDID_RD_NEW_FILE_SUBID	rd_newRelfilenodeSubid
#endif

/* PostgreSQL 18 added instrumentation to index_beginscan(). */
#if PG_VERSION_NUM >= 180000
#define shardid_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys)
#else
#define shardid_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, nkeys, norderbys)
#endif

/* Does role own relation relid?  PostgreSQL 16 made the check generic. */
#if PG_VERSION_NUM >= 160000
#define shardid_rel_ownercheck(relid, role) \
	object_ownercheck(RelationRelationId, (relid), (role))
#define shardid_extension_ownercheck(extoid, role) \
	object_ownercheck(ExtensionRelationId, (extoid), (role))
#else
#define shardid_rel_ownercheck(relid, role)	pg_class_ownercheck((relid), (role))
#define shardid_extension_ownercheck(extoid, role) \
	pg_extension_ownercheck((extoid), (role))
#endif

/*
 * May role member act as role (run a statement as it)?  PostgreSQL 16 split
 * a membership's SET option from its INHERIT option; before, having a
 * role's privileges meant being able to SET ROLE to it.
 */
#if PG_VERSION_NUM >= 160000
#define shardid_can_act_as(member, role) \
	(has_privs_of_role((member), (role)) && member_can_set_role((member), (role)))
#else
#define shardid_can_act_as(member, role)	has_privs_of_role((member), (role))
#endif

/*
 * Restrict search_path to pg_catalog, pg_temp at the current GUC nesting
 * level, as maintenance does when it runs as a table's owner: PostgreSQL
 * 17 exported the step as RestrictSearchPath(); before, the same setting
 * is made by name.
 */
#if PG_VERSION_NUM >= 170000
#define shardid_restrict_search_path()	RestrictSearchPath()
#else
#define shardid_restrict_search_path() \
	((void) set_config_option("search_path", "pg_catalog, pg_temp", \
							  PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, \
							  true, 0, false))
#endif

#endif							/* SHARDID_COMPAT_H */
