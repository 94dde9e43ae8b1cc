-- test/load/add_two.sql: one key added to two rows in one transaction,
-- the lower id first so that two clients never deadlock.
\set a random(1, 16)
\set b random(1, 16)
\set lo least(:a, :b)
\set hi greatest(:a, :b)
\set key random(1, 1000000000)
BEGIN;
UPDATE load_filters SET f = bloom_add(f, :key::bigint) WHERE id = :lo;
UPDATE load_filters SET f = bloom_add(f, :key::bigint) WHERE id = :hi;
INSERT INTO load_log VALUES (:lo, :key, 'add_two'), (:hi, :key, 'add_two');
END;
