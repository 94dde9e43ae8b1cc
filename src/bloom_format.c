/*-------------------------------------------------------------------------
 *
 * bloom_format.c
 *	  Encode, decode and validate the bloom format and the aggregate state;
 *	  base64 for the text form.  No PostgreSQL in here.
 *
 * Every decoder (text input, binary receive, the cast from bytea, the
 * aggregate's deserialize function) goes through bloom_check() or
 * bloom_state_check(), which check each field against the length before
 * anything is read.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_format.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "bloom.h"

static uint64_t
double_bits(double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double
bits_double(uint64_t u)
{
	double		d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Write the payload header of f (the bits are not touched). */
void
bloom_write_header(uint8_t *p, const BloomFilter *f)
{
	memset(p, 0, BLOOM_HEADER_SIZE);
	memcpy(p + BLOOM_OFF_MAGIC, BLOOM_MAGIC, 4);
	p[BLOOM_OFF_VERSION] = f->version;
	p[BLOOM_OFF_LAYOUT] = f->layout;
	p[BLOOM_OFF_HASH] = f->hash_scheme;
	p[BLOOM_OFF_NHASHES] = f->nhashes;
	bloom_put_u64(p + BLOOM_OFF_SEED, f->seed);
	bloom_put_u64(p + BLOOM_OFF_NBLOCKS, f->nblocks);
	bloom_put_u64(p + BLOOM_OFF_CAPACITY, f->capacity);
	bloom_put_u64(p + BLOOM_OFF_RATE, double_bits(f->rate));
	/* flags and reserved stay zero */
	strncpy((char *) p + BLOOM_OFF_FAMILY, f->family, BLOOM_FAMILY_LEN - 1);
	bloom_put_u32(p + BLOOM_OFF_NLABELS, f->labels.count);
	bloom_put_u64(p + BLOOM_OFF_LABELSUM, f->labels.sum);
}

/*
 * Length of the well-formed UTF-8 sequence at p (at most n bytes), or 0 if
 * there is none: no overlong forms, no surrogates, nothing above U+10FFFF.
 */
