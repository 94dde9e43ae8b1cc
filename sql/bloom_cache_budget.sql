--
-- bloom_cache_budget: a call site of bloom_contains keeps the stored filters
-- it has read in a memory context of its own ("bloom_contains cache"), up to
-- bloomfilter.cache_budget (256MB unless set); when the next filter would
-- go over it, the copies are dropped and the cache starts again.  The
-- context's size is read during the query, row by row, from
-- pg_backend_memory_contexts: a join of probes against 40 stored filters of
-- about 37 kB, in an order that keeps coming back to each of them.  Under a
-- budget of 512kB the cache must stay within it plus one filter; under the
-- default it holds all 40.  Then the same for filters of 64 kB and more,
-- which start as sliced reads and are read whole after a few probes: probed
-- key by key (each key against every filter), they are all read whole, and
-- must stay within the budget too.
--
SET max_parallel_workers_per_gather = 0;
-- set before the library is loaded, the setting is kept when it loads (by
-- the first call of a function of the extension)
SET bloomfilter.cache_budget = '1MB';
SELECT bloom_contains(bloom_create(10), 1) AS loads_the_library;
SHOW bloomfilter.cache_budget;
RESET bloomfilter.cache_budget;
SHOW bloomfilter.cache_budget;

-- 40 filters of 30,000 keys, stored out of line
CREATE TABLE budget_filters (id int PRIMARY KEY, f bloom);
INSERT INTO budget_filters
SELECT g, bloom_agg(g * 100000 + i) FROM generate_series(0, 39) g, generate_series(1, 30000) i
GROUP BY g;
VACUUM ANALYZE budget_filters;
SELECT count(*) AS filters,
       bool_and(octet_length(f::bytea) BETWEEN 30000 AND 60000) AS each_30_to_60_kB,
       bool_and(pg_column_size(f) >= octet_length(f::bytea)) AS out_of_line_uncompressed,
       sum(octet_length(f::bytea)) > 1024 * 1024 AS together_over_1MB
FROM budget_filters;
-- 4,000 probes, 100 per filter, going round the filters
CREATE TABLE budget_probes AS
SELECT i % 40 AS fid, (i % 40) * 100000 + i AS k FROM generate_series(1, 4000) i;
ANALYZE budget_probes;

-- the memory of the call sites' caches of this backend, now
CREATE FUNCTION pg_temp.cache_bytes() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts
    WHERE name = 'bloom_contains cache'
$$;
-- the largest size of the cache seen during the join (every 10th row, just
-- after the probe), and how many probes answered "maybe"
CREATE FUNCTION pg_temp.largest_cache(OUT largest bigint, OUT maybe bigint)
LANGUAGE sql VOLATILE AS $$
    SELECT max(CASE WHEN NOT found THEN 0 WHEN seen IS NOT NULL THEN seen END),
           count(*) FILTER (WHERE found)
    FROM (SELECT bloom_contains(f.f, p.k) AS found,
                 CASE WHEN bloom_contains(f.f, p.k) IS NULL THEN NULL
                      WHEN p.k % 10 = 0 THEN pg_temp.cache_bytes() END AS seen
          FROM budget_probes p JOIN budget_filters f ON f.id = p.fid
          ORDER BY p.k OFFSET 0) s
$$;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;

-- the default budget: every filter is kept
SELECT largest > 40 * 30000 AS holds_all_filters, maybe
FROM pg_temp.largest_cache();

-- a budget of 512kB: at most the budget plus one filter (and the context's
-- own few kB)
SET bloomfilter.cache_budget = '512kB';
SHOW bloomfilter.cache_budget;
SELECT largest > 256 * 1024 AS holds_several,
       largest <= 512 * 1024 + 60000 + 16384 AS within_budget, maybe
FROM pg_temp.largest_cache();
-- a budget of 0 keeps the one filter at hand
SET bloomfilter.cache_budget = 0;
SELECT largest <= 60000 + 16384 AS one_filter, maybe
FROM pg_temp.largest_cache();
RESET bloomfilter.cache_budget;

-- 10 filters of 100,000 keys (about 120 kB each, over the 64 kB from which
-- a stored filter is first probed in slices), and 30 keys of each
CREATE TABLE budget_big (id int PRIMARY KEY, f bloom);
INSERT INTO budget_big
SELECT g, bloom_agg(g * 1000000 + i) FROM generate_series(0, 9) g, generate_series(1, 100000) i
GROUP BY g;
VACUUM ANALYZE budget_big;
SELECT count(*) AS filters,
       bool_and(octet_length(f::bytea) BETWEEN 100000 AND 150000) AS each_100_to_150_kB,
       bool_and(pg_column_size(f) >= octet_length(f::bytea)) AS out_of_line_uncompressed
