-- test/citus/probes.sql: bloom_contains on a distributed table counts the
-- same rows as on the local copy, with the filter from a subquery, a CTE or a
-- table of filters.

SET client_min_messages = warning;

SELECT check_same(:'mode', 'bloom_contains with a filter from a subquery',
	'SELECT count(*)::text FROM %1$I
	 WHERE bloom_contains((SELECT bloom_agg(i8) FROM ev_local WHERE id %% 2 = 0), i8)');
SELECT check_same(:'mode', 'NOT bloom_contains with a text filter from a CTE',
	'WITH f AS (SELECT bloom_agg(t, 10000, 0.01) AS f FROM %1$I WHERE id %% 3 = 0)
	 SELECT count(*)::text FROM %1$I, f WHERE NOT bloom_contains(f.f, t)');
SELECT check_same(:'mode', 'bloom_contains joined with a table of filters',
	'SELECT count(*)::text FROM %1$I e JOIN (SELECT id, bloom_union_agg(f) AS f FROM filters_local GROUP BY id) x
	 ON x.id = e.id / 1000 + 1 WHERE bloom_contains(x.f, e.i8)');
SELECT check_same(:'mode', 'every key is found in the distributed build',
	'SELECT count(*)::text FROM ev_local
	 WHERE i8 IS NOT NULL AND NOT bloom_contains((SELECT bloom_agg(i8) FROM %1$I), i8)');
