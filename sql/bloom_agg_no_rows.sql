--
-- bloom_agg_no_rows: a sized bloom_agg that sees no rows returns the empty
-- filter of its capacity and rate, in every plan where they do not depend
-- on the rows: in a parallel plan and with partitionwise aggregation (where
-- the node that finalizes has only the partial states, and takes the sizes
-- from the partial calls below it), with constants, with several calls of
-- different sizes, and with parameters of a generic plan.  Each result is
-- compared byte for byte with the serial plan's.
--

-- does a line of the plan of a query match a pattern?
CREATE FUNCTION pg_temp.plan_has(q text, pattern text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF line ~ pattern THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

CREATE TABLE nr_empty (i int, n bigint);
CREATE TABLE nr_parts (p int, i int, n bigint) PARTITION BY LIST (p);
CREATE TABLE nr_parts_0 PARTITION OF nr_parts FOR VALUES IN (0);
CREATE TABLE nr_parts_1 PARTITION OF nr_parts FOR VALUES IN (1);
-- (not analyzed: the planner then assumes some pages, and plans in parallel)

\set q_const 'SELECT encode(bloom_agg(i, 1000, 0.01)::bytea, ''hex'') AS f FROM nr_empty'
\set q_two 'SELECT encode(bloom_agg(i, 1000, 0.01)::bytea, ''hex'') AS a, encode(bloom_agg(i::text, 100, 0.001)::bytea, ''hex'') AS b FROM nr_empty'

-- the serial plan
SET max_parallel_workers_per_gather = 0;
SELECT pg_temp.plan_has(:'q_const', 'Partial|Gather') AS serial_is_partial;
:q_const \gset serial_const_
:q_two \gset serial_two_
-- the serial results are bloom_create's filters (bytes 1-44: the header
-- before the key family, which bloom_create leaves empty; from 109 on the
-- reserved field and the bits)
SELECT substring(decode(:'serial_const_f', 'hex') FROM 1 FOR 44) =
       substring(bloom_create(1000, 0.01)::bytea FROM 1 FOR 44) AS const_geometry,
       substring(decode(:'serial_two_b', 'hex') FROM 109) =
       substring(bloom_create(100, 0.001)::bytea FROM 109) AS two_bits;

-- a parallel plan
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT pg_temp.plan_has(:'q_const', 'Partial Aggregate') AND
       pg_temp.plan_has(:'q_const', 'Gather') AS const_is_parallel,
       pg_temp.plan_has(:'q_two', 'Partial Aggregate') AS two_is_parallel;
SELECT bloom_agg(i, 1000, 0.01)::bytea = decode(:'serial_const_f', 'hex') AS parallel_const
FROM nr_empty;
-- two calls of different sizes: each gets its own
SELECT bloom_agg(i, 1000, 0.01)::bytea = decode(:'serial_two_a', 'hex') AS parallel_a,
       bloom_agg(i::text, 100, 0.001)::bytea = decode(:'serial_two_b', 'hex') AS parallel_b
FROM nr_empty;
-- sizes from an expression without columns, and from an initplan
SELECT bloom_agg(i, 500 * 2, 0.02 / 2)::bytea = decode(:'serial_const_f', 'hex') AS parallel_expression,
       bloom_agg(i, (SELECT 1000), 0.01)::bytea = decode(:'serial_const_f', 'hex') AS parallel_initplan
FROM nr_empty;

-- parameters, in a generic plan, in parallel
SET plan_cache_mode = force_generic_plan;
PREPARE nr_param(bigint, float8) AS
SELECT encode(bloom_agg(i, $1, $2)::bytea, 'hex') AS f FROM nr_empty;
PREPARE nr_param_text(bigint, float8) AS
SELECT encode(bloom_agg(i::text, $1, $2)::bytea, 'hex') AS f FROM nr_empty;
SELECT pg_temp.plan_has('EXECUTE nr_param(1000, 0.01)', 'Partial Aggregate') AS param_is_parallel;
EXECUTE nr_param(1000, 0.01) \gset param_
EXECUTE nr_param_text(100, 0.001) \gset param_text_
SELECT :'param_f' = :'serial_const_f' AS parallel_param,
       :'param_text_f' = :'serial_two_b' AS parallel_param_text;
-- the same prepared statement with other values: another geometry
EXECUTE nr_param_text(1000, 0.01) \gset param_text_
SELECT substring(decode(:'param_text_f', 'hex') FROM 1 FOR 44) =
       substring(bloom_create(1000, 0.01)::bytea FROM 1 FOR 44) AS other_values_geometry;
-- the parameters are checked as in the serial plan
EXECUTE nr_param(0, 0.01);
EXECUTE nr_param(10, NULL);
DEALLOCATE nr_param;
DEALLOCATE nr_param_text;
RESET plan_cache_mode;

-- the size truly depends on the rows: still an error, as in the serial plan
SELECT pg_temp.plan_has('SELECT bloom_agg(i, n, 0.01) FROM nr_empty', 'Partial Aggregate') AS column_is_parallel;
SELECT bloom_agg(i, n, 0.01) FROM nr_empty;
SET max_parallel_workers_per_gather = 0;
SELECT bloom_agg(i, n, 0.01) FROM nr_empty;

-- partitionwise aggregation: partial states per partition, combined in
-- one process
SET enable_partitionwise_aggregate = on;
\set q_parts 'SELECT encode(bloom_agg(i, 1000, 0.01)::bytea, ''hex'') AS a, encode(bloom_agg(i::text, 100, 0.001)::bytea, ''hex'') AS b FROM nr_parts'
SELECT pg_temp.plan_has(:'q_parts', 'Partial Aggregate') AS partitionwise,
       pg_temp.plan_has(:'q_parts', 'Gather') AS gather;
:q_parts \gset parts_
SELECT :'parts_a' = :'serial_two_a' AS partitionwise_a,
       :'parts_b' = :'serial_two_b' AS partitionwise_b;
SET plan_cache_mode = force_generic_plan;
PREPARE nr_parts_param(bigint, float8) AS
SELECT encode(bloom_agg(i, $1, $2)::bytea, 'hex') AS f FROM nr_parts;
SELECT pg_temp.plan_has('EXECUTE nr_parts_param(1000, 0.01)', 'Partial Aggregate') AS param_partitionwise;
EXECUTE nr_parts_param(1000, 0.01) \gset parts_param_
SELECT :'parts_param_f' = :'serial_const_f' AS partitionwise_param;
DEALLOCATE nr_parts_param;
RESET plan_cache_mode;
-- and partitionwise in parallel
SET max_parallel_workers_per_gather = 2;
SELECT pg_temp.plan_has(:'q_parts', 'Partial Aggregate') AND
       pg_temp.plan_has(:'q_parts', 'Gather') AS parallel_partitionwise;
:q_parts \gset parts_
SELECT :'parts_a' = :'serial_two_a' AS parallel_partitionwise_a,
       :'parts_b' = :'serial_two_b' AS parallel_partitionwise_b;

RESET enable_partitionwise_aggregate;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE nr_empty, nr_parts;
