/*-------------------------------------------------------------------------
 *
 * gen_corpus.c
 *	  Write the seed corpus of fuzz_decode.c: valid filters of several sizes
 *	  and key families in text and binary form, pairs of filters that
 *	  combine (and some that do not), and bloom_agg states in both modes.
 *
 *	  gen_corpus DIRECTORY
 *
 * Keys are hashed as the extension hashes them (XXH3-64 of the key's
 * canonical bytes; integers as 8 little-endian bytes), so the integer seeds
 * are byte for byte what bloom_agg(i, capacity, rate) over 1..n gives.
 * Every file starts with the mode byte fuzz_decode.c reads: '0' text,
 * '1' binary, '2' aggregate state, '3' pair.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  test/fuzz/gen_corpus.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom.h"

static const char *outdir;

static void
write_file(const char *name, char mode, const uint8_t *p, size_t n)
{
	char		path[4096];
	FILE	   *fp;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	fp = fopen(path, "wb");
	if (fp == NULL || fputc(mode, fp) == EOF ||
		(n > 0 && fwrite(p, 1, n, fp) != n) || fclose(fp) != 0)
	{
		fprintf(stderr, "gen_corpus: cannot write %s\n", path);
		exit(1);
	}
}

static uint64_t
hash_int(int64_t v, uint64_t seed)
{
	uint8_t		le[8];

	bloom_put_u64(le, (uint64_t) v);
	return XXH3_64bits_withSeed(le, 8, seed);
}

static uint64_t
hash_text(const char *s, uint64_t seed)
{
	return XXH3_64bits_withSeed(s, strlen(s), seed);
}

/*
 * A filter of the given geometry (nblocks 0: as bloom_plan sizes it) with
 * keys 1..nkeys added, as integers or as the text 'k1', 'k2', ...
 */
static uint8_t *
make_filter(uint64_t capacity, double rate, uint64_t nblocks, int k,
			uint64_t seed, const char *family, int nkeys, size_t *len)
{
	BloomFilter f;
	uint8_t    *p;

	if (nblocks == 0 && !bloom_plan(capacity, rate, &nblocks, &k))
	{
		fprintf(stderr, "gen_corpus: no plan for %llu at %g\n",
				(unsigned long long) capacity, rate);
		exit(1);
	}
	*len = BLOOM_PAYLOAD_SIZE(nblocks);
	p = calloc(1, *len);
	bloom_init_header(&f, capacity, rate, nblocks, k, family);
	f.seed = seed;
	bloom_write_header(p, &f);
	for (int i = 1; i <= nkeys; i++)
	{
		uint64_t	h;

		if (strcmp(family, "text") == 0)
		{
			char		key[32];

			snprintf(key, sizeof(key), "k%d", i);
			h = hash_text(key, seed);
		}
		else
			h = hash_int(i, seed);
		bloom_set_hash(p + BLOOM_HEADER_SIZE, nblocks, k, h);
	}
	return p;
}

/*
 * Give the filter at p (header and bits) the label guard of an enum with
 * these labels: their number and the sum of their XXH3-64 (seed 0).
 */
static void
set_labels(uint8_t *p, size_t len, const char *const *labels, int n)
{
	BloomFilter f;

	if (bloom_read_header(p, len, &f) != BLOOM_OK)
		exit(1);
	f.labels.count = (uint32_t) n;
	f.labels.sum = 0;
	for (int i = 0; i < n; i++)
		f.labels.sum += XXH3_64bits(labels[i], strlen(labels[i]));
	bloom_write_header(p, &f);
}

/* a filter in both forms: '1' + payload and '0' + base64 */
static void
emit_filter(const char *name, const uint8_t *p, size_t len)
{
	char		fname[256];
	size_t		tlen = bloom_base64_encoded_len(len);
	char	   *text = malloc(tlen + 1);

	bloom_base64_encode(p, len, text);
	snprintf(fname, sizeof(fname), "bin-%s", name);
	write_file(fname, '1', p, len);
	snprintf(fname, sizeof(fname), "text-%s", name);
	write_file(fname, '0', (const uint8_t *) text, tlen);
	free(text);
}

