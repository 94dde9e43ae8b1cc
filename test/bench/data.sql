--
-- test/bench/data.sql: the benchmark's data, made once per run.
--
-- psql variables (set by run.sh): probe_rows, small_keys, big_keys,
-- huge_keys, nparts, kb_keys, acc_keys.  The anti-join's data is
-- test/bench/antijoin.sql's.
--
-- Key rules, shared by every table so that the answers are known:
--   a filter of n keys holds 2, 4, ..., 2n (even numbers; text keys are
--   md5 of them); probe tables hold 1 .. probe_rows, so about half of the
--   probed keys that fall inside a filter's range are present and the odd
--   ones are absent.
--
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SELECT setseed(0.42) \g /dev/null

\echo data: probe tables
CREATE UNLOGGED TABLE bench_probe_text AS
    SELECT md5(g::text) AS key FROM generate_series(1, :probe_rows) AS g;
CREATE UNLOGGED TABLE bench_probe_int AS
    SELECT g::bigint AS key FROM generate_series(1, :probe_rows) AS g;
-- the partition of an even key 2h is h % nparts, as in bench_part_filters
CREATE UNLOGGED TABLE bench_probe_part AS
    SELECT ((g / 2) % :nparts)::int AS part, g::bigint AS key
    FROM generate_series(1, :probe_rows) AS g;

\echo data: stored filters
CREATE UNLOGGED TABLE bench_filters (
    id    int PRIMARY KEY,
    name  text NOT NULL UNIQUE,
    nkeys bigint NOT NULL,
    f     bloom NOT NULL
);
INSERT INTO bench_filters
    SELECT 1, 'text_small', :small_keys, bloom_agg(md5((g * 2)::text))
    FROM generate_series(1, :small_keys) AS g;
INSERT INTO bench_filters
    SELECT 2, 'int_small', :small_keys, bloom_agg((g * 2)::bigint)
    FROM generate_series(1, :small_keys) AS g;
INSERT INTO bench_filters
    SELECT 3, 'text_big', :big_keys, bloom_agg(md5((g * 2)::text))
    FROM generate_series(1, :big_keys) AS g;
INSERT INTO bench_filters
    SELECT 4, 'int_big', :big_keys, bloom_agg((g * 2)::bigint)
    FROM generate_series(1, :big_keys) AS g;
-- sized: the state is the filter's bits, not a list of hashes
INSERT INTO bench_filters
    SELECT 5, 'int_huge', :huge_keys, bloom_agg((g * 2)::bigint, :huge_keys, 0.01)
    FROM generate_series(1, :huge_keys) AS g;
-- about 1 KB: small enough to stay in line in the heap tuple
INSERT INTO bench_filters
    SELECT 6, 'int_1kb', :kb_keys, bloom_agg((g * 2)::bigint, :kb_keys, 0.01)
    FROM generate_series(1, :kb_keys) AS g;

\echo data: per-partition filters
CREATE UNLOGGED TABLE bench_part_filters (
    part  int PRIMARY KEY,
    f     bloom NOT NULL
);
INSERT INTO bench_part_filters
    SELECT (g % :nparts)::int, bloom_agg((g * 2)::bigint)
    FROM generate_series(1, :big_keys) AS g
    GROUP BY 1;

\echo data: accuracy filters
-- at full capacity: exactly acc_keys distinct keys in each
CREATE UNLOGGED TABLE bench_acc (
    rate  float8 PRIMARY KEY,
    f     bloom NOT NULL
);
INSERT INTO bench_acc
    SELECT p, (SELECT bloom_agg((g * 2)::bigint, :acc_keys, p)
               FROM generate_series(1, :acc_keys) AS g)
    FROM unnest(ARRAY[0.01, 0.001, 0.0001]::float8[]) AS p;

VACUUM (FREEZE, ANALYZE) bench_probe_text, bench_probe_int, bench_probe_part,
    bench_filters, bench_part_filters, bench_acc;

-- for the report header
INSERT INTO bench.sizes (what, value)
SELECT 'filter ' || name,
       format('%s keys, %s stored (%s)', to_char(nkeys, 'FM999,999,999,999'),
              bench.bytes(pg_column_size(f)),
              CASE WHEN pg_column_size(f) >= 2000 THEN 'TOASTed, out of line'
                   ELSE 'in line' END)
FROM bench_filters ORDER BY id;
INSERT INTO bench.sizes (what, value)
SELECT 'per-partition filters',
       format('%s filters, %s keys each, %s stored in all', count(*),
              to_char(:big_keys / :nparts, 'FM999,999,999'),
              bench.bytes(sum(pg_column_size(f))))
FROM bench_part_filters;
