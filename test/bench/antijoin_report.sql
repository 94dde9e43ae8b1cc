--
-- test/bench/antijoin_report.sql: the anti-join results as Markdown (run by
-- test/bench/antijoin.sh after antijoin.sql, with psql -XAtq).
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

-- baseline / ours, as "8.5× faster" or "1.3× slower"
CREATE FUNCTION pg_temp.speed(ours float8, base float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN ours IS NULL OR base IS NULL OR ours = 0 THEN 'n/a'
        WHEN ours <= base THEN round((base / ours)::numeric, 1) || '× faster'
        ELSE round((ours / base)::numeric, 1) || '× slower'
    END
$$;

-- each variant's medians, wall clock and CPU
CREATE TEMP VIEW med AS
SELECT v.regime, v.ord, v.kind, v.label,
       bench_aj.median(v.regime, v.ord) AS ms,
       bench_aj.median_cpu(v.regime, v.ord) AS cpu,
       (SELECT result FROM bench_aj.runs r WHERE r.regime = v.regime AND r.variant = v.ord AND round = 0) AS result
FROM bench_aj.variants v;

-- the same, one row per measure: each regime's baseline is its fastest
-- plain NOT EXISTS by that measure
CREATE TEMP VIEW by_measure AS
SELECT m.*, x.measure, x.t FROM med m
CROSS JOIN LATERAL (VALUES (1, m.cpu), (2, m.ms)) AS x(measure, t);
CREATE TEMP VIEW base AS
SELECT DISTINCT ON (regime, measure) regime, measure, ord, label, t
FROM by_measure WHERE kind = 'plain' AND t IS NOT NULL ORDER BY regime, measure, t;

CREATE TEMP VIEW regime_label AS
SELECT ord AS regime,
       format('%s existing, %s incoming, %s%% present',
              bench_aj.n(existing), bench_aj.n(batch), pct::float8) AS label
FROM bench_aj.regimes;

SELECT '## Anti-join pre-check, regime by regime';
SELECT '';
SELECT 'Which incoming keys are new? `SELECT count(*) FROM incoming i WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.key = i.key)`, bigint keys spread over the whole range, a btree on `existing.key`, serial. The baseline is the fastest plain `NOT EXISTS` forced into each plan PostgreSQL may choose (hash, merge, nested loop; every one is listed below, with the planner''s own choice at work_mem 4MB). All variants ran in the same rounds, alternating, and each counted exactly the new keys (the run stops otherwise). A ratio is the baseline''s median over the variant''s; the target is 5 × faster.';
SELECT '';
SELECT 'Two measures: the backend''s time on a CPU (`/proc/self/schedstat` around each run) and the wall-clock Execution Time. On a quiet machine they agree; on one shared with other jobs the wall clock mostly measures the wait for a CPU, and the CPU time is the one to read.';

WITH head AS (
    SELECT string_agg(label, ' | ' ORDER BY ord) AS labels, string_agg('---:', '|') AS rule
    FROM bench_aj.variants
    WHERE kind = 'pre' AND ord < 30 AND regime = (SELECT min(ord) FROM bench_aj.regimes)
), lines AS (
    SELECT measure, 0 AS seq, x.o, x.line
    FROM (SELECT DISTINCT measure FROM base) AS ms, head
    CROSS JOIN LATERAL (VALUES
        (0, ''),
        (1, '### ' || CASE measure WHEN 1 THEN 'CPU time' ELSE 'Wall clock (Execution Time)' END),
        (2, ''),
        (3, '| existing | batch | present | fastest plain NOT EXISTS (median) | planner''s own choice | '
            || head.labels || ' | best pre-check ≥ 5 × faster? |'),
        (4, '|---:|---:|---:|---|---|' || head.rule || '|:-:|')) AS x(o, line)
    UNION ALL
    SELECT b.measure, 1, g.ord, format('| %s | %s | %s%% | %s, %s ms | %s | %s | %s |',
        bench_aj.n(g.existing), bench_aj.n(g.batch), g.pct::float8,
        b.label, pg_temp.fmt(b.t),
        coalesce((SELECT m.label FROM med m WHERE m.regime = g.ord AND m.kind = 'plain'
                  AND g.planner ~ CASE m.ord WHEN 1 THEN 'Hash Join' WHEN 2 THEN 'Merge Join' WHEN 3 THEN 'Nested Loop' END),
                 g.planner),
        (SELECT string_agg(format('%s (%s ms)', pg_temp.speed(m.t, b.t), pg_temp.fmt(m.t)), ' | ' ORDER BY m.ord)
         FROM by_measure m WHERE m.regime = g.ord AND m.measure = b.measure AND m.kind = 'pre' AND m.ord < 30),
        CASE WHEN (SELECT min(m.t) FROM by_measure m
                   WHERE m.regime = g.ord AND m.measure = b.measure AND m.kind = 'pre' AND m.ord < 30) * 5 <= b.t
             THEN 'yes' ELSE '**no**' END)
    FROM bench_aj.regimes g JOIN base b ON b.regime = g.ord
)
SELECT line FROM lines ORDER BY measure, seq, o;

SELECT '';
SELECT '### Sizes';
SELECT '';
SELECT '| regime | btree | stored filter | bloomfilter index | "maybe" keys: stored filter | "maybe" keys: index |';
SELECT '|---|---:|---:|---:|---:|---:|';
SELECT format('| %s | %s | %s | %s | %s | %s |', l.label,
              pg_size_pretty(btree_bytes), pg_size_pretty(filter_bytes), pg_size_pretty(index_bytes),
              to_char(maybe_stored, 'FM999,999,999'), to_char(maybe_index, 'FM999,999,999'))
FROM bench_aj.regimes g JOIN regime_label l ON l.regime = g.ord ORDER BY g.ord;

SELECT '';
SELECT '### Every variant';
SELECT '';
SELECT '| regime | variant | CPU ms | against the fastest plain, CPU | wall ms | against the fastest plain, wall | runs, CPU ms | runs, wall ms | new keys counted | plan | settings |';
SELECT '|---|---|---:|---|---:|---|---|---|---:|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |', l.label, m.label,
    pg_temp.fmt(m.cpu),
    CASE WHEN m.ord = bc.ord THEN '**fastest plain**' ELSE pg_temp.speed(m.cpu, bc.t) END,
    pg_temp.fmt(m.ms),
    CASE WHEN m.ord = bw.ord THEN '**fastest plain**' ELSE pg_temp.speed(m.ms, bw.t) END,
    (SELECT string_agg(pg_temp.fmt(r.cpu_ms), ', ' ORDER BY r.round) FROM bench_aj.runs r
     WHERE r.regime = m.regime AND r.variant = m.ord AND r.round > 0),
    (SELECT string_agg(pg_temp.fmt(r.ms), ', ' ORDER BY r.round) FROM bench_aj.runs r
     WHERE r.regime = m.regime AND r.variant = m.ord AND r.round > 0),
    to_char(m.result, 'FM999,999,999'),
    (SELECT string_agg(DISTINCT r.plan, ' / ') FROM bench_aj.runs r
     WHERE r.regime = m.regime AND r.variant = m.ord AND r.round > 0),
    (SELECT string_agg(DISTINCT r.settings, ' / ') FROM bench_aj.runs r
     WHERE r.regime = m.regime AND r.variant = m.ord))
FROM med m
JOIN regime_label l ON l.regime = m.regime
LEFT JOIN base bc ON bc.regime = m.regime AND bc.measure = 1
LEFT JOIN base bw ON bw.regime = m.regime AND bw.measure = 2
ORDER BY m.regime, m.ord;

SELECT '';
SELECT '### The parts of the pre-check, measured alone (medians)';
SELECT '';
SELECT '| regime | what | CPU ms | wall ms |';
SELECT '|---|---|---:|---:|';
SELECT format('| %s | %s | %s | %s |', l.label, d.what, pg_temp.fmt(d.cpu), pg_temp.fmt(d.value))
FROM bench_aj.diag d JOIN regime_label l ON l.regime = d.regime ORDER BY d.regime, d.ord;
