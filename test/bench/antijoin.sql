--
-- test/bench/antijoin.sql: the anti-join pre-check against the fastest plain
-- NOT EXISTS, regime by regime (run by test/bench/antijoin.sh, which says
-- what is measured; the report is antijoin_report.sql).
--
-- psql variables (set by antijoin.sh): regimes, a space-separated list of
-- EXISTING:BATCH:PERCENT (existing keys, incoming keys, percent of the
-- incoming keys that exist); runs, the timed rounds.
--
-- Everything lives in schema bench_aj, made afresh here.  Every query is
-- serial and timed with EXPLAIN (ANALYZE, TIMING OFF): no per-row clock
-- reads, no result transfer, no planning.
--
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
-- load the library now, so that its settings (bloomfilter.*) exist before
-- the session's settings are taken to compare each run's with
LOAD 'bloomfilter';
SET jit = off;
-- the plain candidates are PostgreSQL's own joins: the planner's pre-check
-- (bloomfilter.join_filter) would take them over where the table has a
-- bloomfilter index; join.sh measures that
SET bloomfilter.join_filter = off;
DROP SCHEMA IF EXISTS bench_aj CASCADE;
CREATE SCHEMA bench_aj;

-- ---------------------------------------------------------------------------
-- bookkeeping
-- ---------------------------------------------------------------------------

-- One row per regime, in report order.
CREATE TABLE bench_aj.regimes (
    ord        int PRIMARY KEY,
    existing   bigint NOT NULL,
    batch      bigint NOT NULL,
    pct        numeric NOT NULL,
    present    bigint NOT NULL,     -- incoming keys that exist
    existing_t text NOT NULL,       -- table of the existing keys (btree on key)
    filter_t   text NOT NULL,       -- one row: bloom_agg of the existing keys
    index_n    text NOT NULL,       -- bloomfilter index on the existing keys
    incoming_t text NOT NULL,
    planner    text,                -- the plain NOT EXISTS's plan as planned at work_mem 4MB
    filter_bytes bigint,            -- the stored filter, as stored
    index_bytes bigint,             -- the bloomfilter index
    btree_bytes bigint,
    maybe_stored bigint,            -- incoming keys each probe answers "maybe" for
    maybe_index bigint
);

-- The variants of each regime.  kind 'plain': the plain NOT EXISTS under one
-- forced plan (the fastest is the baseline); 'pre': a pre-check.  A timed
-- run whose plan does not match plan_re stops the benchmark.
CREATE TABLE bench_aj.variants (
    regime     int NOT NULL,
    ord        int NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('plain', 'pre')),
    label      text NOT NULL,
    query      text NOT NULL,
    settings   text[] NOT NULL,     -- name, value, name, value...
    plan_re    text,
    PRIMARY KEY (regime, ord)
);

-- Every run.  Round 0 is the warm-up: its count is kept, its time not.
CREATE TABLE bench_aj.runs (
    regime     int NOT NULL,
    variant    int NOT NULL,
    round      int NOT NULL,
    ms         float8,              -- Execution Time
    cpu_ms     float8,              -- the backend's time on a CPU meanwhile
    result     bigint,
    settings   text,                -- what differed from the session's settings
    plan       text                 -- node types, depth first
);

-- Parts of a regime's pre-check, measured alone.
CREATE TABLE bench_aj.diag (
    regime     int NOT NULL,
    ord        serial,
    what       text NOT NULL,
    value      float8,
    cpu        float8,
    unit       text NOT NULL
);

