/*-------------------------------------------------------------------------
 *
 * bloom_keys.c
 *	  Key types: how each type's keys are hashed and which family they
 *	  belong to, decided once per call site (the hashing itself, per key,
 *	  is in bloom_hash.c).
 *
 * The bits of a stored filter must never depend on PostgreSQL's in-memory
 * layout, byte order, OIDs or internal hash functions, or a filter would
 * start answering "absent" for keys it holds after a dump and restore, an
 * upgrade, or a move to another machine.  So each common type gets canonical
 * bytes defined here (and in the README), chosen so that values equal under
 * the type's "=" hash equally.  Types without canonical bytes fall back to
 * their default hash operator class, and their key family records the
 * PostgreSQL major version (and byte order), so that a filter moved past a
 * change of those is refused with an error instead of silently answering
 * wrongly.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom_pg.h"

/* PostgreSQL's own hash functions may differ between byte orders */
#ifdef WORDS_BIGENDIAN
#define BYTE_ORDER_SUFFIX "be"
#else
#define BYTE_ORDER_SUFFIX ""
#endif

/*
 * The canonical types: a table of (type, how it is hashed, family).  Every
 * other type is an enum (its label) or generic (its own hash function).
 */
typedef struct CanonicalType
{
	Oid			typid;
	BloomKeyKind kind;
	const char *family;
} CanonicalType;

static const CanonicalType canonical_types[] = {
	{INT2OID, KEY_INT2, "integer"},
	{INT4OID, KEY_INT4, "integer"},
	{INT8OID, KEY_INT8, "integer"},
	{TEXTOID, KEY_TEXT, "text"},
	{VARCHAROID, KEY_TEXT, "text"},
	{NAMEOID, KEY_NAME, "text"},
	{BPCHAROID, KEY_BPCHAR, "text"},
	{BYTEAOID, KEY_BYTEA, "bytea"},
	{UUIDOID, KEY_UUID, "uuid"},
	{BOOLOID, KEY_BOOL, "boolean"},
	{FLOAT4OID, KEY_FLOAT4, "float"},
	{FLOAT8OID, KEY_FLOAT8, "float"},
	{NUMERICOID, KEY_NUMERIC, "numeric"},
	{DATEOID, KEY_INT32, "date"},
	{TIMESTAMPOID, KEY_INT64, "timestamp"},
	{TIMESTAMPTZOID, KEY_INT64, "timestamptz"},
	{TIMEOID, KEY_INT64, "time"},
};

/* Raise the error, or give false where the caller asked for no errors. */
#define KEY_REFUSE(noerror, ...) \
	do { \
		if (noerror) \
			return false; \
		ereport(ERROR, __VA_ARGS__); \
	} while (0)

/*
 * Record the family name, in UTF-8 whatever the database encoding, so that a
 * filter means the same in every database.
 */
static bool
set_family(BloomKeyType *kt, const char *name, bool noerror)
{
	name = pg_server_to_any(name, strlen(name), PG_UTF8);
	if (strlen(name) >= BLOOM_FAMILY_LEN)
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_NAME_TOO_LONG),
				   errmsg("type name \"%s\" is too long to be recorded as a bloom filter key family",
						  name),
				   errdetail("A key family name has at most %d bytes.",
							 BLOOM_FAMILY_LEN - 1),
				   errhint("Cast the key to text or to a type with a shorter name."));
	strlcpy(kt->family, name, BLOOM_FAMILY_LEN);
	return true;
}

/* Equal strings must be equal bytes: no nondeterministic collation. */
static bool
check_collation(Oid collid, Oid typid, bool noerror)
{
	if (OidIsValid(collid) && !get_collation_isdeterministic(collid))
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				   errmsg("bloom filter keys of type %s cannot use the nondeterministic collation \"%s\"",
						  format_type_be(typid), get_collation_name(collid)),
				   errhint("Give the key a deterministic collation, for example key COLLATE \"C\" or lower(key) COLLATE \"C\"."));
	return true;
}

/* --- enums: the family and the label guard (see bloom.h) --- */

/*
 * Bumped whenever this backend hears of a change to pg_enum (a label added
 * or renamed, a type dropped, or a cache reset), so that key types read
 * their enum's labels again.
 */
static uint64 enum_generation = 1;
static bool enum_watched = false;

/* labels were left out as uncommitted in this transaction (labels_read) */
static bool enum_uncommitted_seen = false;

static void
enum_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	enum_generation++;
}

/*
 * At the end of a transaction in which labels_read left out labels it had
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

static void
labels_read(BloomKeyType *kt, uint64 **hashes, bool byoid)
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
		labels_read(kt, NULL, false);
}

/*
 * An enum's family is "enum:" and its qualified name: nothing that adding a
 * label changes.  Its labels are read for the guard.
 */
