/*-------------------------------------------------------------------------
 *
 * speck.c
 *	  Opaque public IDs: Speck64/128, cycle walking, keys and text form.
 *
 * Speck64/128 (Beaulieu et al., "The SIMON and SPECK Families of
 * Lightweight Block Ciphers", 2013) encrypts a 64-bit block under a
 * 128-bit key in 27 rounds of add, rotate and xor on 32-bit words.  It is
 * a permutation of [0, 2^64); restricted to the IDs, [0, 2^63), by cycle
 * walking (Black and Rogaway, "Ciphers with Arbitrary Finite Domains"):
 * encrypt again while the result has bit 63 set.  Half the blocks are
 * below 2^63, so a walk takes two encryptions on average, and it ends: the
 * cycle of the permutation through the ID holds the ID itself.
 *
 * The text form is the key version as one character of the base64url
 * alphabet (base64url.h), then the permuted ID in 11 base-64 digits,
 * most significant first.  Decoding accepts exactly the string encoding gives.
 *
 * No PostgreSQL calls: see speck.h.
 *
 * src/speck.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "base64url.h"
#include "speck.h"

#define ROR32(v, n) (((v) >> (n)) | ((v) << (32 - (n))))
#define ROL32(v, n) (((v) << (n)) | ((v) >> (32 - (n))))

/* Bit 63: a walk goes on while it is set. */
#define PUBID_TOP_BIT UINT64_C(0x8000000000000000)

void
shardid_speck_expand(const uint32_t key[SHARDID_SPECK_KEY_WORDS],
					 ShardidSpeckKey *ks)
{
	/* l[i] for i = 0..2 are key words l0, l1, l2; later ones are derived */
	uint32_t	l[SHARDID_SPECK_ROUNDS + 2];
	uint32_t	k = key[3];
	int			i;

	l[0] = key[2];
	l[1] = key[1];
	l[2] = key[0];
	ks->rk[0] = k;
	for (i = 0; i < SHARDID_SPECK_ROUNDS - 1; i++)
	{
		l[i + 3] = (k + ROR32(l[i], 8)) ^ (uint32_t) i;
		k = ROL32(k, 3) ^ l[i + 3];
		ks->rk[i + 1] = k;
	}
	memset(l, 0, sizeof(l));
}

uint64_t
shardid_speck_encrypt(const ShardidSpeckKey *ks, uint64_t v)
{
	uint32_t	x = (uint32_t) (v >> 32);
	uint32_t	y = (uint32_t) v;
	int			i;

	for (i = 0; i < SHARDID_SPECK_ROUNDS; i++)
	{
		x = (ROR32(x, 8) + y) ^ ks->rk[i];
		y = ROL32(y, 3) ^ x;
	}
	return ((uint64_t) x << 32) | y;
}

uint64_t
shardid_speck_decrypt(const ShardidSpeckKey *ks, uint64_t v)
{
	uint32_t	x = (uint32_t) (v >> 32);
	uint32_t	y = (uint32_t) v;
	int			i;

	for (i = SHARDID_SPECK_ROUNDS - 1; i >= 0; i--)
	{
		y = ROR32(y ^ x, 3);
		x = ROL32((x ^ ks->rk[i]) - y, 8);
	}
	return ((uint64_t) x << 32) | y;
}

int64_t
shardid_pubid_permute(const ShardidSpeckKey *ks, int64_t id)
{
	uint64_t	c = shardid_speck_encrypt(ks, (uint64_t) id);

	while (c & PUBID_TOP_BIT)
		c = shardid_speck_encrypt(ks, c);
	return (int64_t) c;
}

int64_t
shardid_pubid_unpermute(const ShardidSpeckKey *ks, int64_t c)
{
	uint64_t	v = shardid_speck_decrypt(ks, (uint64_t) c);

	while (v & PUBID_TOP_BIT)
		v = shardid_speck_decrypt(ks, v);
	return (int64_t) v;
}

