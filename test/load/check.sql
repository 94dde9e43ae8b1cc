-- test/load/check.sql: after the load, every committed key is in its
-- filter, every filter reads back through its text form, and every filter
-- is bit for bit the sized bloom_agg of exactly its logged keys (so no key
-- of a rolled-back or lost write is there, and none is missing).
\pset footer off
SELECT script, count(*) AS keys_logged
FROM load_log GROUP BY script ORDER BY script;

SELECT count(*) AS keys_logged,
       count(*) FILTER (WHERE NOT bloom_contains(f.f, l.key)) AS keys_missing
FROM load_log AS l JOIN load_filters AS f USING (id)
\gset
SELECT :keys_logged AS keys_logged, :keys_missing AS keys_missing;

SELECT count(*) FILTER (WHERE f.f::text::bloom::bytea <> f.f::bytea) AS filters_not_reading_back,
       count(*) FILTER (WHERE f.f <> r.rebuilt) AS filters_not_matching_log
FROM load_filters AS f,
     LATERAL (SELECT bloom_agg(l.key, f.capacity, f.rate) AS rebuilt
              FROM load_log AS l WHERE l.id = f.id) AS r
\gset
SELECT :filters_not_reading_back AS filters_not_reading_back,
       :filters_not_matching_log AS filters_not_matching_log;

SELECT CASE WHEN :keys_logged > 0 AND :keys_missing = 0
             AND :filters_not_reading_back = 0 AND :filters_not_matching_log = 0
            THEN 'load check: ok' ELSE 'load check: FAILED' END AS result
\gset
\echo :result
