/*-------------------------------------------------------------------------
 *
 * micro.c
 *	  Core microbenchmark: nanoseconds per add and per probe of the blocked
 *	  bloom filter, outside PostgreSQL.
 *
 *	  cc -O2 -I src -o /tmp/bloom_micro test/bench/micro.c \
 *		  src/bloom_sizing.c src/bloom_bits.c src/bloom_unique.c \
 *		  src/bloom_format.c -lm
 *	  /tmp/bloom_micro [-r RUNS] [-p PROBES] [-H] NKEYS...
 *
 * For each filter size NKEYS (sized at a 1% false-positive rate with
 * bloom_plan, like bloom_create(NKEYS)), keys are 8-byte integers hashed the
 * way the integer family is (XXH3-64 of the little-endian bytes, seed 0), then
 * set with bloom_set_hash and tested with bloom_test_hash.  Measured, each as
 * the median of RUNS runs:
 *
 *	add				bloom_set_hash of NKEYS distinct keys (hash included)
 *	probe, present	bloom_test_hash of keys that were added: all k bits tested
 *	probe, absent	keys never added: most stop at the first clear bit
 *	probe, chained	present keys, each one depending on a byte loaded by
 *					the probe before, so cache misses cannot overlap: the
 *					latency a tuple-at-a-time executor sees
 *	XXH3 alone		the hash of the same 8-byte keys, nothing else: the floor
 *
 * With -H, each filter of 1 MB or more is measured twice: with the bits in
 * ordinary 4 KB pages (as a palloc'd copy gets) and in transparent huge pages
 * (madvise MADV_HUGEPAGE), which shows how much of a large filter's probe
 * cost is TLB misses.
 *
 * Prints one Markdown table on stdout.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  test/bench/micro.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom.h"

#define MAX_RUNS 15

/* read at run time so that the compiler cannot see it is zero */
static volatile uint64_t zero_mask = 0;