static bool
set_enum_family(BloomKeyType *kt, Oid enumtypid, bool noerror)
{
	kt->enumtypid = enumtypid;
	labels_read(kt, NULL, false);
	return set_family(kt, psprintf("%s%s", BLOOM_ENUM_PREFIX,
								   format_type_be_qualified(enumtypid)),
					  noerror);
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
	labels_read(kt, &h, byoid);
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

/*
 * The enum type of an enum family, looked up by its name (in this database:
 * a filter combined here may have been made elsewhere), into kt.
 */
static void
family_enum_type(const char *family, BloomKeyType *kt)
{
	const char *name = family + strlen(BLOOM_ENUM_PREFIX);
	char	   *sname = pg_any_to_server(name, strlen(name), PG_UTF8);
	Oid			typid;
	int32		typmod;
#if PG_VERSION_NUM >= 160000
	ErrorSaveContext escontext = {T_ErrorSaveContext};

	if (!parseTypeString(sname, &typid, &typmod, (Node *) &escontext))
		typid = InvalidOid;
#else
	parseTypeString(sname, &typid, &typmod, true);
#endif
	memset(kt, 0, sizeof(*kt));
	if (OidIsValid(typid) && type_is_enum(typid))
		bloom_key_type_init(kt, typid, InvalidOid, TopMemoryContext);
	if (kt->kind != KEY_ENUM || strcmp(kt->family, family) != 0)
	{
		kt->typid = InvalidOid;
		ereport(ERROR,
				errcode(ERRCODE_UNDEFINED_OBJECT),
				errmsg("cannot combine bloom filters of key family \"%s\" made under different labels",
					   bloom_family_display(family)),
				errdetail("There is no enum type %s in this database to check their labels against.",
						  sname),
				errhint("Combine the filters in the database they were made in."));
	}
}

/*
 * The label guard of the combination of two filters (or aggregate states)
 * of one family: if it is an enum family and their guards differ (a label
 * was added between them), both are checked against the type's labels now,
 * which the combination then records.
 */
void
bloom_combine_labels(const char *family, const BloomLabels *a,
					 const BloomLabels *b, BloomLabels *out)
{
	/* the type of the last family combined, looked up once */
	static BloomKeyType kt;

	if (!bloom_family_is_enum(family) || bloom_labels_equal(a, b))
	{
		*out = *a;
		return;
	}
	if (kt.typid == InvalidOid || strcmp(kt.family, family) != 0 ||
		bloom_labels_stale(&kt))
		family_enum_type(family, &kt);
	(void) bloom_check_labels(&kt, a, NULL);
	(void) bloom_check_labels(&kt, b, NULL);
	*out = kt.labels;
}

/*
 * What a generic key type is made of, looked at through domains, arrays,
 * composites, ranges and multiranges.  Its own hash function hashes its
 * parts with theirs: a part whose hash is an OID (an enum hashes its value's
 * OID, a reg* type is one) gives other bits after a dump and restore; a part
 * of a collatable type other than the built-in strings may hash under the
 * collation's rules (citext lowercases by the locale); and a composite's
 * hash changes when an attribute is added.  The first two are refused, the
 * last is recorded in the family as a digest of the parts' types.
 */
typedef struct KeyTypeParts
{
	Oid			refused;		/* a part whose hash is not canonical */
	Oid			collation;		/* a nondeterministic collation of a part */
	bool		composite;		/* some part is a composite */
	XXH3_state_t shape;			/* the parts' type names, depth first */
} KeyTypeParts;

static bool
oid_valued(Oid typid)
{
	switch (typid)
	{
		case REGCLASSOID:
		case REGTYPEOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
		case REGNAMESPACEOID:
		case REGROLEOID:
		case REGCOLLATIONOID:
		case ACLITEMOID:
		case RECORDOID:			/* anonymous: its shape is not in the catalog */
			return true;
	}
	return type_is_enum(typid);
}

static bool
builtin_string(Oid typid)
{
	return typid == TEXTOID || typid == VARCHAROID || typid == BPCHAROID ||
		typid == NAMEOID;
}

static void
key_type_parts(Oid typid, Oid collid, KeyTypeParts *parts)
{
	Oid			base = getBaseType(typid);
	char	   *name;
	Oid			elem;

	check_stack_depth();
	if (OidIsValid(collid) && !OidIsValid(parts->collation) &&
		!get_collation_isdeterministic(collid))
		parts->collation = collid;
	name = format_type_be_qualified(base);
	XXH3_64bits_update(&parts->shape, name, strlen(name) + 1);
	if (oid_valued(base) ||
		(type_is_collatable(base) && !builtin_string(base) &&
		 !OidIsValid(get_element_type(base))))
	{
		if (!OidIsValid(parts->refused))
			parts->refused = base;
		return;
	}
	switch (get_typtype(base))
	{
		case TYPTYPE_COMPOSITE:
			{
				TupleDesc	desc = lookup_rowtype_tupdesc(base, -1);

				parts->composite = true;
				for (int i = 0; i < desc->natts; i++)
				{
					Form_pg_attribute att = TupleDescAttr(desc, i);

					if (!att->attisdropped)
						key_type_parts(att->atttypid, att->attcollation, parts);
				}
				ReleaseTupleDesc(desc);
				return;
			}
		case TYPTYPE_RANGE:
			key_type_parts(get_range_subtype(base), get_range_collation(base),
						   parts);
			return;
		case TYPTYPE_MULTIRANGE:
			key_type_parts(get_multirange_range(base), InvalidOid, parts);
			return;
		default:
			break;
	}
	elem = get_element_type(base);
	if (OidIsValid(elem))
		key_type_parts(elem, collid, parts);
}

/*
 * A type hashed by its own extended hash function.  Its family records the
 * PostgreSQL major version and byte order (those hash functions may change
 * with either), the database encoding where that is not UTF-8 (string parts
 * hash the encoding's bytes), and for composites a digest of their shape.
 * The parts are hashed under the C collation: every part is deterministic
 * and a built-in string, for which collations do not change the hash.
 */
static bool
generic_setup(BloomKeyType *kt, Oid typid, Oid base, Oid collid,
			  MemoryContext mcxt, bool noerror)
{
	TypeCacheEntry *tce;
	KeyTypeParts parts = {0};
	char		name[NAMEDATALEN * 4];
	int			len;

	XXH3_64bits_reset(&parts.shape);
	key_type_parts(typid, collid, &parts);
	if (OidIsValid(parts.refused))
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				   errmsg("type %s cannot be a bloom filter key", format_type_be(typid)),
				   parts.refused == RECORDOID ?
				   errdetail("An anonymous record type has no name to record in the filter.") :
				   oid_valued(parts.refused) ?
				   errdetail("Its hash uses the OIDs of %s values, which differ between databases.",
							 format_type_be(parts.refused)) :
				   errdetail("Its hash follows the rules of the collation of %s.",
							 format_type_be(parts.refused)),
				   parts.refused == RECORDOID ?
				   errhint("Hash a text form of the key, for example concat_ws('|', a, b), or use a composite type.") :
				   errhint("Cast the key to text, for example key::text."));
	if (!check_collation(parts.collation, typid, noerror))
		return false;
	tce = lookup_type_cache(base, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
	if (!OidIsValid(tce->hash_extended_proc))
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_UNDEFINED_FUNCTION),
				   errmsg("type %s cannot be a bloom filter key", format_type_be(typid)),
				   errdetail("The type has no default hash operator class with an extended hash function."),
				   errhint("Cast the key to text or to another hashable type."));
	kt->kind = KEY_GENERIC;
	kt->collid = C_COLLATION_OID;
	fmgr_info_cxt(tce->hash_extended_proc, &kt->hashfn, mcxt);
	len = snprintf(name, sizeof(name), "%s/pg%d%s",
				   format_type_be_qualified(base), PG_VERSION_NUM / 10000,
				   BYTE_ORDER_SUFFIX);
	if (GetDatabaseEncoding() != PG_UTF8)
		len += snprintf(name + len, sizeof(name) - len, "/%s",
						GetDatabaseEncodingName());
	if (parts.composite)
		snprintf(name + len, sizeof(name) - len, "#%08x",
				 (unsigned int) XXH3_64bits_digest(&parts.shape));
	return set_family(kt, name, noerror);
}

