/*-------------------------------------------------------------------------
 *
 * bfjoin_match.c
 *	  Which joins a bloomfilter index can pre-check: the join clause that is
 *	  the equality the index hashes by, the index that answers for the inner
 *	  side (plain, a partition, or partitioned and every leaf covered), and the
 *	  exact check that enforces every clause of the join.
 *
 * The rules, and why each keeps the answer the plain plan's, are in
 * bfjoin_path.c's header; this file only decides.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_match.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/partition.h"
#include "catalog/pg_opfamily.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "bfindex.h"
#include "bfjoin.h"

/* The OID of the bloomfilter access method, or InvalidOid. */
Oid
bf_join_am_oid(void)
{
	return get_am_oid("bloomfilter", true);
}

static Node *
strip_relabel(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node;
}

/*
 * Is the inner side of a clause the index's key: the same column of the
 * inner rel (whatever typmod and collation the Var carries), or an
 * expression equal to the index's?  Relabels are looked through here; the
 * caller then checks the operator against the type the index hashed (the
 * key's own type, relabel and all), since a relabel can change how a value
 * hashes: text relabelled to bpchar loses its trailing blanks.
 */
static bool
key_matches(Node *inner_arg, Node *key)
{
	inner_arg = strip_relabel(inner_arg);
	if (IsA(key, Var))
		return inner_arg && IsA(inner_arg, Var) &&
			((Var *) inner_arg)->varno == ((Var *) key)->varno &&
			((Var *) inner_arg)->varattno == ((Var *) key)->varattno &&
			((Var *) inner_arg)->varlevelsup == 0;
	return equal(inner_arg, strip_relabel(key));
}

/*
 * Does equality operator opno, between an outer key of type outertype and
 * the index's key of type indextype (collation indexcoll), mean that the
 * keys hash alike?  It must be the "=" of the btree (or hash) operator
 * family of the index key's type, and both types must be of one key family.
 */
static bool
clause_hashes_alike(Oid opno, Oid outertype, Oid outercoll, Oid indextype,
					Oid indexcoll)
{
	/* the default families, from the type cache (no catalog scan) */
	TypeCacheEntry *tce = lookup_type_cache(getBaseType(indextype),
											TYPECACHE_BTREE_OPFAMILY |
											TYPECACHE_HASH_OPFAMILY);
	bool		equality;
	BloomKeyType kto;
	BloomKeyType kti;

	equality = (OidIsValid(tce->btree_opf) &&
				get_op_opfamily_strategy(opno, tce->btree_opf) == BTEqualStrategyNumber) ||
		(OidIsValid(tce->hash_opf) &&
		 get_op_opfamily_strategy(opno, tce->hash_opf) == HTEqualStrategyNumber);
	if (!equality || !op_strict(opno))
		return false;

	memset(&kto, 0, sizeof(kto));
	memset(&kti, 0, sizeof(kti));
	if (!bloom_key_type_try_init(&kto, outertype, outercoll, CurrentMemoryContext) ||
		!bloom_key_type_try_init(&kti, indextype, indexcoll, CurrentMemoryContext))
		return false;
	if (kto.kind == KEY_ENUM || kti.kind == KEY_ENUM)
		return false;
	return strcmp(kto.family, kti.family) == 0;
}

/*
 * Is the clause outer_expr = inner_key for the index key "key" (a Var of the
 * inner rel, or an index expression), and if so its outer side?
 */
static Expr *
clause_outer_key(RestrictInfo *rinfo, RelOptInfo *outerrel,
				 RelOptInfo *innerrel, Node *key, Oid indexcoll)
{
	OpExpr	   *op;
	Node	   *outer_arg;
	Node	   *inner_arg;

	if (rinfo->pseudoconstant || !IsA(rinfo->clause, OpExpr))
		return NULL;
	op = (OpExpr *) rinfo->clause;
	if (list_length(op->args) != 2 || bms_is_empty(rinfo->left_relids) ||
		bms_is_empty(rinfo->right_relids))
		return NULL;
	if (bms_is_subset(rinfo->left_relids, outerrel->relids) &&
		bms_is_subset(rinfo->right_relids, innerrel->relids))
	{
		outer_arg = linitial(op->args);
		inner_arg = lsecond(op->args);
	}
	else if (bms_is_subset(rinfo->left_relids, innerrel->relids) &&
			 bms_is_subset(rinfo->right_relids, outerrel->relids))
	{
		outer_arg = lsecond(op->args);
		inner_arg = linitial(op->args);
	}
	else
		return NULL;

	if (!key_matches(inner_arg, key))
		return NULL;
	if (OidIsValid(op->inputcollid) &&
		!get_collation_isdeterministic(op->inputcollid))
		return NULL;
	if (contain_volatile_functions(outer_arg))
		return NULL;
	if (!clause_hashes_alike(op->opno, exprType(outer_arg),
							 exprCollation(outer_arg),
							 exprType(key), indexcoll))
		return NULL;
	return (Expr *) outer_arg;
}

