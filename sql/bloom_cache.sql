--
-- bloom_cache: "never re-read a big filter per row" (DESIGN.md, performance
-- design).  A stored filter is TOASTed (the type's storage is external);
-- bloom_contains called on every row with the same stored filter must read
-- it about once, not once per row.  Asserted without timings: the number of
-- TOAST blocks the backend fetched during a query
-- (pg_stat_get_xact_blocks_fetched, counted in this backend only, so
-- parallel workers are turned off) is compared with what one full read of
-- the filter costs, measured the same way.
--
SET max_parallel_workers_per_gather = 0;

-- blocks of rel's TOAST table fetched by query q, and q's (bigint) result
CREATE FUNCTION pg_temp.toast_fetches(rel regclass, q text,
                                      OUT fetched bigint, OUT result bigint)
LANGUAGE plpgsql AS $$
DECLARE
    toast oid := (SELECT reltoastrelid FROM pg_class WHERE oid = rel);
    before bigint;
BEGIN
    before := pg_stat_get_xact_blocks_fetched(toast);
    EXECUTE q INTO result;
    fetched := pg_stat_get_xact_blocks_fetched(toast) - before;
END
$$;

-- a 2.4 MB filter of 2,000,000 keys and a tiny one
CREATE TABLE cache_filters (id int PRIMARY KEY, f bloom);
INSERT INTO cache_filters SELECT 1, bloom_agg(i) FROM generate_series(1, 2000000) i;
INSERT INTO cache_filters SELECT 2, bloom_agg(i) FROM generate_series(1, 10) i;
SELECT id, octet_length(f::bytea) AS bytes,
       pg_column_size(f) >= octet_length(f::bytea) AS not_compressed,
       pg_column_size(f) > 2000 AS out_of_line
FROM cache_filters ORDER BY id;
-- 1,000,000 probes: half of them are keys of filter 1
CREATE TABLE cache_probes AS
SELECT 1500000 + i AS k, i % 10 AS part, i % 365 AS day
FROM generate_series(1, 1000000) i;
VACUUM ANALYZE cache_filters, cache_probes;

-- what one full read of filter 1 costs, and a query that reads it on every
-- row (the contrast: the counter does count TOAST reads)
SELECT fetched AS one_read FROM pg_temp.toast_fetches('cache_filters',
    'SELECT length(md5(f::bytea)) FROM cache_filters WHERE id = 1') \gset
SELECT :one_read > 100 AS one_read_is_many_blocks;
SELECT fetched >= 20 * :one_read AS per_row_reads_counted, result AS rows
FROM pg_temp.toast_fetches('cache_filters', $$
    SELECT count(*) FROM (SELECT md5(f::bytea) AS m FROM cache_filters, generate_series(1, 20) OFFSET 0) s
    WHERE m IS NOT NULL$$);

--
-- a scalar subquery: one stored filter for 1,000,000 rows
--
SELECT fetched < 10 * :one_read AS read_about_once, result AS maybe_present
FROM pg_temp.toast_fetches('cache_filters', $$
    SELECT count(*) FROM cache_probes
    WHERE bloom_contains((SELECT f FROM cache_filters WHERE id = 1), k)$$);
-- the tiny filter lives in its row: no TOAST reads at all
SELECT fetched AS fetched, result AS maybe_present
FROM pg_temp.toast_fetches('cache_filters', $$
    SELECT count(*) FROM cache_probes
    WHERE bloom_contains((SELECT f FROM cache_filters WHERE id = 2), k)$$);
-- both filters at one call site, alternating row by row
SELECT fetched < 10 * :one_read AS read_about_once, result AS maybe_present
FROM pg_temp.toast_fetches('cache_filters', $$
    SELECT count(*) FROM cache_probes p
    JOIN cache_filters f ON f.id = 1 + (p.k % 2)
    WHERE bloom_contains(f.f, p.k)$$);

--
-- a PREPAREd statement: the filter chosen by a parameter (in a generic
-- plan), and the filter itself as a parameter
--
SET plan_cache_mode = force_generic_plan;
PREPARE probe_all(int) AS
SELECT count(*) FROM cache_probes WHERE bloom_contains((SELECT f FROM cache_filters WHERE id = $1), k);
SELECT fetched < 10 * :one_read AS read_about_once, result AS maybe_present
FROM pg_temp.toast_fetches('cache_filters', 'EXECUTE probe_all(1)');
SELECT fetched < 10 * :one_read AS read_about_once, result AS maybe_present
FROM pg_temp.toast_fetches('cache_filters', 'EXECUTE probe_all(1)');
SELECT fetched = 0 AS no_reads, result AS maybe_present
FROM pg_temp.toast_fetches('cache_filters', 'EXECUTE probe_all(2)');
DEALLOCATE probe_all;
CREATE FUNCTION pg_temp.probe_with(fid int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE 'SELECT count(*) FROM cache_probes WHERE bloom_contains($1, k)'
        INTO n USING (SELECT f FROM cache_filters WHERE id = fid);
    RETURN n;
END
$$;
SELECT fetched < 10 * :one_read AS read_about_once, result AS maybe_present
FROM pg_temp.toast_fetches('cache_filters', 'SELECT pg_temp.probe_with(1)');
-- a guard in front of an expensive lookup, one key per execution: each
-- execution reads a small part of the filter, not the whole of it
PREPARE guard(int, int) AS
SELECT bloom_contains(f, $1)::int FROM cache_filters WHERE id = $2;
CREATE FUNCTION pg_temp.guards(n int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    found bigint := 0;
    r int;
BEGIN
    FOR i IN 1..n LOOP
        EXECUTE format('EXECUTE guard(%s, 1)', 1999990 + i) INTO r;
        found := found + r;
    END LOOP;
    RETURN found;
END
$$;
SELECT fetched < :one_read AS twenty_guards_read_less_than_one_filter, result AS found
FROM pg_temp.toast_fetches('cache_filters', 'SELECT pg_temp.guards(20)');
DEALLOCATE guard;
RESET plan_cache_mode;

--
-- a join against a table of 10 per-partition filters: each stored filter is
-- read about once, whatever the number of rows
--
-- (each holds 100,000 keys: half of the probes of its partition)
CREATE TABLE cache_part_filters AS
SELECT i % 10 AS part, bloom_agg(1500000 + i) AS f
FROM generate_series(1, 2000000) i WHERE (i / 10) % 2 = 0 GROUP BY 1;
VACUUM ANALYZE cache_part_filters;
SELECT count(*) AS filters, min(octet_length(f::bytea)) AS min_bytes FROM cache_part_filters;
SELECT fetched AS all_once FROM pg_temp.toast_fetches('cache_part_filters', $$
    SELECT count(*) FROM (SELECT md5(f::bytea) AS m FROM cache_part_filters OFFSET 0) s
    WHERE m IS NOT NULL$$) \gset
SELECT fetched < 2 * :all_once AS each_read_about_once, result AS maybe_present
FROM pg_temp.toast_fetches('cache_part_filters', $$
    SELECT count(*) FROM cache_probes JOIN cache_part_filters USING (part)
    WHERE bloom_contains(f, k)$$);
-- the same through a nested loop
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT fetched < 2 * :all_once AS each_read_about_once, result AS maybe_present
FROM pg_temp.toast_fetches('cache_part_filters', $$
    SELECT count(*) FROM cache_probes JOIN cache_part_filters USING (part)
    WHERE bloom_contains(f, k)$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
-- the anti-join pre-check of the design
SELECT fetched < 2 * :all_once AS each_read_about_once, result AS surely_new
FROM pg_temp.toast_fetches('cache_part_filters', $$
    SELECT count(*) FROM cache_probes i JOIN cache_part_filters o USING (part)
    WHERE NOT bloom_contains(o.f, i.k)$$);

--
-- one filter per day of a year: 365 small stored filters
--
CREATE TABLE cache_day_filters AS
SELECT i % 365 AS day, bloom_agg(1500000 + i) AS f
FROM generate_series(1, 2000000) i WHERE (i / 10) % 2 = 0 GROUP BY 1;
VACUUM ANALYZE cache_day_filters;
SELECT count(*) AS filters, bool_and(pg_column_size(f) > 2000) AS all_out_of_line
FROM cache_day_filters;
SELECT fetched AS all_days_once FROM pg_temp.toast_fetches('cache_day_filters', $$
    SELECT count(*) FROM (SELECT md5(f::bytea) AS m FROM cache_day_filters OFFSET 0) s
    WHERE m IS NOT NULL$$) \gset
SELECT fetched < 2 * :all_days_once AS each_read_about_once, result AS maybe_present
FROM pg_temp.toast_fetches('cache_day_filters', $$
    SELECT count(*) FROM cache_probes JOIN cache_day_filters USING (day)
    WHERE bloom_contains(f, k)$$);

DROP TABLE cache_filters, cache_probes, cache_part_filters, cache_day_filters;
