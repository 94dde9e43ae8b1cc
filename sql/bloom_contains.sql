--
-- bloom_contains: no false negatives, the false-positive rate that
-- bloom_create promises, NULLs, and functions that never change their
-- arguments (DESIGN.md, promises 1, 3, 4 and 5).
--

-- 100,000 keys of each main family, and 1,000,000 keys that are not in it
CREATE TABLE contains_keys AS
SELECT i,
       i::bigint * 1000000007 AS b,
       md5(i::text) AS t,
       decode(md5(i::text), 'hex') AS by,
       md5(i::text)::uuid AS u,
       i / 1000.0 AS n,
       i / 7.0::float8 AS d,
       '2000-01-01'::timestamp + i * interval '1 second' AS ts
FROM generate_series(1, 100000) i;
CREATE TABLE contains_absent AS
SELECT i FROM generate_series(100001, 1100000) i;

--
-- no false negatives: every key added is found, for the unsized and the
-- sized aggregate alike
--
SELECT count(*) FILTER (WHERE bloom_contains(fi, i)) AS integer,
       count(*) FILTER (WHERE bloom_contains(fb, b)) AS bigint,
       count(*) FILTER (WHERE bloom_contains(ft, t)) AS text,
       count(*) FILTER (WHERE bloom_contains(fby, by)) AS bytea,
       count(*) FILTER (WHERE bloom_contains(fu, u)) AS uuid,
       count(*) FILTER (WHERE bloom_contains(fn, n)) AS numeric,
       count(*) FILTER (WHERE bloom_contains(fd, d)) AS float8,
       count(*) FILTER (WHERE bloom_contains(fts, ts)) AS timestamp
FROM contains_keys,
     (SELECT bloom_agg(i) AS fi, bloom_agg(b) AS fb, bloom_agg(t) AS ft,
             bloom_agg(by) AS fby, bloom_agg(u) AS fu, bloom_agg(n) AS fn,
             bloom_agg(d) AS fd, bloom_agg(ts) AS fts
      FROM contains_keys) f;
SELECT count(*) FILTER (WHERE bloom_contains(fi, i)) AS integer,
       count(*) FILTER (WHERE bloom_contains(fb, b)) AS bigint,
       count(*) FILTER (WHERE bloom_contains(ft, t)) AS text,
       count(*) FILTER (WHERE bloom_contains(fby, by)) AS bytea,
       count(*) FILTER (WHERE bloom_contains(fu, u)) AS uuid,
       count(*) FILTER (WHERE bloom_contains(fn, n)) AS numeric,
       count(*) FILTER (WHERE bloom_contains(fd, d)) AS float8,
       count(*) FILTER (WHERE bloom_contains(fts, ts)) AS timestamp
FROM contains_keys,
     (SELECT bloom_agg(i, 100000, 0.001) AS fi, bloom_agg(b, 100000, 0.001) AS fb,
             bloom_agg(t, 100000, 0.001) AS ft, bloom_agg(by, 100000, 0.001) AS fby,
             bloom_agg(u, 100000, 0.001) AS fu, bloom_agg(n, 100000, 0.001) AS fn,
             bloom_agg(d, 100000, 0.001) AS fd, bloom_agg(ts, 100000, 0.001) AS fts
      FROM contains_keys) f;
-- the same filters after a round trip through a table (TOASTed) and
-- through the text and bytea forms
CREATE TABLE contains_stored AS
SELECT bloom_agg(i) AS fi, bloom_agg(t) AS ft, bloom_agg(u) AS fu FROM contains_keys;
SELECT pg_column_compression(fi) IS NULL AS not_compressed,
       pg_column_size(fi) = octet_length(fi::bytea) AS stored_uncompressed
FROM contains_stored;
WITH forms AS MATERIALIZED (
    SELECT fi::text::bloom AS fit, fi::bytea::bloom AS fib FROM contains_stored
)
SELECT count(*) FILTER (WHERE bloom_contains(fi, i)) AS integer,
       count(*) FILTER (WHERE bloom_contains(ft, t)) AS text,
       count(*) FILTER (WHERE bloom_contains(fu, u)) AS uuid,
       count(*) FILTER (WHERE bloom_contains(fit, i)) AS integer_text_form,
       count(*) FILTER (WHERE bloom_contains(fib, i)) AS integer_bytea_form
