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

	if (!distinct_ready)
		init_distinct_prob();
	if (lambda <= 0.0)
		return 0.0;
	if (lo < 0.0)
		lo = 0.0;

	for (double i = lo; i <= hi; i += 1.0)
	{
		double		pois = exp(i * loglambda - lambda - lgamma(i + 1.0));
		double		fill = -expm1(i * k * q);	/* 1 - (1-1/512)^(ik) */
		double		pj = 1.0;
		double		hit = 0.0;

		for (int j = 1; j <= k; j++)
		{
			pj *= fill;
			hit += distinct_prob[k][j] * pj;
		}
		sum += pois * hit;
	}
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
 * false-positive rate of at most "rate", using as few blocks as possible
 * (ties go to the smaller k: fewer bits to touch per probe).
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
	int			kc;
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
	floor_blocks = (uint64_t) floor(n * classic / BLOOM_BLOCK_BITS);
	if (floor_blocks < 1)
		floor_blocks = 1;

	if (floor_blocks <= BLOOM_MAX_NBLOCKS)
	{
		/* the best k of a blocked filter is at or a little below classic's */
		kc = (int) lround(classic * M_LN2);
		if (kc < 1)
			kc = 1;

		/* first within 3x the classic size (always enough in practice) */
		for (int pass = 0; pass < 2 && best_blocks == 0; pass++)
		{
			uint64_t	hi = pass == 0 ? floor_blocks * 3 + 2 : BLOOM_MAX_NBLOCKS;

			if (hi > BLOOM_MAX_NBLOCKS)
				hi = BLOOM_MAX_NBLOCKS;
			for (int kk = kc > 6 ? kc - 6 : 1; kk <= kc + 2 && kk <= BLOOM_MAX_K; kk++)
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
	uint64_t	lo = 0;
	uint64_t	hi = (uint64_t) (BLOOM_MAX_NBLOCKS * BLOOM_BLOCK_BITS /
								 (-log(rate) / (M_LN2 * M_LN2))) + 1;
	uint64_t	nb;
	int			k;

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
 * Sort an array of hashes and drop duplicates in place; returns the new
 * length.  An LSD radix sort would need a second buffer as large as the
 * first, and the aggregate's memory promise is 8 bytes per distinct key, so
 * this is an in-place MSD radix sort on the top byte, finished by insertion
 * sort on small buckets.  Sorted hashes also make the final bit setting walk
 * the blocks in order.
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

size_t
bloom_sort_unique(uint64_t *a, size_t n)
{
	size_t		out;

	if (n < 2)
		return n;
	sort_msd(a, n, 56);
	out = 1;
	for (size_t i = 1; i < n; i++)
		if (a[i] != a[out - 1])
			a[out++] = a[i];
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
