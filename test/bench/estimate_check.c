/*-------------------------------------------------------------------------
 *
 * estimate_check.c
 *	  Standalone accuracy check of the core's estimators: distinct keys from
 *	  the fill, current false-positive rate from the bits, and union and
 *	  intersection sizes of two filters.  No PostgreSQL needed.
 *
 *	  cc -O2 -Wno-stringop-truncation -Isrc -o /tmp/estimate_check \
 *		  test/bench/estimate_check.c \
 *		  src/bloom_sizing.c src/bloom_bits.c src/bloom_unique.c \
 *		  src/bloom_format.c -lxxhash -lm
 *	  /tmp/estimate_check [max_n]		(default 10000000)
 *
 * Keys are 64-bit integers hashed as the integer family is (XXH3-64 of the
 * little-endian bytes, seed 0); each trial uses a different range of keys.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  test/bench/estimate_check.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "bloom.h"

static uint64_t
key_hash(uint64_t key)
{
	uint8_t		b[8];

	bloom_put_u64(b, key);
	return XXH3_64bits_withSeed(b, 8, 0);
}

typedef struct Filter
{
	uint64_t	nblocks;
	int			k;
	uint8_t    *bits;
} Filter;

static void
filter_make(Filter *f, uint64_t capacity, double rate)
{
	if (!bloom_plan(capacity, rate, &f->nblocks, &f->k))
	{
		fprintf(stderr, "no plan for %llu at %g\n",
				(unsigned long long) capacity, rate);
		exit(1);
	}
	f->bits = calloc(f->nblocks, BLOOM_BLOCK_BYTES);
}

static void
filter_add_range(Filter *f, uint64_t from, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		bloom_set_hash(f->bits, f->nblocks, f->k, key_hash(from + i));
}

static double
estimate(const Filter *f, double *fpr)
{
	uint64_t	set;

	bloom_fill_stats(f->bits, f->nblocks, f->k, &set, fpr);
	return bloom_estimate_keys(f->nblocks, f->k, set);
}

/* measured rate over nprobe keys never added (they start at 2^62) */
static double
measured_fpr(const Filter *f, uint64_t nprobe, uint64_t salt)
{
	uint64_t	hits = 0;

	for (uint64_t i = 0; i < nprobe; i++)
		hits += bloom_test_hash(f->bits, f->nblocks, f->k,
								key_hash((UINT64_C(1) << 62) + salt + i));
	return (double) hits / (double) nprobe;
}

static void
cardinality(uint64_t n, uint64_t capacity, double rate, int trials)
{
	double		sum = 0.0,
				sumsq = 0.0,
				worst = 0.0,
				fsum = 0.0,
				msum = 0.0,
				esum = 0.0;
	Filter		f;

	for (int t = 0; t < trials; t++)
	{
		double		fpr;
		double		est,
					err;

		filter_make(&f, capacity, rate);
		filter_add_range(&f, (uint64_t) t << 40, n);
		est = estimate(&f, &fpr);
		err = est / (double) n - 1.0;
		sum += err;
		sumsq += err * err;
		if (fabs(err) > fabs(worst))
			worst = err;
		fsum += fpr;
		esum += bloom_expected_fpr(f.nblocks, f.k, est);
		msum += measured_fpr(&f, 200000, (uint64_t) t << 32);
		free(f.bits);
	}
	printf("| %10llu | %10llu | %6g | %3d | %6d | %+7.3f%% | %6.3f%% | %+7.3f%% | %.5f | %.5f | %.5f |\n",
		   (unsigned long long) n, (unsigned long long) capacity, rate, f.k,
		   trials, 100.0 * sum / trials,
		   100.0 * sqrt(sumsq / trials - (sum / trials) * (sum / trials)),
		   100.0 * worst, fsum / trials, esum / trials, msum / trials);
}

static void
setops(uint64_t na, uint64_t nb, uint64_t overlap, uint64_t capacity,
	   int trials)
{
	double		worst_u = 0.0,
				worst_i = 0.0,
				worst_and = 0.0;

	for (int t = 0; t < trials; t++)
	{
		Filter		a,
					b;
		double		fpr,
					ea,
					eb,
					eu,
					ei,
					eand;
		uint64_t	base = (uint64_t) t << 40;
		uint64_t	n_u = na + nb - overlap;

		filter_make(&a, capacity, 0.01);
		filter_make(&b, capacity, 0.01);
		filter_add_range(&a, base, na);
		filter_add_range(&b, base + na - overlap, nb);
		ea = estimate(&a, &fpr);
		eb = estimate(&b, &fpr);
		eu = bloom_estimate_keys(a.nblocks, a.k,
								 bloom_popcount_union(a.bits, a.nblocks,
													  b.bits, b.nblocks));
		ei = ea + eb - eu;
		if (ei < 0)
			ei = 0;
		bloom_merge_bits(a.bits, a.nblocks, b.bits, b.nblocks, BLOOM_MERGE_AND);
		eand = estimate(&a, &fpr);

		if (fabs(eu / n_u - 1) > fabs(worst_u))
			worst_u = eu / n_u - 1;
		if (fabs(ei / overlap - 1) > fabs(worst_i))
			worst_i = ei / overlap - 1;
		if (fabs(eand / overlap - 1) > fabs(worst_and))
			worst_and = eand / overlap - 1;
		free(a.bits);
		free(b.bits);
	}
	printf("| %9llu | %9llu | %9llu | %9llu | %3d | %+7.2f%% | %+7.2f%% | %+8.2f%% |\n",
		   (unsigned long long) na, (unsigned long long) nb,
		   (unsigned long long) overlap, (unsigned long long) capacity,
		   trials, 100 * worst_u, 100 * worst_i, 100 * worst_and);
}

