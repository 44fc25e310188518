/*-------------------------------------------------------------------------
 *
 * base64url.h
 *	  The base64url alphabet (RFC 4648, section 5) as digits, for the
 *	  shortcodes (codec.c) and the public IDs (speck.c), in one place.
 *
 * A is 0, then B to Z, a to z, 0 to 9, "-" and "_" (63): Instagram's URL
 * alphabet, read as base-64 digits, most significant first.  Plain C, like
 * codec.h and speck.h, so that the unit tests and the fuzzers link it.
 *
 * src/base64url.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_BASE64URL_H
#define SHARDID_BASE64URL_H

#include <stdint.h>

/* The character of the digit d (its low six bits). */
static inline char
shardid_base64url_char(uint64_t d)
{
	return "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[d & 63];
}

/* The digit value of c, or -1 if c is not in the alphabet. */
static inline int
shardid_base64url_digit(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

#endif							/* SHARDID_BASE64URL_H */
