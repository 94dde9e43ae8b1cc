--
-- test/bench/workloads.sql: the timed workloads, in report order (pgbench's
-- single-key probe and the memory measurements run from run.sh).
--
-- psql variables (set by run.sh): runs, probe_rows, small_keys, big_keys,
-- huge_keys, huge_note, nparts, acc_keys, acc_absent, header_bytes.
--
-- Every query is timed with EXPLAIN (ANALYZE, TIMING OFF); see lib.sql.
--
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
-- load the library now, so that its settings (bloomfilter.*) exist before
-- bench.measure takes the session's settings to compare each run's with
LOAD 'bloomfilter';

-- serial, to compare like with like; each workload sets what it needs
\set serial 'ARRAY[''max_parallel_workers_per_gather'', ''0'']'

-- ---------------------------------------------------------------------------
-- probe: f from a scalar subquery, every row reaching the aggregate in both
-- ours and the baseline (a sum over a CASE), so that the two differ only by
-- the function called per row: with count(*) WHERE bloom_contains(...) only
-- the hits (about 1.5% of the rows for the small filters) would reach the
-- aggregate, against all of them for a baseline that is always true
-- ---------------------------------------------------------------------------

CALL bench.measure(
    format('probe: text keys, %s-key filter', bench.n(:small_keys)),
    '≤ 1.25', 1.25,
    $q$SELECT sum(CASE WHEN bloom_contains((SELECT f FROM bench_filters WHERE name = 'text_small'), key)
                      THEN 1 ELSE 0 END) FROM bench_probe_text$q$,
    $q$SELECT sum(CASE WHEN hashtext(key) <> 0 THEN 1 ELSE 0 END) FROM bench_probe_text$q$,
    settings => :serial, runs => :runs, nrows => :probe_rows, filter => 'text_small');

CALL bench.measure(
    format('probe: bigint keys, %s-key filter', bench.n(:small_keys)),
    '≤ 1.25', 1.25,
    $q$SELECT sum(CASE WHEN bloom_contains((SELECT f FROM bench_filters WHERE name = 'int_small'), key)
                      THEN 1 ELSE 0 END) FROM bench_probe_int$q$,
    $q$SELECT sum(CASE WHEN hashint8(key) <> 0 THEN 1 ELSE 0 END) FROM bench_probe_int$q$,
    settings => :serial, runs => :runs, nrows => :probe_rows, filter => 'int_small');

CALL bench.measure(
    format('probe: text keys, %s-key filter', bench.n(:big_keys)),
    '≤ 1.5', 1.5,
    $q$SELECT sum(CASE WHEN bloom_contains((SELECT f FROM bench_filters WHERE name = 'text_big'), key)
                      THEN 1 ELSE 0 END) FROM bench_probe_text$q$,
    $q$SELECT sum(CASE WHEN hashtext(key) <> 0 THEN 1 ELSE 0 END) FROM bench_probe_text$q$,
    settings => :serial, runs => :runs, nrows => :probe_rows, filter => 'text_big');

CALL bench.measure(
    format('probe: bigint keys, %s-key filter', bench.n(:big_keys)),
    '≤ 1.5', 1.5,
    $q$SELECT sum(CASE WHEN bloom_contains((SELECT f FROM bench_filters WHERE name = 'int_big'), key)
                      THEN 1 ELSE 0 END) FROM bench_probe_int$q$,
    $q$SELECT sum(CASE WHEN hashint8(key) <> 0 THEN 1 ELSE 0 END) FROM bench_probe_int$q$,
    settings => :serial, runs => :runs, nrows => :probe_rows, filter => 'int_big');

CALL bench.measure(
    format('probe: bigint keys, %s-key filter%s', bench.n(:huge_keys), :'huge_note'),
    '≤ 1.5', 1.5,
    $q$SELECT sum(CASE WHEN bloom_contains((SELECT f FROM bench_filters WHERE name = 'int_huge'), key)
                      THEN 1 ELSE 0 END) FROM bench_probe_int$q$,
    $q$SELECT sum(CASE WHEN hashint8(key) <> 0 THEN 1 ELSE 0 END) FROM bench_probe_int$q$,
    settings => :serial, runs => :runs, nrows => :probe_rows, filter => 'int_huge');