static int
utf8_sequence(const uint8_t *p, int n)
{
	int			len;
	uint8_t		lo = 0x80,
				hi = 0xBF;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		len = 2;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
	{
		len = 3;
		if (p[0] == 0xE0)
			lo = 0xA0;
		if (p[0] == 0xED)
			hi = 0x9F;
	}
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
	{
		len = 4;
		if (p[0] == 0xF0)
			lo = 0x90;
		if (p[0] == 0xF4)
			hi = 0x8F;
	}
	else
		return 0;
	if (len > n || p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return len;
}

/*
 * A family name is UTF-8 without control characters, NUL-terminated inside
 * its field and zero-padded after.
 */
static bool
family_ok(const uint8_t *fam)
{
	int			i = 0;

	while (i < BLOOM_FAMILY_LEN && fam[i] != 0)
	{
		int			len;

		if (fam[i] < 0x20 || fam[i] == 0x7f)
			return false;
		len = utf8_sequence(fam + i, BLOOM_FAMILY_LEN - i);
		if (len == 0)
			return false;
		i += len;
	}
	if (i >= BLOOM_FAMILY_LEN)
		return false;
	for (; i < BLOOM_FAMILY_LEN; i++)
		if (fam[i] != 0)
			return false;
	return true;
}

/*
 * Decode a label guard (count at p, sum right after), which only an enum
 * family may have; a guard of no labels has a sum of 0.
 */
static BloomError
labels_read(const uint8_t *p, const char *family, BloomLabels *labels)
{
	labels->count = bloom_get_u32(p);
	labels->sum = bloom_get_u64(p + 4);
	if (!bloom_family_is_enum(family))
		return labels->count == 0 && labels->sum == 0 ?
			BLOOM_OK : BLOOM_ERR_RESERVED;
	if (labels->count == 0 && labels->sum != 0)
		return BLOOM_ERR_LABELS;
	return BLOOM_OK;
}

/*
 * Decode and check a header (BLOOM_HEADER_SIZE bytes at p) of a payload of
 * "len" bytes in all, including that the length matches nblocks.  The bits
 * need not be at hand: a single-key probe reads only the header and one
 * block of a stored filter.  f->bits is left NULL.
 */
BloomError
bloom_read_header_only(const uint8_t *p, size_t len, BloomFilter *f)
{
	if (len < BLOOM_HEADER_SIZE)
		return BLOOM_ERR_TRUNCATED;
	if (memcmp(p + BLOOM_OFF_MAGIC, BLOOM_MAGIC, 4) != 0)
		return BLOOM_ERR_MAGIC;

	memset(f, 0, sizeof(*f));
	f->version = p[BLOOM_OFF_VERSION];
	f->layout = p[BLOOM_OFF_LAYOUT];
	f->hash_scheme = p[BLOOM_OFF_HASH];
	f->nhashes = p[BLOOM_OFF_NHASHES];
	f->seed = bloom_get_u64(p + BLOOM_OFF_SEED);
	f->nblocks = bloom_get_u64(p + BLOOM_OFF_NBLOCKS);
	f->capacity = bloom_get_u64(p + BLOOM_OFF_CAPACITY);
	f->rate = bits_double(bloom_get_u64(p + BLOOM_OFF_RATE));

	if (f->version != BLOOM_VERSION)
		return BLOOM_ERR_VERSION;
	if (f->layout != BLOOM_LAYOUT_BLOCK512)
		return BLOOM_ERR_LAYOUT;
	if (f->hash_scheme != BLOOM_HASH_XXH3)
		return BLOOM_ERR_HASH;
	if (f->nhashes < 1 || f->nhashes > BLOOM_MAX_K)
		return BLOOM_ERR_NHASHES;
	if (f->nblocks < 1 || f->nblocks > BLOOM_MAX_NBLOCKS)
		return BLOOM_ERR_NBLOCKS;
	/* nblocks is bounded above, so this cannot overflow */
	if (len != BLOOM_PAYLOAD_SIZE(f->nblocks))
		return BLOOM_ERR_LENGTH;
	if (f->capacity < 1 || f->capacity > (uint64_t) INT64_MAX)
		return BLOOM_ERR_CAPACITY;
	if (!(f->rate > 0.0 && f->rate < 1.0))	/* also refuses NaN */
		return BLOOM_ERR_RATE;
	if (bloom_get_u32(p + BLOOM_OFF_FLAGS) != 0)
		return BLOOM_ERR_RESERVED;
	for (int i = BLOOM_OFF_RESERVED; i < BLOOM_HEADER_SIZE; i++)
		if (p[i] != 0)
			return BLOOM_ERR_RESERVED;
	if (!family_ok(p + BLOOM_OFF_FAMILY))
		return BLOOM_ERR_FAMILY;
	memcpy(f->family, p + BLOOM_OFF_FAMILY, BLOOM_FAMILY_LEN);
	return labels_read(p + BLOOM_OFF_NLABELS, f->family, &f->labels);
}

/*
 * Decode and check the header of a whole payload of "len" bytes; O(1), so
 * cheap enough for every function call that receives a filter.  On success
 * f->bits points into the payload.
 */
BloomError
bloom_read_header(const uint8_t *p, size_t len, BloomFilter *f)
{
	BloomError	err = bloom_read_header_only(p, len, f);

	if (err == BLOOM_OK)
		f->bits = (uint8_t *) p + BLOOM_HEADER_SIZE;
	return err;
}

/*
 * The validator behind every decoder of untrusted bytes.  Today every bit
 * pattern is a valid filter once the header is, so this is the header check;
 * it is a separate entry point so that a later format can add checks on the
 * body without touching the callers.
 */
BloomError
bloom_check(const uint8_t *payload, size_t len, BloomFilter *f)
{
	return bloom_read_header(payload, len, f);
}

const char *
bloom_error_message(BloomError err)
{
	switch (err)
	{
		case BLOOM_OK:
			return "no error";
		case BLOOM_ERR_TRUNCATED:
			return "The value is shorter than the 124-byte bloom header.";
		case BLOOM_ERR_MAGIC:
			return "The value does not start with the bloom magic number.";
		case BLOOM_ERR_VERSION:
			return "The bloom format version is not one this build knows.";
		case BLOOM_ERR_LAYOUT:
			return "The bloom layout is not one this build knows.";
		case BLOOM_ERR_HASH:
			return "The bloom hash scheme is not one this build knows.";
		case BLOOM_ERR_NHASHES:
			return "The number of hash functions is out of range.";
		case BLOOM_ERR_NBLOCKS:
			return "The number of blocks is out of range.";
		case BLOOM_ERR_LENGTH:
			return "The length does not match the number of blocks in the header.";
		case BLOOM_ERR_CAPACITY:
			return "The design capacity is out of range.";
		case BLOOM_ERR_RATE:
			return "The design false-positive rate is not between 0 and 1.";
		case BLOOM_ERR_RESERVED:
			return "Reserved header bytes are not zero.";
		case BLOOM_ERR_FAMILY:
			return "The key family name is not a NUL-padded UTF-8 string.";
		case BLOOM_ERR_LABELS:
			return "The enum label guard counts no labels but has a sum.";
	}
	return "unknown error";
}

/* --- aggregate state --- */

void
bloom_state_write_header(uint8_t *p, const BloomStateHeader *s)
{
	memset(p, 0, BLOOM_STATE_HEADER_SIZE);
	memcpy(p + BLOOM_STATE_OFF_MAGIC, BLOOM_STATE_MAGIC, 4);
	p[BLOOM_STATE_OFF_VERSION] = 1;
	p[BLOOM_STATE_OFF_MODE] = s->mode;
	p[BLOOM_STATE_OFF_SIZED] = s->sized ? 1 : 0;
	bloom_put_u64(p + BLOOM_STATE_OFF_COUNT, s->count);
	strncpy((char *) p + BLOOM_STATE_OFF_FAMILY, s->family, BLOOM_FAMILY_LEN - 1);
	bloom_put_u64(p + BLOOM_STATE_OFF_CAPACITY, s->capacity);
	bloom_put_u64(p + BLOOM_STATE_OFF_RATE, double_bits(s->rate));
	bloom_put_u32(p + BLOOM_STATE_OFF_NLABELS, s->labels.count);
	bloom_put_u64(p + BLOOM_STATE_OFF_LABELSUM, s->labels.sum);
}

/*
 * Check a serialized aggregate state; returns NULL if it is sound, else a
 * sentence saying what is wrong.  body and bodylen get the hashes or the bloom
 * payload that follow the state header.
 */
const char *
bloom_state_check(const uint8_t *p, size_t len, BloomStateHeader *s,
				  const uint8_t **body, size_t *bodylen)
{
	size_t		rest;

	if (len < BLOOM_STATE_HEADER_SIZE)
		return "The aggregate state is shorter than its header.";
	if (memcmp(p + BLOOM_STATE_OFF_MAGIC, BLOOM_STATE_MAGIC, 4) != 0 ||
		p[BLOOM_STATE_OFF_VERSION] != 1)
		return "The aggregate state has a bad magic number or version.";
	if (p[BLOOM_STATE_OFF_RESERVED] != 0 || p[BLOOM_STATE_OFF_SIZED] > 1)
		return "Reserved aggregate state bytes are not zero.";
	s->mode = p[BLOOM_STATE_OFF_MODE];
	s->sized = p[BLOOM_STATE_OFF_SIZED] == 1;
	s->count = bloom_get_u64(p + BLOOM_STATE_OFF_COUNT);
	if (!family_ok(p + BLOOM_STATE_OFF_FAMILY))
		return "The key family name is not a NUL-padded UTF-8 string.";
	memcpy(s->family, p + BLOOM_STATE_OFF_FAMILY, BLOOM_FAMILY_LEN);
	if (bloom_get_u32(p + BLOOM_STATE_OFF_RESERVED2) != 0)
		return "Reserved aggregate state bytes are not zero.";
	switch (labels_read(p + BLOOM_STATE_OFF_NLABELS, s->family, &s->labels))
	{
		case BLOOM_OK:
			break;
		case BLOOM_ERR_LABELS:
			return bloom_error_message(BLOOM_ERR_LABELS);
		default:
			return "Reserved aggregate state bytes are not zero.";
	}
	s->capacity = bloom_get_u64(p + BLOOM_STATE_OFF_CAPACITY);
	s->rate = bits_double(bloom_get_u64(p + BLOOM_STATE_OFF_RATE));
	if (s->sized)
	{
		if (s->capacity < 1 || s->capacity > (uint64_t) INT64_MAX ||
			!(s->rate > 0.0 && s->rate < 1.0))
			return "The sized aggregate state has a bad capacity or rate.";
	}
	else if (s->capacity != 0 || bloom_get_u64(p + BLOOM_STATE_OFF_RATE) != 0)
		return "Reserved aggregate state bytes are not zero.";

	rest = len - BLOOM_STATE_HEADER_SIZE;
	*body = p + BLOOM_STATE_HEADER_SIZE;
	*bodylen = rest;
	switch (s->mode)
	{
		case BLOOM_STATE_HASHES:
			if (rest % 8 != 0 || s->count != rest / 8)
				return "The number of hashes does not match the length.";
			return NULL;
		case BLOOM_STATE_BITS:
			if (!s->sized || s->count != 0)
				return "Only a sized aggregate state can hold bits.";
			return NULL;		/* the caller runs bloom_check on the body */
		default:
			return "The aggregate state mode is unknown.";
	}
}

/* --- base64 (RFC 4648, with padding, no line breaks) --- */

static const char b64chars[] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
bloom_base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

void
bloom_base64_encode(const uint8_t *src, size_t n, char *dst)
{
	size_t		i = 0;

	for (; i + 3 <= n; i += 3)
	{
		uint32_t	v = (uint32_t) src[i] << 16 | (uint32_t) src[i + 1] << 8 | src[i + 2];

		*dst++ = b64chars[v >> 18];
		*dst++ = b64chars[(v >> 12) & 63];
		*dst++ = b64chars[(v >> 6) & 63];
		*dst++ = b64chars[v & 63];
	}
	if (n - i == 1)
	{
		uint32_t	v = (uint32_t) src[i] << 16;

		*dst++ = b64chars[v >> 18];
		*dst++ = b64chars[(v >> 12) & 63];
		*dst++ = '=';
		*dst++ = '=';
	}
	else if (n - i == 2)
	{
		uint32_t	v = (uint32_t) src[i] << 16 | (uint32_t) src[i + 1] << 8;

		*dst++ = b64chars[v >> 18];
		*dst++ = b64chars[(v >> 12) & 63];
		*dst++ = b64chars[(v >> 6) & 63];
		*dst++ = '=';
	}
}

static int
b64value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Length that src decodes to, or false if src is not canonical base64 by its
 * shape (length a multiple of 4, at most two '=' at the end).
 */
bool
bloom_base64_decoded_len(const char *src, size_t n, size_t *out)
{
	size_t		pad = 0;

	if (n % 4 != 0)
		return false;
	if (n >= 1 && src[n - 1] == '=')
		pad++;
	if (n >= 2 && src[n - 2] == '=')
		pad++;
	*out = n / 4 * 3 - pad;
	return true;
}

/*
 * Decode; false on any character outside the alphabet, misplaced padding, or
 * non-zero bits in the padding (so that each value has exactly one text
 * form, and text output followed by input is the identity both ways).
 */
bool
bloom_base64_decode(const char *src, size_t n, uint8_t *dst)
{
	for (size_t i = 0; i < n; i += 4)
	{
		bool		last = (i + 4 == n);
		int			a = b64value(src[i]);
		int			b = b64value(src[i + 1]);
		int			c,
					d;
		uint32_t	v;

		if (a < 0 || b < 0)
			return false;
		if (last && src[i + 2] == '=' && src[i + 3] == '=')
		{
			if (b & 15)
				return false;
			*dst++ = (uint8_t) (a << 2 | b >> 4);
			return true;
		}
		c = b64value(src[i + 2]);
		if (c < 0)
			return false;
		if (last && src[i + 3] == '=')
		{
			if (c & 3)
				return false;
			v = (uint32_t) a << 18 | (uint32_t) b << 12 | (uint32_t) c << 6;
			*dst++ = (uint8_t) (v >> 16);
			*dst++ = (uint8_t) (v >> 8);
			return true;
		}
		d = b64value(src[i + 3]);
		if (d < 0)
			return false;
		v = (uint32_t) a << 18 | (uint32_t) b << 12 | (uint32_t) c << 6 | (uint32_t) d;
		*dst++ = (uint8_t) (v >> 16);
		*dst++ = (uint8_t) (v >> 8);
		*dst++ = (uint8_t) v;
	}
	return true;
}
