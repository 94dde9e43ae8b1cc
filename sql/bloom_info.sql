--
-- bloom_info: the header and fill of a filter, the estimates made from the
-- fill (distinct keys, current false-positive rate, union and intersection
-- sizes), over-capacity reports, and bloom_size.
--
\set VERBOSITY default
SET extra_float_digits = 0;

-- a filter of the integers in [lo, hi]
CREATE FUNCTION info_build(lo int, hi int, capacity bigint, rate float8 DEFAULT 0.01)
RETURNS bloom LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT bloom_agg(x, capacity, rate) FROM generate_series(lo, hi) AS x
$$;

-- The sizes bloom_create picks are tested in bloom_create.  Where the
-- output would show them, this test writes the header itself (bloom.h gives
-- the format): an empty filter of nblocks blocks and k hashes.
CREATE FUNCTION info_le(b bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT string_agg(substring(b FROM i FOR 1), ''::bytea ORDER BY i DESC)
  FROM generate_series(1, length(b)) AS i
$$;
CREATE FUNCTION info_shape(nblocks int, k int, capacity bigint, rate float8 DEFAULT 0.01)
RETURNS bloom LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT ('\x424c4d46010101'::bytea || set_byte('\x00'::bytea, 0, k)
          || info_le(int8send(0)) || info_le(int8send(nblocks::bigint))
          || info_le(int8send(capacity)) || info_le(float8send(rate))
          || decode(repeat('00', 4 + 64 + 16 + 64 * nblocks), 'hex'))::bloom
$$;
-- f with the integers in [lo, hi] added
CREATE FUNCTION info_fill(f bloom, lo int, hi int) RETURNS bloom
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
  FOR i IN lo..hi LOOP
    f := bloom_add(f, i);
  END LOOP;
  RETURN f;
END
$$;

-- |estimate / truth - 1| < tolerance
CREATE FUNCTION info_close(estimate float8, truth float8, tolerance float8)
RETURNS boolean LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT abs(estimate / truth - 1) < tolerance
$$;

--
-- bloom_info: one row with named columns
--
\x on
SELECT * FROM bloom_info(info_shape(20, 5, 1000));
SELECT version, layout, hash_scheme, nblocks, nbits, nbytes, nhashes, seed, key_family,
       design_capacity, design_false_positive_rate, bits_set, fill_ratio,
       round(estimated_keys::numeric, 6) AS estimated_keys,
       round(current_false_positive_rate::numeric, 8) AS current_false_positive_rate,
       over_capacity
FROM bloom_info(info_fill(info_shape(20, 5, 1000), 1, 1000));
SELECT version, layout, hash_scheme, seed, key_family, design_capacity, design_false_positive_rate,
       bits_set > 0 AS bits_set, fill_ratio BETWEEN 0.3 AND 0.5 AS fill_ratio,
       info_close(estimated_keys, 1000, 0.05) AS estimated_keys,
       current_false_positive_rate BETWEEN 0.005 AND 0.015 AS current_false_positive_rate,
       over_capacity
FROM bloom_info(info_build(1, 1000, 1000));
\x off
-- the columns agree with each other and with the stored value
SELECT nbits = nblocks * 512 AS nbits, nbytes = 4 + 124 + nblocks * 64 AS nbytes,
       nbytes = octet_length(f::bytea) + 4 AS nbytes_is_value_size,
       fill_ratio = bits_set::float8 / nbits AS fill_ratio,
       estimated_keys = bloom_cardinality(f) AS cardinality,
       current_false_positive_rate = bloom_false_positive_rate(f) AS rate
FROM (SELECT info_build(1, 700, 1000) AS f) s, LATERAL bloom_info(f);
SELECT key_family FROM bloom_info(bloom_add(bloom_create(10), 'x'::text));
SELECT key_family FROM bloom_info(bloom_add(bloom_create(10), 1::smallint));
SELECT bloom_info(NULL) IS NULL AS strict, bloom_cardinality(NULL) IS NULL AS strict,
       bloom_false_positive_rate(NULL) IS NULL AS strict;
-- an empty filter
SELECT bits_set, fill_ratio, estimated_keys, current_false_positive_rate, over_capacity
FROM bloom_info(bloom_create(1000));
SELECT bloom_cardinality(bloom_agg(x)), bloom_false_positive_rate(bloom_agg(x))
FROM generate_series(1, 0) AS x;

--
-- Estimated distinct keys: within 5% of the truth from 1,000 to 1,000,000
-- keys, at the design capacity and below it, at several rates (10,000,000
-- is checked by test/bench/estimate_check.c)
--
SELECT n, capacity, rate, info_close(bloom_cardinality(f), n, 0.05) AS within_5pct
FROM (VALUES (1000, 1000, 0.01), (10000, 10000, 0.01), (100000, 100000, 0.01),
             (1000000, 1000000, 0.01),
             (1000, 1000000, 0.01), (10000, 100000, 0.01), (50000, 100000, 0.01),
             (1000, 1000, 0.1), (100000, 100000, 0.1),
             (1000, 1000, 0.001), (100000, 100000, 0.001)) v(n, capacity, rate),
     LATERAL info_build(1, n, capacity, rate) AS f
ORDER BY rate DESC, capacity, n;
-- unsized bloom_agg: sized for what it saw
SELECT n, info_close(bloom_cardinality(bloom_agg(x)), n, 0.05) AS within_5pct
FROM (VALUES (1000), (10000), (100000)) v(n), LATERAL generate_series(1, n) AS x
GROUP BY n ORDER BY n;
-- duplicates count once
SELECT info_close(bloom_cardinality(bloom_agg(x % 5000, 10000, 0.01)), 5000, 0.05) AS within_5pct
FROM generate_series(1, 50000) AS x;
-- text keys
SELECT info_close(bloom_cardinality(bloom_agg('key ' || x, 20000, 0.01)), 20000, 0.05) AS within_5pct
FROM generate_series(1, 20000) AS x;

--
-- Current false-positive rate: read off the bits, it matches the rate
-- measured with 100,000 keys never added, and at the design capacity it is
-- close to the design rate
--
SELECT capacity, rate,
       info_close(bloom_false_positive_rate(f),
                  (SELECT count(*) FILTER (WHERE bloom_contains(f, -x))::float8 / 100000
                   FROM generate_series(1, 100000) AS x), 0.15) AS matches_measured,
       info_close(bloom_false_positive_rate(f), rate, 0.15) AS near_design_rate
FROM (VALUES (10000, 0.01), (10000, 0.05), (2000, 0.1)) v(capacity, rate),
     LATERAL info_build(1, capacity, capacity, rate) AS f
ORDER BY rate;
-- below capacity the rate is lower, above it higher
SELECT bloom_false_positive_rate(info_build(1, 5000, 10000)) < 0.002 AS half_full,
       bloom_false_positive_rate(info_build(1, 20000, 10000)) > 0.05 AS twice_over;

--
-- Over capacity: true only when the fill is more than the design capacity
-- plausibly explains, so a filter right at its capacity is not flagged
--
SELECT n, over_capacity
FROM (VALUES (5000), (10000), (10500), (15000)) v(n),
     LATERAL bloom_info(info_build(1, n, 10000))
ORDER BY n;
-- a filter with every bit set: any number of keys would explain it
CREATE TABLE info_full AS SELECT info_fill(info_shape(1, 1, 1, 0.5), 1, 20000) AS f;
SELECT nblocks, fill_ratio, estimated_keys, current_false_positive_rate, over_capacity
FROM info_full, LATERAL bloom_info(f);
SELECT bloom_intersect_cardinality(f, info_fill(info_shape(1, 1, 1, 0.5), 1, 10)) IS NULL
  AS saturated_union_says_nothing
FROM info_full;

--
-- The aggregates report a result over its design capacity with a NOTICE
--
CREATE TABLE info_days AS
  SELECT d, info_fill(info_shape(98, 6, 5000), d * 1000, d * 1000 + 999) AS f
  FROM generate_series(1, 8) AS d;
-- 5 days of 1,000 keys fit in 5,000
SELECT bloom_union_agg(f) IS NOT NULL AS fits FROM info_days WHERE d <= 5;
-- 8 days do not
SELECT bloom_union_agg(f) IS NOT NULL AS over FROM info_days;
SELECT d <= 4 AS first_half, bloom_union_agg(f) IS NOT NULL AS fits
FROM info_days GROUP BY 1 ORDER BY 1;
-- an intersection of overfull filters is overfull too
SELECT bloom_intersect_agg(f) IS NOT NULL AS over
FROM (VALUES (info_fill(info_shape(98, 6, 5000), 1, 10000)),
             (info_fill(info_shape(98, 6, 5000), 1, 10000))) v(f);

--
-- Union and intersection sizes of two filters, from the fills: within 10%
-- on two sets of 100,000 keys overlapping by half, a quarter and a tenth;
-- the fill of the AND overestimates the intersection
--
SELECT overlap,
       info_close(bloom_union_cardinality(a, b), 200000 - overlap, 0.10) AS union_within_10pct,
       info_close(bloom_intersect_cardinality(a, b), overlap, 0.10) AS intersect_within_10pct,
       bloom_cardinality(a & b) > overlap * 1.10 AS and_fill_overestimates
FROM (VALUES (50000), (25000), (10000)) v(overlap),
     LATERAL info_build(1, 100000, 200000) AS a,
     LATERAL info_build(100001 - overlap, 200000 - overlap, 200000) AS b
ORDER BY overlap DESC;
-- the union size is the size of the union filter, computed without it
SELECT bloom_union_cardinality(a, b) = bloom_cardinality(a | b) AS same
FROM info_build(1, 6000, 20000) AS a, info_build(4001, 10000, 20000) AS b;
-- identical and disjoint sets
SELECT info_close(bloom_intersect_cardinality(a, a), 10000, 0.10) AS identical,
       bloom_intersect_cardinality(a, info_build(20001, 30000, 20000)) < 500 AS disjoint
FROM info_build(1, 10000, 20000) AS a;
-- with an empty filter
SELECT bloom_union_cardinality(bloom_create(20000), a) = bloom_cardinality(a) AS union_empty,
       bloom_intersect_cardinality(bloom_create(20000), a) AS intersect_empty
FROM info_build(1, 10000, 20000) AS a;
-- folded: 1,000 and 500 give 20 and 10 blocks
SELECT info_close(bloom_union_cardinality(info_build(1, 300, 1000), info_build(201, 500, 500)),
                  500, 0.10) AS folded_union,
       info_close(bloom_intersect_cardinality(info_build(1, 300, 1000), info_build(201, 500, 500)),
                  100, 0.25) AS folded_intersect;
SELECT bloom_union_cardinality(NULL, bloom_create(10)) IS NULL AS strict,
       bloom_intersect_cardinality(bloom_create(10), NULL) IS NULL AS strict;

--
-- bloom_size: what bloom_create would make, before making it
--
SELECT * FROM bloom_size(1000) WHERE false;
SELECT capacity, rate,
       s.nbits = 512 * s.nblocks AS nbits, s.nbytes = 4 + 124 + 64 * s.nblocks AS nbytes,
       s.nbits::float8 / capacity BETWEEN -1.44 * log(2, rate) AND -1.44 * log(2, rate) * 1.3
         OR capacity < 100 AS bits_per_key_near_optimum,
       s.expected_false_positive_rate <= rate AS within_rate,
       (s.nbytes, s.nbits, s.nhashes, s.nblocks)
         = (i.nbytes, i.nbits, i.nhashes, i.nblocks) AS matches_bloom_create
FROM (VALUES (1, 0.01), (1000, 0.01), (1000000, 0.01), (1000000, 0.001),
             (100000000, 0.05)) v(capacity, rate),
     LATERAL bloom_size(capacity, rate) AS s,
     LATERAL bloom_info(bloom_create(capacity, rate)) AS i
ORDER BY capacity, rate;
SELECT bloom_size(NULL) IS NULL AS strict;
-- the errors of bloom_create (whose test checks their hints)
\set VERBOSITY terse
SELECT * FROM bloom_size(0);
SELECT * FROM bloom_size(1000, 1);
SELECT * FROM bloom_size(1000000000, 1e-9);
\set VERBOSITY default

DROP TABLE info_days, info_full;
DROP FUNCTION info_build(int, int, bigint, float8);
DROP FUNCTION info_fill(bloom, int, int);
DROP FUNCTION info_shape(int, int, bigint, float8);
DROP FUNCTION info_le(bytea);
DROP FUNCTION info_close(float8, float8, float8);