-- ---------------------------------------------------------------------------
-- per partition: each row probes its own partition's filter, through a join
-- ---------------------------------------------------------------------------

CALL bench.measure(
    format('per partition: %s filters × %s keys, joined (baseline: one %s-key filter)',
           :nparts, bench.n(:big_keys / :nparts), bench.n(:big_keys)),
    '≤ 1.3', 1.3,
    $q$SELECT count(*) FROM bench_probe_part p
       JOIN bench_part_filters pf USING (part)
       WHERE bloom_contains(pf.f, p.key)$q$,
    $q$SELECT count(*) FROM bench_probe_part p
       WHERE bloom_contains((SELECT f FROM bench_filters WHERE name = 'int_big'), p.key)$q$,
    settings => :serial, runs => :runs, nrows => :probe_rows);

-- ---------------------------------------------------------------------------
-- single-key probe: timed by run.sh with pgbench; registered here for the
-- report order
-- ---------------------------------------------------------------------------

SELECT bench.register(:'single_name', '≤ 2', 2);

-- ---------------------------------------------------------------------------
-- build: bloom_agg over the probe tables, serial and parallel
-- ---------------------------------------------------------------------------

CALL bench.measure(
    format('build: bloom_agg(text key), %s rows, serial (baseline: sum(hashtext))', bench.n(:probe_rows)),
    '≤ 1.5', 1.5,
    $q$SELECT octet_length(bloom_agg(key)::bytea) FROM bench_probe_text$q$,
    $q$SELECT sum(hashtext(key)) FROM bench_probe_text$q$,
    settings => :serial, runs => :runs, nrows => :probe_rows);

CALL bench.measure(
    format('build: bloom_agg(bigint key), %s rows, serial (baseline: sum(hashint8))', bench.n(:probe_rows)),
    '≤ 1.5', 1.5,
    $q$SELECT octet_length(bloom_agg(key)::bytea) FROM bench_probe_int$q$,
    $q$SELECT sum(hashint8(key)) FROM bench_probe_int$q$,
    settings => :serial, runs => :runs, nrows => :probe_rows);

-- The timed queries return the filter's length; the warm-up keeps each
-- variant's filter itself (its bytes, as text), and the report requires the
-- parallel and the serial filter to be equal byte for byte.
\set parallel2 'ARRAY[''max_parallel_workers_per_gather'', ''2'', ''parallel_setup_cost'', ''0'', ''parallel_tuple_cost'', ''0'', ''min_parallel_table_scan_size'', ''0'']'

CALL bench.measure(
    format('build, parallel: bloom_agg(text key), %s rows, 2 workers (baseline: the same, serial)', bench.n(:probe_rows)),
    '≥ 1.5 × faster (ratio ≤ 0.667)', 1 / 1.5,
    $q$SELECT octet_length(bloom_agg(key)::bytea) FROM bench_probe_text$q$,
    $q$SELECT octet_length(bloom_agg(key)::bytea) FROM bench_probe_text$q$,
    ours_settings => :parallel2, base_settings => :serial,
    runs => :runs, speedup => true, same_result => true,
    ours_check => $q$SELECT bloom_agg(key)::bytea::text FROM bench_probe_text$q$,
    base_check => $q$SELECT bloom_agg(key)::bytea::text FROM bench_probe_text$q$);

CALL bench.measure(
    format('build, parallel: bloom_agg(bigint key), %s rows, 2 workers (baseline: the same, serial)', bench.n(:probe_rows)),
    '≥ 1.5 × faster (ratio ≤ 0.667)', 1 / 1.5,
    $q$SELECT octet_length(bloom_agg(key)::bytea) FROM bench_probe_int$q$,
    $q$SELECT octet_length(bloom_agg(key)::bytea) FROM bench_probe_int$q$,
    ours_settings => :parallel2, base_settings => :serial,
    runs => :runs, speedup => true, same_result => true,
    ours_check => $q$SELECT bloom_agg(key)::bytea::text FROM bench_probe_int$q$,
    base_check => $q$SELECT bloom_agg(key)::bytea::text FROM bench_probe_int$q$);

