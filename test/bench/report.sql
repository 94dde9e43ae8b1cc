--
-- test/bench/report.sql: print the results as Markdown (run by run.sh with
-- psql -XAtq; the header with the machine and the sizes comes from run.sh).
--
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;

-- a time, with as many decimals as make sense
CREATE FUNCTION pg_temp.fmt(x float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN x IS NULL THEN 'n/a'
        WHEN abs(x) >= 100 THEN to_char(round(x::numeric, 0), 'FM999,999,990')
        WHEN abs(x) >= 10 THEN round(x::numeric, 1)::text
        WHEN abs(x) >= 1 THEN round(x::numeric, 2)::text
        ELSE round(x::numeric, 3)::text
    END
$$;

CREATE TEMP VIEW summary AS
SELECT w.ord, w.workload, w.unit, w.target, w.max_ratio, w.speedup, w.same_result,
       w.nrows, w.filter,
       CASE WHEN w.unit = 'ms' THEN bench.median(w.workload, 'ours')
            ELSE (SELECT value FROM bench.vals v WHERE v.workload = w.workload AND variant = 'ours') END AS ours,
       CASE WHEN w.unit = 'ms' THEN bench.median(w.workload, 'baseline')
            ELSE (SELECT value FROM bench.vals v WHERE v.workload = w.workload AND variant = 'baseline') END AS base,
       (SELECT display FROM bench.vals v WHERE v.workload = w.workload AND variant = 'ours') AS ours_display,
       (SELECT display FROM bench.vals v WHERE v.workload = w.workload AND variant = 'baseline') AS base_display,
       (SELECT max(workers) FROM bench.runs r WHERE r.workload = w.workload AND variant = 'ours') AS workers,
       (SELECT result FROM bench.runs r WHERE r.workload = w.workload AND variant = 'ours' AND round = 0) AS ours_result,
       (SELECT result FROM bench.runs r WHERE r.workload = w.workload AND variant = 'baseline' AND round = 0) AS base_result,
       (SELECT count(*) FROM bench.runs r WHERE r.workload = w.workload AND round > 0) AS nruns
FROM bench.workloads w;

SELECT '| workload | ours (median ms) | baseline (median ms) | ratio | target | met? |';
SELECT '|---|---:|---:|---:|---|:-:|';
SELECT format('| %s%s%s | %s | %s | %s | %s | %s |',
    workload,
    CASE WHEN workers > 0 THEN format(' [%s workers launched]', workers) ELSE '' END,
    CASE WHEN same_result AND ours_result IS NOT NULL AND ours_result LIKE '\\x%'
         THEN format(' [filters %s: %s and %s bytes]',
                     CASE WHEN ours_result = base_result THEN 'equal byte for byte'
                          ELSE 'DIFFERENT' END,
                     to_char((length(ours_result) - 2) / 2, 'FM999,999,999'),
                     to_char((length(base_result) - 2) / 2, 'FM999,999,999'))
         ELSE '' END,
    coalesce(ours_display, pg_temp.fmt(ours)),
    coalesce(base_display, pg_temp.fmt(base)),
    CASE WHEN ours IS NULL OR base IS NULL OR base = 0 THEN 'n/a'
         WHEN speedup AND ours <= base
             THEN format('%s (%s× faster)', round((ours / base)::numeric, 3),
                         round((base / nullif(ours, 0))::numeric, 1))
         WHEN speedup
             THEN format('%s (%s× slower)', round((ours / base)::numeric, 3),
                         round((ours / base)::numeric, 1))
         ELSE round((ours / base)::numeric, 3)::text END,
    target,
    CASE WHEN ours IS NULL OR base IS NULL OR base = 0 THEN '?'
         WHEN same_result AND ours_result IS DISTINCT FROM base_result THEN '**no** (results differ)'
         WHEN max_ratio IS NULL THEN '(reference)'
         WHEN ours / base <= max_ratio THEN 'yes'
         ELSE '**no**' END)
FROM summary ORDER BY ord;

SELECT '';
SELECT '### Probe cost breakdown (serial; extra time of ours over its baseline, per probed row)';
SELECT '';
SELECT '| workload | rows | ours − baseline (ms) | extra ns per row | of which reading the filter whole, once (ms) | that, per row (ns) |';
SELECT '|---|---:|---:|---:|---:|---:|';
SELECT format('| %s | %s | %s | %s | %s | %s |', workload, to_char(nrows, 'FM999,999,999'),
              pg_temp.fmt(ours - base), round(((ours - base) * 1e6 / nrows)::numeric, 1),
              coalesce(pg_temp.fmt(rd.value), ''),
              coalesce(round((rd.value * 1e6 / nrows)::numeric, 1)::text, ''))
FROM summary
LEFT JOIN bench.diag rd ON rd.what LIKE 'read whole filter ' || summary.filter || ' %'
WHERE summary.unit = 'ms' AND nrows IS NOT NULL AND (workload LIKE 'probe:%' OR workload LIKE 'per partition%')
ORDER BY summary.ord;
SELECT '';
SELECT '| measured alone (median) | ms |';
SELECT '|---|---:|';
SELECT format('| %s | %s |', what, pg_temp.fmt(value)) FROM bench.diag ORDER BY ord;

SELECT '';
SELECT '### Peak backend memory (one fresh connection per query; VmHWM of the backend)';
SELECT '';
SELECT 'VmHWM counts the shared buffers and files the backend touched too; "private peak" subtracts what of those it had mapped at the end (RssShmem + RssFile), a lower bound on its own peak memory. Parallel workers are not counted.';
SELECT '';
SELECT '| query | VmHWM (MB) | at connect (MB) | shared + file at end (MB) | private peak, est. (MB) |';
SELECT '|---|---:|---:|---:|---:|';
SELECT format('| %s | %s | %s | %s | %s |', what,
              round(hwm_kb / 1024.0, 1), round(start_hwm_kb / 1024.0, 1),
              round((shmem_kb + file_kb) / 1024.0, 1),
              round((hwm_kb - shmem_kb - file_kb) / 1024.0, 1))
FROM bench.mem ORDER BY ord;

SELECT '';
SELECT '### Settings and plan of each variant';
SELECT '';
SELECT 'Each variant runs in a transaction of its own; "settings" lists every setting that differed from the session''s when it ran (over all its rounds: one line means every round ran with the same). A setting a variant did not ask for stops the run.';
SELECT '';
SELECT '| workload | variant | settings | plan |';
SELECT '|---|---|---|---|';
SELECT format('| %s | %s | %s | %s |', w.workload, v.variant,
    (SELECT string_agg(DISTINCT coalesce(r.settings, '?'), ' / ') FROM bench.runs r
     WHERE r.workload = w.workload AND r.variant = v.variant),
    coalesce((SELECT string_agg(DISTINCT r.plan, ' / ') FROM bench.runs r
              WHERE r.workload = w.workload AND r.variant = v.variant AND r.round > 0), ''))
FROM bench.workloads w CROSS JOIN (VALUES (1, 'ours'), (2, 'baseline')) AS v(o, variant)
WHERE w.unit = 'ms' ORDER BY w.ord, v.o;

SELECT '';
SELECT '### Every timed run (ms; warm-up not shown)';
SELECT '';
SELECT '| workload | ours | baseline |';
SELECT '|---|---|---|';
SELECT format('| %s | %s | %s |', w.workload,
    (SELECT string_agg(pg_temp.fmt(ms), ', ' ORDER BY round) FROM bench.runs r
     WHERE r.workload = w.workload AND variant = 'ours' AND round > 0),
    (SELECT string_agg(pg_temp.fmt(ms), ', ' ORDER BY round) FROM bench.runs r
     WHERE r.workload = w.workload AND variant = 'baseline' AND round > 0))
FROM bench.workloads w WHERE w.unit = 'ms' ORDER BY w.ord;
