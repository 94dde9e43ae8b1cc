--
-- bloom_agg: NULL keys, no rows, agreement with bloom_create + bloom_add,
-- self-sizing, argument errors and many small groups (DESIGN.md, promise 3
-- and "Aggregates mutate internal state").
--

-- the SQLSTATE of a statement, or 'ok'
CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;

-- the key family recorded in a filter's header (bloom.h: 64 bytes at
-- payload offset 44, NUL-padded)
CREATE FUNCTION pg_temp.family(f bloom) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT convert_from(rtrim(substring(f::bytea FROM 45 FOR 64), '\x00'::bytea), 'UTF8')
$$;

-- the capacity recorded in a filter's header (little-endian, offset 24)
CREATE FUNCTION pg_temp.capacity(f bloom) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT sum(get_byte(f::bytea, 24 + i)::numeric * 256::numeric ^ i)::bigint
    FROM generate_series(0, 7) i
$$;

-- bloom_create(capacity, rate) followed by bloom_add of 1..n
CREATE FUNCTION pg_temp.fold_int(n int, capacity bigint, rate float8) RETURNS bloom
LANGUAGE plpgsql AS $$
DECLARE
    f bloom := bloom_create(capacity, rate);
BEGIN
    FOR i IN 1..n LOOP
        f := bloom_add(f, i);
    END LOOP;
    RETURN f;
END
$$;

-- the same over md5(1..n)
CREATE FUNCTION pg_temp.fold_text(n int, capacity bigint, rate float8) RETURNS bloom
LANGUAGE plpgsql AS $$
DECLARE
    f bloom := bloom_create(capacity, rate);
BEGIN
    FOR i IN 1..n LOOP
        f := bloom_add(f, md5(i::text));
    END LOOP;
    RETURN f;
END
$$;

--
-- NULL keys are skipped
--
SELECT (SELECT bloom_agg(k) FROM (VALUES (1), (NULL), (2)) v(k))::bytea =
       (SELECT bloom_agg(k) FROM (VALUES (1), (2)) v(k))::bytea AS unsized,
       (SELECT bloom_agg(k, 100, 0.01) FROM (VALUES (1), (NULL), (2)) v(k))::bytea =
       (SELECT bloom_agg(k, 100, 0.01) FROM (VALUES (1), (2)) v(k))::bytea AS sized,
       (SELECT bloom_agg(k, 100, 0.01) FROM (VALUES (NULL::int), (1), (NULL), (2), (NULL)) v(k))::bytea =
       pg_temp.fold_int(2, 100, 0.01)::bytea AS sized_as_fold;
-- only NULL keys: the same as no rows at all
SELECT (SELECT bloom_agg(k) FROM (VALUES (NULL::int), (NULL)) v(k))::bytea =
       (SELECT bloom_agg(k) FROM (VALUES (1)) v(k) WHERE false)::bytea AS unsized,
       (SELECT bloom_agg(k, 100, 0.01) FROM (VALUES (NULL::int), (NULL)) v(k))::bytea =
       (SELECT bloom_agg(k, 100, 0.01) FROM (VALUES (1)) v(k) WHERE false)::bytea AS sized;

--
-- no rows: an empty filter, not NULL, that contains nothing and knows its
-- key family
--
CREATE TABLE agg_no_rows (k int, t text, cap bigint);
SELECT f IS NOT NULL AS not_null,
       bloom_contains(f, 1) AS contains_1,
       bloom_contains(f, 0) AS contains_0,
       pg_temp.family(f) AS family,
       pg_temp.capacity(f) AS capacity
FROM (SELECT bloom_agg(k) AS f FROM agg_no_rows) s;
SELECT bloom_contains(f, 'x'::text) FROM (SELECT bloom_agg(k) AS f FROM agg_no_rows) s;
SELECT f IS NOT NULL AS not_null,
       bloom_contains(f, 'x'::text) AS contains_x,
       pg_temp.family(f) AS family
