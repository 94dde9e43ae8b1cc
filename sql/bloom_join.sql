--
-- bloom_join: anti and semi joins that probe a bloomfilter index by
-- themselves (bloomfilter.join_filter).  The plans of each form, and for
-- every form the same rows as with the setting off: NULL keys, integers of
-- mixed widths, a nondeterministic collation, an expression index, a
-- partial index, partitioned tables, row-level security, a prepared
-- statement across DROP INDEX and REINDEX, a scrollable cursor moving
-- backwards, and the transaction's own new rows.
--
SET max_parallel_workers_per_gather = 0;

-- existing keys: the even numbers 2 .. 20000; incoming: 1,000 odd keys,
-- 10 even ones and two NULLs
CREATE TABLE j_orders (k bigint, note text);
INSERT INTO j_orders SELECT g * 2, 'note ' || g FROM generate_series(1, 10000) g;
CREATE INDEX j_orders_k ON j_orders (k);
CREATE INDEX j_orders_k_bf ON j_orders USING bloomfilter (k);
CREATE TABLE j_incoming (id int, k int, name text);
INSERT INTO j_incoming SELECT g, g * 2 + 1, 'in ' || g FROM generate_series(1, 1000) g;
INSERT INTO j_incoming SELECT 1000 + g, g * 1000, 'old ' || g FROM generate_series(1, 10) g;
INSERT INTO j_incoming VALUES (2001, NULL, 'null 1'), (2002, NULL, 'null 2');
VACUUM ANALYZE j_orders;
VACUUM ANALYZE j_incoming;

\i sql/include/join_check.sql

-- Does the plan, under the settings in force, use the node?
CREATE FUNCTION j_uses(q text) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF line ~ 'Bloom(Anti|Semi)Join' THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

-- The node's own lines of EXPLAIN ANALYZE (the others vary between runs).
CREATE FUNCTION j_counts(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Bloom Filter|Answered|Exact Checks|NULL Key|Pauses|Not Probed|Unavailable' THEN
            RETURN NEXT trim(line);
        END IF;
    END LOOP;
END
$$;

--
-- The plans PostgreSQL chooses by cost: few incoming keys exist, so the
-- filter answers almost every row
--
EXPLAIN (COSTS OFF)
SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k);
EXPLAIN (COSTS OFF)
SELECT i.* FROM j_incoming i LEFT JOIN j_orders o ON o.k = i.k WHERE o.k IS NULL;
EXPLAIN (COSTS OFF)
SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k);
EXPLAIN (COSTS OFF)
SELECT * FROM j_incoming i WHERE i.k IN (SELECT k FROM j_orders);
-- the setting off: a plain plan (which one varies between versions)
SET bloomfilter.join_filter = off;
SELECT j_uses('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
RESET bloomfilter.join_filter;
SELECT j_uses('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');

-- what EXPLAIN ANALYZE adds: the rows the filter answered, the exact checks
-- and those that found no row; NULL keys are answered with no probe
SELECT j_counts('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT j_counts('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');

-- the same rows as the plain plans, for each form: anti joins return the
-- NULL keys, semi joins drop them
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT * FROM join_check('SELECT i.*, o.note FROM j_incoming i LEFT JOIN j_orders o ON o.k = i.k WHERE o.k IS NULL');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE i.k IN (SELECT k FROM j_orders)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k + 1)');
-- every other join method disabled, so that the node runs wherever it can
-- (it is no nested loop path of the planner's)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
-- every key present: every row goes to the exact check, and past the first
-- 8,192 rows probed, all of them "maybe", the filter pauses
SELECT * FROM join_check('SELECT * FROM j_orders a WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = a.k)');
SELECT j_counts('SELECT * FROM j_orders a WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = a.k)');
SELECT * FROM join_check('SELECT * FROM j_orders a WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = a.k)');
-- other clauses besides the key: enforced by the exact check
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k AND o.note <> i.name)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k AND o.note = ''note '' || (i.k / 2))');

-- under a LIMIT the first exact checks come after 64 "maybe" rows, not after
-- the whole outer side; the checks counted are those made: ten rows out,
-- ten checked
SELECT j_counts('SELECT * FROM j_orders a WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = a.k) LIMIT 10');

