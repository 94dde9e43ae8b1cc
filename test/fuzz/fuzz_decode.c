/*-------------------------------------------------------------------------
 *
 * fuzz_decode.c
 *	  libFuzzer target over every decoder of the bloom format, run on the
 *	  PostgreSQL-free core (src/bloom_sizing.c, bloom_bits.c, bloom_unique.c,
 *	  bloom_format.c).
 *
 * The first input byte picks the decoder (its value modulo 4, so the ASCII
 * digits '0'..'3' do, which keeps the text seeds readable):
 *
 *	0  text input (bloom_in): base64 length, base64 decode, bloom_check
 *	1  binary receive and the cast from bytea (bloom_recv, bloom_from_bytea,
 *	   bloom_setop_agg_deserialize): bloom_check on the bytes
 *	2  bloom_agg's deserialize: bloom_state_check, then the hashes, or
 *	   bloom_check on the embedded filter, and the sizing of a sized state
 *	   (bloom_plan, and when that fails the error hint's bloom_max_capacity)
 *	3  two filters (a little-endian 16-bit split point, then the bytes of
 *	   both): each through bloom_check, then the union and intersection
 *	   helpers on the pair
 *
 * Whatever a decoder accepts is then used the way the SQL functions use it
 * (probe, add, popcount, fill statistics, estimates, fold, merge), and
 * checked against properties the format promises: the header re-encodes to
 * the very bytes it was decoded from (the format is canonical), base64
 * re-encodes to the very text, whole or in chunks as bloom_in and bloom_out
 * do it, a key that was added is found, folding and merging lose no key.  A broken property is an abort(), which libFuzzer
 * reports as a crash, as it does sanitizer reports.
 *
 * Every allocation the harness makes, for sizes read from the input, goes
 * through fz_alloc(), which aborts above the largest payload the format
 * declares (BLOOM_PAYLOAD_SIZE(BLOOM_MAX_NBLOCKS)): the PostgreSQL glue
 * allocates the same sizes, so a decoder that let a length field through
 * unchecked would show up here.  The runner also passes -malloc_limit_mb.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_decode.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom.h"

#ifndef M_LN2
#define M_LN2 0.69314718055994530942
#endif

/* the largest allocation any decoder may make: one maximal payload */
#define FUZZ_MAX_ALLOC	BLOOM_PAYLOAD_SIZE(BLOOM_MAX_NBLOCKS)

enum
{
	MODE_TEXT,
	MODE_BINARY,
	MODE_STATE,
	MODE_PAIR,
	NMODES
};

/* a broken promise: say which, and crash so that libFuzzer keeps the input */
#define CHECK(cond) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "fuzz_decode: check failed at %s:%d: %s\n", \
					__FILE__, __LINE__, #cond); \
			abort(); \
		} \
	} while (0)

static void *
fz_alloc(size_t n)
{
	void	   *p;

	if (n > FUZZ_MAX_ALLOC)
	{
		fprintf(stderr, "fuzz_decode: allocation of %zu bytes, above the declared maximum of %zu\n",
				n, (size_t) FUZZ_MAX_ALLOC);
		abort();
	}
	p = malloc(n ? n : 1);
	if (p == NULL)
		abort();
	return p;
}

static void *
fz_dup(const void *src, size_t n)
{
	void	   *p = fz_alloc(n);

	if (n > 0)
		memcpy(p, src, n);
	return p;
}

static uint64_t
splitmix(uint64_t *s)
{
	return bloom_mix(*s += BLOOM_GOLDEN);
}

/* FNV-1a of the input: a salt so that the probe hashes vary with it */
static uint64_t
input_salt(const uint8_t *p, size_t n)
{
	uint64_t	h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* Hashes to probe with: the corners of the block mapping, then salted ones. */
#define NPROBES 10

static void
probe_hashes(uint64_t salt, uint64_t *h)
{
	h[0] = 0;
	h[1] = UINT64_MAX;
	h[2] = UINT64_C(0xFFFFFFFF00000000);	/* the last block */
	h[3] = UINT64_C(0x00000000FFFFFFFF);	/* the first block */
	for (int i = 4; i < NPROBES; i++)
		h[i] = splitmix(&salt);
}

static uint64_t
popcount_slow(const uint8_t *p, size_t n)
{
	uint64_t	c = 0;

	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			c += (p[i] >> b) & 1;
	return c;
}

/* is every bit of a also set in b? */
static bool
bits_subset(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] & ~b[i])
			return false;
	return true;
}

