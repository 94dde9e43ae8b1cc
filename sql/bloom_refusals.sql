--
-- bloom_refusals: what docs/combining.md says filters cannot do.  Filters
-- have no ordering (a "<" would read as "subset of"), so count(DISTINCT f),
-- ORDER BY f, min and max, and < are refused; the hash operator class makes
-- DISTINCT, GROUP BY and UNION work, and the rewrite the page gives counts
-- what count(DISTINCT f) would.
--
CREATE TABLE refusals (i int, f bloom);
INSERT INTO refusals
SELECT i, bloom_add(bloom_create(10), i % 3) FROM generate_series(1, 6) i;

SELECT count(DISTINCT f) FROM refusals;
SELECT i FROM refusals ORDER BY f;
SELECT i FROM refusals ORDER BY f USING =;
-- (tersely: 19 words the hint of a missing function or operator anew)
\set VERBOSITY terse
SELECT max(f) FROM refusals;
SELECT count(*) FROM refusals a, refusals b WHERE a.f < b.f;
\set VERBOSITY default
-- no btree operator class at all
SELECT count(*) AS btree_opclasses FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE c.opcintype = 'bloom'::regtype AND a.amname = 'btree';
-- an index on a filter column cannot be a btree one
CREATE INDEX ON refusals (f);

-- what works instead: three distinct filters among six rows
SELECT count(*) AS distinct_filters FROM (SELECT DISTINCT f FROM refusals) s;
SELECT count(*) AS groups FROM (SELECT f FROM refusals GROUP BY f) s;
SELECT count(*) AS union_rows FROM (SELECT f FROM refusals UNION SELECT f FROM refusals) s;

DROP TABLE refusals;
