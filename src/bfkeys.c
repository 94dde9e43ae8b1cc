/*-------------------------------------------------------------------------
 *
 * bfkeys.c
 *	  How a bloomfilter index's keys hash: its column's key type, checked against
 *	  the key family and enum labels its metapage records, and the per-backend
 *	  state that inserts keep of both.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfkeys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/rel.h"

#include "bfindex.h"

/*
 * How the index's keys hash: the type and collation of its column (or
 * expression), with the same refusals as a bloom value's keys.
 */
void
bf_key_type(Relation index, BloomKeyType *kt, MemoryContext mcxt)
{
	bloom_key_type_init(kt, TupleDescAttr(RelationGetDescr(index), 0)->atttypid,
						index->rd_indcollation[0], mcxt);
}

/*
 * Refuse to write an index whose keys were hashed as another family than
 * its column's keys hash now.  (The labels of an enum family are checked by
 * bf_get_state.)
 */
void
bf_check_family_meta(Relation index, const BfMetaPageData *meta,
					 const BloomKeyType *kt)
{
	if (strcmp(meta->family, kt->family) != 0)
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("bloomfilter index \"%s\" holds keys of family \"%s\", not \"%s\"",
					   RelationGetRelationName(index),
					   bloom_family_display(meta->family),
					   bloom_family_display(kt->family)),
				bloom_family_is_enum(meta->family) && bloom_family_is_enum(kt->family) ?
				errdetail("The enum type was renamed or moved to another schema since the index was built.") :
				errdetail("Its keys were hashed by another PostgreSQL version or platform."),
				errhint("Rebuild the index with REINDEX."));
}

/*
 * Refuse a key of another family than the index's, or of an enum a label of
 * which was renamed since the index's keys were hashed.
 */
void
bf_check_family(Relation index, const BfMetaPageData *meta, BloomKeyType *kt)
{
	(void) bloom_check_key_family(meta->family, &meta->labels, kt,
								  RelationGetRelationName(index));
}

/*
 * Record in the metapage the labels of the index's enum now, if its guard is
 * still "seen", which bloom_check_labels found to be those labels less some
 * added since: keys of the new labels are about to be inserted, and a later
 * rename of one must be seen.  false if another backend changed the guard
 * meanwhile.
 */
typedef struct BfLabelsArg
{
	BloomLabels seen;
	BloomLabels labels;
	bool		done;
} BfLabelsArg;

static bool
bf_set_labels(BfMetaPageData *meta, void *arg)
{
	BfLabelsArg *a = (BfLabelsArg *) arg;

	a->done = bloom_labels_equal(&meta->labels, &a->seen);
	if (a->done)
		meta->labels = a->labels;
	return a->done;
}

bool
bf_update_labels(Relation index, const BloomLabels *seen,
				 const BloomLabels *labels)
{
	BfLabelsArg arg = {*seen, *labels, false};

	bf_update_meta(index, bf_set_labels, &arg);
	return arg.done;
}

/*
 * How the keys the index holds stand to its column's keys now, without an
 * error (VACUUM goes on whatever they are): BF_KEYS_SAME; BF_KEYS_ADDED,
 * when labels were added to the key's enum since the metapage recorded them
 * (keys hash as they did); BF_KEYS_CHANGED when the family's name changed
 * (an enum renamed or moved; a type that can no longer be a key), and
 * BF_KEYS_LABELS when a label of the enum was renamed since (or so many
 * were added that the check gives up).  kt is set up for the column.
 */
BfKeysMatch
bf_keys_match(Relation index, const BfMetaPageData *meta, BloomKeyType *kt)
{
	if (!bloom_key_type_try_init(kt, TupleDescAttr(RelationGetDescr(index), 0)->atttypid,
								 index->rd_indcollation[0], CurrentMemoryContext) ||
		strcmp(meta->family, kt->family) != 0)
		return BF_KEYS_CHANGED;
	if (kt->kind != KEY_ENUM)
		return BF_KEYS_SAME;
	switch (bloom_labels_match(kt, &meta->labels, true))
	{
		case 1:
			return BF_KEYS_SAME;
		case 0:
			return BF_KEYS_ADDED;
		default:
			return BF_KEYS_LABELS;
	}
}

/*
 * The backend's state of an index, kept in rd_amcache (gone at the next
 * relcache invalidation): its key type, and a copy of the metapage that an
 * inserter checks against the metapage itself (bfbatch.c).  Made anew when
 * the labels of the key's enum may have changed: a label renamed is refused,
 * labels added are recorded in the metapage before keys of them go in.
 */
BfState *
bf_get_state(Relation index)
{
	BfState    *state = (BfState *) index->rd_amcache;
	BloomKeyType kt;
	BfMetaPageData meta;

	if (state != NULL && !bloom_labels_stale(&state->keytype))
		return state;

	/*
	 * The check of an enum's labels may read the catalog, and so take
	 * invalidations that free rd_amcache: it works on a copy of the key type.
	 */
	if (state == NULL)
		bf_key_type(index, &kt, index->rd_indexcxt);
	else
		kt = state->keytype;
	for (;;)
	{
		bf_read_meta(index, &meta);
		bf_check_family_meta(index, &meta, &kt);
		if (kt.kind != KEY_ENUM ||
			bloom_check_labels(&kt, &meta.labels, RelationGetRelationName(index)))
			break;
		if (bf_update_labels(index, &meta.labels, &kt.oidlabels))
		{
			meta.labels = kt.oidlabels;
			break;
		}
	}
	state = (BfState *) index->rd_amcache;
	if (state == NULL)
		state = MemoryContextAllocZero(index->rd_indexcxt, sizeof(BfState));
	state->keytype = kt;
	state->meta = meta;
	index->rd_amcache = state;
	return state;
}