static uint64_t
smallest_factor(uint64_t n)
{
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return d;
	return n;
}

/*
 * Use a filter that bloom_check accepted from "len" bytes at "payload" in
 * every way the SQL functions do, checking what the format promises.
 */
static void
exercise_filter(const uint8_t *payload, size_t len, const BloomFilter *f,
				uint64_t salt)
{
	uint8_t		hdr[BLOOM_HEADER_SIZE];
	BloomFilter g;
	uint64_t	h[NPROBES];
	size_t		nbytes;
	uint64_t	pop,
				bits_set;
	double		fpr,
				est,
				mean,
				sd;
	int			k = f->nhashes;
	uint8_t    *copy;

	/* the decoded fields are within the documented ranges */
	CHECK(f->version == BLOOM_VERSION);
	CHECK(f->layout == BLOOM_LAYOUT_BLOCK512);
	CHECK(f->hash_scheme == BLOOM_HASH_XXH3);
	CHECK(k >= 1 && k <= BLOOM_MAX_K);
	CHECK(f->nblocks >= 1 && f->nblocks <= BLOOM_MAX_NBLOCKS);
	CHECK(f->capacity >= 1 && f->capacity <= (uint64_t) INT64_MAX);
	CHECK(f->rate > 0.0 && f->rate < 1.0);
	CHECK(memchr(f->family, 0, BLOOM_FAMILY_LEN) != NULL);
	/* a label guard only for an enum family, and none of no labels */
	CHECK(bloom_family_is_enum(f->family) ||
		  (f->labels.count == 0 && f->labels.sum == 0));
	CHECK(f->labels.count != 0 || f->labels.sum == 0);
	CHECK(len == BLOOM_PAYLOAD_SIZE(f->nblocks));
	CHECK(f->bits == payload + BLOOM_HEADER_SIZE);
	nbytes = (size_t) f->nblocks * BLOOM_BLOCK_BYTES;

	/* canonical: the header written from the fields is the header read */
	bloom_write_header(hdr, f);
	CHECK(memcmp(hdr, payload, BLOOM_HEADER_SIZE) == 0);

	/* the header-only path (sliced probes) agrees */
	CHECK(bloom_read_header_only(payload, len, &g) == BLOOM_OK);
	CHECK(g.bits == NULL);
	g.bits = f->bits;
	CHECK(memcmp(&g, f, sizeof(g)) == 0);

	/* popcount, fill, estimates (bloom_info, bloom_cardinality, ...) */
	pop = bloom_popcount(f->bits, nbytes);
	CHECK(pop == popcount_slow(f->bits, nbytes));
	bloom_fill_stats(f->bits, f->nblocks, k, &bits_set, &fpr);
	CHECK(bits_set == pop);
	CHECK(fpr >= 0.0 && fpr <= 1.0 + 1e-9);
	est = bloom_estimate_keys(f->nblocks, k, pop);
	CHECK(!isnan(est) && est >= 0.0);
	CHECK(isinf(est) == (pop == nbytes * 8));
	bloom_expected_fill(f->nblocks, k, (double) f->capacity, &mean, &sd);
	CHECK(!isnan(mean) && !isnan(sd));
	(void) bloom_over_capacity(f->nblocks, k, f->capacity, pop);

	/* probes; then add them to a copy (bloom_add), and all are found */
	probe_hashes(salt, h);
	copy = fz_dup(f->bits, nbytes);
	for (int i = 0; i < NPROBES; i++)
	{
		bool		was = bloom_test_hash(copy, f->nblocks, k, h[i]);

		CHECK(bloom_block_of(h[i], f->nblocks) < f->nblocks);
		CHECK(bloom_set_hash_changed(copy, f->nblocks, k, h[i]) == !was);
		CHECK(bloom_test_hash(copy, f->nblocks, k, h[i]));
		CHECK(!bloom_set_hash_changed(copy, f->nblocks, k, h[i]));
	}
	for (int i = 0; i < NPROBES; i++)
		CHECK(bloom_test_hash(copy, f->nblocks, k, h[i]));
	CHECK(bits_subset(f->bits, copy, nbytes));
	CHECK(bloom_popcount(copy, nbytes) <= pop + (uint64_t) NPROBES * k);

	/*
	 * Fold by the smallest factor of nblocks: the folded filter finds every
	 * key the large one holds, and equals the large one merged into an empty
	 * filter of the smaller size.
	 */
	if (f->nblocks > 1)
	{
		uint64_t	to = f->nblocks / smallest_factor(f->nblocks);
		size_t		tobytes = (size_t) to * BLOOM_BLOCK_BYTES;
		uint8_t    *folded = fz_dup(copy, nbytes);
		uint8_t    *merged = fz_alloc(tobytes);

		bloom_fold(folded, f->nblocks, to);
		for (int i = 0; i < NPROBES; i++)
			CHECK(bloom_test_hash(folded, to, k, h[i]));
		memset(merged, 0, tobytes);
		bloom_merge_bits(merged, to, copy, f->nblocks, BLOOM_MERGE_OR);
		CHECK(memcmp(merged, folded, tobytes) == 0);
		CHECK(bloom_popcount_union(merged, to, copy, f->nblocks) ==
			  bloom_popcount(folded, tobytes));
		CHECK(bloom_popcount(folded, tobytes) <= bloom_popcount(copy, nbytes));
		free(merged);
		free(folded);
	}
	free(copy);
}

