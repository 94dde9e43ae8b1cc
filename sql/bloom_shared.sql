--
-- bloom_shared: a shared filter without its keys (bloom_filter_*, issue 39).
--
-- 1. create, add (one key, a batch), contains (one key, a batch), info,
--    export, drop; a schema-qualified name that needs quoting.
-- 2. Bad input: a missing filter (42P01), a key of another family (42804),
--    capacity <= 0 and a rate outside (0, 1) (22023), a name taken (42P07),
--    a table that is not a filter (42809), tampered rows (XX001).
-- 3. Transactions: an add rolled back (whole, and to a savepoint) leaves
--    nothing; an add is visible in its own transaction.
-- 4. Privileges of a plain role: SELECT to probe, UPDATE to add, INSERT too
--    for the add that grows it (42501 otherwise).
-- 5. The rate measured at capacity within 1.2 x the requested one, and after
--    growing to 6 x its capacity within 1.5 x; single adds grow it too;
--    NONSCALING never grows.
-- 6. Each exported layer equals bloom_agg over the same keys at the layer's
--    capacity and rate, byte for byte.
-- 7. Probes in a parallel query's workers; a hostile search_path changes
--    nothing an add runs.
--
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_bloom_shared;
CREATE ROLE regress_bloom_shared;
RESET client_min_messages;

-- 1. the basics
SELECT bloom_filter_create('seen', capacity => 1000, false_positive_rate => 0.01);
SELECT bloom_filter_add('seen', 'https://example.com/a');
SELECT bloom_filter_add('seen', 'https://example.com/a');	-- not new
SELECT bloom_filter_add('seen', ARRAY['https://example.com/b', NULL, 'https://example.com/c', 'https://example.com/b']);
SELECT bloom_filter_contains('seen', 'https://example.com/a'),
       bloom_filter_contains('seen', 'https://example.com/z');
SELECT bloom_filter_contains('seen', ARRAY['https://example.com/b', 'https://example.com/z', NULL]);
SELECT capacity, false_positive_rate, expansion, nonscaling, layers, key_family,
       keys, round(estimated_keys) AS estimated_keys, size_bytes,
       expected_rate < 1e-9 AS tiny_rate
  FROM bloom_filter_info('seen');
SELECT layer, bloom_contains(filter, 'https://example.com/c') AS c,
       bloom_contains(filter, 'https://example.com/z') AS z
  FROM bloom_filter_export('seen');
-- the table is the filter: a primary key, fillfactor 50, its rows
SELECT reloptions FROM pg_class WHERE oid = 'seen'::regclass;
SELECT layer, count(*), sum(nkeys), min(length(bits)), max(length(bits)) FROM seen GROUP BY layer ORDER BY layer;
CREATE SCHEMA "Shared Schema";
SELECT bloom_filter_create('"Shared Schema"."My Filter"', 100);
SELECT bloom_filter_add('"Shared Schema"."My Filter"', 42::bigint);
SELECT bloom_filter_contains('"Shared Schema"."My Filter"', 42::bigint),
       bloom_filter_contains('"Shared Schema"."My Filter"', 43::bigint);
SELECT bloom_filter_drop('"Shared Schema"."My Filter"');
SELECT to_regclass('"Shared Schema"."My Filter"');
DROP SCHEMA "Shared Schema";
-- an empty filter holds nothing, of any family
SELECT bloom_filter_create('empty', 10);
SELECT bloom_filter_contains('empty', 1), bloom_filter_contains('empty', ARRAY['a']);
SELECT key_family, keys FROM bloom_filter_info('empty');

