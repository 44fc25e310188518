/*-------------------------------------------------------------------------
 *
 * public_id.h
 *	  The setting shardid.public_id_keys and its log redaction.
 *
 * src/public_id.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_PUBLIC_ID_H
#define SHARDID_PUBLIC_ID_H

/*
 * Define shardid.public_id_keys and the log hook that keeps its value out
 * of the log; from _PG_init, before the prefix is reserved.
 */
extern void shardid_public_id_define(void);

#endif							/* SHARDID_PUBLIC_ID_H */