/* --- 0: text input --- */

static void
fuzz_text(const uint8_t *data, size_t size)
{
	const char *text = (const char *) data;
	size_t		n = strnlen(text, size);	/* bloom_in gets a C string */
	size_t		len;
	uint8_t    *buf;
	BloomFilter f;
	BloomError	err;

	if (!bloom_base64_decoded_len(text, n, &len))
	{
		CHECK(n % 4 != 0);
		return;
	}
	CHECK(len <= n / 4 * 3);
	if (len > FUZZ_MAX_ALLOC)
		return;					/* bloom_in refuses before allocating */

	/* exactly the decoded length: a decoder that writes more hits ASan */
	buf = fz_alloc(len);
	if (bloom_base64_decode(text, n, buf))
	{
		char	   *out;

		/* one text form per value: encoding gives back the very text */
		CHECK(bloom_base64_encoded_len(len) == n);
		out = fz_alloc(n + 1);
		bloom_base64_encode(buf, len, out);
		CHECK(memcmp(out, text, n) == 0);
		free(out);

		/*
		 * bloom_in decodes in chunks of a multiple of 4 characters, '='
		 * allowed in the last one only (decode_chunked in bloom_io.c): so
		 * must the same with small chunks give the same bytes
		 */
		{
			size_t		chunk = 4 * (1 + n / 4 % 7);
			uint8_t    *again = fz_alloc(len);

			for (size_t done = 0; done < n; done += chunk)
			{
				size_t		m = n - done < chunk ? n - done : chunk;

				CHECK(done + m == n || memchr(text + done, '=', m) == NULL);
				CHECK(bloom_base64_decode(text + done, m, again + done / 4 * 3));
			}
			CHECK(memcmp(again, buf, len) == 0);
			free(again);
		}

		err = bloom_check(buf, len, &f);
		if (err == BLOOM_OK)
			exercise_filter(buf, len, &f, input_salt(buf, len));
		else
			CHECK(strlen(bloom_error_message(err)) > 0);
	}
	free(buf);
}

/* --- 1: binary receive, the cast from bytea --- */

static void
fuzz_binary(const uint8_t *data, size_t size)
{
	uint8_t    *buf = fz_dup(data, size);
	BloomFilter f;
	BloomError	err = bloom_check(buf, size, &f);

	if (err == BLOOM_OK)
	{
		char	   *text;

		exercise_filter(buf, size, &f, input_salt(data, size));

		/* bloom_out, then bloom_in, gives the same bytes back */
		text = fz_alloc(bloom_base64_encoded_len(size) + 1);
		bloom_base64_encode(buf, size, text);
		text[bloom_base64_encoded_len(size)] = '\0';
		{
			/* bloom_out encodes in chunks of a multiple of 3 bytes: same text */
			size_t		chunk = 3 * (1 + size % 7);
			char	   *again = fz_alloc(bloom_base64_encoded_len(size));

			for (size_t done = 0; done < size; done += chunk)
				bloom_base64_encode(buf + done, size - done < chunk ? size - done : chunk,
									again + done / 3 * 4);
			CHECK(memcmp(again, text, bloom_base64_encoded_len(size)) == 0);
			free(again);
		}
		{
			size_t		len;
			uint8_t    *back;

			CHECK(bloom_base64_decoded_len(text, strlen(text), &len));
			CHECK(len == size);
			back = fz_alloc(len);
			CHECK(bloom_base64_decode(text, strlen(text), back));
			CHECK(memcmp(back, buf, size) == 0);
			free(back);
		}
		free(text);
	}
	else
		CHECK(strlen(bloom_error_message(err)) > 0);
	free(buf);
}