/*
 * The spread of the number of bits set over many trials against
 * bloom_expected_fill(), and how often bloom_over_capacity() fires at the
 * capacity and a little above it.
 */
static void
fill_spread(uint64_t capacity, double rate, int trials)
{
	double		mean,
				sd;
	double		sum = 0.0,
				sumsq = 0.0;
	int			flagged[3] = {0, 0, 0};
	static const double load[3] = {1.0, 1.02, 1.05};
	Filter		f;

	for (int t = 0; t < trials; t++)
	{
		for (int l = 0; l < 3; l++)
		{
			uint64_t	set;
			double		fpr;

			filter_make(&f, capacity, rate);
			filter_add_range(&f, ((uint64_t) t << 40) + ((uint64_t) l << 36),
							 (uint64_t) (capacity * load[l]));
			bloom_fill_stats(f.bits, f.nblocks, f.k, &set, &fpr);
			if (l == 0)
			{
				sum += (double) set;
				sumsq += (double) set * (double) set;
			}
			flagged[l] += bloom_over_capacity(f.nblocks, f.k, capacity, set);
			free(f.bits);
		}
	}
	bloom_expected_fill(f.nblocks, f.k, (double) capacity, &mean, &sd);
	printf("| %9llu | %6g | %6d | %10.1f | %10.1f | %8.2f | %8.2f | %5.1f%% | %5.1f%% | %5.1f%% |\n",
		   (unsigned long long) capacity, rate, trials, sum / trials, mean,
		   sqrt(sumsq / trials - (sum / trials) * (sum / trials)), sd,
		   100.0 * flagged[0] / trials, 100.0 * flagged[1] / trials,
		   100.0 * flagged[2] / trials);
}

/*
 * Folding: a filter of c * n blocks folded to n is bit for bit the filter of
 * n blocks built over the same keys.
 */
static void
fold_check(void)
{
	static const uint64_t factors[] = {2, 3, 4, 7, 16};
	int			bad = 0;

	for (int i = 0; i < 5; i++)
	{
		uint64_t	n = 37;
		uint64_t	c = factors[i];
		uint8_t    *small = calloc(n, BLOOM_BLOCK_BYTES);
		uint8_t    *large = calloc(n * c, BLOOM_BLOCK_BYTES);
		uint8_t    *other = calloc(n * c, BLOOM_BLOCK_BYTES);

		for (uint64_t key = 0; key < 5000; key++)
		{
			bloom_set_hash(small, n, 6, key_hash(key));
			bloom_set_hash(key < 2500 ? large : other, n * c, 6, key_hash(key));
		}
		/* union of a folded half and the other half folded on the fly */
		bloom_fold(large, n * c, n);
		bloom_merge_bits(large, n, other, n * c, BLOOM_MERGE_OR);
		if (memcmp(small, large, n * BLOOM_BLOCK_BYTES) != 0)
			bad++;
		free(small);
		free(large);
		free(other);
	}
	printf("Folding by 2, 3, 4, 7 and 16 gives the filter built at the smaller size: %s\n\n",
		   bad ? "NO" : "yes");
}

int
main(int argc, char **argv)
{
	uint64_t	max_n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	static const uint64_t sizes[] = {1000, 10000, 100000, 1000000, 10000000};
	static const double rates[] = {0.01, 0.1, 0.001};

	fold_check();

	printf("Distinct keys from the fill (error = estimate / truth - 1), current rate\n"
		   "from the bits, rate predicted from the estimate, and measured rate\n"
		   "(200,000 probes of absent keys per trial).\n\n");
	printf("| n | capacity | rate | k | trials | mean error | sd | worst | rate from bits | predicted | measured |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 5 && sizes[i] <= max_n; i++)
		{
			int			trials = sizes[i] >= 10000000 ? 2 : sizes[i] >= 1000000 ? 5 : 50;

			if (r > 0 && sizes[i] >= 10000000)
				continue;
			cardinality(sizes[i], sizes[i], rates[r], trials);
			if (r == 0)
			{
				/* below capacity */
				cardinality(sizes[i] / 10, sizes[i], rates[r], trials);
				cardinality(sizes[i] / 2, sizes[i], rates[r], trials);
			}
		}

	printf("\nUnion and intersection of two filters of one shape (rate 0.01):\n"
		   "worst error over the trials of the union from the fill of the OR, the\n"
		   "intersection as |A| + |B| - |A u B|, and, for comparison, the\n"
		   "intersection from the fill of the AND.\n\n");
	printf("| A | B | overlap | capacity | trials | union | intersection | AND fill |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	setops(10000, 10000, 5000, 20000, 20);
	setops(100000, 100000, 50000, 200000, 20);
	setops(100000, 100000, 50000, 100000, 20);
	setops(100000, 100000, 20000, 200000, 20);
	setops(100000, 100000, 10000, 200000, 20);
	setops(100000, 100000, 1000, 200000, 20);
	setops(100000, 10000, 5000, 200000, 20);
	setops(500000, 500000, 250000, 1000000, 5);
	if (max_n >= 10000000)
		setops(5000000, 5000000, 2500000, 10000000, 2);

	printf("\nBits set at the design capacity over the trials against\n"
		   "bloom_expected_fill(), and how often bloom_over_capacity() fires with\n"
		   "1.00, 1.02 and 1.05 times the capacity.\n\n");
	printf("| capacity | rate | trials | mean set | expected | sd | expected sd | over at 1.00 | 1.02 | 1.05 |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	fill_spread(1000, 0.01, 400);
	fill_spread(1000, 0.1, 400);
	fill_spread(10000, 0.01, 200);
	fill_spread(100000, 0.01, 50);
	if (max_n >= 1000000)
		fill_spread(1000000, 0.01, 20);
	return 0;
}
