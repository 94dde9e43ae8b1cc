--
-- test/bench/join.sql: plain anti and semi joins against a table with a
-- bloomfilter index, with bloomfilter.join_filter on and off (run by
-- test/bench/join.sh, which says what is measured).
--
-- psql variables: rows (existing keys), batch (incoming keys), pcts (a
-- space-separated list of percents of the batch present), runs (timed
-- rounds), tiny (rows of the tiny inner table).
--
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
LOAD 'bloomfilter';
SET jit = off;
SET max_parallel_workers_per_gather = 0;
DROP SCHEMA IF EXISTS bench_join CASCADE;
CREATE SCHEMA bench_join;

CREATE TABLE bench_join.cases (
    ord      int PRIMARY KEY,
    label    text NOT NULL,
    query    text NOT NULL,
    expected bigint NOT NULL
);
-- settings: name, value, ...; kind 'on' (the GUC on, PostgreSQL's choice),
-- 'off' (the GUC off, PostgreSQL's choice), 'hash', 'merge', 'nestloop'
-- (the GUC off, that join forced), 'forced' (the GUC on and every other
-- join disabled: the filter's node where the planner would not choose it)
CREATE TABLE bench_join.variants (
    kind     text PRIMARY KEY,
    settings text[] NOT NULL
);
INSERT INTO bench_join.variants VALUES
    ('on', '{bloomfilter.join_filter,on}'),
    ('off', '{bloomfilter.join_filter,off}'),
    ('hash', '{bloomfilter.join_filter,off,enable_mergejoin,off,enable_nestloop,off}'),
    ('merge', '{bloomfilter.join_filter,off,enable_hashjoin,off,enable_nestloop,off,work_mem,256MB}'),
    ('nestloop', '{bloomfilter.join_filter,off,enable_hashjoin,off,enable_mergejoin,off}'),
    ('forced', '{bloomfilter.join_filter,on,enable_hashjoin,off,enable_mergejoin,off,enable_nestloop,off}');
CREATE TABLE bench_join.runs (
    ord      int NOT NULL,
    kind     text NOT NULL,
    round    int NOT NULL,
    ms       float8,
    cpu_ms   float8,
    plan     text
);

SET search_path = bench_join, public;
\ir timing.sql
RESET search_path;

-- Execution Time of EXPLAIN (ANALYZE, TIMING OFF), the backend's CPU time
-- meanwhile, and the plan's node types, depth first
CREATE FUNCTION bench_join.explain(q text, OUT ms float8, OUT cpu_ms float8, OUT plan text)
LANGUAGE plpgsql AS $$
DECLARE
    j jsonb;
    c0 bigint;
BEGIN
    c0 := bench_join.cpu_ns();
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO j;
    cpu_ms := (bench_join.cpu_ns() - c0) / 1e6;
    ms := (j -> 0 ->> 'Execution Time')::float8;
    SELECT string_agg(concat_ws(' ', coalesce(n ->> 'Custom Plan Provider', n ->> 'Node Type'),
                                CASE WHEN n ->> 'Join Type' NOT IN ('Inner') THEN '(' || (n ->> 'Join Type') || ')' END),
                      ' > ' ORDER BY o)
    INTO plan
    FROM jsonb_path_query(j -> 0 -> 'Plan', 'strict $.** ? (exists (@."Node Type"))')
         WITH ORDINALITY AS t(n, o);
END
$$;

-- Each case's variants: a warm-up whose count must be the known one, then
-- "runs" rounds, every variant once per round, the order reversed every
-- other round; each run a transaction of its own.
CREATE PROCEDURE bench_join.run(c int, runs int)
LANGUAGE plpgsql AS $$
DECLARE
    g record;
    v record;
    e record;
    res bigint;
    first bigint;
BEGIN
    SELECT * INTO g FROM bench_join.cases WHERE ord = c;
    FOR i IN 0 .. runs LOOP
        FOR v IN SELECT * FROM bench_join.variants
                 ORDER BY CASE WHEN i % 2 = 0 THEN kind END, CASE WHEN i % 2 = 1 THEN kind END DESC LOOP
            PERFORM bench_join.apply(v.settings);
            IF i = 0 THEN
                EXECUTE g.query INTO res;
                first := coalesce(first, res);
                IF res IS DISTINCT FROM first OR (g.expected >= 0 AND res IS DISTINCT FROM g.expected) THEN
                    RAISE EXCEPTION 'join bench: % (%) counted %, not % (expected %)',
                        g.label, v.kind, res, first, g.expected;
                END IF;
            ELSE
                e := bench_join.explain(g.query);
                INSERT INTO bench_join.runs VALUES (c, v.kind, i, e.ms, e.cpu_ms, e.plan);
            END IF;
            COMMIT;
        END LOOP;
    END LOOP;
END
$$;

-- existing keys: the even numbers 2 .. 2 × rows, with a btree and a
-- bloomfilter index (default options: capacity twice the rows)
SELECT setseed(0.42);
CREATE UNLOGGED TABLE bench_join.orders AS
    SELECT (g * 2)::bigint AS k, g AS payload FROM generate_series(1, :rows) g;
CREATE INDEX orders_k ON bench_join.orders (k);
CREATE INDEX orders_k_bf ON bench_join.orders USING bloomfilter (k);
-- a tiny inner table (fewer rows than the batch), and the same keys under a
-- filter built at a false-positive rate of 0.5 from a capacity of 1,000
-- (the VACUUM below compacts it into one layer that answers "maybe" for
-- about a quarter of the absent keys)
CREATE UNLOGGED TABLE bench_join.tiny AS
    SELECT (g * 2)::bigint AS k FROM generate_series(1, :tiny) g;
CREATE INDEX ON bench_join.tiny (k);
CREATE INDEX tiny_bf ON bench_join.tiny USING bloomfilter (k);
CREATE UNLOGGED TABLE bench_join.saturated AS
    SELECT (g * 2)::bigint AS k FROM generate_series(1, :rows) g;
CREATE INDEX ON bench_join.saturated (k);
CREATE INDEX saturated_bf ON bench_join.saturated USING bloomfilter (k)
    WITH (capacity = 1000, false_positive_rate = 0.5);

-- incoming batches: "pct" % existing keys, the rest new odd ones, spread
-- over the whole range, in random order (as antijoin.sql makes them)
SELECT format($s$CREATE UNLOGGED TABLE bench_join.incoming_%1$s AS
                 SELECT key AS k, md5(key::text) AS note FROM (
                     SELECT (((g * 7919) %% %2$s) + 1) * 2 AS key
                     FROM generate_series(1::bigint, %3$s) AS g
                     UNION ALL
                     SELECT ((g * 104729) %% %2$s) * 2 + 1
                     FROM generate_series(1::bigint, %4$s) AS g
                 ) AS x ORDER BY random()$s$,
              replace(p, '.', '_'), :rows, round(:batch * p::numeric / 100),
              :batch - round(:batch * p::numeric / 100))
FROM unnest(string_to_array(:'pcts', ' ')) AS p \gexec
VACUUM (FREEZE, ANALYZE) bench_join.orders;
VACUUM (FREEZE, ANALYZE) bench_join.tiny;
VACUUM (FREEZE, ANALYZE) bench_join.saturated;
SELECT format('VACUUM (FREEZE, ANALYZE) bench_join.incoming_%s', replace(p, '.', '_'))
FROM unnest(string_to_array(:'pcts', ' ')) AS p \gexec

-- the cases: NOT EXISTS at every percent; LEFT JOIN ... IS NULL and EXISTS
-- at the first and last; the tiny inner table and the saturated filter
INSERT INTO bench_join.cases
SELECT o * 10 + 1, format('NOT EXISTS, %s %% present', p),
       format('SELECT count(*) FROM bench_join.incoming_%s i WHERE NOT EXISTS (SELECT 1 FROM bench_join.orders o WHERE o.k = i.k)', replace(p, '.', '_')),
       :batch - round(:batch * p::numeric / 100)
FROM unnest(string_to_array(:'pcts', ' ')) WITH ORDINALITY AS t(p, o);
INSERT INTO bench_join.cases
SELECT o * 10 + 2, format('LEFT JOIN ... IS NULL, %s %% present', p),
       format('SELECT count(*) FROM bench_join.incoming_%s i LEFT JOIN bench_join.orders o ON o.k = i.k WHERE o.k IS NULL', replace(p, '.', '_')),
       :batch - round(:batch * p::numeric / 100)
FROM unnest(string_to_array(:'pcts', ' ')) WITH ORDINALITY AS t(p, o) WHERE o = 1;
INSERT INTO bench_join.cases
SELECT o * 10 + 3, format('EXISTS, %s %% present', p),
       format('SELECT count(*) FROM bench_join.incoming_%s i WHERE EXISTS (SELECT 1 FROM bench_join.orders o WHERE o.k = i.k)', replace(p, '.', '_')),
       round(:batch * p::numeric / 100)
FROM unnest(string_to_array(:'pcts', ' ')) WITH ORDINALITY AS t(p, o)
WHERE o = 1 OR o = array_length(string_to_array(:'pcts', ' '), 1);
INSERT INTO bench_join.cases
SELECT 1000, format('NOT EXISTS, tiny inner table (%s rows), %s %% present', :tiny, p),
       format('SELECT count(*) FROM bench_join.incoming_%s i WHERE NOT EXISTS (SELECT 1 FROM bench_join.tiny o WHERE o.k = i.k)', replace(p, '.', '_')),
       -1
FROM unnest(string_to_array(:'pcts', ' ')) WITH ORDINALITY AS t(p, o) WHERE o = 1;
INSERT INTO bench_join.cases
SELECT 1001, format('NOT EXISTS, filter at a 0.5 rate, %s %% present', p),
       format('SELECT count(*) FROM bench_join.incoming_%s i WHERE NOT EXISTS (SELECT 1 FROM bench_join.saturated o WHERE o.k = i.k)', replace(p, '.', '_')),
       :batch - round(:batch * p::numeric / 100)
FROM unnest(string_to_array(:'pcts', ' ')) WITH ORDINALITY AS t(p, o) WHERE o = 1;

\pset format unaligned
\pset tuples_only on
SELECT format('CALL bench_join.run(%s, %s)', ord, :runs) FROM bench_join.cases ORDER BY ord \gexec
