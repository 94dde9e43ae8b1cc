--
-- bloom_partition: filters over partitioned tables.  With partitionwise
-- aggregation each partition is aggregated on its own, and the filters are
-- the same as without it; and the recipe of doc-scaling.md: one filter per
-- partition in a table keyed by the partition key, kept current by
-- triggers, rebuilt when keys were deleted, and probed with a join on the
-- partition key.
--
SET max_parallel_workers_per_gather = 0;

CREATE TABLE part_orders (region text, customer_id int, note text)
    PARTITION BY LIST (region);
CREATE TABLE part_orders_eu PARTITION OF part_orders FOR VALUES IN ('eu');
CREATE TABLE part_orders_us PARTITION OF part_orders FOR VALUES IN ('us');
CREATE TABLE part_orders_asia PARTITION OF part_orders FOR VALUES IN ('asia');
INSERT INTO part_orders
SELECT (ARRAY['eu', 'us', 'asia'])[1 + i % 3], i / 3 + (i % 3) * 100000, md5(i::text)
FROM generate_series(1, 30000) i;
CREATE INDEX ON part_orders (region, customer_id);
ANALYZE part_orders;

--
-- Partitionwise aggregation: grouped by the partition key, each partition
-- is aggregated whole; otherwise each partition makes a partial state, and
-- the states are combined on top
--
SET enable_partitionwise_aggregate = on;
EXPLAIN (COSTS OFF)
SELECT region, bloom_agg(customer_id, 20000, 0.01) FROM part_orders GROUP BY region;
EXPLAIN (COSTS OFF)
SELECT bloom_agg(customer_id, 20000, 0.01) FROM part_orders;

-- the same filters with and without partitionwise aggregation, bit for bit
\set q_grouped 'SELECT string_agg(region || md5(s::bytea) || md5(u::bytea) || md5(t::bytea), '','' ORDER BY region) AS md5 FROM (SELECT region, bloom_agg(customer_id, 20000, 0.01) AS s, bloom_agg(customer_id) AS u, bloom_agg(note) AS t FROM part_orders GROUP BY region) x'
\set q_whole 'SELECT md5(bloom_agg(customer_id, 20000, 0.01)::bytea) || md5(bloom_agg(customer_id)::bytea) || md5(bloom_agg(note, 30000, 0.001)::bytea) AS md5 FROM part_orders'
:q_grouped \gset partitionwise_grouped_
:q_whole \gset partitionwise_whole_
SET enable_partitionwise_aggregate = off;
EXPLAIN (COSTS OFF)
SELECT region, bloom_agg(customer_id, 20000, 0.01) FROM part_orders GROUP BY region;
:q_grouped \gset plain_grouped_
:q_whole \gset plain_whole_
SELECT :'partitionwise_grouped_md5' = :'plain_grouped_md5' AS grouped_same,
       :'partitionwise_whole_md5' = :'plain_whole_md5' AS whole_same;

-- the union of the per-partition filters is the filter of the whole table
SET enable_partitionwise_aggregate = on;
SELECT bloom_union_agg(f) = (SELECT bloom_agg(customer_id, 30000, 0.01) FROM part_orders) AS union_is_whole
FROM (SELECT region, bloom_agg(customer_id, 30000, 0.01) AS f
      FROM part_orders GROUP BY region) s;

--
-- The recipe.  One filter per partition, keyed by the partition key.
-- stale: keys were deleted or changed since the filter was built.  A stale
-- filter is still right (it holds every key it should, and some more); it
-- only answers "maybe" more often than it needs to, until it is rebuilt.
--
CREATE TABLE part_order_filters (
    region text PRIMARY KEY,
    f bloom NOT NULL,
    stale boolean NOT NULL DEFAULT false
);

-- Build, or rebuild, the filters of some regions (by default the stale
-- ones).  Every filter has one capacity and rate, so that they can be
-- combined.  SHARE mode keeps writers out while the rows are read, so that
-- no key inserted meanwhile is lost from the rebuilt filter.
CREATE FUNCTION part_refresh_filters(regions text[] DEFAULT NULL) RETURNS void
LANGUAGE sql AS $$
    LOCK TABLE part_orders IN SHARE MODE;
    INSERT INTO part_order_filters AS o (region, f)
    SELECT r, (SELECT bloom_agg(customer_id, 20000, 0.01)
               FROM part_orders WHERE region = r)
    FROM (SELECT DISTINCT unnest(coalesce(regions,
              ARRAY(SELECT region FROM part_order_filters WHERE stale))) AS r) s
    ON CONFLICT (region) DO UPDATE SET f = EXCLUDED.f, stale = false;
$$;

-- New keys are ORed in at once, by statement: a key must never be missing
-- from its filter.  ON CONFLICT re-reads the filter row it updates, so
-- concurrent writers do not lose each other's keys.
CREATE FUNCTION part_filters_add() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO part_order_filters AS o (region, f)
    SELECT region, bloom_agg(customer_id, 20000, 0.01) FROM new_rows GROUP BY region
    ON CONFLICT (region) DO UPDATE SET f = o.f | EXCLUDED.f;
    RETURN NULL;