-- 10000 -> '10k', 30000000 -> '30M'
CREATE FUNCTION bench_aj.n(v bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN v >= 1000000 AND v % 1000000 = 0 THEN (v / 1000000) || 'M'
        WHEN v >= 1000 AND v % 1000 = 0 THEN (v / 1000) || 'k'
        ELSE v::text
    END
$$;

SET search_path = bench_aj, public;
\ir timing.sql
RESET search_path;

CREATE FUNCTION bench_aj.settings_now() RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_object_agg(name, current_setting(name)) FROM pg_settings
$$;

-- The settings that differ from "base", as 'name=value, ...'.  A setting
-- that differs and is not among "asked" stops the run: nothing one variant
-- sets may reach another.
CREATE FUNCTION bench_aj.settings_used(base jsonb, asked text[], what text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    used text;
    stray text;
BEGIN
    SELECT coalesce(string_agg(format('%s=%s', name, current_setting(name)), ', ' ORDER BY name), '(none)'),
           string_agg(name, ', ') FILTER (WHERE NOT name = ANY (
               SELECT asked[k] FROM generate_subscripts(asked, 1) AS k WHERE k % 2 = 1))
    INTO used, stray
    FROM pg_settings
    WHERE current_setting(name) IS DISTINCT FROM base ->> name
      AND name NOT IN ('transaction_isolation', 'transaction_read_only',
                       'transaction_deferrable', 'in_hot_standby');
    IF stray IS NOT NULL THEN
        RAISE EXCEPTION 'anti-join: % runs with settings it did not ask for: %', what, stray;
    END IF;
    RETURN used;
END
$$;

-- Execution time of one run of a query (EXPLAIN (ANALYZE, TIMING OFF)), the
-- backend's CPU time meanwhile (planning included, well under a
-- millisecond here), and its node types, depth first ("Aggregate > Merge
-- Join (Right Anti) > ...").
CREATE FUNCTION bench_aj.explain(q text, OUT ms float8, OUT cpu_ms float8, OUT plan text)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
    c0 bigint;
BEGIN
    c0 := bench_aj.cpu_ns();
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO j;
    cpu_ms := (bench_aj.cpu_ns() - c0) / 1e6;
    ms := (j -> 0 ->> 'Execution Time')::float8;
    plan := bench_aj.node_types(j);
END
$$;

CREATE FUNCTION bench_aj.node_types(j jsonb) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(concat_ws(' ', n ->> 'Node Type',
                                CASE WHEN n ->> 'Join Type' NOT IN ('Inner') THEN '(' || (n ->> 'Join Type') || ')' END),
                      ' > ' ORDER BY o)
    FROM jsonb_path_query(j -> 0 -> 'Plan', 'strict $.** ? (exists (@."Node Type"))')
         WITH ORDINALITY AS t(n, o)
$$;

CREATE FUNCTION bench_aj.median(r int, v int) RETURNS float8
LANGUAGE sql STABLE AS $$
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)
    FROM bench_aj.runs WHERE regime = r AND variant = v AND round > 0
$$;

CREATE FUNCTION bench_aj.median_cpu(r int, v int) RETURNS float8
LANGUAGE sql STABLE AS $$
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms)
    FROM bench_aj.runs WHERE regime = r AND variant = v AND round > 0
$$;

