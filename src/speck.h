/*-------------------------------------------------------------------------
 *
 * speck.h
 *	  Opaque public IDs: Speck64/128, the keyed permutation of the
 *	  non-negative bigints it gives by cycle walking, the key list, and
 *	  the 12-character text form.
 *
 * Pure C, like codec.h: nothing here calls into PostgreSQL, so the unit
 * tests, the fuzzer and the benchmark link the same object file as the
 * server.  The bit-for-bit contract (word order, key order, alphabet,
 * fingerprint) is the shared spec in docs/public-ids.md.
 *
 * src/speck.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_SPECK_H
#define SHARDID_SPECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

#define SHARDID_SPECK_ROUNDS	27	/* Speck64/128 */
#define SHARDID_SPECK_KEY_WORDS 4	/* 128-bit key: l2, l1, l0, k0 */
#define SHARDID_SPECK_KEY_HEXLEN 32

/* Key versions 0..63: the first character of a public ID. */
#define SHARDID_PUBID_MAX_VERSION 63
#define SHARDID_PUBID_VERSIONS	(SHARDID_PUBID_MAX_VERSION + 1)

/* A public ID: one version character and 11 base-64 digits. */
#define SHARDID_PUBID_DIGITS	11
#define SHARDID_PUBID_LEN		(1 + SHARDID_PUBID_DIGITS)

/*
 * "shardid0" read as a big-endian 64-bit value: a key's fingerprint is its
 * encryption.
 */
#define SHARDID_SPECK_FINGERPRINT_BLOCK UINT64_C(0x7368617264696430)

/* The expanded key: the 27 round keys. */
typedef struct ShardidSpeckKey
{
	uint32_t	rk[SHARDID_SPECK_ROUNDS];
} ShardidSpeckKey;

/* The configured keys, by version. */
typedef struct ShardidPubidKeys
{
	int			nkeys;
	int			newest;			/* highest configured version, -1 if none */
	uint64_t	present;		/* bit v set: version v is configured */
	ShardidSpeckKey ks[SHARDID_PUBID_VERSIONS];
} ShardidPubidKeys;

typedef enum ShardidKeysStatus
{
	SHARDID_KEYS_OK = 0,
	SHARDID_KEYS_NO_COLON,		/* an entry is not VERSION:HEX32 */
	SHARDID_KEYS_BAD_VERSION,	/* not an integer 0..63 */
	SHARDID_KEYS_BAD_KEY,		/* not 32 hex digits */
	SHARDID_KEYS_DUPLICATE		/* a version given twice */
} ShardidKeysStatus;

typedef enum ShardidPubidStatus
{
	SHARDID_PUBID_OK = 0,
	SHARDID_PUBID_BAD_LENGTH,	/* not 12 bytes */
	SHARDID_PUBID_BAD_CHAR,		/* a byte outside the alphabet */
	SHARDID_PUBID_OUT_OF_RANGE, /* the digits are 2^63 or more */
	SHARDID_PUBID_NOT_CONFIGURED,	/* its key version is not configured */
	SHARDID_PUBID_NOT_CANONICAL /* decodes, but is not the ID's own string */
} ShardidPubidStatus;

/*
 * The round keys of a key given as four words in the spec's order
 * (l2, l1, l0, k0).
 */
extern SHARDID_INTERNAL void shardid_speck_expand(const uint32_t key[SHARDID_SPECK_KEY_WORDS],
												  ShardidSpeckKey *ks);

/* One block: high word x = v >> 32, low word y = v & 0xffffffff. */
extern SHARDID_INTERNAL uint64_t shardid_speck_encrypt(const ShardidSpeckKey *ks, uint64_t v);
extern SHARDID_INTERNAL uint64_t shardid_speck_decrypt(const ShardidSpeckKey *ks, uint64_t v);

/*
 * P and Q: the permutation of [0, 2^63) by cycle walking, and its inverse.
 * The argument must be in [0, 2^63).
 */
extern SHARDID_INTERNAL int64_t shardid_pubid_permute(const ShardidSpeckKey *ks, int64_t id);
extern SHARDID_INTERNAL int64_t shardid_pubid_unpermute(const ShardidSpeckKey *ks, int64_t c);

/*
 * Read 32 hex digits (either case) into the four key words; false if len
 * is not 32 or a byte is not a hex digit.
 */
extern SHARDID_INTERNAL bool shardid_speck_key_from_hex(const char *hex, size_t len,
														uint32_t key[SHARDID_SPECK_KEY_WORDS]);

/*
 * Parse a key list, "VERSION:HEX32, VERSION:HEX32, ...", expanding each key
 * into keys.  An empty list (or only blanks) is valid and has no keys.  On
 * failure *entry is the 1-based number of the bad entry and keys holds no
 * key material.
 */
extern SHARDID_INTERNAL ShardidKeysStatus shardid_pubid_keys_parse(const char *list,
																   ShardidPubidKeys *keys,
																   int *entry);

/* Wipe keys (round keys included). */
extern SHARDID_INTERNAL void shardid_pubid_keys_clear(ShardidPubidKeys *keys);

/*
 * Write the public ID of id (>= 0) under version (0..63) and its key into
 * buf, SHARDID_PUBID_LEN + 1 bytes, NUL-terminated.
 */
extern SHARDID_INTERNAL void shardid_pubid_encode(const ShardidSpeckKey *ks, int version,
												  int64_t id, char *buf);

/*
 * Decode a public ID of len bytes.  On SHARDID_PUBID_BAD_CHAR *bad_pos is
 * the offset of the first bad byte; from SHARDID_PUBID_OUT_OF_RANGE on,
 * *version holds the ID's version.
 */
extern SHARDID_INTERNAL ShardidPubidStatus shardid_pubid_decode(const ShardidPubidKeys *keys,
																const char *s, size_t len,
																int64_t *id, int *version,
																size_t *bad_pos);

#endif							/* SHARDID_SPECK_H */