/*
 * Work out how keys of type typid (as passed, maybe a domain) are hashed and
 * which family they belong to.  Done once per call site; the FmgrInfo of a
 * generic type's hash function lives in mcxt.  With noerror, a type that
 * cannot be a key gives false instead of an error (the planner's estimates
 * must not fail for a call that may never run).  kt is written only once
 * every check has passed, so a failed setup leaves it not set up.
 */
static bool
key_type_setup(BloomKeyType *kt, Oid typid, Oid collid, MemoryContext mcxt,
			   bool noerror)
{
	BloomKeyType t;
	Oid			base;
	bool		ok;

	if (!OidIsValid(typid))
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_INDETERMINATE_DATATYPE),
				   errmsg("could not determine the type of the bloom filter key"));

	memset(&t, 0, sizeof(t));
	t.collid = collid;
	t.utf8 = GetDatabaseEncoding() == PG_UTF8;
	base = getBaseType(typid);	/* a domain is its base type */
	for (int i = 0; i < lengthof(canonical_types); i++)
	{
		if (canonical_types[i].typid != base)
			continue;
		t.kind = canonical_types[i].kind;
		if (!set_family(&t, canonical_types[i].family, noerror))
			return false;
		if (type_is_collatable(base) && !check_collation(collid, typid, noerror))
			return false;
		break;
	}
	if (t.family[0] != '\0')
		ok = true;
	else if (type_is_enum(base))
	{
		t.kind = KEY_ENUM;
		ok = set_enum_family(&t, base, noerror);
	}
	else
		ok = generic_setup(&t, typid, base, collid, mcxt, noerror);
	if (!ok)
		return false;
	t.typid = typid;
	*kt = t;
	return true;
}

