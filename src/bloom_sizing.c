/*-------------------------------------------------------------------------
 *
 * bloom_sizing.c
 *	  Sizing the blocked bloom filter: its expected false-positive rate and
 *	  fill, the plan of blocks and hashes for a capacity and rate, and the
 *	  key count estimated from a fill; no PostgreSQL.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_sizing.c
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

/*
 * HyperLogLog (Flajolet et al. 2007, with the small-range correction of
 * linear counting).  A key's hash is mixed first (MurmurHash3's finalizer):
 * the bits that choose its block and positions in a filter must not also
 * choose its register, or keys of one block would crowd one register.
 */
void
bloom_distinct_add(BloomDistinct *d, uint64_t h)
{
	uint64_t	x = h;
	uint64_t	w;
	uint8_t		rank;

	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	w = x << BLOOM_DISTINCT_BITS;
	rank = w == 0 ? (uint8_t) (64 - BLOOM_DISTINCT_BITS + 1) :
		(uint8_t) (__builtin_clzll(w) + 1);
	if (rank > d->reg[x >> (64 - BLOOM_DISTINCT_BITS)])
		d->reg[x >> (64 - BLOOM_DISTINCT_BITS)] = rank;
}

double
bloom_distinct_estimate(const BloomDistinct *d)
{
	const double m = (double) (1 << BLOOM_DISTINCT_BITS);
	double		sum = 0.0;
	int			zeros = 0;
	double		e;

	for (int i = 0; i < (1 << BLOOM_DISTINCT_BITS); i++)
	{
		sum += ldexp(1.0, -(int) d->reg[i]);
		zeros += d->reg[i] == 0;
	}
	e = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
	if (e <= 2.5 * m && zeros > 0)
		e = m * log(m / (double) zeros);
	return e;
}