/* The first clause of the join that the index key answers, if any. */
static bool
find_clause(List *restrictlist, RelOptInfo *outerrel, RelOptInfo *innerrel,
			Node *key, Oid indexcoll, BfJoinCandidate *c)
{
	ListCell   *lc;

	foreach(lc, restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Expr	   *outer_key = clause_outer_key(rinfo, outerrel, innerrel,
												 key, indexcoll);

		if (outer_key)
		{
			c->rinfo = rinfo;
			c->outer_key = outer_key;
			return true;
		}
	}
	return false;
}

/*
 * A bloomfilter index of a plain inner table (or partition) that answers a
 * clause of the join: from the planner's own list, which holds only valid
 * indexes (and not those a broken HOT chain hides from this transaction).
 */
bool
bf_join_plain_candidate(PlannerInfo *root, RelOptInfo *outerrel, RelOptInfo *innerrel,
				List *restrictlist, Oid amoid, BfJoinCandidate *c)
{
	ListCell   *lc;

	foreach(lc, innerrel->indexlist)
	{
		IndexOptInfo *ix = lfirst_node(IndexOptInfo, lc);
		Node	   *key;

		if (ix->relam != amoid || ix->ncolumns != 1 || ix->hypothetical)
			continue;

		/*
		 * A partial index holds the keys of the rows its predicate admits:
		 * enough where the inner side's own conditions imply it (predOK may
		 * lean on join clauses too, which the filter cannot).
		 */
		if (ix->indpred != NIL &&
			(!ix->predOK ||
			 !predicate_implied_by(ix->indpred, innerrel->baserestrictinfo, false)))
			continue;
		if (ix->indexkeys[0] != 0)
			key = (Node *) makeVar(innerrel->relid, ix->indexkeys[0],
								   get_atttype(planner_rt_fetch(innerrel->relid, root)->relid,
											   ix->indexkeys[0]),
								   -1, InvalidOid, 0);
		else if (ix->indexprs != NIL)
			key = linitial(ix->indexprs);
		else
			continue;
		if (!find_clause(restrictlist, outerrel, innerrel, key,
						 ix->indexcollations[0], c))
			continue;
		if (bf_index_trust(ix->indexoid) != BF_TRUSTED)
			continue;
		c->leaves = list_make1_oid(ix->indexoid);
		c->indexoid = ix->indexoid;
		return true;
	}
	return false;
}

/* The access method of relation relid, from the syscache (nothing opened). */
static Oid
rel_am(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			am = InvalidOid;

	if (HeapTupleIsValid(tup))
	{
		am = ((Form_pg_class) GETSTRUCT(tup))->relam;
		ReleaseSysCache(tup);
	}
	return am;
}

/*
 * The leaf index of partitioned index indexoid on one leaf partition: from
 * the planner's list of the leaf's indexes (valid ones, opened and locked
 * by the planner already), the one whose ancestors hold indexoid.
 */
static Oid
leaf_index(RelOptInfo *leaf, Oid indexoid, Oid amoid)
{
	ListCell   *lc;

	foreach(lc, leaf->indexlist)
	{
		IndexOptInfo *ix = lfirst_node(IndexOptInfo, lc);
		List	   *ancestors;
		bool		under;

		if (ix->relam != amoid || ix->hypothetical)
			continue;
		ancestors = get_partition_ancestors(ix->indexoid);
		under = list_member_oid(ancestors, indexoid);
		list_free(ancestors);
		if (under)
			return ix->indexoid;
	}
	return InvalidOid;
}

/*
 * The leaf indexes under partitioned index indexoid for the partitions the
 * plan scans: those pruning left (live_parts), under sub-partitioned ones
 * too; never the pruned ones, which are neither locked nor opened (their
 * rows cannot meet the inner side's conditions, so the filter need not hold
 * their keys).  false where a live leaf has no index PostgreSQL trusts
 * (*too_new where it is one too new for this transaction's snapshots, or
 * unknown).
 */
static bool
live_leaves(PlannerInfo *root, RelOptInfo *rel, Oid indexoid, Oid amoid,
			List **leaves, bool *too_new)
{
	int			i = -1;

	if (rel->part_rels == NULL)
		return false;
	while ((i = bms_next_member(rel->live_parts, i)) >= 0)
	{
		RelOptInfo *part = rel->part_rels[i];
		Oid			leaf;

		if (part == NULL)
			return false;
		if (IS_DUMMY_REL(part))
			continue;
		if (planner_rt_fetch(part->relid, root)->relkind == RELKIND_PARTITIONED_TABLE)
		{
			if (!live_leaves(root, part, indexoid, amoid, leaves, too_new))
				return false;
			continue;
		}
		leaf = leaf_index(part, indexoid, amoid);
		if (!OidIsValid(leaf))
		{
			/* not in the planner's list: invalid, or too new for now */
			*too_new = true;
			return false;
		}
		if (bf_index_trust(leaf) != BF_TRUSTED)
		{
			if (bf_index_trust(leaf) == BF_TRUST_TOO_NEW)
				*too_new = true;
			return false;
		}
		*leaves = lappend_oid(*leaves, leaf);
	}
	return true;
}