FROM budget_big;
CREATE TABLE budget_big_keys AS
SELECT g * 1000000 + i * 3000 AS k FROM generate_series(0, 9) g, generate_series(1, 30) i;
ANALYZE budget_big_keys;
-- key-major: for each key, every filter (a lateral subquery, rescanned per
-- key; one call site; no ORDER BY, which would probe every row before the
-- first measurement); the largest size of the cache after any probe, and how many of the
-- 300 keys were found in their own filter (all of them: no false negative)
CREATE FUNCTION pg_temp.largest_cache_big(OUT largest bigint, OUT own_found bigint,
                                          OUT probes bigint)
LANGUAGE sql VOLATILE AS $$
    SELECT max(seen), count(*) FILTER (WHERE found AND k / 1000000 = id), count(*)
    FROM (SELECT id, k, found,
                 CASE WHEN found IS NULL THEN NULL ELSE pg_temp.cache_bytes() END AS seen
          FROM (SELECT b.id, p.k, bloom_contains(b.f, p.k) AS found
                FROM budget_big_keys p
                CROSS JOIN LATERAL (SELECT id, f FROM budget_big
                                    WHERE id >= 0 * p.k OFFSET 0) b
                OFFSET 0) j
          OFFSET 0) s
$$;
-- the default budget: all 10 filters are read whole and kept
SELECT largest > 10 * 100000 AS holds_all_filters, own_found, probes
FROM pg_temp.largest_cache_big();
-- a budget of 512kB: at most the budget plus one filter
SET bloomfilter.cache_budget = '512kB';
SELECT largest > 2 * 100000 AS holds_several,
       largest <= 512 * 1024 + 150000 + 16384 AS within_budget, own_found, probes
FROM pg_temp.largest_cache_big();
-- a budget smaller than one filter: the filters are only ever sliced
SET bloomfilter.cache_budget = '64kB';
SELECT largest <= 16384 AS none_read_whole, own_found, probes
FROM pg_temp.largest_cache_big();
-- and filter by filter (each filter's own 30 keys in a row), which reads a
-- filter whole after its first few probes where it fits
CREATE FUNCTION pg_temp.largest_cache_by_filter(OUT largest bigint, OUT own_found bigint)
LANGUAGE sql VOLATILE AS $$
    SELECT max(seen), count(*) FILTER (WHERE found)
    FROM (SELECT found,
                 CASE WHEN found IS NULL THEN NULL ELSE pg_temp.cache_bytes() END AS seen
          FROM (SELECT bloom_contains(b.f, p.k) AS found
                FROM budget_big b
                CROSS JOIN LATERAL (SELECT k FROM budget_big_keys
                                    WHERE k / 1000000 = b.id OFFSET 0) p
                OFFSET 0) j
          OFFSET 0) s
$$;
SELECT largest <= 16384 AS none_read_whole, own_found
FROM pg_temp.largest_cache_by_filter();
SET bloomfilter.cache_budget = '200kB';
SELECT largest > 100000 AS read_whole, largest <= 200 * 1024 + 150000 + 16384 AS within_budget,
       own_found
FROM pg_temp.largest_cache_by_filter();
RESET bloomfilter.cache_budget;
DROP TABLE budget_big, budget_big_keys;

-- a call site of bloom_index_contains copies the index's bits once it has
-- read about as many pages probing row by row, within the same budget
-- (context "bloom_index_contains call site"): an index of 100,000 keys
-- (about 140 kB of bits) probed for 20,000 rows is copied under the default
-- budget and not under 64kB; the answers are the same either way
CREATE TABLE budget_indexed (k int);
CREATE INDEX budget_indexed_bf ON budget_indexed USING bloomfilter (k)
	WITH (capacity = 100000);
INSERT INTO budget_indexed SELECT g FROM generate_series(1, 100000) g;
CREATE FUNCTION pg_temp.index_site(OUT largest bigint, OUT found bigint)
LANGUAGE sql VOLATILE AS $$
    SELECT max(seen), count(*) FILTER (WHERE f)
    FROM (SELECT bloom_index_contains('budget_indexed_bf', g) AS f,
                 CASE WHEN g % 100 = 0 THEN
                     (SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts
                      WHERE name = 'bloom_index_contains call site') END AS seen
          FROM generate_series(1, 20000) g OFFSET 0) s
$$;
SELECT largest > 0.9 * (SELECT size_bytes FROM bloom_index_info('budget_indexed_bf')) AS copied,
       (SELECT size_bytes FROM bloom_index_info('budget_indexed_bf')) > 65536 AS index_over_64kB,
       found
FROM pg_temp.index_site();
SET bloomfilter.cache_budget = '64kB';
SELECT largest < 65536 AS not_copied, found FROM pg_temp.index_site();
RESET bloomfilter.cache_budget;
DROP TABLE budget_indexed;

-- an unknown setting under the prefix is refused
SET bloomfilter.no_such_setting = 1;

RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET max_parallel_workers_per_gather;
DROP TABLE budget_filters, budget_probes;