END
$$;

-- Deleted or changed keys cannot be taken out of a filter: mark it stale.
CREATE FUNCTION part_filters_mark_stale() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE part_order_filters SET stale = true
    WHERE region IN (SELECT region FROM old_rows) AND NOT stale;
    RETURN NULL;
END
$$;

CREATE TRIGGER part_filters_insert AFTER INSERT ON part_orders
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION part_filters_add();
CREATE TRIGGER part_filters_update_new AFTER UPDATE ON part_orders
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION part_filters_add();
CREATE TRIGGER part_filters_update_old AFTER UPDATE ON part_orders
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION part_filters_mark_stale();
CREATE TRIGGER part_filters_delete AFTER DELETE ON part_orders
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION part_filters_mark_stale();

-- Statement triggers fire for the table a statement names: a write straight
-- into a partition does not fire the parent's.  So the same triggers go on
-- every partition as well (ORing a key in twice does no harm).
DO $$
DECLARE
    p regclass;
BEGIN
    FOR p IN SELECT relid FROM pg_partition_tree('part_orders') WHERE isleaf LOOP
        EXECUTE format('CREATE TRIGGER part_filters_insert AFTER INSERT ON %s
                        REFERENCING NEW TABLE AS new_rows
                        FOR EACH STATEMENT EXECUTE FUNCTION part_filters_add()', p);
        EXECUTE format('CREATE TRIGGER part_filters_update_new AFTER UPDATE ON %s
                        REFERENCING NEW TABLE AS new_rows
                        FOR EACH STATEMENT EXECUTE FUNCTION part_filters_add()', p);
        EXECUTE format('CREATE TRIGGER part_filters_update_old AFTER UPDATE ON %s
                        REFERENCING OLD TABLE AS old_rows
                        FOR EACH STATEMENT EXECUTE FUNCTION part_filters_mark_stale()', p);
        EXECUTE format('CREATE TRIGGER part_filters_delete AFTER DELETE ON %s
                        REFERENCING OLD TABLE AS old_rows
                        FOR EACH STATEMENT EXECUTE FUNCTION part_filters_mark_stale()', p);
    END LOOP;
END
$$;

-- the first build, of every region
SELECT part_refresh_filters(ARRAY['eu', 'us', 'asia']);
-- each filter is the filter of its partition
SELECT region, f = (SELECT bloom_agg(customer_id, 20000, 0.01)
                    FROM part_orders p WHERE p.region = o.region) AS built, stale
FROM part_order_filters o ORDER BY region;

-- The probe: incoming rows, joined to their partition's filter.  Only the
-- "maybe" answers go on to the exact check; a region without a filter row
-- yet (LEFT JOIN, NULL filter) goes to the exact check whole.
CREATE TABLE part_incoming (region text, customer_id int);
CREATE FUNCTION part_new_customers() RETURNS TABLE (region text, customer_id int)
LANGUAGE sql STABLE AS $$
    SELECT i.region, i.customer_id
    FROM part_incoming i LEFT JOIN part_order_filters o USING (region)
    WHERE NOT bloom_contains(o.f, i.customer_id)
       OR NOT EXISTS (SELECT 1 FROM part_orders x
                      WHERE x.region = i.region AND x.customer_id = i.customer_id)
$$;
-- the exact answer, to compare with
CREATE FUNCTION part_new_customers_exact() RETURNS TABLE (region text, customer_id int)
LANGUAGE sql STABLE AS $$
    SELECT i.region, i.customer_id FROM part_incoming i
    WHERE NOT EXISTS (SELECT 1 FROM part_orders x
                      WHERE x.region = i.region AND x.customer_id = i.customer_id)
$$;
-- how many incoming rows the filters alone answer "surely new"
CREATE FUNCTION part_answered_by_filter() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM part_incoming i JOIN part_order_filters o USING (region)
    WHERE NOT bloom_contains(o.f, i.customer_id)
$$;
CREATE FUNCTION part_check() RETURNS TABLE (same_as_exact boolean, new_customers bigint,
                                            answered_by_filter bigint)
LANGUAGE sql STABLE AS $$
    SELECT (SELECT array_agg(n ORDER BY n) FROM part_new_customers() n) IS NOT DISTINCT FROM
           (SELECT array_agg(e ORDER BY e) FROM part_new_customers_exact() e),
           (SELECT count(*) FROM part_new_customers_exact()),
           part_answered_by_filter()
$$;

-- 3,000 incoming customers, a third of them known, in three regions plus
-- one (mars) that has no partition yet
INSERT INTO part_incoming
SELECT (ARRAY['eu', 'us', 'asia', 'mars'])[1 + i % 4],
       CASE WHEN i % 3 = 0 THEN i / 12 + (i % 4) * 100000 ELSE 500000 + i END
FROM generate_series(1, 3000) i;
SELECT * FROM part_check();
ANALYZE part_incoming, part_order_filters;
-- the plan: a hash join of the incoming rows with the filters on the
-- partition key, then the filter test, then the exact check.  PostgreSQL 17
-- and later print the exact check (a hashed subplan) with the columns it
-- compares, "ANY ((i.region = (hashed SubPlan 2).col1) AND ...)", and 19
-- names the subplan for its kind, "SubPlan exists_2"; it is shown as 15 and
-- 16 print it, "hashed SubPlan 2": what matters is its place, after the
-- filter test
CREATE FUNCTION pg_temp.explain(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        line := regexp_replace(line, 'SubPlan [a-z]+_([0-9]+)', 'SubPlan \1', 'g');
        RETURN NEXT regexp_replace(line,
            '\(ANY \(\(.*\(hashed (SubPlan [0-9]+)\)\.col[0-9]+\)\)\)', '(hashed \1)');
    END LOOP;
END
$$;
SELECT * FROM pg_temp.explain($$
SELECT i.region, i.customer_id
FROM part_incoming i LEFT JOIN part_order_filters o USING (region)
WHERE NOT bloom_contains(o.f, i.customer_id)
   OR NOT EXISTS (SELECT 1 FROM part_orders x
                  WHERE x.region = i.region AND x.customer_id = i.customer_id)$$);

-- New orders, through the parent and straight into a partition: their keys
-- are in the filters at once, so those customers are no longer new
INSERT INTO part_orders
SELECT region, customer_id, 'new' FROM part_incoming WHERE customer_id % 5 = 0 AND region <> 'mars';
INSERT INTO part_orders_eu
SELECT region, customer_id, 'new, straight into eu' FROM part_incoming
WHERE customer_id % 7 = 0 AND region = 'eu';
SELECT * FROM part_check();
SELECT region, f = (SELECT bloom_agg(customer_id, 20000, 0.01)
                    FROM part_orders p WHERE p.region = o.region) AS same_as_rebuilt, stale
FROM part_order_filters o ORDER BY region;

-- Deletes and updates make a filter stale; it stays right
DELETE FROM part_orders WHERE region = 'us' AND customer_id % 2 = 0;
UPDATE part_orders SET customer_id = customer_id + 1 WHERE region = 'asia' AND customer_id % 10 = 1;
SELECT region, stale FROM part_order_filters ORDER BY region;
SELECT * FROM part_check();
-- a rebuild of the stale filters: right still, and the deleted keys are
-- gone, so the filter alone answers more of the incoming rows
SELECT part_answered_by_filter() AS answered_before;
SELECT part_refresh_filters();
SELECT region, f = (SELECT bloom_agg(customer_id, 20000, 0.01)
                    FROM part_orders p WHERE p.region = o.region) AS same_as_rebuilt, stale
FROM part_order_filters o ORDER BY region;
SELECT * FROM part_check();

-- Partitions come and go: a new partition gets its filter from its first
-- rows (the triggers on the parent cover it; add the per-partition ones if
-- it is written directly), a detached one keeps its row until dropped
CREATE TABLE part_orders_mars PARTITION OF part_orders FOR VALUES IN ('mars');
INSERT INTO part_orders SELECT 'mars', 42, 'first order on mars';
SELECT region, bloom_contains(f, 42) AS has_42, stale
FROM part_order_filters WHERE region = 'mars';
SELECT * FROM part_check();

--
-- A materialized view of the filters: simpler, rebuilt whole by REFRESH
-- (CONCURRENTLY needs the unique index), and with partitionwise aggregation
-- each partition's filter is built on its own.  Keys written after the
-- refresh are missing until the next one: fit for partitions that no
-- longer change (past days), not for a live pre-check.
--
CREATE MATERIALIZED VIEW part_order_filters_mv AS
SELECT region, bloom_agg(customer_id, 20000, 0.01) AS f
FROM part_orders GROUP BY region;
CREATE UNIQUE INDEX ON part_order_filters_mv (region);
INSERT INTO part_orders VALUES ('eu', 777777, 'after the refresh');
SELECT bloom_contains(f, 777777) AS has_new_key
FROM part_order_filters_mv WHERE region = 'eu';
REFRESH MATERIALIZED VIEW CONCURRENTLY part_order_filters_mv;
SELECT bloom_contains(f, 777777) AS has_new_key
FROM part_order_filters_mv WHERE region = 'eu';
SELECT bool_and(m.f = t.f) AS same_as_table
FROM part_order_filters_mv m JOIN part_order_filters t USING (region);

RESET enable_partitionwise_aggregate;
RESET max_parallel_workers_per_gather;
DROP MATERIALIZED VIEW part_order_filters_mv;
DROP FUNCTION part_check(), part_answered_by_filter(), part_new_customers(),
    part_new_customers_exact();
DROP TABLE part_orders, part_order_filters, part_incoming;
DROP FUNCTION part_refresh_filters(text[]), part_filters_add(),
    part_filters_mark_stale();
