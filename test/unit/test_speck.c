/*
 * test_speck.c
 *	  Unit tests of src/speck.c (public IDs), outside the server; run by
 *	  test_codec's main, which counts them with its own.
 *
 * Checks the published Speck64/128 vector both ways, the test keys'
 * fingerprints and P of a few IDs against test/unit/public_ids_ref.py
 * (written from the spec alone), P/Q round trips of the edge values and of
 * three million pseudo-random IDs, that P never leaves [0, 2^63), the key
 * list's parser and the text form's decoder on every kind of bad input.
 */
#include <stdio.h>
#include <string.h>

#include "speck.h"

int			test_speck(int *failed);

static int	s_passed;
static int	s_failed;

#define SCHECK(cond) \
	do { \
		if (cond) \
			s_passed++; \
		else \
		{ \
			s_failed++; \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

#define TEST_KEYS "1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100"

static void
test_published_vector(void)
{
	uint32_t	key[4];
	ShardidSpeckKey ks;

	SCHECK(shardid_speck_key_from_hex("1b1a1918131211100b0a090803020100", 32, key));
	SCHECK(key[0] == 0x1b1a1918 && key[3] == 0x03020100);
	shardid_speck_expand(key, &ks);
	SCHECK(shardid_speck_encrypt(&ks, UINT64_C(0x3b7265747475432d)) == UINT64_C(0x8c6fa548454e028b));
	SCHECK(shardid_speck_decrypt(&ks, UINT64_C(0x8c6fa548454e028b)) == UINT64_C(0x3b7265747475432d));
	/* upper case reads the same */
	SCHECK(shardid_speck_key_from_hex("1B1A1918131211100B0A090803020100", 32, key));
	shardid_speck_expand(key, &ks);
	SCHECK(shardid_speck_encrypt(&ks, UINT64_C(0x3b7265747475432d)) == UINT64_C(0x8c6fa548454e028b));
}

/* splitmix64: a fixed stream of pseudo-random values */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void
test_permutation(void)
{
	ShardidPubidKeys keys;
	int			entry = -1;
	const int64_t edges[] = {0, 1, 2, INT64_C(1) << 53, INT64_C(1) << 62, INT64_MAX,
	INT64_MAX - 1, 1023, INT64_C(4185136929178974185)};
	uint64_t	state = 42;
	long		bad_round_trip = 0;
	long		out_of_range = 0;
	size_t		i;
	int			v;

	SCHECK(shardid_pubid_keys_parse(TEST_KEYS, &keys, &entry) == SHARDID_KEYS_OK);
	SCHECK(keys.nkeys == 2 && keys.newest == 2 && keys.present == 6);

	/* fingerprints and P, as test/unit/public_ids_ref.py computes them */
	SCHECK(shardid_speck_encrypt(&keys.ks[1], SHARDID_SPECK_FINGERPRINT_BLOCK) == UINT64_C(0x597006e9d03dca86));
	SCHECK(shardid_speck_encrypt(&keys.ks[2], SHARDID_SPECK_FINGERPRINT_BLOCK) == UINT64_C(0x9b6d6863bf2d36c8));
	SCHECK(shardid_pubid_permute(&keys.ks[1], 0) == INT64_C(9209581272278231111));
	SCHECK(shardid_pubid_permute(&keys.ks[1], INT64_MAX) == INT64_C(874526131298531295));
	SCHECK(shardid_pubid_permute(&keys.ks[2], INT64_C(1) << 62) == INT64_C(6878067025641055397));
	SCHECK(shardid_pubid_unpermute(&keys.ks[2], INT64_C(8427495579740409659)) == INT64_MAX);

	for (v = 1; v <= 2; v++)
	{
		for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		{
			int64_t		c = shardid_pubid_permute(&keys.ks[v], edges[i]);

			SCHECK(c >= 0);
			SCHECK(shardid_pubid_unpermute(&keys.ks[v], c) == edges[i]);
		}
	}

	/* three million pseudo-random IDs under key 1, a million under key 2 */
	for (i = 0; i < 4000000; i++)
	{
		const ShardidSpeckKey *ks = &keys.ks[i < 3000000 ? 1 : 2];
		int64_t		id = (int64_t) (next_random(&state) >> 1);
		int64_t		c = shardid_pubid_permute(ks, id);

		if (c < 0)
			out_of_range++;
		if (shardid_pubid_unpermute(ks, c) != id)
			bad_round_trip++;
	}
	SCHECK(out_of_range == 0);
	SCHECK(bad_round_trip == 0);
}

static void
test_text(void)
{
	ShardidPubidKeys keys;
	int			entry = -1;
	char		buf[SHARDID_PUBID_LEN + 1];
	int64_t		id = -1;
	int			version = -1;
	size_t		bad = 0;
	uint64_t	state = 7;
	long		bad_round_trip = 0;
	int			i;

	SCHECK(shardid_pubid_keys_parse(TEST_KEYS, &keys, &entry) == SHARDID_KEYS_OK);

	/* values from test/unit/public_ids_ref.py */
	shardid_pubid_encode(&keys.ks[1], 1, 0, buf);
	SCHECK(strcmp(buf, "BH_PAV9oO-hH") == 0);
	shardid_pubid_encode(&keys.ks[1], 1, INT64_MAX, buf);
	SCHECK(strcmp(buf, "BAwi8OIK2Hff") == 0);
	shardid_pubid_encode(&keys.ks[2], 2, INT64_C(9007199254740992), buf);
	SCHECK(strcmp(buf, "CCUWGSf1qHN_") == 0);
	SCHECK(shardid_pubid_decode(&keys, "CCUWGSf1qHN_", 12, &id, &version, &bad) == SHARDID_PUBID_OK &&
		   id == INT64_C(9007199254740992) && version == 2);

	for (i = 0; i < 100000; i++)
	{
		int64_t		x = (int64_t) (next_random(&state) >> 1);
		int			v = 1 + (i & 1);

		shardid_pubid_encode(&keys.ks[v], v, x, buf);
		if (buf[1] > 'H' || buf[1] < 'A' ||
			shardid_pubid_decode(&keys, buf, 12, &id, &version, &bad) != SHARDID_PUBID_OK ||
			id != x || version != v)
			bad_round_trip++;
	}
	SCHECK(bad_round_trip == 0);

	/* refusals */
	SCHECK(shardid_pubid_decode(&keys, "", 0, &id, &version, &bad) == SHARDID_PUBID_BAD_LENGTH);
	SCHECK(shardid_pubid_decode(&keys, "BH_PAV9oO-h", 11, &id, &version, &bad) == SHARDID_PUBID_BAD_LENGTH);
	SCHECK(shardid_pubid_decode(&keys, "BH_PAV9oO-hHA", 13, &id, &version, &bad) == SHARDID_PUBID_BAD_LENGTH);
	SCHECK(shardid_pubid_decode(&keys, "BH_PAV9oO+hH", 12, &id, &version, &bad) == SHARDID_PUBID_BAD_CHAR && bad == 9);
	SCHECK(shardid_pubid_decode(&keys, "BH_PAV9oO-h\0", 12, &id, &version, &bad) == SHARDID_PUBID_BAD_CHAR && bad == 11);
	SCHECK(shardid_pubid_decode(&keys, "DH_PAV9oO-hH", 12, &id, &version, &bad) == SHARDID_PUBID_NOT_CONFIGURED && version == 3);
	SCHECK(shardid_pubid_decode(&keys, "BI_PAV9oO-hH", 12, &id, &version, &bad) == SHARDID_PUBID_OUT_OF_RANGE);
	SCHECK(shardid_pubid_decode(&keys, "B___________", 12, &id, &version, &bad) == SHARDID_PUBID_OUT_OF_RANGE);
	/* every string of digits below 2^63 decodes under a configured key */
	SCHECK(shardid_pubid_decode(&keys, "BH__________", 12, &id, &version, &bad) == SHARDID_PUBID_OK && id >= 0);
	SCHECK(shardid_pubid_decode(&keys, "BAAAAAAAAAAA", 12, &id, &version, &bad) == SHARDID_PUBID_OK && id >= 0);
}

static void
test_key_list(void)
{
	ShardidPubidKeys keys;
	int			entry = -1;

	SCHECK(shardid_pubid_keys_parse("", &keys, &entry) == SHARDID_KEYS_OK && keys.nkeys == 0 &&
		   keys.newest == -1);
	SCHECK(shardid_pubid_keys_parse("  \t ", &keys, &entry) == SHARDID_KEYS_OK && keys.nkeys == 0);
	SCHECK(shardid_pubid_keys_parse("0:000102030405060708090A0B0C0D0E0F", &keys, &entry) == SHARDID_KEYS_OK &&
		   keys.nkeys == 1 && keys.newest == 0);
	SCHECK(shardid_pubid_keys_parse(" 63 : 000102030405060708090a0b0c0d0e0f ,1:0f0e0d0c0b0a09080706050403020100 ",
									&keys, &entry) == SHARDID_KEYS_OK &&
		   keys.nkeys == 2 && keys.newest == 63);

	SCHECK(shardid_pubid_keys_parse("1:000102030405060708090a0b0c0d0e0f,", &keys, &entry) == SHARDID_KEYS_NO_COLON &&
		   entry == 2 && keys.nkeys == 0 && keys.present == 0);
	SCHECK(shardid_pubid_keys_parse("000102030405060708090a0b0c0d0e0f", &keys, &entry) == SHARDID_KEYS_NO_COLON &&
		   entry == 1);
	SCHECK(shardid_pubid_keys_parse("64:000102030405060708090a0b0c0d0e0f", &keys, &entry) == SHARDID_KEYS_BAD_VERSION &&
		   entry == 1);
	SCHECK(shardid_pubid_keys_parse("-1:000102030405060708090a0b0c0d0e0f", &keys, &entry) == SHARDID_KEYS_BAD_VERSION);
	SCHECK(shardid_pubid_keys_parse(":000102030405060708090a0b0c0d0e0f", &keys, &entry) == SHARDID_KEYS_BAD_VERSION);
	SCHECK(shardid_pubid_keys_parse("001:000102030405060708090a0b0c0d0e0f", &keys, &entry) == SHARDID_KEYS_BAD_VERSION);
	SCHECK(shardid_pubid_keys_parse("1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a0908070605040302010",
									&keys, &entry) == SHARDID_KEYS_BAD_KEY && entry == 2 && keys.present == 0);
	SCHECK(shardid_pubid_keys_parse("1:000102030405060708090a0b0c0d0e0g", &keys, &entry) == SHARDID_KEYS_BAD_KEY);
	SCHECK(shardid_pubid_keys_parse("1:0001020304050607 08090a0b0c0d0e0f", &keys, &entry) == SHARDID_KEYS_BAD_KEY);
	SCHECK(shardid_pubid_keys_parse("1:000102030405060708090a0b0c0d0e0f, 1:0f0e0d0c0b0a09080706050403020100",
									&keys, &entry) == SHARDID_KEYS_DUPLICATE && entry == 2 && keys.nkeys == 0);
}

int
test_speck(int *failed)
{
	test_published_vector();
	test_permutation();
	test_text();
	test_key_list();
	*failed += s_failed;
	return s_passed;
}
