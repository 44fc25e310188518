/*
 * fuzz_codec.c
 *	  libFuzzer target for src/codec.c.
 *
 * Any byte string given to the shortcode parser either is refused or
 * yields a non-negative ID whose code is the same string; and the first
 * eight bytes, read as an ID, split and compose back to themselves.
 *
 * Build and run: make -C test/unit fuzz
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t		id = 0;
	size_t		bad = 0;
	char		buf[SHARDID_SHORTCODE_MAXLEN + 1];

	if (shardid_shortcode_decode((const char *) data, size, &id, &bad) == SHARDID_OK)
	{
		size_t		n;

		if (id < 0)
			abort();
		n = shardid_shortcode_encode(id, buf);
		if (n != size || memcmp(buf, data, size) != 0)
			abort();
	}

	if (size >= 8)
	{
		int64_t		v;
		int64_t		ms;
		int32_t		shard;
		int32_t		seq;
		int64_t		back = -1;

		memcpy(&v, data, 8);
		if (v < 0)
			v = -(v + 1);
		if (shardid_split(v, SHARDID_DEFAULT_EPOCH_UNIX_MS, &ms, &shard, &seq) != SHARDID_OK)
			abort();
		if (shardid_compose(ms, SHARDID_DEFAULT_EPOCH_UNIX_MS, shard, seq, &back) != SHARDID_OK ||
			back != v)
			abort();
		if (shardid_shortcode_decode(buf, shardid_shortcode_encode(v, buf), &back, &bad) != SHARDID_OK ||
			back != v)
			abort();
	}
	return 0;
}