/* results are summed into this so that no loop is optimized away */
static volatile uint64_t sink;

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static inline uint64_t
key_hash(uint64_t key)
{
	uint8_t		b[8];

	bloom_put_u64(b, key);
	return XXH3_64bits_withSeed(b, 8, 0);
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* key i of the filter: even numbers are present, odd ones absent */
#define PRESENT(i)	((uint64_t) (i) * 2)
#define ABSENT(i)	((uint64_t) (i) * 2 + 1)

static double
bench_add(uint8_t *bits, uint64_t nblocks, int k, uint64_t nkeys)
{
	double		t0;

	memset(bits, 0, nblocks * BLOOM_BLOCK_BYTES);
	t0 = now_ns();
	for (uint64_t i = 0; i < nkeys; i++)
		bloom_set_hash(bits, nblocks, k, key_hash(PRESENT(i)));
	return (now_ns() - t0) / (double) nkeys;
}

static double
bench_probe(const uint8_t *bits, uint64_t nblocks, int k, uint64_t nkeys,
			uint64_t nprobes, bool present)
{
	uint64_t	hits = 0;
	uint64_t	j = 0;
	double		t0 = now_ns();

	for (uint64_t i = 0; i < nprobes; i++)
	{
		uint64_t	key = present ? PRESENT(j) : ABSENT(j);

		hits += bloom_test_hash(bits, nblocks, k, key_hash(key));
		if (++j == nkeys)
			j = 0;
	}
	sink += hits;
	if (present && hits != nprobes)
	{
		fprintf(stderr, "micro: false negative (%llu of %llu found)\n",
				(unsigned long long) hits, (unsigned long long) nprobes);
		exit(1);
	}
	return (now_ns() - t0) / (double) nprobes;
}

/* present keys, each one depending on the answer for the one before */
static double
bench_probe_chained(const uint8_t *bits, uint64_t nblocks, int k,
					uint64_t nkeys, uint64_t nprobes)
{
	uint64_t	mask = zero_mask;
	uint64_t	dep = 0;
	uint64_t	j = 0;
	double		t0 = now_ns();

	for (uint64_t i = 0; i < nprobes; i++)
	{
		uint64_t	h = key_hash(PRESENT(j) + (dep & mask));

		/*
		 * The answer alone would not chain the probes: the CPU predicts the
		 * branches that compute it and runs ahead.  A byte of the probed
		 * block (the same cache line) makes the next key wait for the load.
		 */
		dep += bloom_test_hash(bits, nblocks, k, h);
		dep += bits[bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES];
		if (++j == nkeys)
			j = 0;
	}
	sink += dep;
	return (now_ns() - t0) / (double) nprobes;
}

static double
bench_hash_only(uint64_t nprobes)
{
	uint64_t	acc = 0;
	double		t0 = now_ns();

	for (uint64_t i = 0; i < nprobes; i++)
		acc += key_hash(PRESENT(i));
	sink += acc;
	return (now_ns() - t0) / (double) nprobes;
}

static void
usage(void)
{
	fprintf(stderr, "usage: micro [-r RUNS] [-p PROBES] [-H] NKEYS...\n");
	exit(2);
}

/* kB of anonymous memory in huge pages, from /proc/self/smaps_rollup */
static long
anon_huge_kb(void)
{
	FILE	   *fp = fopen("/proc/self/smaps_rollup", "r");
	char		line[256];
	long		kb = -1;

	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(fp);
	return kb;
}

/*
 * Memory for the bits: 64-byte aligned in ordinary pages, or 2 MB aligned
 * and advised to use transparent huge pages.  The caller touches every page
 * (bench_add's memset) before anything is timed.
 */
static uint8_t *
alloc_bits(size_t nbytes, bool huge)
{
	void	   *p;
	size_t		align = huge ? (size_t) 2 << 20 : BLOOM_BLOCK_BYTES;
	size_t		size = (nbytes + align - 1) / align * align;

	if (posix_memalign(&p, align, size) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (huge)
		(void) madvise(p, size, MADV_HUGEPAGE);
#endif
#ifdef MADV_NOHUGEPAGE
	if (!huge)
		(void) madvise((void *) ((uintptr_t) p & ~(uintptr_t) 4095),
					   size, MADV_NOHUGEPAGE);
#endif
	return p;
}

int
main(int argc, char **argv)
{
	int			runs = 3;
	uint64_t	nprobes = 5000000;
	bool		try_huge = false;
	int			argi = 1;

	while (argi < argc && argv[argi][0] == '-')
	{
		if (strcmp(argv[argi], "-r") == 0 && argi + 1 < argc)
			runs = atoi(argv[argi + 1]);
		else if (strcmp(argv[argi], "-p") == 0 && argi + 1 < argc)
			nprobes = strtoull(argv[argi + 1], NULL, 10);
		else if (strcmp(argv[argi], "-H") == 0)
		{
			try_huge = true;
			argi++;
			continue;
		}
		else
			usage();
		argi += 2;
	}
	if (argi >= argc || runs < 1 || runs > MAX_RUNS || nprobes < 1)
		usage();

	printf("| filter keys | bits (MB) | k | pages | ns/add | ns/probe, present | ns/probe, absent | ns/probe, chained (present) | ns/XXH3 alone |\n");
	printf("|---:|---:|---:|---|---:|---:|---:|---:|---:|\n");

	for (; argi < argc; argi++)
	{
		uint64_t	nkeys = strtoull(argv[argi], NULL, 10);
		uint64_t	nblocks;
		int			k;

		if (nkeys < 1 || !bloom_plan(nkeys, 0.01, &nblocks, &k))
		{
			fprintf(stderr, "micro: cannot size a filter for %s keys\n", argv[argi]);
			return 1;
		}

		for (int huge = 0; huge <= 1; huge++)
		{
			size_t		nbytes = nblocks * BLOOM_BLOCK_BYTES;
			uint8_t    *bits;
			long		huge_before = anon_huge_kb();
			long		huge_kb = 0;
			double		add[MAX_RUNS],
						pres[MAX_RUNS],
						abs_[MAX_RUNS],
						chain[MAX_RUNS],
						hash[MAX_RUNS];

			if (huge && (!try_huge || nbytes < ((size_t) 1 << 20)))
				break;
			bits = alloc_bits(nbytes, huge);
			if (bits == NULL)
			{
				fprintf(stderr, "micro: out of memory\n");
				return 1;
			}

			for (int r = 0; r < runs; r++)
			{
				add[r] = bench_add(bits, nblocks, k, nkeys);
				if (r == 0)
					huge_kb = anon_huge_kb() - huge_before;
				pres[r] = bench_probe(bits, nblocks, k, nkeys, nprobes, true);
				abs_[r] = bench_probe(bits, nblocks, k, nkeys, nprobes, false);
				chain[r] = bench_probe_chained(bits, nblocks, k, nkeys, nprobes);
				hash[r] = bench_hash_only(nprobes);
			}
			printf("| %llu | %.2f | %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
				   (unsigned long long) nkeys,
				   (double) nbytes / (1024.0 * 1024.0), k,
				   !huge ? "4 KB" :
				   huge_kb * 1024 >= (long) (nbytes / 2) ? "2 MB (THP)" :
				   "2 MB asked, THP not granted",
				   median(add, runs), median(pres, runs), median(abs_, runs),
				   median(chain, runs), median(hash, runs));
			fflush(stdout);
			free(bits);
		}
	}
	return 0;
}