/* --- 2: the aggregate state --- */

static void
fuzz_state(const uint8_t *data, size_t size)
{
	uint8_t    *buf = fz_dup(data, size);
	BloomStateHeader s;
	const uint8_t *body;
	size_t		bodylen;
	const char *why;
	uint8_t		hdr[BLOOM_STATE_HEADER_SIZE];
	uint64_t	plan_nblocks = 0;
	int			plan_k = 0;
	bool		planned = false;

	memset(&s, 0, sizeof(s));
	why = bloom_state_check(buf, size, &s, &body, &bodylen);
	if (why != NULL)
	{
		CHECK(strlen(why) > 0);
		free(buf);
		return;
	}
	CHECK(size >= BLOOM_STATE_HEADER_SIZE);
	CHECK(body == buf + BLOOM_STATE_HEADER_SIZE);
	CHECK(bodylen == size - BLOOM_STATE_HEADER_SIZE);
	CHECK(memchr(s.family, 0, BLOOM_FAMILY_LEN) != NULL);
	CHECK(bloom_family_is_enum(s.family) ||
		  (s.labels.count == 0 && s.labels.sum == 0));
	CHECK(s.labels.count != 0 || s.labels.sum == 0);

	/* canonical, like the filter header */
	bloom_state_write_header(hdr, &s);
	CHECK(memcmp(hdr, buf, BLOOM_STATE_HEADER_SIZE) == 0);

	/* a sized state is re-planned (bloom_plan_or_error in deserialize) */
	if (s.sized)
	{
		CHECK(s.capacity >= 1 && s.capacity <= (uint64_t) INT64_MAX);
		CHECK(s.rate > 0.0 && s.rate < 1.0);
		planned = bloom_plan(s.capacity, s.rate, &plan_nblocks, &plan_k);
		if (planned)
		{
			CHECK(plan_nblocks >= 1 && plan_nblocks <= BLOOM_MAX_NBLOCKS);
			CHECK(plan_k >= 1 && plan_k <= BLOOM_MAX_K);
		}
		else if (input_salt(buf, size) % 8 == 0)
		{
			/*
			 * the error's hint (bloom_plan_or_error): a search that takes
			 * up to a second under ASan, so for one such state in eight,
			 * or the fuzzer would spend a tenth of its speed on it
			 */
			uint64_t	most = bloom_max_capacity(s.rate);

			CHECK(most < s.capacity);
		}
	}

	if (s.mode == BLOOM_STATE_HASHES)
	{
		size_t		n = (size_t) s.count;
		uint64_t   *a,
				   *b,
				   *c,
				   *scratch;
		size_t		na,
					nb,
					nc;

		/* the count was checked against the length: no huge allocation */
		CHECK(n == bodylen / 8 && bodylen % 8 == 0);
		a = fz_alloc(n * sizeof(uint64_t));
		b = fz_alloc(n * sizeof(uint64_t));
		c = fz_alloc(n * sizeof(uint64_t));
		scratch = fz_alloc(bloom_unique_scratch(n) * sizeof(uint64_t));
		for (size_t i = 0; i < n; i++)
			a[i] = bloom_get_u64(body + 8 * i);

		/*
		 * The hash set (bloom_agg's lists) keeps the same hashes as the
		 * sort, once each: as they come, and made to collide (all in one
		 * slot and one part), which takes the sort fallback.
		 */
		na = bloom_sort_unique(a, n);
		CHECK(na <= n && (n == 0 || na >= 1));
		for (size_t i = 1; i < na; i++)
			CHECK(a[i - 1] < a[i]);
		for (int collide = 0; collide < 2; collide++)
		{
			for (size_t i = 0; i < n; i++)
			{
				b[i] = bloom_get_u64(body + 8 * i);
				if (collide)
					b[i] &= UINT64_C(0xFF00FFFFFFFF0000);
			}
			nb = bloom_unique(b, n, scratch);
			nb = bloom_sort_unique(b, nb);	/* the same set, in order */
			if (collide)
			{
				memcpy(c, a, na * sizeof(uint64_t));
				for (size_t i = 0; i < na; i++)
					c[i] &= UINT64_C(0xFF00FFFFFFFF0000);
				nc = bloom_sort_unique(c, na);
				CHECK(nb == nc && memcmp(b, c, nb * sizeof(uint64_t)) == 0);
			}
			else
				CHECK(nb == na && memcmp(a, b, na * sizeof(uint64_t)) == 0);
		}
		free(scratch);
		free(c);
		free(b);
		free(a);
	}
	else
	{
		BloomFilter f;
		BloomError	err;

		CHECK(s.mode == BLOOM_STATE_BITS && s.sized && s.count == 0);
		err = bloom_check(body, bodylen, &f);
		if (err == BLOOM_OK)
		{
			exercise_filter(body, bodylen, &f, input_salt(body, bodylen));

			/*
			 * deserialize refuses a filter of another shape than the plan;
			 * the seeds are states it accepts, so this counts as coverage
			 */
			if (planned && f.nblocks == plan_nblocks && f.nhashes == plan_k &&
				f.capacity == s.capacity && f.rate == s.rate &&
				strcmp(f.family, s.family) == 0 &&
				bloom_labels_equal(&f.labels, &s.labels))
				CHECK(bodylen == BLOOM_PAYLOAD_SIZE(plan_nblocks));
		}
	}
	free(buf);
}

