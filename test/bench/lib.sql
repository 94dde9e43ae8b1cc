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
    result       text,
    settings     text,              -- what differed from the session's settings
    plan         text               -- node types, depth first
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
-- rest of the transaction (bench.measure commits after every variant, so
-- they end with it).
CREATE FUNCTION bench.apply(settings text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(settings, 1), 0) BY 2 LOOP
        PERFORM set_config(settings[i], settings[i + 1], true);
    END LOOP;
END
$$;

-- The settings of this session as a jsonb object, name -> value.
CREATE FUNCTION bench.settings_now() RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_object_agg(name, current_setting(name)) FROM pg_settings
$$;

-- The settings that differ from "base" (a bench.settings_now() taken before
-- any variant applied its own), as 'name=value, ...': what a run really ran
-- with, recorded with its time so that the report shows nothing leaked.
CREATE FUNCTION bench.settings_diff(base jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(string_agg(format('%s=%s', name, current_setting(name)), ', ' ORDER BY name), '(none)')
    FROM pg_settings
    WHERE current_setting(name) IS DISTINCT FROM base ->> name
      AND name NOT IN ('transaction_isolation', 'transaction_read_only',
                       'transaction_deferrable', 'in_hot_standby')
$$;

-- Execution time of one run of a query, timed by EXPLAIN (ANALYZE, TIMING
-- OFF): no per-row clock reads, and no result transfer to the client.  Also
-- the plan's shape: its node types, depth first ("Hash Anti Join > ...").
CREATE FUNCTION bench.explain(q text, OUT ms float8, OUT workers int, OUT plan text)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO j;
    ms := (j -> 0 ->> 'Execution Time')::float8;
    SELECT sum(w::text::int) INTO workers
    FROM jsonb_path_query(j, 'strict $.**."Workers Launched"') AS w;
    SELECT string_agg(concat_ws(' ', n ->> 'Node Type',
                                CASE WHEN n ->> 'Join Type' NOT IN ('Inner') THEN '(' || (n ->> 'Join Type') || ')' END),
                      ' > ' ORDER BY o)
    INTO plan
    FROM jsonb_path_query(j -> 0 -> 'Plan', 'strict $.** ? (exists (@."Node Type"))')
         WITH ORDINALITY AS t(n, o);
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
-- base_settings to that variant alone.
--
-- Every variant runs in a transaction of its own: the procedure commits
-- after each, which ends the set_config(..., true) of that variant, so
-- nothing one variant sets reaches the next.  Each run records the settings
-- it ran with (those that differ from the session's); a setting that
-- neither the workload nor the variant asked for is an error.
--
-- ours_check / base_check: a query whose result is kept at the warm-up
-- instead of the timed query's (e.g. a filter's bytes, where the timed query
-- returns only its length), run with the same settings.
--
-- Call it as CALL bench.measure(...), outside a transaction block (so that
-- it may commit); the progress line comes back in "line".
--
CREATE PROCEDURE bench.measure(
    workload text, target text, max_ratio float8,
    ours text, baseline text,
    settings text[] DEFAULT '{}',
    ours_settings text[] DEFAULT '{}',
    base_settings text[] DEFAULT '{}',
    runs int DEFAULT 3,
    speedup bool DEFAULT false,
    same_result bool DEFAULT false,
    nrows bigint DEFAULT NULL,
    filter text DEFAULT NULL,
    ours_check text DEFAULT NULL,
    base_check text DEFAULT NULL,
    INOUT line text DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    r text;
    e record;
    v text;
    base_cfg jsonb := bench.settings_now();
    asked text[];
    used text;
    stray text;
    order_ text[];
BEGIN
    INSERT INTO bench.workloads (workload, max_ratio, target, speedup, same_result, nrows, filter)
    VALUES (workload, max_ratio, target, speedup, same_result, nrows, filter);
    COMMIT;

    FOR i IN 0 .. runs LOOP
        order_ := CASE WHEN i % 2 = 0 THEN ARRAY['ours', 'baseline'] ELSE ARRAY['baseline', 'ours'] END;
        IF i = 0 THEN
            order_ := ARRAY['ours', 'baseline'];
        END IF;
        FOREACH v IN ARRAY order_ LOOP
            asked := settings || CASE v WHEN 'ours' THEN ours_settings ELSE base_settings END;
            PERFORM bench.apply(asked);
            used := bench.settings_diff(base_cfg);
            SELECT string_agg(name, ', ') INTO stray
            FROM pg_settings
            WHERE current_setting(name) IS DISTINCT FROM base_cfg ->> name
              AND name NOT IN ('transaction_isolation', 'transaction_read_only',
                               'transaction_deferrable', 'in_hot_standby')
              AND NOT name = ANY (SELECT asked[k] FROM generate_subscripts(asked, 1) AS k WHERE k % 2 = 1);
            IF stray IS NOT NULL THEN
                RAISE EXCEPTION 'bench.measure: % (%) runs with settings it did not ask for: %',
                    workload, v, stray;
            END IF;
            IF i = 0 THEN
                EXECUTE coalesce(CASE v WHEN 'ours' THEN ours_check ELSE base_check END,
                                 CASE v WHEN 'ours' THEN ours ELSE baseline END) INTO r;
                INSERT INTO bench.runs VALUES (workload, v, 0, NULL, NULL, r, used, NULL);
            ELSE
                e := bench.explain(CASE v WHEN 'ours' THEN ours ELSE baseline END);
                INSERT INTO bench.runs VALUES (workload, v, i, e.ms, e.workers, NULL, used, e.plan);
            END IF;
            COMMIT;
        END LOOP;
    END LOOP;

    line := format('%s: ours %s ms, baseline %s ms, ratio %s',
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