FROM contains_keys, contains_stored, forms;

--
-- the false-positive rate at full capacity: 100,000 keys added to
-- bloom_create(100000, rate), 1,000,000 other keys probed.  Hashing is
-- deterministic, so the count is exact; "within_rate" allows for sampling
-- error (three standard deviations of a binomial count at the rate).
--
SELECT rate,
       fp AS false_positives,
       fp <= 1000000 * rate + 3 * sqrt(1000000 * rate) AS within_rate
FROM (SELECT rate, count(*) FILTER (WHERE bloom_contains(f, a.i)) AS fp
      FROM (SELECT rate, bloom_agg(k.i, 100000, rate) AS f
            FROM contains_keys k, (VALUES (0.01::float8), (0.001), (0.0001)) v(rate)
            GROUP BY rate) s,
           contains_absent a
      GROUP BY rate) r
ORDER BY rate DESC;
-- text keys, and the unsized aggregate (sized for its 100,000 distinct keys
-- at 0.01)
SELECT rate,
       fp AS false_positives,
       fp <= 1000000 * rate + 3 * sqrt(1000000 * rate) AS within_rate
FROM (SELECT rate, count(*) FILTER (WHERE bloom_contains(f, md5(a.i::text))) AS fp
      FROM (SELECT rate, bloom_agg(k.t, 100000, rate) AS f
            FROM contains_keys k, (VALUES (0.01::float8), (0.001), (0.0001)) v(rate)
            GROUP BY rate) s,
           contains_absent a
      GROUP BY rate) r
ORDER BY rate DESC;
SELECT fp AS false_positives,
       fp <= 1000000 * 0.01 + 3 * sqrt(1000000 * 0.01) AS within_rate
FROM (SELECT count(*) FILTER (WHERE bloom_contains(f, a.i)) AS fp
      FROM (SELECT bloom_agg(i) AS f FROM contains_keys) s, contains_absent a) r;
-- keys added through bloom_add one by one give the same answers
CREATE TABLE contains_added AS SELECT bloom_create(1000, 0.01) AS f;
DO $$
BEGIN
    FOR k IN 1..1000 LOOP
        UPDATE contains_added SET f = bloom_add(f, k);
    END LOOP;
END
$$;
SELECT found, fp AS false_positives,
       fp <= 100000 * 0.01 + 3 * sqrt(100000 * 0.01) AS within_rate
FROM (SELECT count(*) FILTER (WHERE bloom_contains(f, i) AND i <= 1000) AS found,
             count(*) FILTER (WHERE bloom_contains(f, i) AND i > 1000) AS fp
      FROM contains_added, generate_series(1, 101000) i) s;

--
-- NULLs
--
CREATE TABLE contains_nulls AS SELECT bloom_add(bloom_create(100), 1) AS f;
SELECT bloom_add(f, NULL::int)::bytea = f::bytea AS add_null_unchanged,
       bloom_add(f, NULL::text)::bytea = f::bytea AS add_null_other_family_unchanged,
       bloom_add(NULL, 1) IS NULL AS add_to_null_is_null,
       bloom_add(NULL::bloom, NULL::int) IS NULL AS add_null_to_null_is_null,
       bloom_contains(f, NULL::int) IS NULL AS contains_null_is_null,
       bloom_contains(f, NULL::text) IS NULL AS contains_null_other_family_is_null,
       bloom_contains(NULL, 1) IS NULL AS null_contains_is_null,
       bloom_contains(bloom_create(100), NULL::int) IS NULL AS empty_contains_null_is_null
FROM contains_nulls;
-- an untyped NULL is a NULL text key: the filter unchanged
SELECT bloom_add(f, NULL)::bytea = f::bytea AS unchanged FROM contains_nulls;
-- a NULL key leaves an empty filter without a family
SELECT bloom_add(bloom_create(100), NULL::int)::bytea = bloom_create(100)::bytea AS still_empty,
       bloom_contains(bloom_add(bloom_create(100), NULL::int), 'x'::text) AS text_probe_allowed;
