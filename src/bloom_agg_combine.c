/*-------------------------------------------------------------------------
 *
 * bloom_agg_combine.c
 *	  Combining two states of bloom_agg, as a parallel or partial
 *	  aggregate does: bits OR bits, hash lists appended list by list, and
 *	  beyond the memory budget, both states' hashes copied into the
 *	  temporary files of the first.
 *
 * A state that bloom_agg_state_deserialize just made is owned by the
 * aggregate's memory: combining takes it over, or frees it once merged,
 * rather than copying it.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg_combine.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "bloom_agg_state.h"

/* Deep copy of a state into cxt. */
static BloomAggState *
state_copy(const BloomAggState *src, MemoryContext cxt)
{
	BloomAggState *s = MemoryContextAlloc(cxt, sizeof(BloomAggState));

	if (src->spill)
		elog(ERROR, "cannot copy a bloom_agg state that spilled to disk");
	memcpy(s, src, sizeof(BloomAggState));
	s->owner = NULL;
	s->scratch = NULL;
	s->nscratch = 0;
	if (src->filter)
	{
		s->filter = bloom_alloc_big(cxt, VARSIZE(src->filter), 0);
		memcpy(s->filter, src->filter, VARSIZE(src->filter));
		bloom_open(s->filter, &s->f);
	}
	s->lists = MemoryContextAlloc(cxt, src->nlists * sizeof(HashList));
	s->allocated = 0;
	for (int i = 0; i < src->nlists; i++)
	{
		bloom_agg_list_init(&s->lists[i], Max(src->lists[i].n, INITIAL_HASHES), cxt);
		memcpy(s->lists[i].h, src->lists[i].h, src->lists[i].n * sizeof(uint64));
		s->lists[i].n = src->lists[i].n;
		s->lists[i].unique = src->lists[i].unique;
		s->allocated += s->lists[i].max;
	}
	return s;
}

/*
 * Append the hash lists of b (split into NBUCKETS lists) to those of a, list
 * by list.  Duplicates between them go later, with the others: when a list
 * fills up, or in the final function.
 */
static void
state_append_lists(BloomAggState *a, BloomAggState *b, MemoryContext cxt)
{
	if (a->nlists == 1)
		bloom_agg_state_split(a, cxt);
	a->allocated = 0;
	for (int i = 0; i < NBUCKETS; i++)
	{
		HashList   *x = &a->lists[i];
		HashList   *y = &b->lists[i];

		CHECK_FOR_INTERRUPTS();
		bloom_agg_list_grow(x, x->n + y->n);
		memcpy(x->h + x->n, y->h, y->n * sizeof(uint64));
		x->n += y->n;
		a->allocated += x->max;
	}

	/* a sized state turns into bits once its lists outgrow them */
	if (a->sized && a->allocated * sizeof(uint64) > a->nblocks * BLOOM_BLOCK_BYTES)
		bloom_agg_state_to_bits(a, cxt);
	else if (!a->sized && a->allocated * sizeof(uint64) > a->budget)
		bloom_agg_state_spill(a, cxt, true);
}

/* Free a state made by bloom_agg_state_deserialize. */
static void
state_free(BloomAggState *s)
{
	if (s->filter)
		pfree(s->filter);
	if (s->lists)
		bloom_agg_free_lists(s);
	if (s->scratch)
		pfree(s->scratch);
	if (s->spill)
		bloom_spill_close(s->spill);
	pfree(s);
}

/*
 * Move every hash of b (split into NBUCKETS lists, or spilled) into the
 * temporary files of a, unsized, partition by partition: the leader of a
 * parallel plan gets every worker's hashes this way, so they are copied
 * as they are, not added one by one (each spill of a dropped the
 * duplicates of all its lists again).  Duplicates between the states go
 * when a settles.  b is left empty.
 */
static void
combine_into_spill(BloomAggState *a, BloomAggState *b, MemoryContext cxt)
{
	const int	per = NBUCKETS / BLOOM_SPILL_PARTS;

	bloom_agg_state_spill(a, cxt, false);
	if (b->spill)
		for (int p = 0; p < BLOOM_SPILL_PARTS; p++)
		{
			size_t		n = bloom_spill_count(b->spill, p);
			uint64	   *buf;

			if (n == 0)
				continue;
			CHECK_FOR_INTERRUPTS();
			buf = bloom_alloc_big(cxt, n * sizeof(uint64), 0);
			bloom_spill_take(b->spill, p, buf);
			bloom_spill_write(a->spill, p, buf, n);
			pfree(buf);
		}
	for (int i = 0; i < b->nlists; i++)
	{
		CHECK_FOR_INTERRUPTS();
		bloom_spill_write(a->spill, i / per, b->lists[i].h, b->lists[i].n);
		b->lists[i].n = b->lists[i].unique = 0;
	}
}

/*
 * Combine partial state b into a (NULL: none yet), which is returned.
 */
BloomAggState *
bloom_agg_state_combine(BloomAggState *a, BloomAggState *b, MemoryContext cxt)
{
	if (a == NULL)
	{
		/* a state just deserialized into this context is taken over */
		if (b->owner == cxt)
		{
			b->owner = NULL;
			return b;
		}
		return state_copy(b, cxt);
	}

	if (a->sized != b->sized || strcmp(a->family, b->family) != 0 ||
		(a->sized && (a->capacity != b->capacity || a->rate != b->rate)))
		ereport(ERROR,
				errcode(ERRCODE_DATA_EXCEPTION),
				errmsg("cannot combine bloom_agg states of different shapes"),
				errdetail("One has family \"%s\", capacity " INT64_FORMAT " and rate %g; the other family \"%s\", capacity " INT64_FORMAT " and rate %g.",
						  a->family, a->capacity, a->rate,
						  b->family, b->capacity, b->rate));

	/* states of an enum family made under different labels */
	if (!bloom_labels_equal(&a->labels, &b->labels))
	{
		bloom_combine_labels(a->family, &a->labels, &b->labels, &a->labels);
		if (a->filter)
		{
			a->f.labels = a->labels;
			bloom_write_header(BLOOM_PAYLOAD(a->filter), &a->f);
		}
	}

	if (b->filter)
	{
		uint64		nbytes = a->nblocks * BLOOM_BLOCK_BYTES;

		if (a->filter == NULL)
			bloom_agg_state_to_bits(a, cxt);
		bloom_agg_state_flush(b);
		for (uint64 i = 0; i < nbytes; i++)
			a->f.bits[i] |= b->f.bits[i];
	}
	else
	{
		/* unsized states beyond the memory budget meet in a's files */
		if (!a->sized && (a->spill || b->spill ||
						  (a->allocated + b->allocated) * sizeof(uint64) > a->budget) &&
			(b->spill || b->nlists == NBUCKETS))
			combine_into_spill(a, b, cxt);
		else if (a->filter == NULL && b->nlists == NBUCKETS && a->spill == NULL)
			state_append_lists(a, b, cxt);
		else
			for (int i = 0; i < b->nlists; i++)
			{
				CHECK_FOR_INTERRUPTS();
				for (size_t j = 0; j < b->lists[i].n; j++)
					bloom_agg_state_add(a, cxt, b->lists[i].h[j]);
			}
	}
	if (b->owner == cxt)
		state_free(b);
	return a;
}
