/*-------------------------------------------------------------------------
 *
 * bloom_labels.c
 *	  The label guard of an enum key family: the labels a filter's or an
 *	  index's keys were hashed under, read from the catalog and checked
 *	  against the type's labels now (bloom.h describes the guard).
 *
 * An enum key hashes its label, so a label added changes no key's hash,
 * and a label renamed changes the hash of its keys: what recorded keys
 * before must then be refused, never answered "absent".  The guard (the
 * number of labels and the sum of their hashes) tells the two apart: the
 * labels now must be the guard's plus some added since, which a bounded
 * search for the added ones decides.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_labels.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_enum.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/inval.h"
#include "utils/syscache.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom_pg.h"

/*
 * Bumped whenever this backend hears of a change to pg_enum (a label added
 * or renamed, a type dropped, or a cache reset), so that key types read
 * their enum's labels again.
 */
static uint64 enum_generation = 1;
static bool enum_watched = false;

/* labels were left out as uncommitted in this transaction */
static bool enum_uncommitted_seen = false;

static void
enum_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	enum_generation++;
}

/*
 * At the end of a transaction in which bloom_labels_read left out labels it had
 * added: they are now committed (or gone), and the guards read meanwhile
 * must be read again.  (The transaction's own catalog changes reached this
 * backend's caches when they were made, so no invalidation comes now.)
 */
static void
enum_xact_end(XactEvent event, void *arg)
{
	if ((event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		 event == XACT_EVENT_PARALLEL_COMMIT ||
		 event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PREPARE) &&
		enum_uncommitted_seen)
	{
		enum_uncommitted_seen = false;
		enum_generation++;
	}
}

/*
 * Read the labels of kt's enum now: their guard into kt, and, where hashes
 * is not NULL, each label's hash (palloc'd, oldest label first: in the order
 * of their OIDs, which ADD VALUE hands out in increasing order until the OID
 * counter wraps).  Labels hash as keys do, in UTF-8 whatever the database
 * encoding.
 *
 * A label this transaction added and cannot use yet (EnumUncommitted: no
 * row can hold it before the transaction commits) is left out: a guard
 * records only labels that keys may have, and one recorded from a
 * transaction that then rolled back would name a label that never was, and
 * refuse every later key.  Labels of a type created in this transaction are
 * usable, and count.
 */
typedef struct LabelHash
{
	Oid			oid;
	uint64		hash;
} LabelHash;

static int
cmp_label_oid(const void *a, const void *b)
{
	Oid			x = ((const LabelHash *) a)->oid;
	Oid			y = ((const LabelHash *) b)->oid;

	return (x > y) - (x < y);
}

void
bloom_labels_read(BloomKeyType *kt, uint64 **hashes, bool byoid)
{
	CatCList   *list;
	LabelHash  *h = NULL;
	uint32		n = 0;

	if (!enum_watched)
	{
		CacheRegisterSyscacheCallback(ENUMOID, enum_changed, (Datum) 0);
		RegisterXactCallback(enum_xact_end, NULL);
		enum_watched = true;
	}
	kt->labels_gen = enum_generation;
	kt->accepted_ok = false;
	list = SearchSysCacheList1(ENUMTYPOIDNAME, ObjectIdGetDatum(kt->enumtypid));
	if (hashes)
		h = palloc(Max(list->n_members, 1) * sizeof(LabelHash));
	kt->labels.sum = kt->oidlabels.sum = 0;
	for (int i = 0; i < list->n_members; i++)
	{
		Form_pg_enum e = (Form_pg_enum) GETSTRUCT(&list->members[i]->tuple);
		const char *l = NameStr(e->enumlabel);
		char	   *u;
		uint64		x;
		uint64		xo;

		if (EnumUncommitted(e->oid))
		{
			enum_uncommitted_seen = true;
			continue;
		}
		u = pg_server_to_any(l, strlen(l), PG_UTF8);
		x = XXH3_64bits(u, strlen(u));
		xo = XXH3_64bits_withSeed(u, strlen(u), (uint64) e->oid);
		if (u != l)
			pfree(u);
		kt->labels.sum += x;
		kt->oidlabels.sum += xo;
		if (h)
		{
			h[n].oid = e->oid;
			h[n].hash = byoid ? xo : x;
		}
		n++;
	}
	kt->labels.count = kt->oidlabels.count = n;
	ReleaseSysCacheList(list);
	if (hashes)
	{
		uint64	   *out = palloc(Max(n, 1) * sizeof(uint64));

		qsort(h, n, sizeof(LabelHash), cmp_label_oid);
		for (uint32 i = 0; i < n; i++)
			out[i] = h[i].hash;
		pfree(h);
		*hashes = out;
	}
}

/* Have kt's enum labels changed since they were read? */
bool
bloom_labels_stale(const BloomKeyType *kt)
{
	return kt->kind == KEY_ENUM && kt->labels_gen != enum_generation;
}

