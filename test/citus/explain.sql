-- test/citus/explain.sql: where each aggregate runs.  With pushdown (Citus 15
-- and later, citus.allow_aggregate_worker_combine_on_internal_types on), the
-- concrete overloads and the set aggregates run on the workers as
-- worker_binary_partial_agg and are combined on the coordinator; the
-- polymorphic form (an enum, inet key) has its rows gathered.  With gather
-- (Citus up to 14.0, or the setting off), every aggregate over a
-- non-distribution grouping runs on the coordinator over gathered rows.

SET client_min_messages = warning;

SELECT CASE :'mode' WHEN 'pushdown' THEN 'worker_binary_partial_agg\(''public\.bloom_agg\(bigint\)''::regprocedure, i8\)'
	   ELSE 'Output: bloom_agg\(remote_scan\.' END AS want_i8,
	   CASE :'mode' WHEN 'pushdown' THEN 'worker_binary_partial_agg\(''public\.bloom_agg\(bigint,bigint,double precision\)''::regprocedure, ROW\(i8, ''30000''::bigint'
	   ELSE 'Output: remote_scan\.g, bloom_agg\(remote_scan\.' END AS want_sized,
	   CASE :'mode' WHEN 'pushdown' THEN 'worker_binary_partial_agg\(''public\.bloom_union_agg\(public\.bloom\)''::regprocedure, f\)'
	   ELSE 'Output: bloom_union_agg\(remote_scan\.' END AS want_union
\gset

SELECT check_plan(:'mode', 'EXPLAIN bloom_agg(i8)',
	'SELECT bloom_agg(i8) FROM ev', :'want_i8');
SELECT check_plan(:'mode', 'EXPLAIN bloom_agg(i8, 30000, 0.01) GROUP BY g',
	'SELECT g, bloom_agg(i8, 30000, 0.01) FROM ev GROUP BY g', :'want_sized');
SELECT check_plan(:'mode', 'EXPLAIN bloom_union_agg(f)',
	'SELECT bloom_union_agg(f) FROM filters', :'want_union');
SELECT check_plan(:'mode', 'EXPLAIN bloom_agg(varchar) pushes down the text overload',
	'SELECT bloom_agg(vc) FROM ev',
	CASE :'mode' WHEN 'pushdown' THEN 'bloom_agg\(text\)''::regprocedure, \(vc\)::text\)' ELSE 'Output: bloom_agg\(remote_scan\.' END);
SELECT check_plan(:'mode', 'EXPLAIN bloom_agg(enum) gathers the rows',
	'SELECT bloom_agg(e) FROM ev', 'Query: SELECT e AS bloom_agg FROM', 'worker_(binary_)?partial_agg');
SELECT check_plan(:'mode', 'EXPLAIN bloom_agg(inet) gathers the rows',
	'SELECT bloom_agg(ip) FROM ev', 'Query: SELECT ip AS bloom_agg FROM', 'worker_(binary_)?partial_agg');
SELECT check_plan(:'mode', 'EXPLAIN GROUP BY the distribution column runs whole on the workers',
	'SELECT id, bloom_agg(i8) FROM ev GROUP BY id', 'Query: SELECT id, public\.bloom_agg\(i8\)', 'coord_(binary_)?combine_agg');

-- Sized bloom_agg over no rows at all: the coordinator gets neither a state
-- (pushdown) nor a row (gather, where Citus ships the constant capacity and
-- rate as columns), so it cannot know the size: an error, never a wrong filter.
SELECT check_error(:'mode', 'sized bloom_agg over no rows is an error',
	'SELECT bloom_agg(i8, 1000, 0.01) FROM ev WHERE id < 0',
	'bloom_agg over no rows cannot size its filter');