-- 2. bad input
\set VERBOSITY default
SELECT bloom_filter_add('no_such_filter', 1);
SELECT bloom_filter_contains('no_such_filter', 1);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT bloom_filter_add('seen', 1);
SELECT bloom_filter_contains('seen', ARRAY[1, 2]);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT bloom_filter_create('bad', 0);
SELECT bloom_filter_create('bad', 100, 1.0);
SELECT bloom_filter_create('bad', 100, 0);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT bloom_filter_create('bad', 100, expansion => 0);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT bloom_filter_create('seen', 100);
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT bloom_filter_create('no_such_schema.bad', 100);
CREATE TABLE not_a_filter (layer int, slice int, nkeys int, bits bytea);
SELECT bloom_filter_add('not_a_filter', 1);
SELECT bloom_filter_drop('not_a_filter');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
DROP TABLE not_a_filter;
\set VERBOSITY terse
-- tampered rows: an error, never a read out of bounds
SELECT bloom_filter_create('tampered', 1000);
SELECT bloom_filter_add('tampered', 1);
BEGIN;
UPDATE tampered SET bits = substr(bits, 1, 100) WHERE layer = -1;
SELECT bloom_filter_contains('tampered', 1);
ROLLBACK;
BEGIN;
UPDATE tampered SET nkeys = 30 WHERE layer = -1;
SELECT bloom_filter_contains('tampered', 1);
ROLLBACK;
BEGIN;
UPDATE tampered SET bits = overlay(bits placing '\xff'::bytea from 17) WHERE layer = -1;
SELECT bloom_filter_contains('tampered', 1);
ROLLBACK;
BEGIN;
UPDATE tampered SET bits = substr(bits, 1, 10) WHERE layer = 0 AND slice >= 0;
SAVEPOINT a;
SELECT bloom_filter_contains('tampered', 1);
ROLLBACK TO a;
SELECT bloom_filter_add('tampered', ARRAY[1, 2]);
ROLLBACK TO a;
SELECT * FROM bloom_filter_info('tampered');
ROLLBACK;
BEGIN;
DELETE FROM tampered WHERE layer = 0 AND slice >= 0;
SAVEPOINT a;
SELECT bloom_filter_add('tampered', 2);
ROLLBACK TO a;
SELECT bloom_filter_contains('tampered', ARRAY[1]);
ROLLBACK TO a;
SELECT * FROM bloom_filter_export('tampered');
ROLLBACK;
BEGIN;
INSERT INTO tampered VALUES (7, 0, 0, '\x00');
SELECT * FROM bloom_filter_info('tampered');
ROLLBACK;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT bloom_filter_contains('tampered', 1);	-- intact again

-- 3. transactions
SELECT bloom_filter_create('tx', 1000);
BEGIN;
SELECT bloom_filter_add('tx', 'rolled back');
SELECT bloom_filter_contains('tx', 'rolled back');	-- its own add
ROLLBACK;
SELECT bloom_filter_contains('tx', 'rolled back'), keys, bits_set FROM bloom_filter_info('tx');
BEGIN;
SELECT bloom_filter_add('tx', 'kept');
SAVEPOINT s;
SELECT bloom_filter_add('tx', ARRAY['to the savepoint', 'also']);
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT bloom_filter_contains('tx', ARRAY['kept', 'to the savepoint', 'also']), keys FROM bloom_filter_info('tx');

-- 4. privileges
SET ROLE regress_bloom_shared;
SELECT bloom_filter_contains('tx', 'kept');
SELECT bloom_filter_add('tx', 'x');
SELECT bloom_filter_drop('tx');
RESET ROLE;
GRANT SELECT ON tx TO regress_bloom_shared;
SET ROLE regress_bloom_shared;
SELECT bloom_filter_contains('tx', 'kept');
SELECT * FROM bloom_filter_export('tx') LIMIT 0;
SELECT bloom_filter_add('tx', 'x');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
RESET ROLE;
GRANT UPDATE ON tx TO regress_bloom_shared;
SET ROLE regress_bloom_shared;
SELECT bloom_filter_add('tx', 'x');
-- the add that grows it inserts the next layer's rows
SELECT bloom_filter_add('tx', array_agg(g::text)) > 0 FROM generate_series(1, 2000) g;
RESET ROLE;
GRANT INSERT ON tx TO regress_bloom_shared;
SET ROLE regress_bloom_shared;
SELECT bloom_filter_add('tx', array_agg(g::text)) > 0 FROM generate_series(1, 2000) g;
SELECT layers > 1 AS grew FROM bloom_filter_info('tx');
RESET ROLE;
REVOKE ALL ON tx FROM regress_bloom_shared;
SET ROLE regress_bloom_shared;
SELECT bloom_filter_contains('tx', 'kept');
RESET ROLE;
-- the first add (it records the key family) refused for want of UPDATE: the
-- error leaves the session in no transaction, caught by PL/pgSQL or not (an
-- internal subtransaction left open made the next statements fail, or run
-- in a transaction that never committed)
SELECT bloom_filter_create('tfirst', 100);
GRANT SELECT ON tfirst TO regress_bloom_shared;
SET ROLE regress_bloom_shared;
DO $$
BEGIN
    PERFORM bloom_filter_add('tfirst', 1);
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'refused: %', SQLERRM;
END
$$;
RESET ROLE;
SELECT transaction_timestamp() = statement_timestamp() AS fresh_transaction;
SET ROLE regress_bloom_shared;
SELECT bloom_filter_add('tfirst', 1);
RESET ROLE;
SELECT transaction_timestamp() = statement_timestamp() AS fresh_transaction;
SELECT bloom_filter_add('tfirst', 2);
SELECT bloom_filter_drop('tfirst');