/* Read kt's enum labels again if they have changed; before recording them. */
void
bloom_labels_refresh(BloomKeyType *kt)
{
	if (bloom_labels_stale(kt))
		bloom_labels_read(kt, NULL, false);
}

/* What the labels now are, next to those of a stored guard. */
typedef enum LabelsFound
{
	LABELS_SAME,				/* the labels now are those */
	LABELS_ADDED,				/* the labels now are those plus some added */
	LABELS_CHANGED,				/* not: some label was renamed */
	LABELS_FEWER,				/* fewer labels now than then */
	LABELS_TOO_MANY				/* too many added to tell */
} LabelsFound;

#define LABELS_MAX_SUMS		(1 << 20)

typedef struct PartialSum
{
	uint64		sum;
	int			last;			/* the highest label index in it */
} PartialSum;

static int
cmp_partial(const void *a, const void *b)
{
	const PartialSum *x = a;
	const PartialSum *y = b;

	if (x->sum != y->sum)
		return x->sum < y->sum ? -1 : 1;
	return (x->last > y->last) - (x->last < y->last);
}

/* The next k-subset of 0..m-1 after idx[] (ascending), false after the last. */
static bool
next_subset(int *idx, int k, int m)
{
	int			i = k - 1;

	while (i >= 0 && idx[i] == m - k + i)
		i--;
	if (i < 0)
		return false;
	idx[i]++;
	for (int j = i + 1; j < k; j++)
		idx[j] = idx[j - 1] + 1;
	return true;
}

/* The number of k-subsets of m things, as a double (it may be huge). */
static double
subsets(int m, int k)
{
	double		c = 1.0;

	for (int i = 1; i <= k; i++)
		c = c * (m - k + i) / i;
	return c;
}

/*
 * Is a guard of "stored" labels the guard of the labels now ("now", m
 * labels hashing to h[]) less some added since?  Some stored->count of the
 * labels must sum to stored->sum.  The search looks for the k = min(added,
 * kept) labels that make the difference (their sum is known either way),
 * meeting in the middle: the sums of the first ceil(k/2) of them, over every
 * choice, are sorted, and each choice of the last floor(k/2) looks up what
 * it lacks among those that end before it starts.  A guard that some other
 * set of labels happens to match is accepted: with 64-bit hashes, about one
 * chance in 2^64 per choice tried.  LABELS_MAX_SUMS bounds the sums kept
 * (16 bytes each); beyond it the answer is "too many labels added".
 */
