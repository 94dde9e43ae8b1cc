--
-- bloom_ops: union and intersection (functions, operators, aggregates),
-- folding, the shape errors, equality and the hash operator class, and
-- bloom_add_new.
--
\set VERBOSITY default
SET extra_float_digits = 0;

-- filters of the integers in [lo, hi], built by the sized bloom_agg
CREATE FUNCTION ops_build(lo int, hi int, capacity bigint, rate float8 DEFAULT 0.01)
RETURNS bloom LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT bloom_agg(x, capacity, rate) FROM generate_series(lo, hi) AS x
$$;

-- The sizes bloom_create picks are tested in bloom_create.  Where a test
-- needs particular shapes (folding, the shape errors), it writes the header
-- itself, so that it does not depend on the sizing:
-- an empty filter of nblocks blocks and k hashes (bloom.h gives the format)
CREATE FUNCTION ops_le(b bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT string_agg(substring(b FROM i FOR 1), ''::bytea ORDER BY i DESC)
  FROM generate_series(1, length(b)) AS i
$$;
CREATE FUNCTION ops_shape(nblocks int, k int, capacity bigint DEFAULT 1000,
                          rate float8 DEFAULT 0.01, seed bigint DEFAULT 0)
RETURNS bloom LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT ('\x424c4d46010101'::bytea || set_byte('\x00'::bytea, 0, k)
          || ops_le(int8send(seed)) || ops_le(int8send(nblocks::bigint))
          || ops_le(int8send(capacity)) || ops_le(float8send(rate))
          || decode(repeat('00', 4 + 64 + 16 + 64 * nblocks), 'hex'))::bloom
$$;
-- f with the integers in [lo, hi] added
CREATE FUNCTION ops_fill(f bloom, lo int, hi int) RETURNS bloom
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
  FOR i IN lo..hi LOOP
    f := bloom_add(f, i);
  END LOOP;
  RETURN f;
END
$$;
-- given bloom_create's shape, they make bloom_create's filter
SELECT ops_shape(nblocks::int, nhashes) = bloom_create(1000) AS same_as_bloom_create,
       ops_fill(ops_shape(nblocks::int, nhashes), 1, 1000) = ops_build(1, 1000, 1000)
         AS same_as_bloom_agg
FROM bloom_info(bloom_create(1000));

-- per-partition filters: 10,000 keys in 8 partitions, one shape
CREATE TABLE ops_parts AS
  SELECT x % 8 AS part, bloom_agg(x, 10000, 0.01) AS f
  FROM generate_series(1, 10000) AS x GROUP BY x % 8;

--
-- Union: the roll-up of per-partition filters is bit for bit the filter
-- built over all rows at once
--
SELECT bloom_union_agg(f) = ops_build(1, 10000, 10000) AS union_agg_is_single_build
FROM ops_parts;
SELECT bloom_union_agg(f)::bytea = ops_build(1, 10000, 10000)::bytea AS same_bytes
FROM ops_parts;
SELECT (SELECT f FROM ops_parts WHERE part = 0) | (SELECT f FROM ops_parts WHERE part = 1)
     = ops_build(1, 10000, 10000) AS two_parts_are_not_all;
SELECT bloom_union(ops_build(1, 500, 1000), ops_build(501, 1000, 1000))
     = ops_build(1, 1000, 1000) AS union_is_single_build;
SELECT ops_build(1, 500, 1000) | ops_build(501, 1000, 1000)
     = ops_build(1, 1000, 1000) AS operator_is_single_build;
-- commutative, idempotent, and an empty filter is its identity
SELECT ops_build(1, 600, 1000) | ops_build(400, 1000, 1000)
     = ops_build(400, 1000, 1000) | ops_build(1, 600, 1000) AS commutative;
SELECT ops_build(1, 600, 1000) | ops_build(1, 600, 1000)
     = ops_build(1, 600, 1000) AS idempotent;
SELECT bloom_create(1000) | ops_build(1, 600, 1000)
     = ops_build(1, 600, 1000) AS empty_is_identity;
-- the empty filter has no key family yet; the union takes the other one
SELECT key_family FROM bloom_info(bloom_create(1000) | ops_build(1, 10, 1000));
SELECT key_family FROM bloom_info(bloom_create(1000) | bloom_create(1000));
-- every key of either input is in the union
SELECT count(*) FILTER (WHERE NOT bloom_contains(u, x)) AS false_negatives
FROM (SELECT ops_build(1, 500, 1000) | ops_build(2001, 2500, 1000) AS u) s,
     (SELECT generate_series(1, 500) UNION ALL SELECT generate_series(2001, 2500)) k(x);
-- NULL in, NULL out
SELECT ops_build(1, 10, 1000) | NULL IS NULL AS union_null;
SELECT bloom_union(NULL, ops_build(1, 10, 1000)) IS NULL AS union_null;

--
-- Union aggregate: NULL filters are skipped; no filters give NULL
--
SELECT bloom_union_agg(f) = ops_build(1, 10000, 10000) AS nulls_skipped
FROM (SELECT f FROM ops_parts UNION ALL SELECT NULL::bloom) s;
SELECT bloom_union_agg(f) IS NULL AS no_rows FROM ops_parts WHERE false;
SELECT bloom_union_agg(NULL::bloom) IS NULL AS only_nulls;
SELECT bloom_union_agg(f) = ops_build(1, 10000, 10000) AS one_row
FROM (SELECT bloom_union_agg(f) AS f FROM ops_parts) s;
-- per group
SELECT part % 2 AS half, bloom_union_agg(f) = ops_build(1, 0, 10000) AS empty
FROM ops_parts GROUP BY 1 ORDER BY 1;
SELECT bool_and(bloom_contains(u, x)) AS no_false_negatives
FROM (SELECT part % 2 AS half, bloom_union_agg(f) AS u FROM ops_parts GROUP BY 1) s
JOIN generate_series(1, 10000) AS x ON x % 2 = s.half;

-- as a window aggregate: distinct keys seen so far, partition by partition
SELECT part, round(bloom_cardinality(bloom_union_agg(f) OVER (ORDER BY part)) / 1250) AS parts_so_far
FROM ops_parts ORDER BY part;

--
-- Intersection
--
SELECT count(*) FILTER (WHERE NOT bloom_contains(i, x)) AS false_negatives
FROM (SELECT ops_build(1, 600, 1000) & ops_build(401, 1000, 1000) AS i) s,
     generate_series(401, 600) AS x;
SELECT bloom_intersect(ops_build(1, 600, 1000), ops_build(401, 1000, 1000))
     = (ops_build(1, 600, 1000) & ops_build(401, 1000, 1000)) AS function_is_operator;
SELECT ops_build(1, 600, 1000) & ops_build(401, 1000, 1000)
     = ops_build(401, 1000, 1000) & ops_build(1, 600, 1000) AS commutative;
-- the intersection may keep extra bits: it holds every bit of the filter of
-- the common keys, and some more
SELECT (ops_build(1, 600, 1000) & ops_build(401, 1000, 1000)) | ops_build(401, 600, 1000)
     = (ops_build(1, 600, 1000) & ops_build(401, 1000, 1000)) AS covers_common_keys;
SELECT (ops_build(1, 600, 1000) & ops_build(401, 1000, 1000))
     = ops_build(401, 600, 1000) AS equals_common_keys,
       (SELECT bits_set FROM bloom_info(ops_build(1, 600, 1000) & ops_build(401, 1000, 1000)))
     > (SELECT bits_set FROM bloom_info(ops_build(401, 600, 1000))) AS has_extra_bits;
-- disjoint sets: far fewer bits than either, and the keys of each mostly gone
SELECT count(*) FILTER (WHERE bloom_contains(i, x)) < 100 AS mostly_gone
FROM (SELECT ops_build(1, 500, 1000) & ops_build(501, 1000, 1000) AS i) s,
     generate_series(1, 1000) AS x;
-- with an empty filter: empty, with the other's family
SELECT bits_set, key_family FROM bloom_info(bloom_create(1000) & ops_build(1, 600, 1000));
SELECT ops_build(1, 10, 1000) & NULL IS NULL AS intersect_null;

--
-- Intersection aggregate
--
SELECT bloom_intersect_agg(f) = (ops_build(1, 600, 1000) & ops_build(401, 1000, 1000)
                                 & ops_build(301, 700, 1000)) AS agg_is_operator
FROM (VALUES (ops_build(1, 600, 1000)), (NULL), (ops_build(401, 1000, 1000)),
             (ops_build(301, 700, 1000))) v(f);
SELECT bool_and(bloom_contains(i, x)) AS no_false_negatives
FROM (SELECT bloom_intersect_agg(f) AS i
      FROM (VALUES (ops_build(1, 600, 1000)), (ops_build(401, 1000, 1000)),
                   (ops_build(301, 700, 1000))) v(f)) s,
     generate_series(401, 600) AS x;
SELECT bloom_intersect_agg(f) IS NULL AS no_rows FROM ops_parts WHERE false;
SELECT bloom_intersect_agg(f) = ops_build(1, 600, 1000) AS one_filter
FROM (VALUES (ops_build(1, 600, 1000))) v(f);

--
-- Both aggregates in parallel: partial states are serialized, passed to the
-- leader, deserialized and combined; the result is the same
--
CREATE TABLE ops_many AS
  SELECT g, ops_build(g * 100, g * 100 + 99, 20000) AS f
  FROM generate_series(0, 199) AS g;
ALTER TABLE ops_many SET (parallel_workers = 4);
ANALYZE ops_many;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 4;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT bloom_union_agg(f), bloom_intersect_agg(f) FROM ops_many;
SELECT bloom_union_agg(f) = ops_build(0, 19999, 20000) AS parallel_union,
       bloom_intersect_agg(f) = (SELECT bloom_intersect_agg(f ORDER BY g) FROM ops_many)
         AS parallel_intersect
FROM ops_many;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

--
-- Folding: filters whose block counts differ by a whole factor, all else
-- equal, are folded to the smaller; the result is bit for bit the filter
-- built at the smaller size
--
SELECT ops_fill(ops_shape(20, 5, 1000), 1, 300) | ops_fill(ops_shape(10, 5, 500), 301, 500)
     = ops_fill(ops_shape(10, 5, 500), 1, 500) AS folded_by_two,
       ops_fill(ops_shape(10, 5, 500), 1, 300) | ops_fill(ops_shape(30, 5, 1500), 301, 500)
     = ops_fill(ops_shape(10, 5, 500), 1, 500) AS folded_by_three,
       ops_fill(ops_shape(7, 5), 1, 300) | ops_fill(ops_shape(112, 5), 301, 500)
     = ops_fill(ops_shape(7, 5), 1, 500) AS folded_by_sixteen;
SELECT ops_fill(ops_shape(20, 5), 1, 300) & ops_fill(ops_shape(10, 5), 201, 500)
     = ops_fill(ops_shape(10, 5), 1, 300) & ops_fill(ops_shape(10, 5), 201, 500)
       AS folded_intersection;
-- the result has the smaller filter's size and capacity
SELECT nblocks, design_capacity
FROM bloom_info(ops_fill(ops_shape(20, 5, 1000), 1, 300) | ops_fill(ops_shape(10, 5, 500), 301, 500));
-- the aggregates fold both ways: the state down to a smaller input, and a
-- larger input down to the state
SELECT bloom_union_agg(f) = ops_fill(ops_shape(10, 5, 500), 1, 1500) AS folded_agg,
       bloom_intersect_agg(f) = (ops_fill(ops_shape(10, 5, 500), 1, 1000)
                                 & ops_fill(ops_shape(10, 5, 500), 501, 1500)
                                 & ops_fill(ops_shape(10, 5, 500), 1, 1)) AS folded_intersect_agg
FROM (VALUES (ops_fill(ops_shape(30, 5, 1500), 1, 1000)),
             (ops_fill(ops_shape(10, 5, 500), 501, 1500)),
             (ops_fill(ops_shape(20, 5, 1000), 1, 1))) v(f);
-- same size, different design capacity or rate: the result records the
-- larger capacity (then the smaller rate), whatever the order
SELECT design_capacity, design_false_positive_rate
FROM bloom_info(ops_fill(ops_shape(39, 6, 1999), 1, 10) | ops_fill(ops_shape(39, 6, 2000), 11, 20));
SELECT design_capacity, design_false_positive_rate
FROM bloom_info(ops_fill(ops_shape(39, 6, 2000), 11, 20) | ops_fill(ops_shape(39, 6, 1999), 1, 10));
SELECT design_capacity, design_false_positive_rate
FROM bloom_info(ops_shape(39, 6, 2000, 0.02) & ops_shape(39, 6, 2000, 0.01));
SELECT bloom_union_agg(f) = ops_shape(39, 6, 2000, 0.01) AS any_order
FROM (VALUES (ops_shape(39, 6, 1999, 0.005)), (ops_shape(39, 6, 2000, 0.02)),
             (ops_shape(39, 6, 2000, 0.01)), (ops_shape(78, 6, 5000))) v(f);

--
-- Filters of different shapes cannot be combined; the detail shows both
--
-- size: 39 blocks is no multiple of 20
SELECT ops_shape(20, 6) | ops_shape(39, 6);
-- hash count
SELECT ops_shape(20, 5) & ops_shape(20, 6);
-- a multiple, but another hash count: no folding
SELECT ops_shape(20, 5) | ops_shape(40, 6);
-- seed
SELECT ops_shape(20, 5) | ops_shape(20, 5, seed => 1);
-- key family
SELECT ops_fill(ops_shape(20, 5), 1, 10) | bloom_add(ops_shape(20, 5), 'x'::text);
SELECT bloom_union_agg(f)
FROM (VALUES (ops_fill(ops_shape(20, 5), 1, 10)), (bloom_add(ops_shape(20, 5), 'x'::text))) v(f);
SELECT bloom_intersect_agg(f) FROM (VALUES (ops_shape(20, 5)), (ops_shape(39, 6))) v(f);
-- and from bloom_create: sizes that give different shapes
\set VERBOSITY terse
SELECT bloom_create(1000, 0.01) | bloom_create(1000, 0.0001);
\set VERBOSITY default
-- the estimates need combinable filters too
SELECT bloom_union_cardinality(ops_shape(20, 5), ops_shape(39, 5));
SELECT bloom_intersect_cardinality(ops_shape(20, 5), ops_shape(39, 5));

--
-- Equality and the hash operator class
--
SELECT ops_build(1, 10, 1000) = ops_build(1, 10, 1000) AS eq,
       ops_build(1, 10, 1000) <> ops_build(1, 10, 1000) AS ne,
       ops_build(1, 10, 1000) = ops_build(1, 11, 1000) AS eq_other_keys,
       ops_build(1, 10, 1000) <> ops_build(1, 11, 1000) AS ne_other_keys,
       ops_shape(20, 5) = ops_shape(40, 5) AS eq_other_size,
       ops_shape(20, 5, 1000) = ops_shape(20, 5, 1001) AS eq_other_capacity,
       bloom_create(1000) = bloom_add(bloom_create(1000), NULL::int) AS eq_null_key,
       ops_build(1, 10, 1000) = NULL AS eq_null;
SELECT bloom_eq(ops_build(1, 10, 1000), ops_build(1, 10, 1000)) AS bloom_eq,
       bloom_ne(ops_build(1, 10, 1000), ops_build(1, 10, 1000)) AS bloom_ne;
SELECT bloom_value_hash(ops_build(1, 10, 1000)) = bloom_value_hash(ops_build(1, 10, 1000)) AS same_hash,
       bloom_value_hash_extended(ops_build(1, 10, 1000), 1)
     = bloom_value_hash_extended(ops_build(1, 10, 1000), 1) AS same_hash_extended,
       bloom_value_hash_extended(ops_build(1, 10, 1000), 0) & 4294967295
     = bloom_value_hash(ops_build(1, 10, 1000))::bigint & 4294967295 AS low_bits_match_when_unseeded,
       bloom_value_hash(ops_build(1, 10, 1000)) <> bloom_value_hash(ops_build(1, 11, 1000)) AS differs;
-- DISTINCT, GROUP BY, UNION and joins hash bloom values
CREATE TABLE ops_dup AS
  SELECT x, ops_build(1, x % 3, 100) AS f FROM generate_series(1, 30) AS x;
EXPLAIN (COSTS OFF) SELECT DISTINCT f FROM ops_dup;
SELECT count(*) AS distinct_filters FROM (SELECT DISTINCT f FROM ops_dup) s;
SELECT count(*) AS groups, sum(n) AS rows FROM (SELECT f, count(*) AS n FROM ops_dup GROUP BY f) s;
SELECT count(*) AS union_rows FROM (SELECT f FROM ops_dup UNION SELECT f FROM ops_dup) s;
SET enable_nestloop = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ops_dup a JOIN ops_dup b ON a.f = b.f;
SELECT count(*) AS join_rows FROM ops_dup a JOIN ops_dup b ON a.f = b.f;
RESET enable_nestloop;
RESET enable_mergejoin;
-- a stored (TOASTed) filter equals its in-memory self
CREATE TABLE ops_big AS SELECT ops_build(1, 1000, 100000) AS f;
SELECT pg_column_size(f) > 100000 AS stored_out_of_line, f = ops_build(1, 1000, 100000) AS eq
FROM ops_big;

--
-- bloom_add_new: the filter with the key added, and whether the key was new
--
SELECT * FROM bloom_add_new(bloom_create(1000), 42) WHERE false;
SELECT added, filter = bloom_add(bloom_create(1000), 42) AS same_as_bloom_add
FROM bloom_add_new(bloom_create(1000), 42);
SELECT added FROM bloom_add_new(bloom_add(bloom_create(1000), 42), 42);
SELECT added FROM bloom_add_new(bloom_add(bloom_create(1000), 42), 42::bigint);
SELECT added, filter = ops_build(1, 10, 1000) AS unchanged
FROM bloom_add_new(ops_build(1, 10, 1000), NULL::int);
SELECT filter IS NULL AS filter_null, added IS NULL AS added_null
FROM bloom_add_new(NULL::bloom, 42);
SELECT added FROM bloom_add_new(ops_build(1, 10, 1000), 'x'::text);
-- the first key of an empty filter is always new, and fixes the family
SELECT added, (SELECT key_family FROM bloom_info(filter)) FROM bloom_add_new(bloom_create(1000), 'x'::text);
-- counting new keys over a stream: every key added is in the filter, each
-- new key reports added, and repeats never do
WITH RECURSIVE stream(i, f, new_keys) AS (
  SELECT 0, bloom_create(1000), 0
  UNION ALL
  SELECT i + 1, r.filter, new_keys + r.added::int
  FROM stream, LATERAL bloom_add_new(f, (i % 300) + 1) r
  WHERE i < 600
)
SELECT new_keys BETWEEN 295 AND 300 AS about_300_new,
       (SELECT bool_and(bloom_contains(f, x)) FROM generate_series(1, 300) x) AS all_present
FROM stream WHERE i = 600;
-- the argument is not changed in place
SELECT f = ops_build(1, 10, 1000) AS argument_unchanged
FROM (SELECT ops_build(1, 10, 1000) AS f) s, LATERAL bloom_add_new(s.f, 11) r;

DROP TABLE ops_parts, ops_many, ops_dup, ops_big;
DROP FUNCTION ops_build(int, int, bigint, float8);
DROP FUNCTION ops_fill(bloom, int, int);
DROP FUNCTION ops_shape(int, int, bigint, float8, bigint);
DROP FUNCTION ops_le(bytea);