--
-- Run a regime's variants: a warm-up of each, whose count must be the
-- number of new incoming keys (else the benchmark stops: a pre-check that
-- loses or adds a row is wrong however fast it is), then "runs" rounds in
-- which every variant runs once, the order reversed every other round.
-- Each run is a transaction of its own.
--
CREATE PROCEDURE bench_aj.run(r int, runs int, INOUT line text DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    g record;
    v record;
    e record;
    base_cfg jsonb := bench_aj.settings_now();
    used text;
    res bigint;
    expected bigint;
    best int;
BEGIN
    SELECT * INTO g FROM bench_aj.regimes WHERE ord = r;
    expected := g.batch - g.present;
    FOR i IN 0 .. runs LOOP
        FOR v IN SELECT * FROM bench_aj.variants WHERE regime = r
                 ORDER BY CASE WHEN i % 2 = 0 THEN ord ELSE -ord END LOOP
            PERFORM bench_aj.apply(v.settings);
            used := bench_aj.settings_used(base_cfg, v.settings, v.label);
            IF i = 0 THEN
                EXECUTE v.query INTO res;
                IF res IS DISTINCT FROM expected THEN
                    RAISE EXCEPTION 'anti-join: % (%) counted % new keys, not %',
                        v.label, g.incoming_t, res, expected;
                END IF;
                INSERT INTO bench_aj.runs VALUES (r, v.ord, 0, NULL, NULL, res, used, NULL);
            ELSE
                e := bench_aj.explain(v.query);
                IF v.plan_re IS NOT NULL AND e.plan !~ v.plan_re THEN
                    RAISE EXCEPTION 'anti-join: % ran as % (wanted %)', v.label, e.plan, v.plan_re;
                END IF;
                INSERT INTO bench_aj.runs VALUES (r, v.ord, i, e.ms, e.cpu_ms, NULL, used, e.plan);
            END IF;
            COMMIT;
        END LOOP;
    END LOOP;

    SELECT ord INTO best FROM bench_aj.variants
    WHERE regime = r AND kind = 'plain' ORDER BY bench_aj.median(r, ord) LIMIT 1;
    SELECT format('%s: fastest plain %s ms, CPU %s ms (%s); %s', g.incoming_t,
                  round(bench_aj.median(r, best)::numeric), round(bench_aj.median_cpu(r, best)::numeric),
                  (SELECT b.label FROM bench_aj.variants b WHERE b.regime = r AND b.ord = best),
                  string_agg(format('%s %s ms, CPU %s ms', v2.label, round(bench_aj.median(r, v2.ord)::numeric),
                                    round(bench_aj.median_cpu(r, v2.ord)::numeric)), '; ' ORDER BY v2.ord))
    INTO line
    FROM bench_aj.variants v2
    WHERE v2.regime = r AND v2.kind = 'pre';
END
$$;

-- Median of a few runs of one query, serial, into bench_aj.diag.
CREATE PROCEDURE bench_aj.diag_time(r int, what text, q text, runs int)
LANGUAGE plpgsql AS $$
DECLARE
    e record;
    t float8[] := '{}';
    c float8[] := '{}';
BEGIN
    PERFORM set_config('max_parallel_workers_per_gather', '0', true);
    EXECUTE q;                  -- warm-up
    FOR i IN 1 .. runs LOOP
        e := bench_aj.explain(q);
        t := t || e.ms;
        c := c || e.cpu_ms;
    END LOOP;
    INSERT INTO bench_aj.diag (regime, what, value, cpu, unit)
    SELECT r, what, (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(t) AS x),
           (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(c) AS x), 'ms';
    COMMIT;
END
$$;

-- ---------------------------------------------------------------------------
-- regimes and data
-- ---------------------------------------------------------------------------

INSERT INTO bench_aj.regimes (ord, existing, batch, pct, present, existing_t, filter_t, index_n, incoming_t)
SELECT o, e, b, p, round(b * p / 100),
       'existing_' || lower(bench_aj.n(e)),
       'filter_' || lower(bench_aj.n(e)),
       'existing_' || lower(bench_aj.n(e)) || '_bf',
       format('incoming_%s_%s_%s', lower(bench_aj.n(e)), lower(bench_aj.n(b)), replace(p::text, '.', '_'))
FROM unnest(string_to_array(trim(:'regimes'), ' ')) WITH ORDINALITY AS t(spec, o),
     LATERAL (SELECT split_part(spec, ':', 1)::bigint AS e,
                     split_part(spec, ':', 2)::bigint AS b,
                     split_part(spec, ':', 3)::numeric AS p) AS s
WHERE spec <> '';

-- The keys are chosen so that the answer is known: the existing keys are
-- the even numbers 2 .. 2 × existing; of the incoming keys, "present" are
-- existing keys (2 × ((g × 7919 mod existing) + 1)) and the rest new odd
-- ones (2 × (g × 104729 mod existing) + 1), both spread over the whole key
-- range, in random order.  7919 and 104729 are primes, so the keys are
-- distinct when neither divides the number of existing keys.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT * FROM bench_aj.regimes LOOP
        IF g.batch > g.existing OR g.pct < 0 OR g.pct > 100 OR g.existing % 7919 = 0
           OR g.existing % 104729 = 0 THEN
            RAISE EXCEPTION 'anti-join: regime %:%:% is not one this benchmark can make',
                g.existing, g.batch, g.pct
                USING HINT = 'Give EXISTING:BATCH:PERCENT with BATCH <= EXISTING and PERCENT from 0 to 100.';
        END IF;
    END LOOP;
END
$$;

SET max_parallel_workers_per_gather = 0;
SELECT setseed(0.42) \g /dev/null

-- existing keys, a btree, a stored filter and a bloomfilter index, once per
-- size; the index is made after the load with capacity = the rows, so that
-- the numbers do not depend on how an index grows
SELECT format($s$CREATE UNLOGGED TABLE bench_aj.%1$I AS
                     SELECT (g * 2)::bigint AS key FROM generate_series(1, %2$s) AS g$s$, existing_t, existing),
       format('CREATE INDEX ON bench_aj.%I (key)', existing_t),
       format('CREATE UNLOGGED TABLE bench_aj.%I AS SELECT bloom_agg(key, %s, 0.01) AS f FROM bench_aj.%I',
              filter_t, existing, existing_t),
       format('CREATE INDEX %I ON bench_aj.%I USING bloomfilter (key) WITH (capacity = %s, false_positive_rate = 0.01)',
              index_n, existing_t, existing)
FROM (SELECT DISTINCT existing, existing_t, filter_t, index_n FROM bench_aj.regimes) AS d
ORDER BY existing \gexec

SELECT format($s$CREATE UNLOGGED TABLE bench_aj.%1$I AS
                     SELECT key FROM (
                         SELECT (((g * 7919) %% %2$s) + 1) * 2 AS key
                         FROM generate_series(1::bigint, %3$s) AS g
                         UNION ALL
                         SELECT ((g * 104729) %% %2$s) * 2 + 1
                         FROM generate_series(1::bigint, %4$s) AS g
                     ) AS k ORDER BY random()$s$, incoming_t, existing, present, batch - present)
FROM bench_aj.regimes ORDER BY ord \gexec

SELECT format('VACUUM (FREEZE, ANALYZE) bench_aj.%I', t)
FROM (SELECT existing_t FROM bench_aj.regimes UNION SELECT filter_t FROM bench_aj.regimes
      UNION SELECT incoming_t FROM bench_aj.regimes) AS u(t) \gexec
RESET max_parallel_workers_per_gather;

-- ---------------------------------------------------------------------------
-- variants
-- ---------------------------------------------------------------------------

-- The plain NOT EXISTS under each plan PostgreSQL may choose, each forced
-- with enable_*: a hash anti join (work_mem 4MB: in batches, which was
-- faster than one big hash table at 1GB), a merge anti join (the incoming
-- keys sorted in memory, the existing ones read in order from the btree),
-- and a nested loop with one btree probe per incoming key.  The fastest is
-- each regime's baseline.
INSERT INTO bench_aj.variants (regime, ord, kind, label, query, settings, plan_re)
SELECT g.ord, c.o, 'plain', c.label,
       format('SELECT count(*) FROM bench_aj.%I i WHERE NOT EXISTS (SELECT 1 FROM bench_aj.%I e WHERE e.key = i.key)',
              g.incoming_t, g.existing_t),
       ARRAY['max_parallel_workers_per_gather', '0'] || c.settings, c.plan_re
FROM bench_aj.regimes g
CROSS JOIN (VALUES
    (1, 'hash anti join, work_mem 4MB',
     ARRAY['work_mem', '4MB', 'enable_mergejoin', 'off', 'enable_nestloop', 'off'], '^Aggregate > Hash Join \((Right )?Anti\)'),
    (2, 'merge anti join, work_mem 256MB',
     ARRAY['work_mem', '256MB', 'enable_hashjoin', 'off', 'enable_nestloop', 'off'], '^Aggregate > Merge Join \((Right )?Anti\)'),
    (3, 'nested loop anti join, a btree probe per key',
     ARRAY['work_mem', '4MB', 'enable_hashjoin', 'off', 'enable_mergejoin', 'off'], '^Aggregate > Nested Loop \(Anti\) > Seq Scan > Index Only Scan$')
) AS c(o, label, settings, plan_re);

-- The pre-checks: @P@ is the filter probe, a stored bloom value or the
-- bloomfilter index.  "README form": NOT probe OR NOT EXISTS (… OFFSET 0),
-- one pass, the exact checks in the incoming rows' order; OFFSET 0 keeps
-- the planner from hashing the whole existing table for the NOT EXISTS.
-- The other two put the exact checks in key order, so that consecutive
-- btree probes share pages (and CPU cache) instead of each walking a
-- random path: "maybe keys sorted" scans the batch twice, for the surely
-- new keys and for the "maybe" keys, sorted before their exact checks (the
-- probe's IS NOT TRUE keeps NULL keys, which a plain NOT EXISTS returns
-- too); "batch sorted" is the README form over the batch sorted by key,
-- one scan and one probe per key, a sort of the whole batch (in memory at
-- work_mem 64MB: 25 MB for 1M bigint keys).
\set q_readme 'SELECT count(*) FROM bench_aj.@I@ i WHERE NOT @P@ OR NOT EXISTS (SELECT 1 FROM bench_aj.@E@ e WHERE e.key = i.key OFFSET 0)'
\set q_sorted 'SELECT count(*) FROM (SELECT key FROM bench_aj.@I@ i WHERE @P@ IS NOT TRUE UNION ALL SELECT key FROM (SELECT key FROM bench_aj.@I@ i WHERE @P@ ORDER BY key) m WHERE NOT EXISTS (SELECT 1 FROM bench_aj.@E@ e WHERE e.key = m.key OFFSET 0)) AS new_keys'
\set q_batch_sorted 'SELECT count(*) FROM (SELECT * FROM bench_aj.@I@ ORDER BY key) i WHERE NOT @P@ OR NOT EXISTS (SELECT 1 FROM bench_aj.@E@ e WHERE e.key = i.key OFFSET 0)'
\set q_free 'SELECT count(*) FROM bench_aj.@I@ i WHERE NOT @P@ OR NOT EXISTS (SELECT 1 FROM bench_aj.@E@ e WHERE e.key = i.key)'

INSERT INTO bench_aj.variants (regime, ord, kind, label, query, settings)
SELECT g.ord, c.o, 'pre', c.label,
       replace(replace(replace(c.q, '@I@', quote_ident(g.incoming_t)), '@E@', quote_ident(g.existing_t)),
               '@P@', CASE c.probe
                          WHEN 'stored' THEN format('bloom_contains((SELECT f FROM bench_aj.%I), i.key)', g.filter_t)
                          ELSE format('bloom_index_contains(%L, i.key)', 'bench_aj.' || g.index_n) END),
       ARRAY['max_parallel_workers_per_gather', '0', 'work_mem', c.wm]
FROM bench_aj.regimes g
CROSS JOIN (VALUES
    (11, 'stored filter, README form', 'stored', :'q_readme', '4MB'),
    (12, 'stored filter, maybe keys sorted', 'stored', :'q_sorted', '4MB'),
    (13, 'stored filter, batch sorted', 'stored', :'q_batch_sorted', '64MB'),
    (21, 'index, README form', 'index', :'q_readme', '4MB'),
    (22, 'index, maybe keys sorted', 'index', :'q_sorted', '4MB'),
    (23, 'index, batch sorted', 'index', :'q_batch_sorted', '64MB')
) AS c(o, label, probe, q, wm);

-- The README's warning, backed by numbers in the first regime: without
-- OFFSET 0, at a large work_mem the planner hashes the whole existing table
-- for the NOT EXISTS under the OR.
INSERT INTO bench_aj.variants (regime, ord, kind, label, query, settings)
SELECT g.ord, 31, 'pre', 'stored filter, README form without OFFSET 0, work_mem 256MB',
       replace(replace(replace(:'q_free', '@I@', quote_ident(g.incoming_t)), '@E@', quote_ident(g.existing_t)),
               '@P@', format('bloom_contains((SELECT f FROM bench_aj.%I), i.key)', g.filter_t)),
       ARRAY['max_parallel_workers_per_gather', '0', 'work_mem', '256MB']
FROM bench_aj.regimes g WHERE g.ord = 1;

-- what the planner picks for the plain NOT EXISTS on its own, serial, at
-- work_mem 4MB (PostgreSQL's default)
SET max_parallel_workers_per_gather = 0;
SET work_mem = '4MB';
CREATE FUNCTION pg_temp.planned(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
    RETURN bench_aj.node_types(j);
END
$$;
UPDATE bench_aj.regimes g SET planner = pg_temp.planned(v.query)
FROM bench_aj.variants v WHERE v.regime = g.ord AND v.ord = 1;
RESET max_parallel_workers_per_gather;
RESET work_mem;

-- ---------------------------------------------------------------------------
-- the runs
-- ---------------------------------------------------------------------------

\pset format unaligned
\pset tuples_only on
SELECT format('CALL bench_aj.run(%s, %s)', ord, :runs) FROM bench_aj.regimes ORDER BY ord \gexec

-- sizes, and how many incoming keys each probe answers "maybe" for
SELECT format($u$UPDATE bench_aj.regimes SET
                     filter_bytes = (SELECT pg_column_size(f) FROM bench_aj.%1$I),
                     index_bytes = pg_relation_size(%2$L),
                     btree_bytes = (SELECT sum(pg_relation_size(indexrelid)) FROM pg_index
                                    WHERE indrelid = %3$L::regclass AND indexrelid <> %2$L::regclass),
                     maybe_stored = (SELECT count(*) FROM bench_aj.%4$I i
                                     WHERE bloom_contains((SELECT f FROM bench_aj.%1$I), i.key)),
                     maybe_index = (SELECT count(*) FROM bench_aj.%4$I i
                                    WHERE bloom_index_contains(%2$L, i.key))
                 WHERE ord = %5$s$u$,
              filter_t, 'bench_aj.' || index_n, 'bench_aj.' || existing_t, incoming_t, ord)
FROM bench_aj.regimes ORDER BY ord \gexec

-- The parts of each pre-check, alone: reading the stored filter whole (what
-- every query that probes it pays once; the index's call site copies the
-- index's pages from shared buffers instead), the filter pass with each
-- probe, and the exact checks of the stored filter's "maybe" keys in the
-- incoming rows' order and sorted.
SELECT format('CREATE UNLOGGED TABLE bench_aj.maybe_%s AS SELECT key FROM bench_aj.%I i WHERE bloom_contains((SELECT f FROM bench_aj.%I), i.key)',
              ord, incoming_t, filter_t),
       format('VACUUM (FREEZE, ANALYZE) bench_aj.maybe_%s', ord)
FROM bench_aj.regimes ORDER BY ord \gexec

SELECT format('CALL bench_aj.diag_time(%s, %L, %L, %s)', ord, w.what, w.q, :runs)
FROM bench_aj.regimes g
CROSS JOIN LATERAL (VALUES
    (1, format('read the stored filter whole (%s): get_byte(f::bytea, 0)', pg_size_pretty(g.filter_bytes)),
     format('SELECT get_byte(f::bytea, 0) FROM bench_aj.%I', g.filter_t)),
    (2, 'filter pass alone, stored filter: count(*) WHERE NOT bloom_contains',
     format('SELECT count(*) FROM bench_aj.%I i WHERE NOT bloom_contains((SELECT f FROM bench_aj.%I), i.key)',
            g.incoming_t, g.filter_t)),
    (3, 'filter pass alone, index: count(*) WHERE NOT bloom_index_contains',
     format('SELECT count(*) FROM bench_aj.%I i WHERE NOT bloom_index_contains(%L, i.key)',
            g.incoming_t, 'bench_aj.' || g.index_n)),
    (4, format('exact checks alone of the stored filter''s %s "maybe" keys, in the incoming order', g.maybe_stored),
     format('SELECT count(*) FROM bench_aj.maybe_%s m WHERE NOT EXISTS (SELECT 1 FROM bench_aj.%I e WHERE e.key = m.key OFFSET 0)',
            g.ord, g.existing_t)),
    (5, 'the same exact checks, the "maybe" keys sorted first',
     format('SELECT count(*) FROM (SELECT key FROM bench_aj.maybe_%s ORDER BY key) m WHERE NOT EXISTS (SELECT 1 FROM bench_aj.%I e WHERE e.key = m.key OFFSET 0)',
            g.ord, g.existing_t))
) AS w(o, what, q)
ORDER BY g.ord, w.o \gexec

SELECT format('DROP TABLE bench_aj.maybe_%s', ord) FROM bench_aj.regimes ORDER BY ord \gexec