-- the "maybe" rows kept for their checks take at most work_mem (and one
-- row), however wide the rows and whatever width the planner expects: a
-- table never analyzed, rows of about 1.3 kB, every key present
CREATE TABLE j_wide AS
SELECT k, (SELECT string_agg(md5(k::text || i), '') FROM generate_series(1, 40) i) AS pad
FROM j_orders WHERE k <= 4000;
CREATE FUNCTION j_memory(q text, OUT batches int, OUT within_work_mem bool)
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    kb int;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Exact Check Batches' THEN
            batches := substring(line from '(\d+)')::int;
        ELSIF line ~ 'Maybe Rows Memory' THEN
            kb := substring(line from '(\d+)')::int;
        END IF;
    END LOOP;
    within_work_mem := kb <= pg_size_bytes(current_setting('work_mem')) / 1024 + 4;
END
$$;
SET work_mem = '64kB';
SELECT batches > 20 AS many_batches, within_work_mem
FROM j_memory('SELECT * FROM j_wide w WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = w.k)');
SELECT batches > 20 AS many_batches, within_work_mem
FROM j_memory('SELECT * FROM j_wide w WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = w.k)');
SELECT * FROM join_check('SELECT k, md5(pad) FROM j_wide w WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = w.k)');
RESET work_mem;
SET work_mem = '4MB';
SELECT batches < 16 AS few_batches, within_work_mem
FROM j_memory('SELECT * FROM j_wide w WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = w.k)');
RESET work_mem;
DROP TABLE j_wide;

-- keys that hashing copies (numeric: detoasted first) are hashed in memory
-- freed at each batch: the query's memory stays flat however many outer
-- rows it reads (a cursor keeps the query open to look at it)
CREATE TABLE j_num_orders (k numeric);
INSERT INTO j_num_orders SELECT g * 2 FROM generate_series(1, 1000) g;
CREATE INDEX ON j_num_orders (k);
CREATE INDEX j_num_orders_bf ON j_num_orders USING bloomfilter (k);
CREATE TABLE j_num_incoming AS SELECT (-g)::numeric AS k FROM generate_series(1, 200000) g;
ANALYZE j_num_orders;
ANALYZE j_num_incoming;
SELECT j_uses('SELECT k FROM j_num_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_num_orders o WHERE o.k = i.k)');
BEGIN;
DECLARE j_cur CURSOR FOR
SELECT k FROM j_num_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_num_orders o WHERE o.k = i.k);
MOVE 199990 IN j_cur;
SELECT sum(used_bytes) < 1024 * 1024 AS flat FROM pg_backend_memory_contexts
WHERE name IN ('ExecutorState', 'bloom join key hashes');
COMMIT;
DROP TABLE j_num_orders, j_num_incoming;

-- an expression key is evaluated once per outer row, in memory freed at
-- each row and batch, and a "maybe" row keeps its key: over TOASTed bodies
-- of 96 kB, md5(body) allocates a detoasted copy per row, yet the query's
-- memory with the node is the plain plan's plus at most work_mem (it grew
-- by every body read, 40 MB here, when the key was evaluated in the
-- query's memory)
CREATE TABLE j_docs (id int, body text);
INSERT INTO j_docs SELECT g, repeat(md5(g::text), 3000) FROM generate_series(1, 200) g;
CREATE INDEX ON j_docs (md5(body));
CREATE INDEX j_docs_bf ON j_docs USING bloomfilter (md5(body));
CREATE TABLE j_new (id int, body text);
INSERT INTO j_new SELECT g, repeat(md5(g::text), 3000) FROM generate_series(101, 500) g;
VACUUM ANALYZE j_docs;
VACUUM ANALYZE j_new;
-- the backend's memory in use with the query's cursor past all but one row
CREATE FUNCTION j_cursor_memory(q text, filter bool, n int DEFAULT 399) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    c refcursor;
    used bigint;
BEGIN
    PERFORM set_config('bloomfilter.join_filter', filter::text, true);
    OPEN c FOR EXECUTE q;
    MOVE FORWARD n FROM c;
    SELECT sum(used_bytes) INTO used FROM pg_backend_memory_contexts;
    CLOSE c;
    PERFORM set_config('bloomfilter.join_filter', 'on', true);
    RETURN used;
