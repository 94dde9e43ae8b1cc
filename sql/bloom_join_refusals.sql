--
-- bloom_join_refusals: joins the pre-check must leave to the plain plan,
-- each a case that returns wrong rows, or another plan, where its refusal
-- in bfjoin_match.c is removed (the table in docs/joins.md says which
-- test guards which refusal).  Hash, merge and nested loop joins are off,
-- so that the node is chosen wherever it is offered, whatever it costs.
--
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;

\i sql/include/join_check.sql

--
-- A nondeterministic collation on the inner side of "=" (the outer key and
-- the index both "C"): equal strings of other bytes hash otherwise, so the
-- filter would rule out 'NAME 2' and 'Name 3' (the collation refusal)
--
CREATE COLLATION jr_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE jr_names (name text COLLATE "C");
INSERT INTO jr_names SELECT 'name ' || g FROM generate_series(1, 2000) g;
CREATE INDEX ON jr_names (name);
CREATE INDEX ON jr_names (name COLLATE jr_ci);
CREATE INDEX jr_names_bf ON jr_names USING bloomfilter (name);
CREATE TABLE jr_asked (name text COLLATE "C");
INSERT INTO jr_asked SELECT 'NAME ' || g FROM generate_series(1, 300) g;
INSERT INTO jr_asked SELECT 'nobody ' || g FROM generate_series(1, 300) g;
ANALYZE jr_names, jr_asked;
SELECT * FROM join_check('SELECT * FROM jr_asked a WHERE EXISTS (SELECT 1 FROM jr_names n WHERE n.name COLLATE jr_ci = a.name)');
SELECT * FROM join_check('SELECT * FROM jr_asked a WHERE NOT EXISTS (SELECT 1 FROM jr_names n WHERE n.name COLLATE jr_ci = a.name)');
-- under the index's own collation, the node (and none of those rows)
SELECT * FROM join_check('SELECT * FROM jr_asked a WHERE EXISTS (SELECT 1 FROM jr_names n WHERE n.name = a.name)');
DROP TABLE jr_names, jr_asked;

--
-- An equality between two key families: a date column's index and a
-- timestamp outer key (date = timestamp is in the btree family
-- datetime_ops) hash otherwise (the key family refusal)
--
CREATE TABLE jr_days (d date);
INSERT INTO jr_days SELECT date '2020-01-01' + g FROM generate_series(0, 2999) g;
CREATE INDEX ON jr_days (d);
CREATE INDEX jr_days_bf ON jr_days USING bloomfilter (d);
CREATE TABLE jr_stamps (t timestamp);
INSERT INTO jr_stamps SELECT timestamp '2020-01-01' + g * interval '1 day' FROM generate_series(-3000, 29) g;
ANALYZE jr_days, jr_stamps;
SELECT * FROM join_check('SELECT * FROM jr_stamps s WHERE EXISTS (SELECT 1 FROM jr_days d WHERE d.d = s.t)');
SELECT * FROM join_check('SELECT * FROM jr_stamps s WHERE NOT EXISTS (SELECT 1 FROM jr_days d WHERE d.d = s.t)');
-- a date outer key: the node
SELECT * FROM join_check('SELECT * FROM jr_stamps s WHERE EXISTS (SELECT 1 FROM jr_days d WHERE d.d = s.t::date)');
DROP TABLE jr_days, jr_stamps;

--
-- An enum key: labels renamed since the index was built hash otherwise
-- (the enum refusal; the node would also refuse it when it runs, checking
-- every row)
--
CREATE TYPE jr_color AS ENUM ('red', 'green', 'blue');
CREATE TABLE jr_paint (c jr_color);
INSERT INTO jr_paint SELECT 'red' FROM generate_series(1, 2000);
ALTER TYPE jr_color ADD VALUE 'white';
INSERT INTO jr_paint SELECT 'white' FROM generate_series(1, 2000);
CREATE INDEX ON jr_paint (c);
CREATE INDEX jr_paint_bf ON jr_paint USING bloomfilter (c);
CREATE TABLE jr_want (c jr_color);
INSERT INTO jr_want SELECT CASE WHEN g % 100 = 0 THEN 'red' WHEN g % 2 = 0 THEN 'green' ELSE 'blue' END::jr_color
FROM generate_series(1, 3000) g;
ANALYZE jr_paint, jr_want;
SELECT * FROM join_check('SELECT * FROM jr_want w WHERE NOT EXISTS (SELECT 1 FROM jr_paint p WHERE p.c = w.c)');
DROP TABLE jr_paint, jr_want;
DROP TYPE jr_color;