/* --- 3: two filters, combined --- */

static BloomShape
swap_shape(BloomShape s)
{
	if (s == BLOOM_SHAPE_FOLD_FIRST)
		return BLOOM_SHAPE_FOLD_SECOND;
	if (s == BLOOM_SHAPE_FOLD_SECOND)
		return BLOOM_SHAPE_FOLD_FIRST;
	return s;
}

static void
fuzz_pair(const uint8_t *data, size_t size)
{
	size_t		split,
				alen,
				blen;
	uint8_t    *abuf,
			   *bbuf;
	BloomFilter a,
				b;
	BloomShape	shape;

	if (size < 2)
		return;
	split = (size_t) data[0] | (size_t) data[1] << 8;
	data += 2;
	size -= 2;
	alen = split % (size + 1);
	blen = size - alen;
	abuf = fz_dup(data, alen);
	bbuf = fz_dup(data + alen, blen);

	if (bloom_check(abuf, alen, &a) == BLOOM_OK &&
		bloom_check(bbuf, blen, &b) == BLOOM_OK)
	{
		shape = bloom_shape_compare(&a, &b);
		CHECK(bloom_shape_compare(&b, &a) == swap_shape(shape));
		CHECK(bloom_shape_compare(&a, &a) == BLOOM_SHAPE_SAME);

		if (shape == BLOOM_SHAPE_SAME || shape == BLOOM_SHAPE_FOLD_FIRST ||
			shape == BLOOM_SHAPE_FOLD_SECOND)
		{
			const BloomFilter *sm = b.nblocks < a.nblocks ? &b : &a;
			const BloomFilter *lg = sm == &a ? &b : &a;
			size_t		smbytes = (size_t) sm->nblocks * BLOOM_BLOCK_BYTES;
			BloomFilter ab,
						ba;
			uint8_t		hab[BLOOM_HEADER_SIZE],
						hba[BLOOM_HEADER_SIZE];
			uint8_t    *uni,
					   *inter,
					   *lgfold;
			uint64_t	h[NPROBES];
			int			k = a.nhashes;

			CHECK(lg->nblocks % sm->nblocks == 0);

			/* the combined header does not depend on the order */
			bloom_combine_header(&ab, &a, &b);
			bloom_combine_header(&ba, &b, &a);
			CHECK(ab.bits == NULL && ba.bits == NULL);
			CHECK(ab.nblocks == sm->nblocks);
			/* its label guard is one of the inputs', with its family */
			CHECK((strcmp(ab.family, a.family) == 0 &&
				   bloom_labels_equal(&ab.labels, &a.labels)) ||
				  (strcmp(ab.family, b.family) == 0 &&
				   bloom_labels_equal(&ab.labels, &b.labels)));
			bloom_write_header(hab, &ab);
			bloom_write_header(hba, &ba);
			CHECK(memcmp(hab, hba, BLOOM_HEADER_SIZE) == 0);
			{
				/* and is a valid header (the result passes bloom_check) */
				uint8_t    *res = fz_alloc(BLOOM_PAYLOAD_SIZE(ab.nblocks));
				BloomFilter r;

				memcpy(res, hab, BLOOM_HEADER_SIZE);
				memset(res + BLOOM_HEADER_SIZE, 0, smbytes);
				CHECK(bloom_check(res, BLOOM_PAYLOAD_SIZE(ab.nblocks), &r) == BLOOM_OK);
				free(res);
			}

			/* union and intersection, the larger folded on the fly */
			uni = fz_dup(sm->bits, smbytes);
			inter = fz_dup(sm->bits, smbytes);
			lgfold = fz_dup(lg->bits, (size_t) lg->nblocks * BLOOM_BLOCK_BYTES);
			bloom_merge_bits(uni, sm->nblocks, lg->bits, lg->nblocks, BLOOM_MERGE_OR);
			bloom_merge_bits(inter, sm->nblocks, lg->bits, lg->nblocks, BLOOM_MERGE_AND);
			bloom_fold(lgfold, lg->nblocks, sm->nblocks);

			CHECK(bloom_popcount(uni, smbytes) ==
				  bloom_popcount_union(a.bits, a.nblocks, b.bits, b.nblocks));
			CHECK(bits_subset(sm->bits, uni, smbytes));
			CHECK(bits_subset(lgfold, uni, smbytes));
			CHECK(bits_subset(inter, sm->bits, smbytes));
			CHECK(bits_subset(inter, lgfold, smbytes));

			/* no key of either is lost by the union, nor of both by the intersection */
			probe_hashes(input_salt(data, size), h);
			for (int i = 0; i < NPROBES; i++)
			{
				bool		ina = bloom_test_hash(a.bits, a.nblocks, k, h[i]);
				bool		inb = bloom_test_hash(b.bits, b.nblocks, k, h[i]);

				if (ina || inb)
					CHECK(bloom_test_hash(uni, sm->nblocks, k, h[i]));
				if (ina && inb)
					CHECK(bloom_test_hash(inter, sm->nblocks, k, h[i]));
			}
			free(lgfold);
			free(inter);
			free(uni);
		}
	}
	free(bbuf);
	free(abuf);
}

