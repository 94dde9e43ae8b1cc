--
-- bloom_parallel_limit: the partial state of an unsized bloom_agg travels
-- from a parallel worker to the leader as its distinct hashes, 8 bytes each,
-- in one value under PostgreSQL's 1 GB limit: a worker whose state holds
-- more than 134,217,715 distinct keys raises "bloom_agg state is too large
-- to pass to a parallel worker" (docs/reliability.md) instead of failing
-- inside PostgreSQL.  One worker gets all the rows: the planner plans for
-- two (so that the parallel plan is the cheaper one), only one may start,
-- and the leader does not take part.  The rows are the 134,300,000 pairs of
-- a merge join of 1,343 rows with 100,000 on one key.  This takes about 2
-- GB and 15 s.
--
CREATE TABLE limit_outer (i bigint) WITH (parallel_workers = 2);
INSERT INTO limit_outer SELECT generate_series(0, 1342);
CREATE TABLE limit_inner (j bigint) WITH (parallel_workers = 2);
INSERT INTO limit_inner SELECT generate_series(1, 100000);
ANALYZE limit_outer, limit_inner;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET max_parallel_workers = 1;
SET parallel_leader_participation = off;

-- a partial aggregate in the workers, finalized by the leader
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
SELECT pg_temp.plan_has(q, 'Partial Aggregate') AS partial,
       pg_temp.plan_has(q, 'Gather') AS gather
FROM (VALUES ('SELECT bloom_agg(i * 100000 + j) FROM limit_outer JOIN limit_inner ON i % 1 = j % 1')) v(q);

\set VERBOSITY terse
SELECT octet_length(bloom_agg(i * 100000 + j)::bytea)
FROM limit_outer JOIN limit_inner ON i % 1 = j % 1;
\set VERBOSITY default

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET max_parallel_workers;
RESET parallel_leader_participation;
DROP TABLE limit_outer, limit_inner;
