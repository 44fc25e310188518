/*-------------------------------------------------------------------------
 *
 * citus.h
 *	  Refusing to issue IDs on a Citus worker: see citus.c.
 *
 * src/citus.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CITUS_H
#define SHARDID_CITUS_H

#include "layout.h"

/*
 * Raise the one error of a Citus worker (0A000) if this server is one in
 * this database, or sequence seqid has a Citus worker's range.  Catalog
 * reads: call it where a backend first meets a sequence, not per ID.
 */
extern SHARDID_INTERNAL void shardid_citus_check(Oid seqid);

#endif							/* SHARDID_CITUS_H */
