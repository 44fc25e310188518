/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What differs between the PostgreSQL major versions shardid builds
 *	  against (15, 17 and 18), in one place.
 *
 * The code is written against the newest API; this header supplies it on
 * older servers.  Include it after "postgres.h" (and after "storage/proc.h"
 * where shardid_my_lxid() is used).  Add a guard here, never an #if in the
 * code.
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_COMPAT_H
#define SHARDID_COMPAT_H

/*
 * PostgreSQL 18 replaced pg_attribute_noreturn(), written after a
 * declarator, with pg_noreturn, written before the declaration (C11
 * _Noreturn).  GCC and Clang accept the attribute in front as well, so on
 * older servers pg_noreturn is the old attribute.
 */
#if PG_VERSION_NUM < 180000 && !defined(pg_noreturn)
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * PostgreSQL 17 moved the backend's local transaction ID into the virtual
 * transaction ID: MyProc->lxid became MyProc->vxid.lxid.
 */
#if PG_VERSION_NUM >= 170000
#define shardid_my_lxid() (MyProc->vxid.lxid)
#else
#define shardid_my_lxid() (MyProc->lxid)
#endif

#endif							/* SHARDID_COMPAT_H */