-- the sized form, whose partial states are bits ORed together
CALL bench.measure(
    format('build, parallel: bloom_agg(text key, %s, 0.01) (sized), %s rows, 2 workers (baseline: the same, serial)', :probe_rows, bench.n(:probe_rows)),
    '≥ 1.5 × faster (ratio ≤ 0.667)', 1 / 1.5,
    format($q$SELECT octet_length(bloom_agg(key, %s, 0.01)::bytea) FROM bench_probe_text$q$, :probe_rows),
    format($q$SELECT octet_length(bloom_agg(key, %s, 0.01)::bytea) FROM bench_probe_text$q$, :probe_rows),
    ours_settings => :parallel2, base_settings => :serial,
    runs => :runs, speedup => true, same_result => true,
    ours_check => format($q$SELECT bloom_agg(key, %s, 0.01)::bytea::text FROM bench_probe_text$q$, :probe_rows),
    base_check => format($q$SELECT bloom_agg(key, %s, 0.01)::bytea::text FROM bench_probe_text$q$, :probe_rows));

CALL bench.measure(
    format('build, parallel: bloom_agg(bigint key, %s, 0.01) (sized), %s rows, 2 workers (baseline: the same, serial)', :probe_rows, bench.n(:probe_rows)),
    '≥ 1.5 × faster (ratio ≤ 0.667)', 1 / 1.5,
    format($q$SELECT octet_length(bloom_agg(key, %s, 0.01)::bytea) FROM bench_probe_int$q$, :probe_rows),
    format($q$SELECT octet_length(bloom_agg(key, %s, 0.01)::bytea) FROM bench_probe_int$q$, :probe_rows),
    ours_settings => :parallel2, base_settings => :serial,
    runs => :runs, speedup => true, same_result => true,
    ours_check => format($q$SELECT bloom_agg(key, %s, 0.01)::bytea::text FROM bench_probe_int$q$, :probe_rows),
    base_check => format($q$SELECT bloom_agg(key, %s, 0.01)::bytea::text FROM bench_probe_int$q$, :probe_rows));

-- what a parallel aggregate gets out of this machine: the same plain
-- aggregate over the same rows, serial and with 2 workers
CALL bench.measure(
    format('build, parallel: sum(hashtext(key)), %s rows, 2 workers (baseline: the same, serial) [the machine]', bench.n(:probe_rows)),
    'none: what the machine gives', NULL,
    $q$SELECT sum(hashtext(key)) FROM bench_probe_text$q$,
    $q$SELECT sum(hashtext(key)) FROM bench_probe_text$q$,
    ours_settings => :parallel2, base_settings => :serial,
    runs => :runs, speedup => true);

CALL bench.measure(
    format('build, parallel: sum(hashint8(key)), %s rows, 2 workers (baseline: the same, serial) [the machine]', bench.n(:probe_rows)),
    'none: what the machine gives', NULL,
    $q$SELECT sum(hashint8(key)) FROM bench_probe_int$q$,
    $q$SELECT sum(hashint8(key)) FROM bench_probe_int$q$,
    ours_settings => :parallel2, base_settings => :serial,
    runs => :runs, speedup => true);

-- ---------------------------------------------------------------------------
-- anti-join pre-check: test/bench/antijoin.sh, run after this file
-- ---------------------------------------------------------------------------

-- ---------------------------------------------------------------------------
-- space: bits of the bitmap per key, against -ln p / (ln 2)^2
-- ---------------------------------------------------------------------------

INSERT INTO bench.workloads (workload, max_ratio, target, unit)
SELECT format('space: bits per key at %s (capacity %s)', label, bench.n(:acc_keys)),
       CASE WHEN p >= 0.001 THEN 1.2 ELSE 1.5 END,
       CASE WHEN p >= 0.001 THEN '≤ 1.2' ELSE '≤ 1.5' END,
       'bits/key'
FROM (VALUES (0.01::float8, '1%'), (0.001, '0.1%'), (0.0001, '0.01%')) AS r(p, label)
ORDER BY p DESC;

INSERT INTO bench.vals (workload, variant, value, display)
SELECT format('space: bits per key at %s (capacity %s)', label, bench.n(:acc_keys)), v.variant, v.value,
       round(v.value::numeric, 2) || ' bits/key'