-- 5. rates: at capacity, after growth to 6 x, single adds, NONSCALING
SELECT bloom_filter_create('rate', 10000, 0.01);
SELECT bloom_filter_add('rate', array_agg(g)) > 9900 AS nearly_all_new FROM generate_series(1, 10000) g;
SELECT layers, keys FROM bloom_filter_info('rate');
SELECT bloom_filter_contains('rate', array_agg(g)) = array_fill(true, ARRAY[10000]) AS no_false_negative
  FROM generate_series(1, 10000) g;
SELECT count(*) FILTER (WHERE x) / 200000.0 <= 1.2 * 0.01 AS rate_at_capacity_ok
  FROM unnest(bloom_filter_contains('rate', (SELECT array_agg(g) FROM generate_series(1000001, 1200000) g))) x;
SELECT bloom_filter_add('rate', array_agg(g)) > 0 FROM generate_series(10001, 60000) g;
SELECT layers, keys BETWEEN 59000 AND 60000 AS counted, size_bytes,
       expected_rate < 0.01 AS expected_within
  FROM bloom_filter_info('rate');
SELECT bloom_filter_contains('rate', array_agg(g)) = array_fill(true, ARRAY[60000]) AS no_false_negative
  FROM generate_series(1, 60000) g;
SELECT count(*) FILTER (WHERE x) / 200000.0 <= 1.5 * 0.01 AS rate_after_growth_ok
  FROM unnest(bloom_filter_contains('rate', (SELECT array_agg(g) FROM generate_series(1000001, 1200000) g))) x;
-- the size until it grows: within 1.5 x a bloom_size(capacity, rate)
SELECT (SELECT size_bytes FROM bloom_filter_info('seen')) <= 1.5 * (SELECT nbytes FROM bloom_size(1000, 0.01)) AS size_ok;
SELECT bloom_filter_create('single', 200, 0.01);
SELECT count(*) FILTER (WHERE bloom_filter_add('single', g)) > 990 FROM generate_series(1, 1000) g;
SELECT layers, keys FROM bloom_filter_info('single');
SELECT bool_and(bloom_filter_contains('single', g)) FROM generate_series(1, 1000) g;
SELECT bloom_filter_create('flat', 200, 0.01, nonscaling => true);
SELECT bloom_filter_add('flat', array_agg(g)) > 0 FROM generate_series(1, 1000) g;
SELECT expansion, nonscaling, layers, expected_rate > 0.01 AS over_rate FROM bloom_filter_info('flat');

-- 6. export equals bloom_agg, layer by layer
SELECT e.layer, e.filter = (SELECT bloom_agg(g, i.design_capacity, i.design_false_positive_rate)
                              FROM generate_series(1, 60000) g
                             WHERE bloom_contains(e.filter, g)) AS equal
  FROM bloom_filter_export('rate') e, bloom_info(e.filter) i
 WHERE e.layer = 0;
