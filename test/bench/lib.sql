--
-- test/bench/lib.sql: the benchmark's bookkeeping, in schema "bench".
--
-- Run by test/bench/run.sh before data.sql; needs a superuser (the memory
-- probe reads /proc/self/status with pg_read_file).
--
\set ON_ERROR_STOP 1
SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP SCHEMA IF EXISTS bench CASCADE;
CREATE SCHEMA bench;

-- One row per reported workload, in report order.
CREATE TABLE bench.workloads (
    ord          serial,
    workload     text PRIMARY KEY,
    max_ratio    float8,            -- met when ours / baseline <= max_ratio
    target       text NOT NULL,     -- as printed
    speedup      bool NOT NULL DEFAULT false,  -- print baseline/ours too
    same_result  bool NOT NULL DEFAULT false,  -- met also needs equal results
    nrows        bigint,            -- rows per query, for the breakdown
    filter       text,              -- bench_filters.name probed, if one
    unit         text NOT NULL DEFAULT 'ms'
);

-- Every timed run.  Round 0 is the warm-up: run plainly, its result kept,
-- its time not counted.
CREATE TABLE bench.runs (
    workload     text NOT NULL,
    variant      text NOT NULL CHECK (variant IN ('ours', 'baseline')),
    round        int NOT NULL,
    ms           float8,
    workers      int,
    result       text
);

-- Values that are not times (space, accuracy), one per variant.
CREATE TABLE bench.vals (
    workload     text NOT NULL,
    variant      text NOT NULL CHECK (variant IN ('ours', 'baseline')),
    value        float8 NOT NULL,
    display      text NOT NULL
);

-- Peak memory of a backend, one fresh connection per row.
CREATE TABLE bench.mem (
    ord          serial,
    what         text NOT NULL,
    start_hwm_kb bigint,            -- VmHWM right after connecting
    hwm_kb       bigint,            -- VmHWM after the query
    shmem_kb     bigint,            -- RssShmem after the query
    file_kb      bigint             -- RssFile after the query
);

-- Extra numbers for the cost breakdown.
CREATE TABLE bench.diag (
    ord          serial,
    what         text NOT NULL,
    value        float8,
    unit         text
);

-- Sizes used, for the report header.
CREATE TABLE bench.sizes (
    ord          serial,
    what         text NOT NULL,
    value        text NOT NULL
);

-- 10000 -> '10k', 30000000 -> '30M'
CREATE FUNCTION bench.n(v bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN v >= 1000000 AND v % 1000000 = 0 THEN (v / 1000000) || 'M'
        WHEN v >= 1000 AND v % 1000 = 0 THEN (v / 1000) || 'k'
        ELSE v::text
    END
$$;

-- Human-readable byte size.
CREATE FUNCTION bench.bytes(v bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN v >= 1048576 THEN round(v / 1048576.0, 1) || ' MB'
        WHEN v >= 1024 THEN round(v / 1024.0, 1) || ' KB'
        ELSE v || ' bytes'
    END
$$;

-- A field of this backend's /proc/self/status, in kB.
CREATE FUNCTION bench.vm(field text) RETURNS bigint
LANGUAGE sql AS $$
    SELECT substring(pg_read_file('/proc/self/status')
                     FROM field || ':\s*(\d+) kB')::bigint
$$;

-- Apply settings given as a flat name, value, name, value... array, for the
-- rest of the transaction.
CREATE FUNCTION bench.apply(settings text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(settings, 1), 0) BY 2 LOOP
        PERFORM set_config(settings[i], settings[i + 1], true);
    END LOOP;
END
$$;

-- Execution time of one run of a query, timed by EXPLAIN (ANALYZE, TIMING
-- OFF): no per-row clock reads, and no result transfer to the client.
CREATE FUNCTION bench.explain(q text, OUT ms float8, OUT workers int)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO j;
    ms := (j -> 0 ->> 'Execution Time')::float8;
    SELECT sum(w::text::int) INTO workers
    FROM jsonb_path_query(j, 'strict $.**."Workers Launched"') AS w;
END
$$;

-- Median of the timed runs of one variant.
CREATE FUNCTION bench.median(wl text, v text) RETURNS float8
LANGUAGE sql STABLE AS $$
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)
    FROM bench.runs WHERE workload = wl AND variant = v AND round > 0
$$;

--
-- Run a workload: a warm-up of each query (its result kept), then "runs"
-- rounds that time ours and the baseline alternately, switching which goes
-- first each round.  "settings" apply to both, then ours_settings or
-- base_settings to that variant alone.  Returns a progress line.
--
CREATE FUNCTION bench.measure(
    workload text, target text, max_ratio float8,
    ours text, baseline text,
    settings text[] DEFAULT '{}',
    ours_settings text[] DEFAULT '{}',
    base_settings text[] DEFAULT '{}',
    runs int DEFAULT 3,
    speedup bool DEFAULT false,
    same_result bool DEFAULT false,
    nrows bigint DEFAULT NULL,
    filter text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    r text;
    e record;
    v text;
BEGIN
    INSERT INTO bench.workloads (workload, max_ratio, target, speedup, same_result, nrows, filter)
    VALUES (workload, max_ratio, target, speedup, same_result, nrows, filter);

    FOREACH v IN ARRAY ARRAY['ours', 'baseline'] LOOP
        PERFORM bench.apply(settings);
        PERFORM bench.apply(CASE v WHEN 'ours' THEN ours_settings ELSE base_settings END);
        EXECUTE CASE v WHEN 'ours' THEN ours ELSE baseline END INTO r;
        INSERT INTO bench.runs VALUES (workload, v, 0, NULL, NULL, r);
    END LOOP;

    FOR i IN 1 .. runs LOOP
        FOREACH v IN ARRAY CASE WHEN i % 2 = 1 THEN ARRAY['ours', 'baseline']
                                ELSE ARRAY['baseline', 'ours'] END LOOP
            PERFORM bench.apply(settings);
            PERFORM bench.apply(CASE v WHEN 'ours' THEN ours_settings ELSE base_settings END);
            e := bench.explain(CASE v WHEN 'ours' THEN ours ELSE baseline END);
            INSERT INTO bench.runs VALUES (workload, v, i, e.ms, e.workers, NULL);
        END LOOP;
    END LOOP;

    RETURN format('%s: ours %s ms, baseline %s ms, ratio %s',
                  workload,
                  round(bench.median(workload, 'ours')::numeric, 1),
                  round(bench.median(workload, 'baseline')::numeric, 1),
                  round((bench.median(workload, 'ours') /
                         nullif(bench.median(workload, 'baseline'), 0))::numeric, 3));
END
$$;

-- Register a workload whose runs come from outside (pgbench).
CREATE FUNCTION bench.register(workload text, target text, max_ratio float8,
                               unit text DEFAULT 'ms')
RETURNS void
LANGUAGE sql AS $$
    INSERT INTO bench.workloads (workload, max_ratio, target, unit)
    VALUES (workload, max_ratio, target, unit)
$$;

-- Median of a few runs of one query, into bench.diag.
CREATE FUNCTION bench.diag_time(what text, q text, runs int DEFAULT 3,
                                settings text[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    t float8[] := '{}';
    med float8;
BEGIN
    PERFORM bench.apply(settings);
    EXECUTE q;                  -- warm-up
    FOR i IN 1 .. runs LOOP
        t := t || (bench.explain(q)).ms;
    END LOOP;
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO med FROM unnest(t) AS x;
    INSERT INTO bench.diag (what, value, unit) VALUES (what, med, 'ms');
    RETURN format('%s: %s ms', what, round(med::numeric, 2));
END
$$;