FROM (SELECT bloom_agg(t) AS f FROM agg_no_rows) s;
SELECT bloom_contains(f, 1) FROM (SELECT bloom_agg(t) AS f FROM agg_no_rows) s;
-- the anti-join pre-check stays right: no key is reported present
SELECT count(*) FILTER (WHERE bloom_contains(f, i)) AS maybe_present
FROM (SELECT bloom_agg(k) AS f FROM agg_no_rows) s, generate_series(1, 10000) i;
-- sized, over no rows: bloom_create(capacity, rate), with the key family
-- filled in (bytes 1-44 are the header before the family, bytes from 109
-- on the reserved field and the bits)
SELECT octet_length(a::bytea) = octet_length(c::bytea) AS same_size,
       substring(a::bytea FROM 1 FOR 44) = substring(c::bytea FROM 1 FOR 44) AS same_geometry,
       substring(a::bytea FROM 109) = substring(c::bytea FROM 109) AS same_bits,
       pg_temp.family(a) AS family,
       pg_temp.family(c) AS create_family,
       bloom_contains(a, 1) AS contains_1
FROM (SELECT bloom_agg(k, 5000, 0.001) AS a FROM agg_no_rows) s,
     (SELECT bloom_create(5000, 0.001) AS c) c;
SELECT bloom_contains(f, 'x'::text) FROM (SELECT bloom_agg(k, 5000, 0.001) AS f FROM agg_no_rows) s;
-- with parameters, in a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE agg_no_rows(bigint, float8) AS
SELECT substring(a::bytea FROM 1 FOR 44) = substring(c::bytea FROM 1 FOR 44)
       AND substring(a::bytea FROM 109) = substring(c::bytea FROM 109)
       AND octet_length(a::bytea) = octet_length(c::bytea) AS same_as_create,
       pg_temp.family(a) AS family
FROM (SELECT bloom_agg(k, $1, $2) AS a FROM agg_no_rows) s,
     (SELECT bloom_create($1, $2) AS c) c;
