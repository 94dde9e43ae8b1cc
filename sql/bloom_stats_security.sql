--
-- bloom_stats_security: the planner support function of bloom_contains
-- probes a column's most common values and histogram bounds with the filter
-- only where the user may read them (statistic_proc_security_check, as
-- PostgreSQL's own estimators do).  For a user whose access to a table goes
-- through row-level security, the statistics (taken from all rows) are
-- hidden from functions that are not leakproof, whatever the policy lets
-- through: the estimate then uses no value of the statistics, only the bound
-- from the filter's fill and the column's number of distinct values.  The
-- owner gets the estimate from the sampled values.
--

-- the planner's row estimate for a query (its top node), as a share of n
CREATE FUNCTION pg_temp.est_share(q text, n float8) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    j json;
    r float8;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
    r := (j->0->'Plan'->>'Plan Rows')::float8;
    RETURN CASE
        WHEN r < 0.05 * n THEN '<5%'
        WHEN r > 0.95 * n THEN '>95%'
        ELSE 'between'
    END;
END
$$;

-- 20,000 distinct keys; the filter holds 20,000 other keys, so the sampled
-- values say that almost no row passes, while its fill alone (20,000 keys
-- for 20,000 distinct values) cannot rule out that every row does
CREATE TABLE stats_secret (k int);
INSERT INTO stats_secret SELECT i FROM generate_series(1, 20000) i;
ANALYZE stats_secret;
CREATE TABLE stats_filters (f bloom);
INSERT INTO stats_filters SELECT bloom_agg(i, 20000, 0.01) FROM generate_series(100001, 120000) i;
CREATE FUNCTION stats_filter() RETURNS bloom
LANGUAGE sql STABLE AS $$ SELECT f FROM stats_filters $$;

CREATE ROLE regress_bloom_stats_reader;
GRANT SELECT ON stats_secret, stats_filters TO regress_bloom_stats_reader;
ALTER TABLE stats_secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY stats_all ON stats_secret FOR SELECT USING (true);

-- bloom_contains is not leakproof, or the check would let it see the values
SELECT proleakproof FROM pg_proc WHERE oid = 'bloom_contains(bloom, anycompatible)'::regprocedure;

-- the owner (a superuser here, which bypasses row-level security): the
-- sampled values are probed
SELECT pg_temp.est_share('SELECT * FROM stats_secret WHERE bloom_contains(stats_filter(), k)', 20000)
    AS owner_estimate;

-- the reader: no value of the statistics is probed
SET ROLE regress_bloom_stats_reader;
SELECT pg_temp.est_share('SELECT * FROM stats_secret WHERE bloom_contains(stats_filter(), k)', 20000)
    AS reader_estimate;
-- (the policy passes every row, so the true share is the same for both)
SELECT count(*) AS reader_rows FROM stats_secret WHERE bloom_contains(stats_filter(), k);
RESET ROLE;

-- with row-level security off the reader's estimate uses the values again
ALTER TABLE stats_secret DISABLE ROW LEVEL SECURITY;
SET ROLE regress_bloom_stats_reader;
SELECT pg_temp.est_share('SELECT * FROM stats_secret WHERE bloom_contains(stats_filter(), k)', 20000)
    AS reader_estimate_without_rls;
RESET ROLE;

DROP TABLE stats_secret, stats_filters;
DROP FUNCTION stats_filter();
DROP ROLE regress_bloom_stats_reader;
