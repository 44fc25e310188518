/*
 * fuzz_public_ids.c
 *	  libFuzzer target for the public IDs of src/speck.c.
 *
 * Any byte string given to the text form's decoder (under the spec's two
 * test keys) either is refused or yields an ID in [0, 2^63) whose public
 * ID under the version it named is the same string; the same bytes given
 * to the key list's parser either are refused, with the number of an
 * entry, or give at most 64 keys whose newest version is configured.
 *
 * Build and run: make -C test/unit fuzz
 */
#include <stdlib.h>
#include <string.h>

#include "speck.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ShardidPubidKeys test_keys;
static int	loaded;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t		id = -1;
	int			version = -1;
	size_t		bad = 0;
	char		buf[SHARDID_PUBID_LEN + 1];
	char	   *list;
	ShardidPubidKeys parsed;
	int			entry = 0;
	ShardidKeysStatus status;

	if (!loaded)
	{
		if (shardid_pubid_keys_parse("1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100",
									 &test_keys, &entry) != SHARDID_KEYS_OK)
			abort();
		loaded = 1;
	}

	if (shardid_pubid_decode(&test_keys, (const char *) data, size, &id, &version, &bad) ==
		SHARDID_PUBID_OK)
	{
		if (id < 0 || (version != 1 && version != 2))
			abort();
		shardid_pubid_encode(&test_keys.ks[version], version, id, buf);
		if (size != SHARDID_PUBID_LEN || memcmp(buf, data, size) != 0)
			abort();
	}

	list = malloc(size + 1);
	if (list == NULL)
		return 0;
	memcpy(list, data, size);
	list[size] = '\0';
	status = shardid_pubid_keys_parse(list, &parsed, &entry);
	if (status == SHARDID_KEYS_OK)
	{
		if (parsed.nkeys > SHARDID_PUBID_VERSIONS ||
			(parsed.nkeys > 0 && !(parsed.present & (UINT64_C(1) << parsed.newest))) ||
			(parsed.nkeys == 0 && parsed.newest != -1))
			abort();
	}
	else if (entry < 1 || parsed.present != 0)
		abort();
	free(list);
	return 0;
}
