/*-------------------------------------------------------------------------
 *
 * bloom_bits.c
 *	  Operations on a filter's bits: counting them, comparing shapes,
 *	  folding, merging (union, intersection) and the fill statistics; no
 *	  PostgreSQL.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_bits.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "bloom.h"

/* Number of bits set. */
uint64_t
bloom_popcount(const uint8_t *bits, size_t nbytes)
{
	uint64_t	total = 0;
	size_t		i = 0;

	for (; i + 8 <= nbytes; i += 8)
	{
		uint64_t	w;

		memcpy(&w, bits + i, 8);
		total += (uint64_t) __builtin_popcountll(w);
	}
	for (; i < nbytes; i++)
		total += (uint64_t) __builtin_popcount(bits[i]);
	return total;
}

/*
 * How two filters relate: can they be combined as they are, after folding
 * one, or not at all (and then, the first field found to differ).
 *
 * Folding applies because a key's block comes from a multiply-shift of its
 * hash, block = (x * nblocks) >> 32 with x the high 32 bits: for nblocks =
 * c * n, floor(floor(x * c * n / 2^32) / c) = floor(x * n / 2^32), so blocks
 * c*j .. c*j + c-1 of the larger filter hold exactly the keys that block j of
 * the smaller one would.  A key's positions inside its block depend on its
 * hash alone.  OR-ing each run of c blocks therefore gives, bit for bit, the
 * filter that would have been built with n blocks.  (With block = h mod
 * nblocks, the classic fold, the runs would be j, j + n, j + 2n, ...; with
 * multiply-shift they are adjacent.)  Any whole factor works, not only
 * powers of two.
 */
BloomShape
bloom_shape_compare(const BloomFilter *a, const BloomFilter *b)
{
	if (a->version != b->version || a->layout != b->layout)
		return BLOOM_SHAPE_LAYOUT;
	if (a->hash_scheme != b->hash_scheme)
		return BLOOM_SHAPE_HASH;
	if (a->nhashes != b->nhashes)
		return BLOOM_SHAPE_NHASHES;
	if (a->seed != b->seed)
		return BLOOM_SHAPE_SEED;
	if (a->family[0] != '\0' && b->family[0] != '\0' &&
		strcmp(a->family, b->family) != 0)
		return BLOOM_SHAPE_FAMILY;
	if (a->nblocks == b->nblocks)
		return BLOOM_SHAPE_SAME;
	if (a->nblocks > b->nblocks && a->nblocks % b->nblocks == 0)
		return BLOOM_SHAPE_FOLD_FIRST;
	if (b->nblocks > a->nblocks && b->nblocks % a->nblocks == 0)
		return BLOOM_SHAPE_FOLD_SECOND;
	return BLOOM_SHAPE_SIZE;
}

/*
 * The header of the combination of two filters that bloom_shape_compare()
 * accepted: the geometry of the smaller, the non-empty key family, and, among
 * the inputs with that geometry, the larger design capacity (on a tie, the
 * smaller rate).  That choice is commutative and associative, so an
 * aggregate's result does not depend on the order of its rows or on how
 * parallel workers split them.  The label guard goes with the family; of two
 * guards of one enum family, the one of more labels (on a tie, the larger
 * sum), which the PostgreSQL glue then replaces by the catalog's labels
 * (bloom_value.c).  out->bits is left NULL.
 */
void
bloom_combine_header(BloomFilter *out, const BloomFilter *a,
					 const BloomFilter *b)
{
	const BloomFilter *g = b->nblocks < a->nblocks ? b : a;
	const BloomFilter *o = g == a ? b : a;

	*out = *g;
	out->bits = NULL;
	if (o->nblocks == g->nblocks &&
		(o->capacity > g->capacity ||
		 (o->capacity == g->capacity && o->rate < g->rate)))
	{
		out->capacity = o->capacity;
		out->rate = o->rate;
	}
	if (out->family[0] == '\0')
	{
		memcpy(out->family, o->family, BLOOM_FAMILY_LEN);
		out->labels = o->labels;
	}
	else if (o->family[0] != '\0' &&
			 (o->labels.count > out->labels.count ||
			  (o->labels.count == out->labels.count &&
			   o->labels.sum > out->labels.sum)))
		out->labels = o->labels;
}

/* one 64-byte block as eight words, whatever the alignment */
static inline void
block_load(uint64_t *w, const uint8_t *p)
{
	memcpy(w, p, BLOOM_BLOCK_BYTES);
}

static inline void
block_store(uint8_t *p, const uint64_t *w)
{
	memcpy(p, w, BLOOM_BLOCK_BYTES);
}

/* OR of the c blocks starting at p */
static inline void
block_fold(uint64_t *acc, const uint8_t *p, uint64_t c)
{
	block_load(acc, p);
	for (uint64_t t = 1; t < c; t++)
	{
		uint64_t	w[8];

		block_load(w, p + t * BLOOM_BLOCK_BYTES);
		for (int i = 0; i < 8; i++)
			acc[i] |= w[i];
	}
}