/* '3', a little-endian 16-bit split point, then both filters */
static void
emit_pair(const char *name, const uint8_t *a, size_t alen,
		  const uint8_t *b, size_t blen)
{
	char		fname[256];
	uint8_t    *p = malloc(2 + alen + blen);

	p[0] = (uint8_t) (alen & 0xff);
	p[1] = (uint8_t) (alen >> 8);
	memcpy(p + 2, a, alen);
	memcpy(p + 2 + alen, b, blen);
	snprintf(fname, sizeof(fname), "pair-%s", name);
	write_file(fname, '3', p, 2 + alen + blen);
	free(p);
}

/* '2' + a serialized bloom_agg state */
static void
emit_state(const char *name, const BloomStateHeader *s, const uint8_t *body,
		   size_t bodylen)
{
	char		fname[256];
	uint8_t    *p = malloc(BLOOM_STATE_HEADER_SIZE + bodylen);

	bloom_state_write_header(p, s);
	if (bodylen > 0)
		memcpy(p + BLOOM_STATE_HEADER_SIZE, body, bodylen);
	snprintf(fname, sizeof(fname), "state-%s", name);
	write_file(fname, '2', p, BLOOM_STATE_HEADER_SIZE + bodylen);
	free(p);
}

static void
hashes_state(const char *name, const char *family, bool sized,
			 uint64_t capacity, double rate, int nkeys, uint32_t nlabels)
{
	BloomStateHeader s;
	uint8_t    *body = malloc(8 * (size_t) (nkeys ? nkeys : 1));

	memset(&s, 0, sizeof(s));
	s.mode = BLOOM_STATE_HASHES;
	s.sized = sized;
	s.count = (uint64_t) nkeys;
	strncpy(s.family, family, BLOOM_FAMILY_LEN - 1);
	/* an enum's label guard: any sum will do */
	s.labels.count = nlabels;
	s.labels.sum = nlabels ? UINT64_C(0x0123456789ABCDEF) * nlabels : 0;
	if (sized)
	{
		s.capacity = capacity;
		s.rate = rate;
	}
	/* unsorted, with a duplicate: deserialize takes them as they come */
	for (int i = 0; i < nkeys; i++)
		bloom_put_u64(body + 8 * i, hash_int(nkeys - i - (i == 1), 0));
	emit_state(name, &s, body, 8 * (size_t) nkeys);
	free(body);
}

static void
bits_state(const char *name, const char *family, uint64_t capacity,
		   double rate, int nkeys, const char *const *labels, int nlabels)
{
	BloomStateHeader s;
	size_t		len;
	uint8_t    *f = make_filter(capacity, rate, 0, 0, 0, family, nkeys, &len);
	BloomFilter h;

	if (nlabels > 0)
		set_labels(f, len, labels, nlabels);
	if (bloom_read_header(f, len, &h) != BLOOM_OK)
		exit(1);
	memset(&s, 0, sizeof(s));
	s.mode = BLOOM_STATE_BITS;
	s.sized = true;
	strncpy(s.family, family, BLOOM_FAMILY_LEN - 1);
	s.labels = h.labels;
	s.capacity = capacity;
	s.rate = rate;
	emit_state(name, &s, f, len);
	free(f);
}