void
bloom_key_type_init(BloomKeyType *kt, Oid typid, Oid collid,
					MemoryContext mcxt)
{
	(void) key_type_setup(kt, typid, collid, mcxt, false);
}

/* The same, but false where bloom_key_type_init would raise an error. */
bool
bloom_key_type_try_init(BloomKeyType *kt, Oid typid, Oid collid,
						MemoryContext mcxt)
{
	return key_type_setup(kt, typid, collid, mcxt, true);
}

/*
 * The type of argument argno as called.  Distributed engines call the
 * aggregate's support functions through wrappers of their own (Citus's
 * worker_partial_agg and coord_combine_agg), without a call expression: then
 * the type is the function's declared one, which is concrete for the
 * overloads that such engines push down (sql/bloomfilter--1.0.sql).
 * InvalidOid if neither says.
 */
Oid
bloom_call_arg_type(FunctionCallInfo fcinfo, int argno)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	Oid			typid = get_fn_expr_argtype(flinfo, argno);
	Oid		   *argtypes;
	int			nargs;

	if (OidIsValid(typid))
	{
		Aggref	   *aggref = AggGetAggref(fcinfo);
		Node	   *arg = NULL;

		/*
		 * A key of a type with an implicit binary cast to an overload's type
		 * (citext to text) arrives relabelled: hash it as its own type, which
		 * is what "=" compares it as.
		 */
		if (aggref != NULL)
		{
			if (argno >= 1 && argno <= list_length(aggref->args))
				arg = (Node *) list_nth_node(TargetEntry, aggref->args, argno - 1)->expr;
		}
		else if (flinfo->fn_expr != NULL && IsA(flinfo->fn_expr, FuncExpr))
		{
			List	   *args = ((FuncExpr *) flinfo->fn_expr)->args;

			if (argno < list_length(args))
				arg = (Node *) list_nth(args, argno);
		}
		if (arg != NULL && IsA(arg, RelabelType) &&
			((RelabelType *) arg)->relabelformat == COERCE_IMPLICIT_CAST)
			typid = exprType((Node *) ((RelabelType *) arg)->arg);
		return typid;
	}
	if (flinfo->fn_expr != NULL || !OidIsValid(flinfo->fn_oid))
		return typid;
	(void) get_func_signature(flinfo->fn_oid, &argtypes, &nargs);
	if (argno < nargs && !IsPolymorphicType(argtypes[argno]))
		typid = argtypes[argno];
	pfree(argtypes);
	return typid;
}

/*
 * The number of arguments of the call: the declared number where a wrapper
 * calls without a call expression (Citus's coord_combine_agg passes the
 * final function its own argument count, NULLs after the state).
 */
int
bloom_call_nargs(FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;

	if (flinfo->fn_expr != NULL || !OidIsValid(flinfo->fn_oid))
		return PG_NARGS();
	return get_func_nargs(flinfo->fn_oid);
}

/*
 * Set up the key type of argument argno of a call in kt, once per call site
 * (kt->typid stays 0 until then).
 */
BloomKeyType *
bloom_arg_key_type(FunctionCallInfo fcinfo, int argno, BloomKeyType *kt)
{
	if (kt->typid == InvalidOid)
		bloom_key_type_init(kt, bloom_call_arg_type(fcinfo, argno),
							PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
	return kt;
}

/*
 * The key type of argument argno, kept in fn_extra: for the functions whose
 * fn_extra holds nothing else (bloom_add, bloom_add_new, bloom_agg).
 */
BloomKeyType *
bloom_call_key_type(FunctionCallInfo fcinfo, int argno)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BloomKeyType));
	return bloom_arg_key_type(fcinfo, argno, (BloomKeyType *) fcinfo->flinfo->fn_extra);
}
