/*-------------------------------------------------------------------------
 *
 * codec.c
 *	  Pure arithmetic on shardid IDs: composing, splitting, shortcodes.
 *
 * An ID is (time << 23) | (shard << 10) | seq, with the widths named in
 * layout.h.  The shortcode is the ID written in base 64 with Instagram's
 * URL alphabet (base64url.h), most significant digit first, without
 * leading zero digits, so every ID has exactly one code.
 *
 * No PostgreSQL calls: see codec.h.
 *
 * src/codec.c
 *
 *-------------------------------------------------------------------------
 */
#include "base64url.h"
#include "codec.h"

int64_t
shardid_horizon_ms(int64_t epoch_ms)
{
	return epoch_ms + SHARDID_MAX_TIME_MS;
}

ShardidStatus
shardid_compose(int64_t unix_ms, int64_t epoch_ms, int32_t shard,
				int32_t seq, int64_t *id)
{
	int64_t		elapsed;

	if (shard < 0 || shard > SHARDID_MAX_SHARD)
		return SHARDID_SHARD_OUT_OF_RANGE;
	if (seq < 0 || seq > SHARDID_MAX_SEQ)
		return SHARDID_SEQ_OUT_OF_RANGE;
	if (unix_ms < epoch_ms)
		return SHARDID_BEFORE_EPOCH;
	/* compare without overflow: callers keep epoch_ms far from the limits */
	elapsed = unix_ms - epoch_ms;
	if (elapsed > SHARDID_MAX_TIME_MS)
		return SHARDID_PAST_HORIZON;

	*id = shardid_id_from_field(elapsed, shard, seq);
	return SHARDID_OK;
}

ShardidStatus
shardid_split(int64_t id, int64_t epoch_ms, int64_t *unix_ms,
			  int32_t *shard, int32_t *seq)
{
	if (id < 0)
		return SHARDID_NEGATIVE_ID;
	if (unix_ms)
		*unix_ms = epoch_ms + (id >> SHARDID_TIME_SHIFT);
	if (shard)
		*shard = (int32_t) ((id >> SHARDID_SHARD_SHIFT) & SHARDID_SHARD_MASK);
	if (seq)
		*seq = (int32_t) (id & SHARDID_SEQ_MASK);
	return SHARDID_OK;
}

size_t
shardid_shortcode_encode(int64_t id, char *buf)
{
	char		rev[SHARDID_SHORTCODE_MAXLEN];
	size_t		n = 0;
	uint64_t	v = (uint64_t) id;
	size_t		i;

	do
	{
		rev[n++] = shardid_base64url_char(v);
		v >>= SHARDID_SHORTCODE_BITS;
	} while (v != 0 && n < SHARDID_SHORTCODE_MAXLEN);

	for (i = 0; i < n; i++)
		buf[i] = rev[n - 1 - i];
	buf[n] = '\0';
	return n;
}

ShardidStatus
shardid_shortcode_decode(const char *code, size_t len, int64_t *id,
						 size_t *bad_pos)
{
	uint64_t	v = 0;
	size_t		i;

	if (len == 0)
		return SHARDID_CODE_EMPTY;
	/* the length first: no work in proportion to a long input */
	if (len > SHARDID_SHORTCODE_MAXLEN)
		return SHARDID_CODE_TOO_LONG;
	for (i = 0; i < len; i++)
	{
		if (shardid_base64url_digit((unsigned char) code[i]) < 0)
		{
			*bad_pos = i;
			return SHARDID_CODE_BAD_CHAR;
		}
	}
	if (len > 1 && code[0] == 'A')
		return SHARDID_CODE_LEADING_ZERO;
	for (i = 0; i < len; i++)
	{
		uint64_t	d = (uint64_t) shardid_base64url_digit((unsigned char) code[i]);

		/* v * 64 + d must stay within 63 bits */
		if (v > (((uint64_t) INT64_MAX - d) >> SHARDID_SHORTCODE_BITS))
			return SHARDID_CODE_OVERFLOW;
		v = (v << SHARDID_SHORTCODE_BITS) | d;
	}
	*id = (int64_t) v;
	return SHARDID_OK;
}