EXECUTE agg_no_rows(10, 0.01);
EXECUTE agg_no_rows(1000, 0.01);
EXECUTE agg_no_rows(1000, 0.001);
EXECUTE agg_no_rows(100000, 0.01);
EXECUTE agg_no_rows(1, 0.5);
EXECUTE agg_no_rows(77777, 0.0001);
EXECUTE agg_no_rows(10, 0.01);
EXPLAIN (COSTS OFF) EXECUTE agg_no_rows(10, 0.01);
-- a parameter that is bad is an error even over no rows
EXECUTE agg_no_rows(0, 0.01);
EXECUTE agg_no_rows(10, 1);
DEALLOCATE agg_no_rows;
-- parameters over rows, in a generic plan
PREPARE agg_rows(bigint, float8, int) AS
SELECT bloom_agg(i, $1, $2)::bytea = pg_temp.fold_int($3, $1, $2)::bytea AS same_as_fold
FROM generate_series(1, $3) i;
EXECUTE agg_rows(10, 0.01, 10);
EXECUTE agg_rows(100, 0.01, 10);
EXECUTE agg_rows(10, 0.01, 100);
EXECUTE agg_rows(1000, 0.001, 1000);
EXECUTE agg_rows(50, 0.1, 5);
-- four times the capacity: the bits set from the lists many times over
-- as they fill up (the sized state's buffer, bloom_agg_state.h)
EXECUTE agg_rows(5000, 0.01, 20000);
DEALLOCATE agg_rows;
RESET plan_cache_mode;
-- an expression without columns is as good as a constant
SELECT pg_temp.family(bloom_agg(k, 10 * 10, 0.01 / 2)) AS family,
       pg_temp.capacity(bloom_agg(k, 10 * 10, 0.01 / 2)) AS capacity
FROM agg_no_rows;
SELECT pg_temp.capacity(bloom_agg(k, (SELECT 123), 0.01)) AS capacity_from_subquery
FROM agg_no_rows;
-- no rows left by FILTER, DISTINCT, or an empty grouping set
SELECT pg_temp.capacity(bloom_agg(i, 10, 0.01) FILTER (WHERE i < 0)) AS filter_clause,
       pg_temp.capacity(bloom_agg(DISTINCT i, 20, 0.01) FILTER (WHERE i < 0)) AS distinct_filter,
       bloom_contains(bloom_agg(i, 10, 0.01) FILTER (WHERE i < 0), 1) AS contains_1
FROM generate_series(1, 5) i;
SELECT k, pg_temp.capacity(bloom_agg(k, 30, 0.01)) AS capacity
FROM agg_no_rows GROUP BY GROUPING SETS ((k), ());
-- as a window function, an empty frame gives an empty filter too
SELECT i,
       bloom_contains(bloom_agg(i) OVER w, i - 1) AS unsized_has_previous,
       bloom_contains(bloom_agg(i) OVER w, i) AS unsized_has_current
FROM generate_series(1, 4) i
WINDOW w AS (ORDER BY i ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING)
ORDER BY i;
SELECT i,
       bloom_contains(bloom_agg(i, 10, 0.01) OVER w, i - 1) AS sized_has_previous,
       bloom_contains(bloom_agg(i, 10, 0.01) OVER w, i) AS sized_has_current
FROM generate_series(1, 4) i
WINDOW w AS (ORDER BY i ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING)
ORDER BY i;
-- a running filter: each row's filter holds the keys so far
SELECT count(*) FILTER (WHERE bloom_contains(f, i)) AS running_found,
       count(*) FILTER (WHERE s::bytea = g::bytea) AS sized_same_as_fold
FROM (SELECT i,
             bloom_agg(i) OVER (ORDER BY i) AS f,
             bloom_agg(i, 100, 0.01) OVER (ORDER BY i) AS s,
             pg_temp.fold_int(i, 100, 0.01) AS g
      FROM generate_series(1, 100) i) w;
-- a capacity taken from the rows cannot size a filter when there are none
SELECT bloom_agg(k, cap, 0.01) FROM agg_no_rows;
SELECT bloom_agg(k, 100, (cap / 1000.0)::float8) FROM agg_no_rows;
SELECT bloom_agg(k, (random() * 0 + 100)::bigint, 0.01) FROM agg_no_rows;

--
-- the sized form has exactly the bits of bloom_create followed by bloom_add
-- of every key, whether its state is still a list of hashes (few keys) or
-- already the bits (many keys)
--
SELECT n, capacity, rate,
       (SELECT bloom_agg(i, capacity, rate) FROM generate_series(1, n) i)::bytea =
       pg_temp.fold_int(n, capacity, rate)::bytea AS int_same_as_fold,
       (SELECT bloom_agg(md5(i::text), capacity, rate) FROM generate_series(1, n) i)::bytea =
       pg_temp.fold_text(n, capacity, rate)::bytea AS text_same_as_fold
FROM (VALUES (1, 1::bigint, 0.01::float8),
             (10, 10, 0.01),
             (10, 100000, 0.01),
             (5000, 5000, 0.01),
             (5000, 5000, 0.0001),
             (5000, 100, 0.01),
             (5000, 1000000, 0.01)) v(n, capacity, rate)
ORDER BY n, capacity, rate;
-- duplicates and order do not matter, at any point of the state's life
SELECT (SELECT bloom_agg(i, 100000, 0.01) FROM generate_series(1, 100000) i)::bytea =
       (SELECT bloom_agg(i % 100000 + 1, 100000, 0.01 ORDER BY md5(i::text))
        FROM generate_series(1, 300000) i)::bytea AS sized_100000,
       (SELECT bloom_agg(i % 5000 + 1, 5000, 0.01 ORDER BY i DESC) FROM generate_series(1, 20000) i)::bytea =
       pg_temp.fold_int(5000, 5000, 0.01)::bytea AS sized_5000_repeated;
-- bloom_add after bloom_agg continues where the aggregate stopped
SELECT bloom_add((SELECT bloom_agg(i, 5000, 0.01) FROM generate_series(1, 4999) i), 5000)::bytea =
       pg_temp.fold_int(5000, 5000, 0.01)::bytea AS agg_then_add;

--
-- the unsized form sizes the filter for the distinct keys it saw, at 0.01
--
SELECT a3::bytea = a1::bytea AS repeated_same_as_distinct,
       a1::bytea = s::bytea AS same_as_sized_1000,
       pg_temp.capacity(a3) AS capacity,
       octet_length(a3::bytea) = octet_length(bloom_create(1000, 0.01)::bytea) AS size_of_create_1000
FROM (SELECT bloom_agg(i % 1000) AS a3 FROM generate_series(1, 3000) i) x,
     (SELECT bloom_agg(i) AS a1 FROM generate_series(0, 999) i) y,
     (SELECT bloom_agg(i, 1000, 0.01) AS s FROM generate_series(0, 999) i) z;
SELECT n,
       (SELECT bloom_agg(i) FROM generate_series(1, n) i)::bytea =
       (SELECT bloom_agg(i, n, 0.01) FROM generate_series(1, n) i)::bytea AS same_as_sized,
       pg_temp.capacity((SELECT bloom_agg(md5((i % n)::text)) FROM generate_series(1, 4 * n) i)) AS text_capacity
FROM (VALUES (1), (2), (17), (1000), (65536), (100000)) v(n)
ORDER BY n;
-- over a table the planner knows to be large the lists are sized for its
-- rows up front: each key still counts once, wherever its repeats are
CREATE TABLE agg_big AS
    SELECT (i % 100000)::bigint AS k FROM generate_series(1, 400000) i
    UNION ALL
    SELECT (i / 4)::bigint FROM generate_series(0, 399999) i;
ANALYZE agg_big;
SELECT bloom_agg(k)::bytea = bloom_agg(k, 100000, 0.01)::bytea AS same_as_sized,
       pg_temp.capacity(bloom_agg(k)) AS capacity
FROM agg_big;
DROP TABLE agg_big;

--
-- errors of the sized form
--
SELECT bloom_agg(i, 0, 0.01) FROM generate_series(1, 10) i;
SELECT bloom_agg(i, -1, 0.01) FROM generate_series(1, 10) i;
SELECT bloom_agg(i, NULL, 0.01) FROM generate_series(1, 10) i;
SELECT bloom_agg(i, 10, NULL) FROM generate_series(1, 10) i;
SELECT bloom_agg(i, 10, 0) FROM generate_series(1, 10) i;
SELECT bloom_agg(i, 10, 1) FROM generate_series(1, 10) i;
SELECT bloom_agg(i, 10, 'NaN') FROM generate_series(1, 10) i;
SELECT bloom_agg(i, 9223372036854775807, 0.01) FROM generate_series(1, 10) i;
SELECT bloom_agg(i, 10 + i / 5, 0.01) FROM generate_series(1, 10) i;
SELECT bloom_agg(i, 10, CASE WHEN i < 5 THEN 0.01 ELSE 0.02 END) FROM generate_series(1, 10) i;
-- with no rows, the same mistakes are the same errors
SELECT bloom_agg(k, 0, 0.01) FROM agg_no_rows;
SELECT bloom_agg(k, 10, 1) FROM agg_no_rows;
SELECT pg_temp.sqlstate_of('SELECT bloom_agg(i, 0, 0.01) FROM generate_series(1, 10) i') AS zero_rows,
       pg_temp.sqlstate_of('SELECT bloom_agg(k, 0, 0.01) FROM agg_no_rows') AS zero_no_rows,
       pg_temp.sqlstate_of('SELECT bloom_agg(i, NULL, 0.01) FROM generate_series(1, 10) i') AS null_rows,
       pg_temp.sqlstate_of('SELECT bloom_agg(k, NULL, 0.01) FROM agg_no_rows') AS null_no_rows,
       pg_temp.sqlstate_of('SELECT bloom_agg(k, 10, NULL) FROM agg_no_rows') AS null_rate_no_rows,
       pg_temp.sqlstate_of('SELECT bloom_agg(i, 10 + i / 5, 0.01) FROM generate_series(1, 10) i') AS changing,
       pg_temp.sqlstate_of('SELECT bloom_agg(i, 9223372036854775807, 0.01) FROM generate_series(1, 10) i') AS too_large;
-- a capacity that depends on the group is fine as long as it is the same
-- within the group
SELECT g, bloom_contains(f, g * 100 + 1) AS found, pg_temp.capacity(f) AS capacity
FROM (SELECT i / 100 AS g, bloom_agg(i, 10 * (i / 100 + 1), 0.01) AS f
      FROM generate_series(100, 399) i GROUP BY 1) s
ORDER BY g;

--
-- many small groups: 100,000 groups of 10 keys each
--
SET work_mem = '64MB';
CREATE TABLE agg_grouped AS
SELECT i / 10 AS g, i AS k, md5(i::text) AS t
FROM generate_series(0, 999999) i;
ANALYZE agg_grouped;
CREATE TABLE agg_grouped_filters AS
SELECT g, bloom_agg(k) AS f, bloom_agg(k, 10, 0.01) AS fs, bloom_agg(t) AS ft
FROM agg_grouped GROUP BY g;
SELECT count(*) AS groups,
       max(octet_length(f::bytea)) AS max_unsized_bytes,
       max(octet_length(fs::bytea)) AS max_sized_bytes,
       max(octet_length(ft::bytea)) AS max_text_bytes,
       bool_and(f::bytea = fs::bytea) AS unsized_same_as_sized_10
FROM agg_grouped_filters;
-- every key of a few groups is found, in its own group's filters
SELECT count(*) AS keys,
       count(*) FILTER (WHERE bloom_contains(f, k)) AS found_unsized,
       count(*) FILTER (WHERE bloom_contains(fs, k)) AS found_sized,
       count(*) FILTER (WHERE bloom_contains(ft, t)) AS found_text
FROM agg_grouped JOIN agg_grouped_filters USING (g)
WHERE g IN (0, 1, 4242, 50000, 99999);
-- and no group loses a key
SELECT count(*) FILTER (WHERE NOT bloom_contains(f, k)) AS missing_unsized,
       count(*) FILTER (WHERE NOT bloom_contains(fs, k)) AS missing_sized
FROM agg_grouped JOIN agg_grouped_filters USING (g);
-- a hashed aggregate over many groups with a large capacity keeps small
-- states: 2,000 groups of bloom_agg(k, 100000, 0.01) (about 120 kB of bits
-- each, 240 MB if every state held its bits) stay within a few MB
CREATE FUNCTION pg_temp.hashagg_peak_kb(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
    node json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO plan;
    node := plan -> 0 -> 'Plan';
    WHILE node ->> 'Node Type' <> 'Aggregate' LOOP
        node := node -> 'Plans' -> 0;
    END LOOP;
    IF node ->> 'Strategy' <> 'Hashed' THEN
        RAISE EXCEPTION 'not a hashed aggregate: %', node ->> 'Strategy';
    END IF;
    RETURN (node ->> 'Peak Memory Usage')::bigint;
END
$$;
SET enable_sort = off;
SELECT pg_temp.hashagg_peak_kb($$
    SELECT g, octet_length(bloom_agg(k, 100000, 0.01)::bytea)
    FROM agg_grouped WHERE g < 2000 GROUP BY g
$$) < 10 * 1024 AS small_states;
SELECT pg_temp.hashagg_peak_kb($$
    SELECT g, octet_length(bloom_agg(k)::bytea)
    FROM agg_grouped WHERE g < 2000 GROUP BY g
$$) < 10 * 1024 AS small_unsized_states;
RESET enable_sort;
RESET work_mem;

--
-- text and uuid keys
--
SELECT (SELECT bloom_agg(md5(i::text)::uuid, 1000, 0.01) FROM generate_series(1, 1000) i)::bytea =
       (SELECT bloom_agg(md5(i::text)::uuid) FROM generate_series(1, 1000) i)::bytea AS uuid_sized_as_unsized,
       (SELECT count(*) FILTER (WHERE bloom_contains(f, md5(i::text)::uuid))
        FROM (SELECT bloom_agg(md5(i::text)::uuid) AS f FROM generate_series(1, 1000) i) s,
             generate_series(1, 1000) i) AS uuid_found,
       (SELECT count(*) FILTER (WHERE bloom_contains(f, md5(i::text)))
        FROM (SELECT bloom_agg(md5(i::text)) AS f FROM generate_series(1, 1000) i) s,
             generate_series(1, 1000) i) AS text_found,
       (SELECT count(*) FILTER (WHERE bloom_contains(f, md5(i::text)::varchar))
        FROM (SELECT bloom_agg(md5(i::text)::char(32)) AS f FROM generate_series(1, 1000) i) s,
             generate_series(1, 1000) i) AS char_found_as_varchar;
SELECT pg_temp.family(bloom_agg(md5(i::text)::uuid)) AS uuid_family,
       pg_temp.family(bloom_agg(i::text::varchar)) AS varchar_family,
       pg_temp.family(bloom_agg(i::smallint)) AS smallint_family,
       pg_temp.family(bloom_agg(i::numeric, 10, 0.01)) AS numeric_family
FROM generate_series(1, 10) i;
-- a key type without a hash operator class
SELECT bloom_agg(point(i, i)) FROM generate_series(1, 10) i;
SELECT bloom_agg(point(i, i), 10, 0.01) FROM generate_series(1, 10) i;

-- A filter of 4 MB or more gets its memory advised for huge pages before
-- it is zeroed (bloom_alloc_big).  It is empty when made, also in memory a
-- filter just built in this session gave back (a build that skipped the
-- zeroing estimated millions of keys in both).
SELECT bloom_cardinality(bloom_agg(i, 5000000, 0.01)) > 100000 AS built
FROM generate_series(1, 200000) i;
SELECT bloom_cardinality(bloom_create(5000000)) AS empty_after_a_build;
SELECT round(bloom_cardinality(bloom_agg(i, 5000000, 0.01))) AS ten_keys
FROM generate_series(1, 10) i;

DROP TABLE agg_no_rows, agg_grouped, agg_grouped_filters;
