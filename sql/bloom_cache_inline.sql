--
-- bloom_cache_inline: a filter stored compressed in its row (after SET
-- STORAGE main) is decompressed once per call site and kept in the call
-- site's cache ("bloom_contains cache"), found again by its compressed
-- bytes, not decompressed on every probe.  The answers are those of the
-- same filters probed in place, for every key, while several such filters
-- take turns.
--
SET max_parallel_workers_per_gather = 0;

-- 4 filters sized for 100,000 keys holding 301 each: about 120 kB, which
-- compress to a few kB and stay in their rows.  They share 300 keys and
-- differ by one, so that their compressed bytes differ only here and there
-- (some are even of the same length): only the whole bytes tell them apart.
CREATE TABLE inline_filters (id int PRIMARY KEY, f bloom);
ALTER TABLE inline_filters ALTER COLUMN f SET STORAGE main;
INSERT INTO inline_filters
SELECT g, bloom_add(bloom_agg(i * 7, 100000, 0.01), 1000000 + g)
FROM generate_series(0, 3) g, generate_series(1, 300) i GROUP BY g;
SELECT count(*) AS filters,
       bool_and(octet_length(f::bytea) > 100000) AS each_over_100_kB,
       bool_and(pg_column_size(f) < 10000) AS each_compressed,
       count(DISTINCT pg_column_size(f)) < count(*) AS some_of_one_length
FROM inline_filters;
-- nothing went out of line: the table's TOAST relation is empty
CREATE FUNCTION pg_temp.toasted_values(rel regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %s',
                   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
    INTO n;
    RETURN n;
END
$$;
SELECT pg_temp.toasted_values('inline_filters') AS out_of_line;

-- the keys: the shared ones, each filter's own, and as many never added
CREATE TABLE inline_keys AS
SELECT NULL::int AS g, i * 7 + d AS k FROM generate_series(1, 300) i, generate_series(0, 1) d
UNION ALL
SELECT g, 1000000 + g FROM generate_series(0, 3) g;

-- the memory of the call sites' caches of this backend, now
CREATE FUNCTION pg_temp.cache_bytes() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts
    WHERE name = 'bloom_contains cache'
$$;
-- key by key against every filter (the filters take turns, one call site):
-- the largest size of the cache after a probe, the answers that differ from
-- the same filter probed in place (as bytes made a bloom again), and how many
-- of the 1,204 keys added were found (all: 300 shared in 4 filters, 4 own)
CREATE FUNCTION pg_temp.probe_inline(OUT largest bigint, OUT differ bigint,
                                     OUT own_found bigint, OUT probes bigint)
LANGUAGE sql VOLATILE AS $$
    SELECT max(seen),
           count(*) FILTER (WHERE found IS DISTINCT FROM bloom_contains(plain, k)),
           count(*) FILTER (WHERE found AND (g = id OR g IS NULL AND k % 7 = 0)),
           count(*)
    FROM (SELECT id, k, g, found, plain,
                 CASE WHEN found IS NULL THEN NULL ELSE pg_temp.cache_bytes() END AS seen
          FROM (SELECT b.id, p.k, p.g, bloom_contains(b.f, p.k) AS found,
                       b.f::bytea::bloom AS plain
                FROM inline_keys p
                CROSS JOIN LATERAL (SELECT id, f FROM inline_filters
                                    WHERE id >= 0 * p.k OFFSET 0) b
                OFFSET 0) j
          OFFSET 0) s
$$;
-- the cache holds the decompressed filters: more than 3 of 120 kB
SELECT largest > 3 * 100000 AS holds_decompressed, differ, own_found, probes
FROM pg_temp.probe_inline();
-- within a budget of one filter: at most one is kept, answers unchanged
SET bloomfilter.cache_budget = '200kB';
SELECT largest > 100000 AS holds_one, largest <= 200 * 1024 + 16384 AS within_budget,
       differ, own_found, probes
FROM pg_temp.probe_inline();
-- a budget smaller than one filter: decompressed per probe, never kept
SET bloomfilter.cache_budget = '64kB';
SELECT largest <= 16384 AS none_kept, differ, own_found, probes
FROM pg_temp.probe_inline();
RESET bloomfilter.cache_budget;

-- a filter changed in place (same size, other bits): the new answers
UPDATE inline_filters SET f = bloom_add(f, 5) WHERE id = 0;
SELECT bloom_contains(f, 5) AS added_5, bloom_contains(f, 7) AS still_7
FROM inline_filters WHERE id = 0;
SELECT differ, own_found, probes FROM pg_temp.probe_inline();

RESET max_parallel_workers_per_gather;
DROP TABLE inline_filters, inline_keys;