--
-- A partial partitioned index holds only the keys its predicate admits:
-- it cannot answer for the rows it leaves out (the partitioned index's
-- predicate refusal)
--
CREATE TABLE jr_parted (k int) PARTITION BY RANGE (k);
CREATE TABLE jr_parted_1 PARTITION OF jr_parted FOR VALUES FROM (0) TO (5000);
CREATE TABLE jr_parted_2 PARTITION OF jr_parted FOR VALUES FROM (5000) TO (10000);
INSERT INTO jr_parted SELECT g * 2 FROM generate_series(0, 4999) g;
CREATE INDEX ON jr_parted (k);
CREATE INDEX jr_parted_low_bf ON jr_parted USING bloomfilter (k) WHERE k < 1000;
CREATE TABLE jr_keys (k int);
INSERT INTO jr_keys SELECT g * 5 FROM generate_series(0, 1999) g;
ANALYZE jr_parted, jr_keys;
SELECT * FROM join_check('SELECT * FROM jr_keys i WHERE NOT EXISTS (SELECT 1 FROM jr_parted p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM jr_keys i WHERE EXISTS (SELECT 1 FROM jr_parted p WHERE p.k = i.k)');
DROP INDEX jr_parted_low_bf;

--
-- A leaf partition's own bloomfilter index on another column, beside the
-- partitioned index's: only the partitioned index's leaf index answers for
-- the partition (the check of the leaf index's ancestors)
--
ALTER TABLE jr_parted ADD COLUMN j int;
UPDATE jr_parted SET j = -k;
CREATE INDEX jr_parted_1_j_bf ON jr_parted_1 USING bloomfilter (j);
CREATE INDEX jr_parted_bf ON jr_parted USING bloomfilter (k);
CREATE INDEX jr_parted_2_j_bf ON jr_parted_2 USING bloomfilter (j);
ANALYZE jr_parted;
SELECT * FROM join_check('SELECT * FROM jr_keys i WHERE NOT EXISTS (SELECT 1 FROM jr_parted p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM jr_keys i WHERE EXISTS (SELECT 1 FROM jr_parted p WHERE p.k = i.k)');
DROP TABLE jr_parted, jr_keys;

--
-- Two outer tables, a clause on each: the inner side's index path is
-- parameterized by one of them only (t.j = b.j is no index condition), so
-- it does not enforce the other clause and cannot be the exact check
-- (the exact check's refusal): the keys on k are found, and rows whose j
-- differs would be lost
--
CREATE TABLE jr_t (k int, j int);
INSERT INTO jr_t SELECT g, g % 10 FROM generate_series(1, 3000) g;
CREATE INDEX ON jr_t (k);
CREATE INDEX jr_t_bf ON jr_t USING bloomfilter (k);
CREATE TABLE jr_a (id int, k int);
INSERT INTO jr_a SELECT g, g * 3 FROM generate_series(1, 2000) g;
CREATE TABLE jr_b (id int, j int);
INSERT INTO jr_b SELECT g, (g * 3 + g % 2) % 10 FROM generate_series(1, 2000) g;
ANALYZE jr_t, jr_a, jr_b;
SELECT * FROM join_check('SELECT a.id FROM jr_a a JOIN jr_b b ON a.id = b.id WHERE NOT EXISTS (SELECT 1 FROM jr_t t WHERE t.k = a.k AND t.j = b.j)');
DROP TABLE jr_t, jr_a, jr_b;

DROP FUNCTION join_check(text);
DROP COLLATION jr_ci;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