SELECT bloom_filter_create('one_layer', 5000);
SELECT bloom_filter_add('one_layer', array_agg(g)) FROM generate_series(1, 4000) g;
SELECT e.filter = (SELECT bloom_agg(g, i.design_capacity, i.design_false_positive_rate)
                     FROM generate_series(1, 4000) g) AS equal
  FROM bloom_filter_export('one_layer') e, bloom_info(e.filter) i;

-- 7. parallel probes; a hostile search_path
CREATE TABLE probe_rows AS SELECT g AS k FROM generate_series(1, 20000) g;
ANALYZE probe_rows;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*) FROM probe_rows WHERE bloom_filter_contains('rate', k);
SELECT count(*) FROM probe_rows WHERE bloom_filter_contains('rate', k);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE probe_rows;
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.set_bit(bytea, bigint, integer) RETURNS bytea
	LANGUAGE sql AS $$ SELECT $1 $$;
CREATE FUNCTION hostile.unnest(integer[]) RETURNS SETOF integer
	LANGUAGE sql AS $$ SELECT 0 $$;
CREATE FUNCTION hostile.generate_series(integer, integer) RETURNS SETOF integer
	LANGUAGE sql AS $$ SELECT 0 $$;
SET search_path = hostile, pg_catalog, public;
SELECT bloom_filter_create('public.hostile_seen', 100);
SELECT bloom_filter_add('public.hostile_seen', 'a'), bloom_filter_add('public.hostile_seen', ARRAY['b']);
SELECT bloom_filter_contains('public.hostile_seen', ARRAY['a', 'b', 'c']);
SELECT count(*) FROM public.hostile_seen;
RESET search_path;
DROP SCHEMA hostile CASCADE;

-- 8. row-level security or a trigger on the table: refused, never an add
-- silently lost (a policy that hid a row from UPDATE lost its adds)
SELECT bloom_filter_create('rls', 1000);
ALTER TABLE rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY sel ON rls FOR SELECT USING (true);
CREATE POLICY upd ON rls FOR UPDATE USING (slice % 2 = 0);
GRANT SELECT, UPDATE ON rls TO regress_bloom_shared;
SET ROLE regress_bloom_shared;
SELECT i, bloom_filter_add('rls', i) FROM generate_series(1, 6) i;
SELECT bloom_filter_add('rls', array[10, 11, 12, 13, 14, 15]);
SELECT bloom_filter_contains('rls', 1);
RESET ROLE;
ALTER TABLE rls DISABLE ROW LEVEL SECURITY;
SELECT bloom_filter_add('rls', array[1, 2, 3, 4, 5, 6]) AS added;
CREATE FUNCTION skip_odd() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN IF NEW.slice % 2 = 1 THEN RETURN NULL; END IF; RETURN NEW; END $$;
CREATE TRIGGER skip BEFORE UPDATE ON rls FOR EACH ROW EXECUTE FUNCTION skip_odd();
SELECT bloom_filter_add('rls', 8);
SELECT bloom_filter_add('rls', array[20, 21]);
SELECT bloom_filter_contains('rls', 1);
DROP TRIGGER skip ON rls;
DROP FUNCTION skip_odd();
SELECT bloom_filter_contains('rls', array[1, 2, 3, 4, 5, 6]) AS found;

-- 9. a saturated filter's expected rate is 1, not 0 (an infinite estimate)
SELECT bloom_filter_create('full', 100, 0.01, nonscaling => true);
SELECT bloom_filter_add('full', array(SELECT generate_series(1, 20000))) > 0 AS added;
SELECT estimated_keys, expected_rate FROM bloom_filter_info('full');

-- 10. a 2-D array of keys gives a 2-D array of answers, bounds kept
SELECT bloom_filter_contains('rls', '{{1,2},{3,NULL}}'::int[]) AS two_d,
       bloom_filter_contains('rls', '[0:1]={1,999999}'::int[]) AS bounds,
       bloom_filter_contains('rls', '{}'::int[]) AS empty;

SELECT bloom_filter_drop(f) FROM unnest(ARRAY['seen', 'empty', 'tampered', 'tx', 'rate', 'single', 'flat', 'one_layer', 'hostile_seen', 'rls', 'full']) f;
DROP ROLE regress_bloom_shared;