/*
 * A partitioned bloomfilter index of a partitioned inner table that answers
 * a clause of the join.  The planner keeps no IndexOptInfo for it (only for
 * unique indexes of a partitioned table), so it is found in the catalog
 * (each index's access method from the syscache first: only a bloomfilter
 * index is opened); it serves only where every partition the plan scans
 * has a valid leaf index.  An inner side pruned to nothing gets no path.
 */
bool
bf_join_partitioned_candidate(PlannerInfo *root, RelOptInfo *outerrel,
							  RelOptInfo *innerrel, Oid tableoid,
							  List *restrictlist, Oid amoid,
							  BfJoinCandidate *c)
{
	Relation	table;
	List	   *indexes;
	ListCell   *lc;
	bool		found = false;

	if (bms_is_empty(innerrel->live_parts) || IS_DUMMY_REL(innerrel))
		return false;
	table = table_open(tableoid, NoLock);
	indexes = RelationGetIndexList(table);
	table_close(table, NoLock);
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		Relation	index;
		Node	   *key = NULL;
		Oid			coll;
		bool		too_new = false;

		if (rel_am(indexoid) != amoid ||
			get_rel_relkind(indexoid) != RELKIND_PARTITIONED_INDEX)
			continue;
		index = index_open(indexoid, AccessShareLock);
		if (index->rd_index->indnatts == 1 &&
			index->rd_index->indisvalid &&
			RelationGetIndexPredicate(index) == NIL)
		{
			AttrNumber	attno = index->rd_index->indkey.values[0];

			if (attno != 0)
				key = (Node *) makeVar(innerrel->relid, attno,
									   get_atttype(tableoid, attno), -1,
									   InvalidOid, 0);
			else
			{
				List	   *exprs = RelationGetIndexExpressions(index);

				if (exprs != NIL)
				{
					key = linitial(exprs);
					ChangeVarNodes(key, 1, innerrel->relid, 0);
				}
			}
		}
		coll = index->rd_indcollation ? index->rd_indcollation[0] : InvalidOid;
		index_close(index, NoLock);
		if (key == NULL ||
			!find_clause(restrictlist, outerrel, innerrel, key, coll, c))
			continue;

		/*
		 * A leaf built over a broken HOT chain after this transaction's
		 * snapshots is not used, as get_relation_info skips such an index:
		 * the plan is then for this transaction only.
		 */
		c->leaves = NIL;
		if (!live_leaves(root, innerrel, indexoid, amoid, &c->leaves, &too_new) ||
			c->leaves == NIL)
		{
			if (too_new)
				root->glob->transientPlan = true;
			list_free(c->leaves);
			c->leaves = NIL;
			continue;
		}
		c->indexoid = indexoid;
		found = true;
		break;
	}
	list_free(indexes);
	return found;
}

/*
 * Does the inner path enforce every clause of the join, so that a row it
 * returns is a match and none is one where it returns none?  (As a nested
 * loop tells the clauses it must still check, create_nestloop_path.)
 */
static bool
enforces_all(Path *inner, List *restrictlist)
{
	ListCell   *lc;
#if PG_VERSION_NUM >= 160000
	Bitmapset  *serials = get_param_path_clause_serials(inner);

	foreach(lc, restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (!bms_is_member(rinfo->rinfo_serial, serials))
			return false;
	}
#else
	Relids		inner_and_outer = bms_union(inner->parent->relids,
											PATH_REQ_OUTER(inner));

	foreach(lc, restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (!join_clause_is_movable_into(rinfo, inner->parent->relids,
										 inner_and_outer))
			return false;
	}
#endif
	return true;
}

/*
 * The exact check: the inner's cheapest parameterized path whose
 * parameters come from the outer side alone and that enforces every clause.
 * In a partitionwise join (a join of two partitions) the inner partition's
 * paths are parameterized by the outer side's parent: such a path is
 * translated to the outer partition, as a nested loop does.
 */
Path *
bf_join_exact_check_path(PlannerInfo *root, RelOptInfo *outerrel,
				 RelOptInfo *innerrel, List *restrictlist, bool parallel)
{
	Path	   *best = NULL;
	ListCell   *lc;

	foreach(lc, innerrel->pathlist)
	{
		Path	   *p = (Path *) lfirst(lc);
		Relids		req = PATH_REQ_OUTER(p);
		bool		by_parent = false;

		if (bms_is_empty(req))
			continue;
		if (!bms_is_subset(req, outerrel->relids))
		{
			if (outerrel->top_parent_relids == NULL ||
				!bms_is_subset(req, outerrel->top_parent_relids))
				continue;
			by_parent = true;
		}
		if (parallel && !p->parallel_safe)
			continue;
		if (best != NULL && p->total_cost >= best->total_cost)
			continue;
		if (by_parent &&
			(p = reparameterize_path_by_child(root, p, outerrel)) == NULL)
			continue;
		if (!enforces_all(p, restrictlist))
			continue;
		best = p;
	}
	return best;
}
