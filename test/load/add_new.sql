-- test/load/add_new.sql: the README's pattern for bloom_add_new, the row
-- locked first (without the lock a concurrent add can be lost).
\set id random(1, 16)
\set key random(1, 1000000000)
BEGIN;
SELECT 1 FROM load_filters WHERE id = :id FOR UPDATE;
UPDATE load_filters o SET f = r.filter
FROM load_filters s, LATERAL bloom_add_new(s.f, :key::bigint) r
WHERE o.id = :id AND s.id = o.id
RETURNING r.added;
INSERT INTO load_log VALUES (:id, :key, 'add_new');
END;