int
main(int argc, char **argv)
{
	static const char *const moods[] = {"sad", "ok", "happy", "meh"};
	uint8_t    *a,
			   *b;
	size_t		alen,
				blen;

	if (argc != 2)
	{
		fprintf(stderr, "usage: gen_corpus DIRECTORY\n");
		return 2;
	}
	outdir = argv[1];

	/* single filters, as bloom_create / bloom_agg size them */
	a = make_filter(1, 0.5, 0, 0, 0, "", 0, &alen);
	emit_filter("empty-1-0.5", a, alen);
	free(a);
	a = make_filter(10, 0.01, 0, 0, 0, "integer", 10, &alen);
	emit_filter("integer-10-0.01", a, alen);
	free(a);
	a = make_filter(100, 0.01, 0, 0, 0, "integer", 100, &alen);
	emit_filter("integer-100-0.01", a, alen);
	free(a);
	a = make_filter(1000, 0.01, 0, 0, 0, "integer", 1000, &alen);
	emit_filter("integer-1000-0.01", a, alen);
	free(a);
	a = make_filter(300, 0.05, 0, 0, 0, "text", 300, &alen);
	emit_filter("text-300-0.05", a, alen);
	free(a);
	a = make_filter(60, 0.001, 0, 0, 0, "numeric", 60, &alen);
	emit_filter("numeric-60-0.001", a, alen);
	free(a);
	a = make_filter(5, 0.3, 0, 0, 0, "public.\"sch\xc3\xa9ma\xe2\x82\xac\"", 5, &alen);
	emit_filter("utf8family-5-0.3", a, alen);
	free(a);
	/* an enum family and its label guard */
	a = make_filter(10, 0.01, 0, 0, 0, "enum:public.mood", 3, &alen);
	set_labels(a, alen, moods, 3);
	emit_filter("enum-10-0.01", a, alen);
	free(a);

	/* geometries bloom_plan does not pick, all valid: k = 32, seeds, folds */
	a = make_filter(1000, 0.9, 1, 32, 0, "integer", 3, &alen);
	emit_filter("k32-1block", a, alen);
	free(a);
	a = make_filter(UINT64_C(9223372036854775807), 1e-300, 2, 1,
					UINT64_C(0xDEADBEEFCAFEF00D), "uuid", 0, &alen);
	emit_filter("extremes-seed", a, alen);
	free(a);
	a = make_filter(40, 0.01, 12, 7, 0, "integer", 40, &alen);
	emit_filter("integer-12blocks", a, alen);

	/* pairs: same shape, folds by 3 and 4, different k, family, seed */
	b = make_filter(40, 0.01, 12, 7, 0, "integer", 20, &blen);
	emit_pair("same-12-12", a, alen, b, blen);
	free(b);
	b = make_filter(40, 0.01, 4, 7, 0, "integer", 30, &blen);
	emit_pair("fold-12-4", a, alen, b, blen);
	emit_pair("fold-4-12", b, blen, a, alen);
	free(b);
	b = make_filter(40, 0.01, 3, 7, 0, "", 0, &blen);
	emit_pair("fold-12-3-empty", a, alen, b, blen);
	free(b);
	b = make_filter(40, 0.01, 5, 7, 0, "integer", 10, &blen);
	emit_pair("size-12-5", a, alen, b, blen);
	free(b);
	b = make_filter(40, 0.01, 12, 6, 0, "integer", 10, &blen);
	emit_pair("nhashes-7-6", a, alen, b, blen);
	free(b);
	b = make_filter(40, 0.01, 12, 7, 0, "text", 10, &blen);
	emit_pair("family", a, alen, b, blen);
	free(b);
	b = make_filter(40, 0.01, 12, 7, 1, "integer", 10, &blen);
	emit_pair("seed", a, alen, b, blen);
	free(b);
	free(a);
	/* one enum family, made before and after a label was added */
	a = make_filter(40, 0.01, 12, 7, 0, "enum:public.mood", 20, &alen);
	set_labels(a, alen, moods, 3);
	b = make_filter(40, 0.01, 6, 7, 0, "enum:public.mood", 10, &blen);
	set_labels(b, blen, moods, 4);
	emit_pair("enum-labels-12-6", a, alen, b, blen);
	free(b);
	b = make_filter(40, 0.01, 12, 7, 0, "", 0, &blen);
	emit_pair("enum-empty", b, blen, a, alen);
	free(b);
	free(a);

	/* bloom_agg states: hash lists (sized or not, empty) and bits */
	hashes_state("hashes-unsized-0", "", false, 0, 0, 0, 0);
	hashes_state("hashes-unsized-20", "integer", false, 0, 0, 20, 0);
	hashes_state("hashes-enum-5", "enum:public.mood", false, 0, 0, 5, 4);
	hashes_state("hashes-sized-30", "integer", true, 1000, 0.01, 30, 0);
	/* a rate so near 1 that blocks hold ~10^5 keys: the sizing sum's far end */
	hashes_state("hashes-sized-near1", "integer", true,
				 UINT64_C(10000000000), 0.999999, 3, 0);
	bits_state("bits-integer-100-0.01", "integer", 100, 0.01, 100, NULL, 0);
	bits_state("bits-text-20-0.2", "text", 20, 0.2, 20, NULL, 0);
	bits_state("bits-enum-10-0.1", "enum:public.mood", 10, 0.1, 4, moods, 4);
	return 0;
}