END
$$;
BEGIN;
SET LOCAL work_mem = '1MB';
SET LOCAL cursor_tuple_fraction = 1.0;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SELECT j_uses('SELECT id FROM j_new n WHERE NOT EXISTS (SELECT 1 FROM j_docs d WHERE md5(d.body) = md5(n.body))');
SELECT j_uses('SELECT id FROM j_new n WHERE EXISTS (SELECT 1 FROM j_docs d WHERE md5(d.body) = md5(n.body))');
SELECT j_cursor_memory(q, true) - j_cursor_memory(q, false) < 1024 * 1024 + 512 * 1024 AS within_work_mem
FROM (VALUES ('SELECT id FROM j_new n WHERE NOT EXISTS (SELECT 1 FROM j_docs d WHERE md5(d.body) = md5(n.body))'),
             ('SELECT id FROM j_new n WHERE EXISTS (SELECT 1 FROM j_docs d WHERE md5(d.body) = md5(n.body))'),
             ('SELECT id FROM j_new n WHERE NOT EXISTS (SELECT 1 FROM j_docs d WHERE md5(d.body) = md5(n.body || ''''))')) v(q);
SELECT * FROM join_check('SELECT id FROM j_new n WHERE NOT EXISTS (SELECT 1 FROM j_docs d WHERE md5(d.body) = md5(n.body))');
SELECT * FROM join_check('SELECT id FROM j_new n WHERE EXISTS (SELECT 1 FROM j_docs d WHERE md5(d.body) = md5(n.body))');
COMMIT;
DROP TABLE j_docs, j_new;

-- a large expression key: upper(body) of 256 kB bodies (TOASTed, compressed
-- to a few kB in their rows), into a filter large enough to be copied and
-- probed in batches (bits of 1.4 MB): a batch stops once its keys and rows
-- pass a quarter of work_mem, and a "maybe" row's key counts with its row,
-- so the memory is still the plain plan's plus at most work_mem, the bits
-- and a row with its key (batches of 64 keys took 17 to 18 MB more before)
CREATE TABLE j_big_docs (id int, body text);
INSERT INTO j_big_docs SELECT g, repeat(md5(g::text), 8000) FROM generate_series(1, 300, 3) g;
CREATE INDEX ON j_big_docs USING hash (upper(body));
CREATE INDEX j_big_docs_bf ON j_big_docs USING bloomfilter (upper(body))
    WITH (capacity = 800000, false_positive_rate = 0.001);
CREATE TABLE j_big_new (id int, body text);
INSERT INTO j_big_new SELECT g, repeat(md5(g::text), 8000) FROM generate_series(1, 300) g;
VACUUM ANALYZE j_big_docs;
VACUUM ANALYZE j_big_new;
BEGIN;
SET LOCAL work_mem = '1MB';
SET LOCAL cursor_tuple_fraction = 1.0;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SELECT j_uses('SELECT id FROM j_big_new n WHERE NOT EXISTS (SELECT 1 FROM j_big_docs d WHERE upper(d.body) = upper(n.body))');
SELECT j_uses('SELECT id FROM j_big_new n WHERE EXISTS (SELECT 1 FROM j_big_docs d WHERE upper(d.body) = upper(n.body))');
SELECT j_cursor_memory(q, true, n) - j_cursor_memory(q, false, n) < 4 * 1024 * 1024 AS within_work_mem_and_bits
FROM (VALUES ('SELECT id FROM j_big_new n WHERE NOT EXISTS (SELECT 1 FROM j_big_docs d WHERE upper(d.body) = upper(n.body))', 30),
             ('SELECT id FROM j_big_new n WHERE NOT EXISTS (SELECT 1 FROM j_big_docs d WHERE upper(d.body) = upper(n.body))', 150),
             ('SELECT id FROM j_big_new n WHERE EXISTS (SELECT 1 FROM j_big_docs d WHERE upper(d.body) = upper(n.body))', 50)) v(q, n);
SELECT * FROM join_check('SELECT id FROM j_big_new n WHERE NOT EXISTS (SELECT 1 FROM j_big_docs d WHERE upper(d.body) = upper(n.body))');
SELECT * FROM join_check('SELECT id FROM j_big_new n WHERE EXISTS (SELECT 1 FROM j_big_docs d WHERE upper(d.body) = upper(n.body))');
COMMIT;
DROP FUNCTION j_cursor_memory(text, bool, int);
DROP TABLE j_big_docs, j_big_new;

-- no lookahead for a LIMIT's first row: batches of outer rows, and of exact
-- checks, start at one row and double, so a key that fails further on (a
-- division by zero in the second row) is not evaluated before the first
-- row is returned, as with the plain plan (bits of 1.4 MB: copied, batched)
CREATE TABLE j_ek_big (k int8);
INSERT INTO j_ek_big SELECT generate_series(1, 3000);
CREATE INDEX ON j_ek_big (k);
CREATE INDEX j_ek_big_bf ON j_ek_big USING bloomfilter (k)
    WITH (capacity = 800000, false_positive_rate = 0.001);
CREATE TABLE j_ek (id int, x int);
INSERT INTO j_ek VALUES (1, 50), (2, 0);
INSERT INTO j_ek SELECT g, 7 FROM generate_series(3, 3000) g;
ANALYZE j_ek_big;
ANALYZE j_ek;
SELECT j_uses('SELECT id FROM j_ek WHERE EXISTS (SELECT 1 FROM j_ek_big b WHERE b.k = 100 / j_ek.x) LIMIT 1');
SELECT j_uses('SELECT id FROM j_ek WHERE NOT EXISTS (SELECT 1 FROM j_ek_big b WHERE b.k = 100 / j_ek.x + 100000001) LIMIT 1');
SELECT id FROM j_ek WHERE EXISTS (SELECT 1 FROM j_ek_big b WHERE b.k = 100 / j_ek.x) LIMIT 1;
SELECT id FROM j_ek WHERE NOT EXISTS (SELECT 1 FROM j_ek_big b WHERE b.k = 100 / j_ek.x + 100000001) LIMIT 1;
DROP TABLE j_ek_big, j_ek;

-- under a Gather each worker runs the node over its share of the outer rows
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k);
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
-- EXPLAIN ANALYZE's counts are of every process, the leader's and each
-- worker's (summed through the parallel query's shared memory): the outer
-- rows are each answered by the filter, answered for a NULL key, or checked
-- exactly, whichever process read them and however many workers started.
-- The processes probe one copy of the bits, in the shared memory.
CREATE FUNCTION j_parallel_counts(q text, OUT adds_up bool, OUT shared bool)
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
    node jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
    node := jsonb_path_query_first(plan,
        'strict $.** ? (@."Custom Plan Provider" like_regex "^Bloom(Anti|Semi)Join$")');
    adds_up := (node ->> 'Rows Answered by Filter')::bigint +
               (node ->> 'Rows with NULL Key')::bigint +
               (node ->> 'Exact Checks')::bigint = (SELECT count(*) FROM j_incoming);
    shared := node ? 'Filter Shared Memory';
END
$$;
SELECT * FROM j_parallel_counts('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT * FROM j_parallel_counts('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
-- the workers alone, probing the leader's copy of the bits
SET parallel_leader_participation = off;
SELECT * FROM j_parallel_counts('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT * FROM j_parallel_counts('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
RESET parallel_leader_participation;
DROP FUNCTION j_parallel_counts(text);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

--
-- Integer keys of mixed widths hash alike: an int2, int4 or int8 outer key
-- probes the int8 index, and an int8 key an int4 index
--
CREATE TABLE j_small (k int2);
INSERT INTO j_small SELECT g FROM generate_series(1, 300) g;
INSERT INTO j_small VALUES (NULL);
ANALYZE j_small;
SELECT * FROM join_check('SELECT * FROM j_small s WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = s.k)');
SELECT * FROM join_check('SELECT * FROM j_small s WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = s.k)');
SELECT * FROM join_check('SELECT * FROM j_orders o WHERE NOT EXISTS (SELECT 1 FROM j_incoming i WHERE i.k = o.k)');
CREATE INDEX j_incoming_k ON j_incoming (k);
CREATE INDEX j_incoming_k_bf ON j_incoming USING bloomfilter (k);
SELECT * FROM join_check('SELECT * FROM j_orders o WHERE NOT EXISTS (SELECT 1 FROM j_incoming i WHERE i.k = o.k)');
SELECT * FROM join_check('SELECT * FROM j_orders o WHERE EXISTS (SELECT 1 FROM j_incoming i WHERE i.k = o.k)');
-- a key of another family (numeric against bigint) does not hash alike
SELECT * FROM join_check('SELECT * FROM j_small s WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k::numeric = s.k::numeric)');

--
-- Text keys: under the index's (deterministic) collation the node is used;
-- under a nondeterministic collation equal strings differ in bytes, and it
-- is not
--
CREATE COLLATION j_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE j_names (name text COLLATE "C");
INSERT INTO j_names SELECT 'name ' || g FROM generate_series(1, 2000) g;
CREATE INDEX ON j_names (name);
CREATE INDEX j_names_bf ON j_names USING bloomfilter (name);
CREATE TABLE j_asked (name text COLLATE "C");
INSERT INTO j_asked VALUES ('name 1'), ('NAME 2'), ('Name 3'), ('nobody'), (NULL);
ANALYZE j_names;
ANALYZE j_asked;
SELECT * FROM join_check('SELECT * FROM j_asked a WHERE NOT EXISTS (SELECT 1 FROM j_names n WHERE n.name = a.name)');
SELECT * FROM join_check('SELECT * FROM j_asked a WHERE NOT EXISTS (SELECT 1 FROM j_names n WHERE n.name = a.name COLLATE j_ci)');
SELECT * FROM join_check('SELECT * FROM j_asked a WHERE EXISTS (SELECT 1 FROM j_names n WHERE n.name = a.name COLLATE j_ci)');

--
-- An expression index serves a clause on the same expression, not one on
-- the column
--
DROP INDEX j_names_bf;
CREATE INDEX j_names_lower_bf ON j_names USING bloomfilter (lower(name));
CREATE INDEX ON j_names (lower(name));
ANALYZE j_names;
SELECT * FROM join_check('SELECT * FROM j_asked a WHERE NOT EXISTS (SELECT 1 FROM j_names n WHERE lower(n.name) = a.name)');
SELECT * FROM join_check('SELECT * FROM j_asked a WHERE EXISTS (SELECT 1 FROM j_names n WHERE lower(n.name) = lower(a.name))');
SELECT * FROM join_check('SELECT * FROM j_asked a WHERE NOT EXISTS (SELECT 1 FROM j_names n WHERE n.name = a.name)');

-- A relabel changes how a key hashes: an index on (x::bpchar) of a text
-- column hashed its keys without trailing blanks, so it does not serve a
-- text clause on x (review round 4), only a bpchar one
CREATE TABLE j_blank (x text);
INSERT INTO j_blank SELECT 'k' || g FROM generate_series(1, 3000) g;
INSERT INTO j_blank VALUES ('abc '), ('xyz  ');
CREATE INDEX ON j_blank (x);
CREATE INDEX ON j_blank ((x::bpchar));
CREATE INDEX j_blank_bf ON j_blank USING bloomfilter ((x::bpchar));
CREATE TABLE j_blank_asked (t text);
INSERT INTO j_blank_asked SELECT 'n' || g FROM generate_series(1, 500) g;
INSERT INTO j_blank_asked VALUES ('abc '), ('xyz  '), ('k5');
ANALYZE j_blank;
ANALYZE j_blank_asked;
SELECT * FROM join_check('SELECT * FROM j_blank_asked a WHERE EXISTS (SELECT 1 FROM j_blank b WHERE b.x = a.t)');
SELECT * FROM join_check('SELECT * FROM j_blank_asked a WHERE NOT EXISTS (SELECT 1 FROM j_blank b WHERE b.x = a.t)');
SELECT * FROM join_check('SELECT * FROM j_blank_asked a WHERE NOT EXISTS (SELECT 1 FROM j_blank b WHERE b.x::bpchar = a.t::bpchar)');
DROP TABLE j_blank, j_blank_asked;

--
-- A partial index serves only where the inner side's conditions imply its
-- predicate
--
CREATE TABLE j_part (k int, open bool);
INSERT INTO j_part SELECT g, g % 3 = 0 FROM generate_series(1, 3000) g;
CREATE INDEX ON j_part (k);
CREATE INDEX j_part_open_bf ON j_part USING bloomfilter (k) WHERE open;
ANALYZE j_part;
SELECT * FROM join_check('SELECT * FROM j_small s WHERE NOT EXISTS (SELECT 1 FROM j_part p WHERE p.k = s.k AND p.open)');
SELECT * FROM join_check('SELECT * FROM j_small s WHERE NOT EXISTS (SELECT 1 FROM j_part p WHERE p.k = s.k)');
SELECT * FROM join_check('SELECT * FROM j_small s WHERE EXISTS (SELECT 1 FROM j_part p WHERE p.k = s.k AND p.open)');

--
-- A partitioned inner table: used where a valid index covers every leaf
-- partition, not where one lacks it
--
CREATE TABLE j_parted (k bigint) PARTITION BY RANGE (k);
CREATE TABLE j_parted_1 PARTITION OF j_parted FOR VALUES FROM (0) TO (10000);
CREATE TABLE j_parted_2 PARTITION OF j_parted FOR VALUES FROM (10000) TO (20001);
INSERT INTO j_parted SELECT g * 2 FROM generate_series(1, 10000) g;
CREATE INDEX ON j_parted (k);
CREATE INDEX j_parted_bf ON j_parted USING bloomfilter (k);
ANALYZE j_parted;
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
-- an index created ON ONLY the parent, with one partition's index attached:
-- invalid until every partition's is, and not used
DROP INDEX j_parted_bf;
CREATE INDEX j_parted_bf ON ONLY j_parted USING bloomfilter (k);
CREATE INDEX j_parted_1_bf ON j_parted_1 USING bloomfilter (k);
ALTER INDEX j_parted_bf ATTACH PARTITION j_parted_1_bf;
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
CREATE INDEX j_parted_2_bf ON j_parted_2 USING bloomfilter (k);
ALTER INDEX j_parted_bf ATTACH PARTITION j_parted_2_bf;
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
-- a partition attached later gets the index, and its keys are found
CREATE TABLE j_parted_3 (k bigint);
INSERT INTO j_parted_3 VALUES (20003), (20005);
ALTER TABLE j_parted ATTACH PARTITION j_parted_3 FOR VALUES FROM (20001) TO (30000);
INSERT INTO j_incoming VALUES (3001, 20003, 'in the new partition');
ANALYZE j_parted;
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
-- a partition queried alone; a partitionwise join, partition by partition,
-- each partition's join probing that partition's index
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_parted_3 p WHERE p.k = i.k)');
CREATE TABLE j_inparted (k bigint) PARTITION BY RANGE (k);
CREATE TABLE j_inparted_1 PARTITION OF j_inparted FOR VALUES FROM (0) TO (10000);
CREATE TABLE j_inparted_3 PARTITION OF j_inparted FOR VALUES FROM (20001) TO (30000);
INSERT INTO j_inparted SELECT g * 3 FROM generate_series(1, 3333) g;
INSERT INTO j_inparted VALUES (20003), (20004);
ANALYZE j_inparted;
SET enable_partitionwise_join = on;
SELECT * FROM join_check('SELECT * FROM j_inparted i WHERE NOT EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_inparted i WHERE EXISTS (SELECT 1 FROM j_parted p WHERE p.k = i.k)');
RESET enable_partitionwise_join;
DELETE FROM j_incoming WHERE id = 3001;

--
-- Row-level security on the inner table: the exact check applies the
-- policies, so the rows are the plain plan's
--
CREATE ROLE j_reader;
GRANT SELECT ON j_orders, j_incoming TO j_reader;
ALTER TABLE j_orders ENABLE ROW LEVEL SECURITY;
CREATE POLICY j_low ON j_orders FOR SELECT TO j_reader USING (k < 1000);
SET ROLE j_reader;
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)');
SELECT count(*) FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k);
RESET ROLE;
ALTER TABLE j_orders DISABLE ROW LEVEL SECURITY;
DROP POLICY j_low ON j_orders;
REVOKE ALL ON j_orders, j_incoming FROM j_reader;
DROP ROLE j_reader;

--
-- A prepared statement's cached plan depends on the index: DROP INDEX and
-- REINDEX make it plan again, and the rows stay the plain plan's
--
SET plan_cache_mode = force_generic_plan;
PREPARE j_new AS
SELECT count(*) FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k);
EXECUTE j_new;
SELECT j_counts('EXECUTE j_new');
DROP INDEX j_orders_k_bf;
EXECUTE j_new;
SELECT j_counts('EXECUTE j_new');
CREATE INDEX j_orders_k_bf ON j_orders USING bloomfilter (k);
EXECUTE j_new;
REINDEX INDEX j_orders_k_bf;
EXECUTE j_new;
SELECT j_counts('EXECUTE j_new');
ALTER INDEX j_orders_k_bf RENAME TO j_orders_k_bloom;
SELECT j_counts('EXECUTE j_new');
ALTER INDEX j_orders_k_bloom RENAME TO j_orders_k_bf;
-- the setting turned off after the plan was made: the plan stays, but no
-- row is answered by the filter (every row checked exactly)
EXECUTE j_new;
SET bloomfilter.join_filter = off;
EXECUTE j_new;
SELECT j_counts('EXECUTE j_new');
RESET bloomfilter.join_filter;
DEALLOCATE j_new;
RESET plan_cache_mode;

--
-- A scrollable cursor moving backwards: the node scans forwards only, so
-- the planner puts a Material above it
--
BEGIN;
EXPLAIN (COSTS OFF)
DECLARE j_cur SCROLL CURSOR FOR
SELECT i.id FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k) AND i.id > 995;
DECLARE j_cur SCROLL CURSOR FOR
SELECT i.id FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k) AND i.id > 995;
FETCH 3 FROM j_cur;
FETCH BACKWARD 2 FROM j_cur;
FETCH LAST FROM j_cur;
FETCH BACKWARD 3 FROM j_cur;
FETCH ABSOLUTE 1 FROM j_cur;
COMMIT;

--
-- The transaction's own new rows are found, before and after a savepoint
--
BEGIN;
INSERT INTO j_orders VALUES (3), (5);
SELECT * FROM join_check('SELECT * FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k) AND i.k < 10');
SAVEPOINT s;
INSERT INTO j_orders VALUES (7);
SELECT i.k FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k) AND i.k < 10 ORDER BY 1;
SELECT i.k FROM j_incoming i WHERE EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k) AND i.k < 10 ORDER BY 1;
ROLLBACK TO s;
SELECT i.k FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k) AND i.k < 10 ORDER BY 1;
ROLLBACK;
-- and in a function, whose statements see its earlier inserts
CREATE FUNCTION j_insert_then_count() RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO j_orders SELECT g * 2 + 1 FROM generate_series(1, 500) g;
    RETURN (SELECT count(*) FROM j_incoming i WHERE NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k));
END
$$;
BEGIN;
SELECT j_insert_then_count();
ROLLBACK;
-- and in an AFTER trigger of the insert itself, which sees the new row
-- while its key still waits in the backend's memory until the commit: the
-- node looks it up there
CREATE TABLE j_log (k bigint, missing bigint, present bigint);
CREATE FUNCTION j_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO j_log
    SELECT NEW.k,
           (SELECT count(*) FROM j_incoming i
            WHERE i.k BETWEEN NEW.k AND NEW.k AND NOT EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k)),
           (SELECT count(*) FROM j_incoming i
            WHERE i.k BETWEEN NEW.k AND NEW.k AND EXISTS (SELECT 1 FROM j_orders o WHERE o.k = i.k));
    RETURN NULL;
END
$$;
CREATE TRIGGER j_after AFTER INSERT ON j_orders FOR EACH ROW EXECUTE FUNCTION j_after_insert();
BEGIN;
-- (keys no insert set before: a rolled-back insert leaves its keys' bits)
INSERT INTO j_orders VALUES (1501);
INSERT INTO j_orders VALUES (1503), (1505);
SELECT * FROM j_log ORDER BY k;
ROLLBACK;
DROP TRIGGER j_after ON j_orders;
DROP FUNCTION j_after_insert();
DROP TABLE j_log;

RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
DROP FUNCTION j_insert_then_count();
DROP TABLE j_orders, j_incoming, j_small, j_names, j_asked, j_part, j_parted,
    j_inparted;
DROP COLLATION j_ci;
DROP FUNCTION join_check(text);
DROP FUNCTION j_counts(text);
DROP FUNCTION j_uses(text);