/*
 * Once per process: bloom_unique on arrays longer than any input can hold
 * (FUZZ_MAX_LEN), so that its split into parts runs too.  With repeats and
 * zeros; then with every hash in one part, and with every hash of a part in
 * one slot: both take the sort fallback.  Each agrees with the sort.
 */
static void
check_unique_large(void)
{
	const size_t n = 40000;
	uint64_t   *a = fz_alloc(n * sizeof(uint64_t));
	uint64_t   *b = fz_alloc(n * sizeof(uint64_t));
	uint64_t   *scratch = fz_alloc(bloom_unique_scratch(n) * sizeof(uint64_t));
	const uint64_t mask[3] = {~UINT64_C(0), ~UINT64_C(0x00FF000000000000),
	~UINT64_C(0xFFFF)};

	for (int variant = 0; variant < 3; variant++)
	{
		uint64_t	x = 1;
		size_t		na,
					nb;

		for (size_t i = 0; i < n; i++)
		{
			uint64_t	v = bloom_mix(x += BLOOM_GOLDEN);

			if (i % 5 == 4)
				v = a[i / 2];	/* a repeat */
			else if (i % 1000 == 7)
				v = 0;
			a[i] = b[i] = v & mask[variant];
		}
		na = bloom_sort_unique(a, n);
		nb = bloom_unique(b, n, scratch);
		CHECK(nb == na);
		nb = bloom_sort_unique(b, nb);
		CHECK(nb == na && memcmp(a, b, na * sizeof(uint64_t)) == 0);
		CHECK(na > n / 2 && na < n);
	}
	free(scratch);
	free(b);
	free(a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool unique_checked = false;

	if (!unique_checked)
	{
		check_unique_large();
		unique_checked = true;
	}
	if (size < 1)
		return 0;
	switch (data[0] % NMODES)
	{
		case MODE_TEXT:
			fuzz_text(data + 1, size - 1);
			break;
		case MODE_BINARY:
			fuzz_binary(data + 1, size - 1);
			break;
		case MODE_STATE:
			fuzz_state(data + 1, size - 1);
			break;
		case MODE_PAIR:
			fuzz_pair(data + 1, size - 1);
			break;
	}
	return 0;
}
