--
-- bloom_index_advice: bloom_index_info's advice when the index's table has
-- no index that can do the exact check of the planner's join pre-check (a
-- btree whose first column is the key, or a hash index on it, valid and not
-- partial): the plan is then a plain anti join, and the advice says why and
-- what to create.  Following the advice gives the pre-check.
--
SET max_parallel_workers_per_gather = 0;
CREATE TABLE adv_orders (id int, customer_id bigint, name text);
INSERT INTO adv_orders SELECT g, g * 2, 'n' || g FROM generate_series(1, 20000) g;
CREATE INDEX adv_orders_bf ON adv_orders USING bloomfilter (customer_id);
CREATE TABLE adv_incoming (customer_id bigint, name text);
INSERT INTO adv_incoming SELECT g * 2 + 1, 'm' || g FROM generate_series(1, 2000) g;
ANALYZE adv_orders, adv_incoming;

-- whether a statement's plan has the pre-check
CREATE FUNCTION adv_prechecked(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF l LIKE '%BloomAntiJoin%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END $$;
\set q 'SELECT count(*) FROM adv_incoming i WHERE NOT EXISTS (SELECT 1 FROM adv_orders o WHERE o.customer_id = i.customer_id)'

-- no other index: a plain join, and the advice says why
SELECT adv_prechecked(:'q') AS prechecked;
SELECT advice FROM bloom_index_info('adv_orders_bf');

-- a partial btree, and a btree with the key second, do not serve
CREATE INDEX adv_partial ON adv_orders (customer_id) WHERE id > 10;
CREATE INDEX adv_second ON adv_orders (id, customer_id);
SELECT advice LIKE 'No btree or hash index of adv_orders%' AS still_advised
FROM bloom_index_info('adv_orders_bf');
DROP INDEX adv_partial, adv_second;

-- the statement the advice gives, run as it is: no advice, the pre-check
SELECT substring(advice FROM 'Create one: (.*)\.$') AS create_stmt
FROM bloom_index_info('adv_orders_bf') \gset
:create_stmt;
SELECT advice IS NULL AS no_advice FROM bloom_index_info('adv_orders_bf');
SELECT adv_prechecked(:'q') AS prechecked;

-- a hash index serves too
DROP INDEX adv_orders_customer_id_idx;
CREATE INDEX adv_orders_h ON adv_orders USING hash (customer_id);
SELECT advice IS NULL AS no_advice FROM bloom_index_info('adv_orders_bf');
DROP INDEX adv_orders_h;

-- an expression index: a btree on the same expression, not on the column
CREATE INDEX adv_orders_name_bf ON adv_orders USING bloomfilter (lower(name));
CREATE INDEX adv_orders_name ON adv_orders (name);
SELECT advice FROM bloom_index_info('adv_orders_name_bf');
CREATE INDEX adv_orders_lower ON adv_orders (lower(name));
SELECT advice IS NULL AS no_advice FROM bloom_index_info('adv_orders_name_bf');

-- a partitioned table: the advice of each leaf's index
CREATE TABLE adv_parts (k int) PARTITION BY RANGE (k);
CREATE TABLE adv_parts_1 PARTITION OF adv_parts FOR VALUES FROM (0) TO (100);
CREATE TABLE adv_parts_2 PARTITION OF adv_parts FOR VALUES FROM (100) TO (200);
CREATE INDEX adv_parts_bf ON adv_parts USING bloomfilter (k);
CREATE INDEX adv_parts_2_k ON adv_parts_2 (k);
SELECT indexrelid::regclass AS leaf, advice
FROM bloom_index_info('adv_parts_bf') ORDER BY 1::text;

DROP TABLE adv_parts, adv_orders, adv_incoming;
DROP FUNCTION adv_prechecked(text);
RESET max_parallel_workers_per_gather;
