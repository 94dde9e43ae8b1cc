/*-------------------------------------------------------------------------
 *
 * bloom_unique.c
 *	  Dropping duplicate hashes from a list (the aggregate's hash lists): a
 *	  cache-sized hash set, split by hash bits when large, with a radix sort
 *	  as the fallback; no PostgreSQL.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_unique.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <string.h>

#include "bloom.h"

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
