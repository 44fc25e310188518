/*-------------------------------------------------------------------------
 *
 * floor.h
 *	  The table's own floor: the largest ID already in the column that a
 *	  sequence numbers, read from its index.
 *
 * src/floor.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_FLOOR_H
#define SHARDID_FLOOR_H

#include "layout.h"

/*
 * The largest time field of the IDs in the column that sequence seqid is
 * OWNED BY (or is the identity sequence of), found through a B-tree index
 * led by that column; -1 if the sequence has no such column, the column
 * has no such index, or it holds no ID.  Partitioned tables are read
 * partition by partition.
 */
extern SHARDID_INTERNAL int64 shardid_table_floor(Oid seqid);

#endif							/* SHARDID_FLOOR_H */