FROM (VALUES (0.01::float8, '1%'), (0.001, '0.1%'), (0.0001, '0.01%')) AS r(p, label)
JOIN bench_acc a ON a.rate = r.p
CROSS JOIN LATERAL (VALUES
    ('ours', (octet_length(a.f::bytea) - :header_bytes) * 8.0 / :acc_keys),
    ('baseline', -ln(p) / (ln(2) ^ 2))) AS v(variant, value);

-- ---------------------------------------------------------------------------
-- accuracy: false positives among acc_absent absent keys, at full capacity
-- ---------------------------------------------------------------------------

INSERT INTO bench.workloads (workload, max_ratio, target, unit)
SELECT format('accuracy: false-positive rate at %s, %s keys, %s absent probed', label,
              bench.n(:acc_keys), bench.n(:acc_absent)),
       1.1, '≤ 1.1', 'rate'
FROM (VALUES (0.01::float8, '1%'), (0.001, '0.1%'), (0.0001, '0.01%')) AS r(p, label)
ORDER BY p DESC;

SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE acc_counts AS
SELECT r.p, r.label,
       (SELECT count(*) FROM generate_series(1, :acc_absent) AS g
        WHERE bloom_contains((SELECT f FROM bench_acc WHERE rate = r.p), (g * 2 + 1)::bigint)) AS fp,
       (SELECT count(*) FROM generate_series(1, :acc_keys) AS g
        WHERE NOT bloom_contains((SELECT f FROM bench_acc WHERE rate = r.p), (g * 2)::bigint)) AS fn
FROM (VALUES (0.01::float8, '1%'), (0.001, '0.1%'), (0.0001, '0.01%')) AS r(p, label);
RESET max_parallel_workers_per_gather;

-- a false negative is a bug, not a performance problem: stop here
SELECT sum(fn) = 0 AS no_false_negatives FROM acc_counts \gset
\if :no_false_negatives
\else
    DO $$ BEGIN RAISE EXCEPTION 'bloom_contains missed a key that was added'; END $$;
\endif

INSERT INTO bench.vals (workload, variant, value, display)
SELECT format('accuracy: false-positive rate at %s, %s keys, %s absent probed', label,
              bench.n(:acc_keys), bench.n(:acc_absent)), v.*
FROM acc_counts
CROSS JOIN LATERAL (VALUES
    ('ours', fp::float8 / :acc_absent,
     format('%s%% (%s; ±%s%% at 95%%)', round(100.0 * fp / :acc_absent, 4),
            to_char(fp, 'FM999,999,999'),
            round((196.0 / sqrt(greatest(fp, 1)))::numeric, 0))),
    ('baseline', p, label)) AS v(variant, value, display);

-- ---------------------------------------------------------------------------
-- cost breakdown: parts of the workloads above, measured alone
-- ---------------------------------------------------------------------------

SELECT bench.diag_time('scan only: count(*) FROM bench_probe_text',
                       'SELECT count(*) FROM bench_probe_text', :runs, :serial);
SELECT bench.diag_time('scan only: count(*) FROM bench_probe_int',
                       'SELECT count(*) FROM bench_probe_int', :runs, :serial);
SELECT bench.diag_time(format('read whole filter %s (%s): get_byte(f::bytea, 0)', name,
                              bench.bytes(pg_column_size(f))),
                       format('SELECT get_byte(f::bytea, 0) FROM bench_filters WHERE id = %s', id),
                       :runs, :serial)
FROM bench_filters WHERE pg_column_size(f) >= 2000 ORDER BY id;

-- per partition: the join alone, and the probes with each partition's rows
-- together (the data above changes partition every other row, so the
-- per-call-site cache's last-hit check fails on every row)
SELECT bench.diag_time('per partition: the join alone, no bloom_contains',
                       'SELECT count(*) FROM bench_probe_part p JOIN bench_part_filters pf USING (part)',
                       :runs, :serial);
CREATE UNLOGGED TABLE bench_probe_part_sorted AS
    SELECT * FROM bench_probe_part ORDER BY part, key;
VACUUM (FREEZE, ANALYZE) bench_probe_part_sorted;
SELECT bench.diag_time('per partition: the same query over rows sorted by partition',
                       'SELECT count(*) FROM bench_probe_part_sorted p JOIN bench_part_filters pf USING (part) WHERE bloom_contains(pf.f, p.key)',
                       :runs, :serial);
DROP TABLE bench_probe_part_sorted;