-- over a nullable column nothing is lost
CREATE TABLE contains_nullable (k int);
INSERT INTO contains_nullable VALUES (1), (NULL), (2), (NULL);
UPDATE contains_nulls SET f = bloom_add(f, k) FROM contains_nullable WHERE k IS NULL;
SELECT f IS NOT NULL AS kept, bloom_contains(f, 1) AS found FROM contains_nulls;

--
-- values are values: bloom_add returns a copy and never changes its argument
--
CREATE TABLE contains_vals AS SELECT bloom_add(bloom_create(100), 1) AS f;
SELECT f::bytea = g::bytea AS same, bloom_contains(f, 2) AS f_has_2, bloom_contains(g, 2) AS g_has_2
FROM (SELECT f, bloom_add(f, 2) AS g FROM contains_vals) s;
-- the same datum twice in one row
SELECT bloom_contains(bloom_add(f, 3), 3) AS added,
       bloom_contains(f, 3) AS original_after,
       bloom_contains(bloom_add(f, 4), 3) AS other_copy
FROM (SELECT f FROM contains_vals) s;
SELECT bloom_contains(a[1], 5) AS first, bloom_contains(a[2], 5) AS second
FROM (SELECT ARRAY[bloom_add(f, 5), f] AS a FROM contains_vals) s;
-- a stored, TOASTed filter: the copy gets the key, the table keeps its value
CREATE TABLE contains_big_vals AS SELECT bloom_add(bloom_create(100000), 1) AS f;
SELECT bloom_contains(bloom_add(f, 2), 2) AS copy_has_2,
       bloom_contains(f, 2) AS stored_has_2
FROM contains_big_vals;
SELECT bloom_contains(f, 2) AS stored_has_2_later FROM contains_big_vals;
-- adding a key twice changes nothing the second time
SELECT bloom_add(bloom_add(f, 2), 2)::bytea = bloom_add(f, 2)::bytea AS idempotent,
       bloom_add(bloom_add(f, 2), 3)::bytea = bloom_add(bloom_add(f, 3), 2)::bytea AS order_free
FROM contains_vals;
-- plpgsql variables that hold the same value
DO $$
DECLARE
    f bloom := bloom_add(bloom_create(100), 0);
    g bloom;
    h bloom;
    before bytea := f::bytea;
    pair bloom[];
BEGIN
    g := f;
    FOR i IN 1..50 LOOP
        h := bloom_add(f, i);
        IF NOT bloom_contains(h, i) THEN
            RAISE EXCEPTION 'key % missing from the copy', i;
        END IF;
        IF bloom_contains(f, i) OR bloom_contains(g, i) THEN
            RAISE EXCEPTION 'bloom_add(f, %) changed f', i;
        END IF;
        g := bloom_add(g, i);
    END LOOP;
    IF f::bytea <> before THEN
        RAISE EXCEPTION 'f changed';
    END IF;
    FOR i IN 1..50 LOOP
        IF NOT bloom_contains(g, i) THEN
            RAISE EXCEPTION 'key % missing from g', i;
        END IF;
    END LOOP;
    pair := ARRAY[f, f];
    pair[1] := bloom_add(pair[1], 99);
    IF bloom_contains(pair[2], 99) OR NOT bloom_contains(pair[1], 99) THEN
        RAISE EXCEPTION 'array elements share storage';
    END IF;
    RAISE NOTICE 'plpgsql: f unchanged, g holds all 50 keys';
END
$$;
-- keep a stored filter current, as the design shows
CREATE TABLE contains_order_filters AS
SELECT region, bloom_agg(i) AS f
FROM (SELECT i % 3 AS region, i FROM generate_series(1, 3000) i) s
GROUP BY region;
UPDATE contains_order_filters SET f = bloom_add(f, 100000) WHERE region = 1;
SELECT region, bloom_contains(f, 100000) AS has_new_key, bloom_contains(f, 2997 + region) AS has_old_key
FROM contains_order_filters ORDER BY region;

DROP TABLE contains_keys, contains_absent, contains_stored, contains_added, contains_nulls,
    contains_nullable, contains_vals, contains_big_vals, contains_order_filters;