static LabelsFound
labels_contained(const BloomLabels *stored, const BloomLabels *now,
				 const uint64 *h)
{
	int			m = (int) now->count;
	int			n = (int) stored->count;
	int			k,
				k1,
				k2;
	uint64		target;
	PartialSum *sums;
	size_t		nsums = 0;
	int		   *idx;
	bool		found = false;

	if (n > m)
		return LABELS_FEWER;
	if (n == m)
		return LABELS_CHANGED;	/* equal guards were accepted before */
	if (n == 0)
		return LABELS_ADDED;	/* no labels then (and a sum of 0) */

	/*
	 * Most often the labels added since are the newest: the last m - n of h
	 * (in the order of their OIDs, whatever their place in the enum's
	 * order).  Only when they are not (the OID counter wrapped between) does
	 * it take the search, which gives up when too many were added.
	 */
	{
		uint64		newest = 0;

		for (int i = n; i < m; i++)
			newest += h[i];
		if (newest == now->sum - stored->sum)
			return LABELS_ADDED;
	}
	k = Min(m - n, n);
	target = k == m - n ? now->sum - stored->sum : stored->sum;
	k1 = (k + 1) / 2;
	k2 = k - k1;
	if (subsets(m, k1) > LABELS_MAX_SUMS)
		return LABELS_TOO_MANY;

	/* the sums of the first part: k1 >= 1 labels */
	sums = palloc((size_t) subsets(m, k1) * sizeof(PartialSum));
	idx = palloc((k1 + 1) * sizeof(int));
	for (int i = 0; i < k1; i++)
		idx[i] = i;
	do
	{
		uint64		sum = 0;

		for (int i = 0; i < k1; i++)
			sum += h[idx[i]];
		sums[nsums].sum = sum;
		sums[nsums].last = idx[k1 - 1];
		nsums++;
		if ((nsums & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	} while (next_subset(idx, k1, m));
	qsort(sums, nsums, sizeof(PartialSum), cmp_partial);

	/* each choice of the second part (k2 >= 0 labels) */
	for (int i = 0; i < k2; i++)
		idx[i] = i;
	for (uint64 tries = 1;; tries++)
	{
		uint64		want = target;
		int			first = k2 > 0 ? idx[0] : m;
		size_t		lo = 0,
					hi = nsums;

		for (int i = 0; i < k2; i++)
			want -= h[idx[i]];
		/* the first partial sum >= want: of those equal, the lowest last */
		while (lo < hi)
		{
			size_t		mid = lo + (hi - lo) / 2;

			if (sums[mid].sum < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nsums && sums[lo].sum == want && sums[lo].last < first)
		{
			found = true;
			break;
		}
		if ((tries & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (k2 == 0 || !next_subset(idx, k2, m))
			break;
	}
	pfree(idx);
	pfree(sums);
	return found ? LABELS_ADDED : LABELS_CHANGED;
}

/* The error for a guard that the labels now do not pass. */
static void
labels_refuse(const BloomKeyType *kt, const BloomLabels *stored,
			  LabelsFound found, const char *indexname)
{
	char	   *type = format_type_be(kt->enumtypid);
	uint32		m = kt->labels.count;
	uint32		n = stored->count;
	const char *hint = indexname ? "Rebuild the index with REINDEX." :
		"Build the filter again from the keys it was made from.";

	if (found == LABELS_TOO_MANY)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				indexname ?
				errmsg("cannot check the labels of enum type %s against bloomfilter index \"%s\"",
					   type, indexname) :
				errmsg("cannot check the labels of enum type %s against the bloom filter",
					   type),
				errdetail("The type has %u labels, %u more than when the keys were hashed: too many added since to tell whether one was renamed.",
						  m, m - n),
				errhint("%s", hint));
	if (found == LABELS_FEWER)
		ereport(ERROR,
				errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				indexname ?
				errmsg("enum type %s has fewer labels than when the keys of bloomfilter index \"%s\" were hashed",
					   type, indexname) :
				errmsg("enum type %s has fewer labels than when the bloom filter's keys were hashed",
					   type),
				errdetail("The keys were hashed when the type had %u labels; it has %u now.",
						  n, m),
				errhint("%s", hint));
	ereport(ERROR,
			errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			indexname ?
			errmsg("a label of enum type %s was renamed since the keys of bloomfilter index \"%s\" were hashed",
				   type, indexname) :
			errmsg("a label of enum type %s was renamed since the bloom filter's keys were hashed",
				   type),
			n == m ?
			errdetail("The type has as many labels as when the keys were hashed (%u), but not the same ones; keys added under a label's old name are not found under its new one.",
					  m) :
			errdetail("The type's %u labels are not the %u it had when the keys were hashed plus some added since; keys added under a label's old name are not found under its new one.",
					  m, n),
			errhint("%s", hint));
}

/*
 * How the labels of kt's enum now stand to a stored guard: the guard of an
 * index (byoid: of (OID, label) pairs) or of a filter (of the labels).
 */
static LabelsFound
labels_compare(BloomKeyType *kt, const BloomLabels *stored, bool byoid)
{
	const BloomLabels *now = byoid ? &kt->oidlabels : &kt->labels;
	uint64	   *h;
	LabelsFound found;

	Assert(kt->kind == KEY_ENUM);
	bloom_labels_refresh(kt);
	if (bloom_labels_equal(stored, now))
		return LABELS_SAME;
	if (kt->accepted_ok && bloom_labels_equal(stored, &kt->accepted))
		return LABELS_ADDED;

	/*
	 * The guard may be newer than what this backend has heard of (another
	 * backend added a label, then a key of it): take the invalidations
	 * first.
	 */
	AcceptInvalidationMessages();
	bloom_labels_read(kt, &h, byoid);
	if (bloom_labels_equal(stored, now))
	{
		pfree(h);
		return LABELS_SAME;
	}
	found = labels_contained(stored, now, h);
	pfree(h);
	if (found == LABELS_ADDED)
	{
		kt->accepted = *stored;
		kt->accepted_ok = true;
	}
	return found;
}

/*
 * Check a label guard stored with keys of kt's enum (in a filter, an
 * aggregate state or an index's metapage) against the type's labels now:
 * true when they are the same labels, false when labels were added since
 * (the keys hash as they did; whatever records keys of the new labels must
 * record the guard of kt->labels first), and an error when a label was
 * renamed since, or when too many were added to tell.  indexname names the
 * index for the message, NULL for a filter.  The check that both the values
 * and the index use: a filter's guard is of the labels (kt->labels, which
 * dump and restore keep), an index's of (OID, label) pairs (kt->oidlabels:
 * a restore builds the index again, and pg_upgrade keeps enum OIDs), which
 * also sees a label renamed and its old name added again.
 */
bool
bloom_check_labels(BloomKeyType *kt, const BloomLabels *stored,
				   const char *indexname)
{
	LabelsFound found = labels_compare(kt, stored, indexname != NULL);

	if (found != LABELS_SAME && found != LABELS_ADDED)
		labels_refuse(kt, stored, found, indexname);
	return found == LABELS_SAME;
}

/*
 * The same check without an error, for what must go on whatever the labels
 * (VACUUM): 1 when the labels are the guard's, 0 when some were only added
 * since, -1 when the guard's keys no longer hash as the labels now would.
 */
int
bloom_labels_match(BloomKeyType *kt, const BloomLabels *stored, bool byoid)
{
	switch (labels_compare(kt, stored, byoid))
	{
		case LABELS_SAME:
			return 1;
		case LABELS_ADDED:
			return 0;
		default:
			return -1;
	}
}