/* The value of a hex digit, or -1. */
static int
hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
shardid_speck_key_from_hex(const char *hex, size_t len,
						   uint32_t key[SHARDID_SPECK_KEY_WORDS])
{
	size_t		i;

	if (len != SHARDID_SPECK_KEY_HEXLEN)
		return false;
	memset(key, 0, SHARDID_SPECK_KEY_WORDS * sizeof(uint32_t));
	for (i = 0; i < len; i++)
	{
		int			d = hex_digit((unsigned char) hex[i]);

		if (d < 0)
		{
			memset(key, 0, SHARDID_SPECK_KEY_WORDS * sizeof(uint32_t));
			return false;
		}
		key[i / 8] = (key[i / 8] << 4) | (uint32_t) d;
	}
	return true;
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void
shardid_pubid_keys_clear(ShardidPubidKeys *keys)
{
	/* volatile: a wipe the compiler may not drop */
	volatile unsigned char *p = (volatile unsigned char *) keys;
	size_t		i;

	for (i = 0; i < sizeof(*keys); i++)
		p[i] = 0;
	keys->newest = -1;
}

/*
 * One entry, [start, end) with the blanks around it trimmed:
 * VERSION:HEX32.
 */
static ShardidKeysStatus
parse_entry(const char *start, const char *end, ShardidPubidKeys *keys)
{
	const char *colon = memchr(start, ':', (size_t) (end - start));
	const char *p;
	const char *hex;
	const char *hex_end;
	const char *q;
	int			version = 0;
	uint32_t	key[SHARDID_SPECK_KEY_WORDS];

	if (colon == NULL)
		return SHARDID_KEYS_NO_COLON;

	/* the version: 1 or 2 decimal digits, 0..63, blanks before the colon */
	p = colon;
	while (p > start && is_blank(p[-1]))
		p--;
	if (p == start || p - start > 2)
		return SHARDID_KEYS_BAD_VERSION;
	for (q = start; q < p; q++)
	{
		if (*q < '0' || *q > '9')
			return SHARDID_KEYS_BAD_VERSION;
		version = version * 10 + (*q - '0');
	}
	if (version > SHARDID_PUBID_MAX_VERSION)
		return SHARDID_KEYS_BAD_VERSION;

	hex = colon + 1;
	while (hex < end && is_blank(*hex))
		hex++;
	hex_end = end;
	if (!shardid_speck_key_from_hex(hex, (size_t) (hex_end - hex), key))
		return SHARDID_KEYS_BAD_KEY;

	if (keys->present & (UINT64_C(1) << version))
	{
		memset(key, 0, sizeof(key));
		return SHARDID_KEYS_DUPLICATE;
	}
	shardid_speck_expand(key, &keys->ks[version]);
	memset(key, 0, sizeof(key));
	keys->present |= UINT64_C(1) << version;
	keys->nkeys++;
	if (version > keys->newest)
		keys->newest = version;
	return SHARDID_KEYS_OK;
}

ShardidKeysStatus
shardid_pubid_keys_parse(const char *list, ShardidPubidKeys *keys, int *entry)
{
	const char *p = list;
	int			n = 0;

	shardid_pubid_keys_clear(keys);
	*entry = 0;

	/* only blanks: no keys */
	while (is_blank(*p))
		p++;
	if (*p == '\0')
		return SHARDID_KEYS_OK;

	p = list;
	for (;;)
	{
		const char *start = p;
		const char *end;
		const char *next;
		ShardidKeysStatus status;

		while (*p != ',' && *p != '\0')
			p++;
		next = p;
		end = p;
		n++;
		while (start < end && is_blank(*start))
			start++;
		while (end > start && is_blank(end[-1]))
			end--;
		status = parse_entry(start, end, keys);
		if (status != SHARDID_KEYS_OK)
		{
			shardid_pubid_keys_clear(keys);
			*entry = n;
			return status;
		}
		if (*next == '\0')
			break;
		p = next + 1;
	}
	return SHARDID_KEYS_OK;
}

void
shardid_pubid_encode(const ShardidSpeckKey *ks, int version, int64_t id,
					 char *buf)
{
	uint64_t	c = (uint64_t) shardid_pubid_permute(ks, id);
	int			i;

	buf[0] = shardid_base64url_char((uint64_t) version);
	for (i = SHARDID_PUBID_DIGITS; i >= 1; i--)
	{
		buf[i] = shardid_base64url_char(c);
		c >>= 6;
	}
	buf[SHARDID_PUBID_LEN] = '\0';
}

ShardidPubidStatus
shardid_pubid_decode(const ShardidPubidKeys *keys, const char *s, size_t len,
					 int64_t *id, int *version, size_t *bad_pos)
{
	uint64_t	c = 0;
	int			v;
	int64_t		found;
	char		again[SHARDID_PUBID_LEN + 1];
	size_t		i;

	if (len != SHARDID_PUBID_LEN)
		return SHARDID_PUBID_BAD_LENGTH;
	for (i = 0; i < len; i++)
	{
		if (shardid_base64url_digit((unsigned char) s[i]) < 0)
		{
			*bad_pos = i;
			return SHARDID_PUBID_BAD_CHAR;
		}
	}
	v = shardid_base64url_digit((unsigned char) s[0]);
	*version = v;
	if (!(keys->present & (UINT64_C(1) << v)))
		return SHARDID_PUBID_NOT_CONFIGURED;
	/* 11 digits hold 66 bits; below 2^63 the first is 'A' to 'H' */
	if (shardid_base64url_digit((unsigned char) s[1]) >= 8)
		return SHARDID_PUBID_OUT_OF_RANGE;
	for (i = 1; i < len; i++)
		c = (c << 6) | (uint64_t) shardid_base64url_digit((unsigned char) s[i]);

	found = shardid_pubid_unpermute(&keys->ks[v], (int64_t) c);
	shardid_pubid_encode(&keys->ks[v], v, found, again);
	if (memcmp(again, s, SHARDID_PUBID_LEN) != 0)
		return SHARDID_PUBID_NOT_CANONICAL;
	*id = found;
	return SHARDID_PUBID_OK;
}