/*
 * Fold a filter of nblocks blocks, in place, to to_nblocks, which must divide
 * nblocks; the result holds the bits a filter of to_nblocks blocks would have
 * got from the same keys (see bloom_shape_compare).  Block j is written only
 * after blocks c*j .. c*j + c-1 are read, and later blocks are read from
 * beyond it, so working upwards is safe.
 */
void
bloom_fold(uint8_t *bits, uint64_t nblocks, uint64_t to_nblocks)
{
	uint64_t	c = nblocks / to_nblocks;

	if (c <= 1)
		return;
	for (uint64_t j = 0; j < to_nblocks; j++)
	{
		uint64_t	acc[8];

		block_fold(acc, bits + j * c * BLOOM_BLOCK_BYTES, c);
		block_store(bits + j * BLOOM_BLOCK_BYTES, acc);
	}
}

/*
 * dst = dst OR src, or dst AND src, where src has src_nblocks blocks, a
 * multiple of dst_nblocks: src is folded on the fly.
 */
void
bloom_merge_bits(uint8_t *dst, uint64_t dst_nblocks,
				 const uint8_t *src, uint64_t src_nblocks, BloomMergeOp op)
{
	uint64_t	c = src_nblocks / dst_nblocks;

	for (uint64_t j = 0; j < dst_nblocks; j++)
	{
		uint64_t	s[8];
		uint64_t	d[8];

		block_fold(s, src + j * c * BLOOM_BLOCK_BYTES, c);
		block_load(d, dst + j * BLOOM_BLOCK_BYTES);
		if (op == BLOOM_MERGE_OR)
			for (int i = 0; i < 8; i++)
				d[i] |= s[i];
		else
			for (int i = 0; i < 8; i++)
				d[i] &= s[i];
		block_store(dst + j * BLOOM_BLOCK_BYTES, d);
	}
}

/*
 * Number of bits set in the union of two filters, the larger folded to the
 * smaller, without building the union.
 */
uint64_t
bloom_popcount_union(const uint8_t *a, uint64_t a_nblocks,
					 const uint8_t *b, uint64_t b_nblocks)
{
	uint64_t	c;
	uint64_t	total = 0;

	if (a_nblocks > b_nblocks)
	{
		const uint8_t *t = a;

		a = b;
		b = t;
		c = a_nblocks / b_nblocks;
		a_nblocks = b_nblocks;
	}
	else
		c = b_nblocks / a_nblocks;

	for (uint64_t j = 0; j < a_nblocks; j++)
	{
		uint64_t	s[8];
		uint64_t	d[8];

		block_fold(s, b + j * c * BLOOM_BLOCK_BYTES, c);
		block_load(d, a + j * BLOOM_BLOCK_BYTES);
		for (int i = 0; i < 8; i++)
			total += (uint64_t) __builtin_popcountll(d[i] | s[i]);
	}
	return total;
}

/*
 * Bits set, and the false-positive rate the filter has now: the probability
 * that a key that was never added is reported present.
 *
 * The rate is read off the bits rather than predicted from a key count: a
 * key lands in block b with probability w_b (the share of 32-bit hash
 * prefixes that the multiply-shift sends there, 1/nblocks up to rounding)
 * and its k positions are independent and uniform over the block's 512 bits,
 * so with c_b bits set in block b it is reported present with probability
 * (c_b / 512)^k.  The rate is the sum of w_b (c_b / 512)^k: exact for ideal
 * hashing, whatever the keys and however unevenly they filled the blocks.
 */
void
bloom_fill_stats(const uint8_t *bits, uint64_t nblocks, int k,
				 uint64_t *bits_set, double *fpr)
{
	double		hit[BLOOM_BLOCK_BITS + 1];
	uint64_t	total = 0;
	uint64_t	start = 0;		/* first hash prefix of block j */
	double		sum = 0.0;

	for (int c = 0; c <= BLOOM_BLOCK_BITS; c++)
		hit[c] = pow((double) c / BLOOM_BLOCK_BITS, k);

	for (uint64_t j = 0; j < nblocks; j++)
	{
		uint64_t	w[8];
		uint64_t	next;
		int			c = 0;

		block_load(w, bits + j * BLOOM_BLOCK_BYTES);
		for (int i = 0; i < 8; i++)
			c += __builtin_popcountll(w[i]);
		total += (uint64_t) c;

		/* prefixes x with (x * nblocks) >> 32 == j: [start, next) */
		next = (((j + 1) << 32) + nblocks - 1) / nblocks;
		sum += (double) (next - start) * hit[c];
		start = next;
	}
	*bits_set = total;
	*fpr = sum / 4294967296.0;
}

/*
 * Add a hash; true if that set any bit, that is, if the key was surely not
 * in the filter before (what RedisBloom's BF.ADD and Guava's put report).
 */
bool
bloom_set_hash_changed(uint8_t *bits, uint64_t nblocks, int k, uint64_t h)
{
	if (bloom_test_hash(bits, nblocks, k, h))
		return false;
	bloom_set_hash(bits, nblocks, k, h);
	return true;
}
