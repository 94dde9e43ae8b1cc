/*-------------------------------------------------------------------------
 *
 * bloom.c
 *	  Sizing and bit operations of the blocked bloom filter; no PostgreSQL.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bloom.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_LN2
#define M_LN2 0.69314718055994530942
#endif

/*
 * distinct_prob[k][j]: probability that k positions drawn independently from
 * the 512 of a block are j distinct ones (Stirling numbers of the second
 * kind times a falling factorial).  Positions of one key can coincide, and a
 * probe with a repeated position tests fewer bits; leaving that out
 * undercounts the false-positive rate by 1-3%.
 */
static double distinct_prob[BLOOM_MAX_K + 1][BLOOM_MAX_K + 1];
static bool distinct_ready = false;

static void
init_distinct_prob(void)
{
	double		m = BLOOM_BLOCK_BITS;

	/* dp over draws: p[j] after t draws */
	for (int k = 1; k <= BLOOM_MAX_K; k++)
	{
		double		p[BLOOM_MAX_K + 2] = {0};

		p[0] = 1.0;
		for (int t = 0; t < k; t++)
		{
			for (int j = t + 1; j >= 1; j--)
				p[j] = p[j] * (j / m) + p[j - 1] * ((m - (j - 1)) / m);
			p[0] = 0.0;
		}
		for (int j = 0; j <= k; j++)
			distinct_prob[k][j] = p[j];
	}
	distinct_ready = true;
}

/*
 * Expected false-positive rate of a blocked filter holding nkeys keys.
 *
 * Keys fall into blocks as a Poisson process with mean lambda = nkeys /
 * nblocks.  In a block holding i keys each bit is set with probability
 * fill = 1 - (1 - 1/512)^(i k), and a probe of an absent key tests the j
 * distinct bits among its k positions: fill^j.  Summing over i and j gives
 * the expectation under ideal hashing; it is what lets us size the filter
 * tightly instead of with the classic formula, which ignores the cost of
 * blocking.
 */
#define MAX_FPR_TERMS 4096

double
bloom_expected_fpr(uint64_t nblocks, int k, double nkeys)
{
	double		lambda = nkeys / (double) nblocks;
	double		spread = 8.0 * sqrt(lambda) + 10.0;
	double		lo = floor(lambda - spread);
	double		hi = ceil(lambda + spread);
	double		q = log1p(-1.0 / BLOOM_BLOCK_BITS);
	double		loglambda = log(lambda);
	double		sum = 0.0;
	double		nterms,
				step,
				mass = 0.0;

	if (!distinct_ready)
		init_distinct_prob();
	if (lambda <= 0.0)
		return 0.0;
	if (lo < 0.0)
		lo = 0.0;

	/*
	 * At most MAX_FPR_TERMS points: rates very near 1 put millions of keys in
	 * a block, and summing every one of those counts (or, past 2^53, never
	 * getting anywhere by adding 1.0) must not hang the sizing.  There the
	 * Poisson mass is smooth on the scale of the step, so each point stands
	 * for the step's worth of counts around it.  Ordinary sizes take fewer
	 * points than this and are summed exactly.
	 */
	nterms = hi - lo + 1.0;
	step = nterms > MAX_FPR_TERMS ? ceil(nterms / MAX_FPR_TERMS) : 1.0;
	for (int t = 0; t * step <= hi - lo; t++)
	{
		double		i = lo + t * step;
		double		logp;
		double		pois;
		double		fill = -expm1(i * k * q);	/* 1 - (1-1/512)^(ik) */
		double		pj = 1.0;
		double		hit = 0.0;

		/*
		 * log of the Poisson probability of i keys; for large lambda by
		 * Stirling's formula written around i - lambda, as the direct form
		 * cancels terms of size lambda and loses all precision
		 */
		if (lambda > 1e4)
			logp = -i * log1p((i - lambda) / lambda) + (i - lambda) -
				0.5 * log(2.0 * M_PI * i) - 1.0 / (12.0 * i);
		else
			logp = i * loglambda - lambda - lgamma(i + 1.0);
		pois = step * exp(logp);

		if (fill >= 1.0)
			hit = 1.0;			/* saturated, whatever rounding says */
		else
			for (int j = 1; j <= k; j++)
			{
				pj *= fill;
				hit += distinct_prob[k][j] * pj;
			}
		sum += pois * hit;
		mass += pois;
	}
	/* stepping, the points' weights only approximate 1: rescale */
	if (step > 1.0)
		sum = mass > 0.0 ? sum / mass : 1.0;
	return sum;
}

