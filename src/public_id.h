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

#include "utils/elog.h"

#include "layout.h"

/* shardid.public_id_keys, and its assign hook (defined in _PG_init) */
extern SHARDID_INTERNAL char *shardid_public_id_keys;
extern SHARDID_INTERNAL void shardid_public_id_keys_assign(const char *newval, void *extra);

/*
 * The log hook that keeps the keys out of the log, and the hook it chains
 * to; installed by _PG_init.
 */
extern SHARDID_INTERNAL emit_log_hook_type shardid_prev_emit_log_hook;
extern SHARDID_INTERNAL void shardid_public_id_emit_log(ErrorData *edata);

#endif							/* SHARDID_PUBLIC_ID_H */
