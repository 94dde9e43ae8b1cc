-- test/load/add.sql: UPDATE ... SET f = bloom_add(f, key) on a random row,
-- no explicit lock (the waiter re-reads the row it updates).
\set id random(1, 16)
\set key random(1, 1000000000)
BEGIN;
UPDATE load_filters SET f = bloom_add(f, :key::bigint) WHERE id = :id;
INSERT INTO load_log VALUES (:id, :key, 'add');
END;