/*
 * Smallest block count in [lo, hi] whose expected rate with k bits per key
 * is at most "rate", or 0 if even hi is not enough.
 */
static uint64_t
fewest_blocks(uint64_t lo, uint64_t hi, int k, double n, double rate)
{
	if (bloom_expected_fpr(hi, k, n) > rate)
		return 0;
	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (bloom_expected_fpr(mid, k, n) <= rate)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Choose the number of blocks and bits per key for "capacity" keys at a
 * false-positive rate of at most "rate", using as few blocks as possible,
 * and among the k that reach the rate with that many blocks, the one with the
 * lowest expected rate.
 *
 * Returns false when no filter within BLOOM_MAX_NBLOCKS will do.  The answer
 * is memoized: an aggregate over many groups asks the same few questions
 * again and again, and each answer costs some hundreds of evaluations of
 * bloom_expected_fpr().
 */
#define PLAN_MEMO_SIZE 64

typedef struct PlanMemo
{
	uint64_t	capacity;
	double		rate;
	uint64_t	nblocks;		/* 0: no plan possible */
	int			k;
	bool		valid;
} PlanMemo;

static PlanMemo plan_memo[PLAN_MEMO_SIZE];

bool
bloom_plan(uint64_t capacity, double rate, uint64_t *nblocks, int *k)
{
	double		n = (double) capacity;
	double		classic = -log(rate) / (M_LN2 * M_LN2);	/* bits per key */
	uint64_t	floor_blocks;
	uint64_t	best_blocks = 0;
	int			best_k = 0;
	PlanMemo   *memo;

	memo = &plan_memo[(capacity * UINT64_C(0x9E3779B97F4A7C15) +
					   (uint64_t) (rate * 1e15)) % PLAN_MEMO_SIZE];
	if (memo->valid && memo->capacity == capacity && memo->rate == rate)
	{
		*nblocks = memo->nblocks;
		*k = memo->k;
		return memo->nblocks != 0;
	}

	/* no blocked filter beats the classic optimum */
	{
		/* compared as a double: the product can be far beyond 2^64 */
		double		fb = floor(n * classic / BLOOM_BLOCK_BITS);

		floor_blocks = fb > (double) BLOOM_MAX_NBLOCKS ? BLOOM_MAX_NBLOCKS + 1 :
			fb < 1.0 ? 1 : (uint64_t) fb;
	}

	if (floor_blocks <= BLOOM_MAX_NBLOCKS)
	{
		/*
		 * Every k is tried: at very small rates the best k of a blocked
		 * filter is far from the classic one.  The search for each k is
		 * bounded by the best block count found so far, and the answer is
		 * memoized, so this stays cheap.
		 */
		for (int pass = 0; pass < 2 && best_blocks == 0; pass++)
		{
			/* first within 3x the classic size (always enough in practice) */
			uint64_t	hi = pass == 0 ? floor_blocks * 3 + 2 : BLOOM_MAX_NBLOCKS;

			if (hi > BLOOM_MAX_NBLOCKS)
				hi = BLOOM_MAX_NBLOCKS;
			for (int kk = 1; kk <= BLOOM_MAX_K; kk++)
			{
				uint64_t	b = fewest_blocks(floor_blocks,
											  best_blocks ? best_blocks : hi,
											  kk, n, rate);

				if (b != 0 && (best_blocks == 0 || b < best_blocks))
				{
					best_blocks = b;
					best_k = kk;
				}
			}
		}
	}

	/* among the k that reach the rate with that many blocks, the best rate */
	if (best_blocks != 0)
	{
		double		best_fpr = bloom_expected_fpr(best_blocks, best_k, n);

		for (int kk = 1; kk <= BLOOM_MAX_K; kk++)
		{
			double		fpr = bloom_expected_fpr(best_blocks, kk, n);

			if (fpr < best_fpr)
			{
				best_fpr = fpr;
				best_k = kk;
			}
		}
	}

	memo->capacity = capacity;
	memo->rate = rate;
	memo->nblocks = best_blocks;
	memo->k = best_k;
	memo->valid = true;

	if (best_blocks == 0)
		return false;
	*nblocks = best_blocks;
	*k = best_k;
	return true;
}

/*
 * The largest capacity that bloom_plan() accepts at this rate: what the hint
 * of a "too large" error tells the user.
 */
uint64_t
bloom_max_capacity(double rate)
{
	double		bound = (double) BLOOM_MAX_NBLOCKS * BLOOM_BLOCK_BITS /
		(-log(rate) / (M_LN2 * M_LN2)) + 1.0;
	uint64_t	lo = 0;
	uint64_t	hi;
	uint64_t	nb;
	int			k;

	/* capacities are bigints; the bound can be far above for rates near 1 */
	hi = bound >= (double) INT64_MAX ? (uint64_t) INT64_MAX : (uint64_t) bound;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo + 1) / 2;

		if (bloom_plan(mid, rate, &nb, &k))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Fill in the header of a new, empty filter. */
void
bloom_init_header(BloomFilter *f, uint64_t capacity, double rate,
				  uint64_t nblocks, int k, const char *family)
{
	memset(f, 0, sizeof(*f));
	f->version = BLOOM_VERSION;
	f->layout = BLOOM_LAYOUT_BLOCK512;
	f->hash_scheme = BLOOM_HASH_XXH3;
	f->nhashes = (uint8_t) k;
	f->seed = BLOOM_DEFAULT_SEED;
	f->nblocks = nblocks;
	f->capacity = capacity;
	f->rate = rate;
	if (family)
		strncpy(f->family, family, BLOOM_FAMILY_LEN - 1);
}

/*
 * Sort hashes, in place: an MSD radix sort on one byte at a time, finished by
 * insertion sort on small buckets.
 */
static void
sort_msd(uint64_t *a, size_t n, int shift)
{
	size_t		count[256] = {0};
	size_t		start[256];
	size_t		next[256];

	if (n <= 32 || shift < 0)
	{
		for (size_t i = 1; i < n; i++)
		{
			uint64_t	v = a[i];
			size_t		j = i;

			while (j > 0 && a[j - 1] > v)
			{
				a[j] = a[j - 1];
				j--;
			}
			a[j] = v;
		}
		return;
	}

	for (size_t i = 0; i < n; i++)
		count[(a[i] >> shift) & 0xff]++;
	start[0] = 0;
	for (int b = 1; b < 256; b++)
		start[b] = start[b - 1] + count[b - 1];
	memcpy(next, start, sizeof(next));

	/* American flag sort: cycle each element into its bucket */
	for (int b = 0; b < 256; b++)
	{
		size_t		end = start[b] + count[b];

		while (next[b] < end)
		{
			uint64_t	v = a[next[b]];
			int			vb = (int) ((v >> shift) & 0xff);

			while (vb != b)
			{
				uint64_t	t = a[next[vb]];

				a[next[vb]++] = v;
				v = t;
				vb = (int) ((v >> shift) & 0xff);
			}
			a[next[b]++] = v;
		}
	}

	for (int b = 0; b < 256; b++)
		if (count[b] > 1)
			sort_msd(a + start[b], count[b], shift - 8);
}

/* Sort hashes and drop duplicates, in place; returns the new length. */
size_t
bloom_sort_unique(uint64_t *a, size_t n)
{
	size_t		out = 1;

	if (n < 2)
		return n;
	sort_msd(a, n, 56);
	for (size_t i = 1; i < n; i++)
		if (a[i] != a[out - 1])
			a[out++] = a[i];
	return out;
}

/*
 * Hash sets for dropping duplicates: a quarter full at most, so that a
 * hash's first slot is usually free (the branch on it is then predictable),
 * and no larger than UNIQUE_SET_SLOTS, to stay within the cache.
 */
#define UNIQUE_SET_SLOTS	65536
#define UNIQUE_PART			1024	/* hashes per set, when splitting */

static size_t
set_slots(size_t n)
{
	size_t		slots = 16;

	while (slots < 4 * n)
		slots *= 2;
	return slots;
}

/* Scratch space bloom_unique needs for n hashes, in hashes. */
size_t
bloom_unique_scratch(size_t n)
{
	size_t		slots = set_slots(n);

	/* one set; or a copy to split, and a set per part */
	return slots <= UNIQUE_SET_SLOTS ? slots : n + UNIQUE_SET_SLOTS;
}

/*
 * Append to out[*nout] the hashes of in[0, n) not seen before, using an
 * open-addressing set in table (zeroed here; 0 marks a free slot, and a hash
 * of 0 itself is tracked by *zero).  out may be in itself.  Returns how many
 * of in were done: fewer than n if the set would be too large or the probes
 * exceed *budget.  Hashes are uniform, so that happens only to hashes made
 * to collide.
 */
static size_t
unique_into(const uint64_t *in, size_t n, uint64_t *out, size_t *nout,
			uint64_t *table, bool *zero, size_t *budget)
{
	size_t		slots = set_slots(n);
	size_t		mask = slots - 1;
	size_t		o = *nout;
	size_t		left = *budget;
	size_t		i;

	if (slots > UNIQUE_SET_SLOTS)
		return 0;
	memset(table, 0, slots * sizeof(uint64_t));
	for (i = 0; i < n; i++)
	{
		uint64_t	v = in[i];
		size_t		slot = (size_t) v & mask;

		if (v == 0)
		{
			if (!*zero)
				out[o++] = 0;
			*zero = true;
			continue;
		}
		while (table[slot] != 0 && table[slot] != v && left > 0)
		{
			slot = (slot + 1) & mask;
			left--;
		}
		if (left == 0)
			break;
		if (table[slot] == 0)
		{
			table[slot] = v;
			out[o++] = v;
		}
	}
	*nout = o;
	*budget = left;
	return i;
}

/*
 * Drop duplicate hashes, in place; returns the new length.  The order of what
 * is left is unspecified.  Nothing needs the hashes sorted, and a hash set
 * costs about half of what sorting them did.  Beyond what one set within the
 * cache holds, the hashes are first split by bits 48-55 into parts of about
 * UNIQUE_PART (the set indexes by the low bits).  Should the hashes be far
 * from uniform (they are not, unless XXH3 is attacked), a radix sort takes
 * over.  scratch: room for bloom_unique_scratch(n) hashes.
 */
size_t
bloom_unique(uint64_t *a, size_t n, uint64_t *scratch)
{
	bool		zero = false;
	size_t		budget = 8 * n + 64;
	size_t		out = 0;
	size_t		start[257] = {0};
	size_t		next[256];
	size_t		parts = 2;
	uint64_t   *copy = scratch;

	if (n < 2)
		return n;
	if (set_slots(n) <= UNIQUE_SET_SLOTS)
	{
		size_t		done = unique_into(a, n, a, &out, scratch, &zero, &budget);

		if (done == n)
			return out;
		/* a[0, out) and a[done, n) still hold every hash */
		memmove(a + out, a + done, (n - done) * sizeof(uint64_t));
		return bloom_sort_unique(a, out + n - done);
	}

	while (parts < 256 && n / parts > UNIQUE_PART)
		parts *= 2;
	/* scatter a into copy by bits 48-55, then one set per part */
	for (size_t i = 0; i < n; i++)
		start[((a[i] >> 48) & (parts - 1)) + 1]++;
	for (size_t b = 1; b <= parts; b++)
		start[b] += start[b - 1];
	memcpy(next, start, parts * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		copy[next[(a[i] >> 48) & (parts - 1)]++] = a[i];
	for (size_t b = 0; b < parts; b++)
	{
		size_t		len = start[b + 1] - start[b];

		if (unique_into(copy + start[b], len, a, &out, scratch + n,
						&zero, &budget) != len)
		{
			/* copy still holds every hash */
			memcpy(a, copy, n * sizeof(uint64_t));
			return bloom_sort_unique(a, n);
		}
	}
	return out;
}

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
 * --- Combining filters, and estimating from their bits ---
 */

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
 * parallel workers split them.  out->bits is left NULL.
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
		memcpy(out->family, o->family, BLOOM_FAMILY_LEN);
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
 * Estimated number of distinct keys added to a filter, from the number of
 * bits set.
 *
 * One key leaves a given bit unset unless it lands in that bit's block
 * (probability 1/nblocks) and one of its k positions hits the bit, so with
 * p = 1 - (1 - 1/512)^k it leaves it unset with probability 1 - p/nblocks,
 * and after n keys the expected share of bits set is exactly
 *
 *		E[X] / m = 1 - (1 - p/nblocks)^n,		m = 512 nblocks,
 *
 * however unevenly the keys spread over the blocks (the expectation is
 * linear).  Inverting it gives n = ln(1 - X/m) / ln(1 - p/nblocks).  The
 * classic formula, -(m/k) ln(1 - X/m), is this with p/nblocks replaced by
 * k/m: it ignores that a key's k positions share one block and so collide
 * more often, and overestimates by about (k-1)/1024 (0.6% at k = 7).
 *
 * Since the total load is fixed, the block-to-block variation in load cancels
 * to first order; what is left is the noise of which bits the keys hit,
 * about 1% (one standard deviation) for a filter of 1,000 keys at its design
 * capacity and less for larger ones.  A filter with every bit set gives
 * infinity: any count large enough would explain it.
 */
double
bloom_estimate_keys(uint64_t nblocks, int k, uint64_t bits_set)
{
	double		m = (double) nblocks * BLOOM_BLOCK_BITS;
	double		p = -expm1(k * log1p(-1.0 / BLOOM_BLOCK_BITS));

	if (bits_set == 0)
		return 0.0;
	if ((double) bits_set >= m)
		return INFINITY;
	return log1p(-(double) bits_set / m) / log1p(-p / (double) nblocks);
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

/*
 * Mean and standard deviation of the number of bits set by nkeys distinct
 * keys, exactly for ideal hashing.
 *
 * With u the probability that a given bit is unset (bloom_estimate_keys),
 * u1 that two bits of one block both are, and u2 that two bits of different
 * blocks both are (a key lands in either block with probability 2/nblocks),
 *
 *		u = (1 - p/nblocks)^n,  u1 = (1 - p1/nblocks)^n,  u2 = (1 - 2p/nblocks)^n,
 *		p = 1 - (1 - 1/512)^k,  p1 = 1 - (1 - 2/512)^k,
 *
 * the variance of the number of unset bits, and so of the number set, is
 *
 *		m u (1-u) + 511 m (u1 - u^2) + m (m - 512) (u2 - u^2).
 *
 * The differences are computed as e^b expm1(a - b) to keep their digits.
 */
void
bloom_expected_fill(uint64_t nblocks, int k, double nkeys,
					double *mean, double *sd)
{
	double		b = (double) nblocks;
	double		m = b * BLOOM_BLOCK_BITS;
	double		p = -expm1(k * log1p(-1.0 / BLOOM_BLOCK_BITS));
	double		p1 = -expm1(k * log1p(-2.0 / BLOOM_BLOCK_BITS));
	double		lu = nkeys * log1p(-p / b);
	double		u = exp(lu);
	double		var;

	var = m * u * (1.0 - u) +
		m * (BLOOM_BLOCK_BITS - 1) * exp(2 * lu) * expm1(nkeys * log1p(-p1 / b) - 2 * lu);
	if (nblocks > 1)
		var += m * (m - BLOOM_BLOCK_BITS) * exp(2 * lu) *
			expm1(nkeys * log1p(-2 * p / b) - 2 * lu);
	*mean = m * (1.0 - u);
	*sd = var > 0.0 ? sqrt(var) : 0.0;
}

/*
 * Is the filter over its design capacity: are more bits set than "capacity"
 * keys would plausibly set (over three standard deviations above the mean)?
 * Comparing the estimate with the capacity alone would flag half the filters
 * that hold exactly their capacity, by the noise of the estimate.
 */
bool
bloom_over_capacity(uint64_t nblocks, int k, uint64_t capacity,
					uint64_t bits_set)
{
	double		mean,
				sd;

	bloom_expected_fill(nblocks, k, (double) capacity, &mean, &sd);
	return (double) bits_set > mean + 3.0 * sd;
}
