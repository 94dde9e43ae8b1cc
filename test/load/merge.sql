-- test/load/merge.sql: ten keys built into a filter of the row's shape with
-- bloom_agg and OR-ed into the row (the | operator), no explicit lock.
\set id random(1, 16)
\set key random(1, 1000000000)
BEGIN;
UPDATE load_filters
SET f = f | (SELECT bloom_agg(g, capacity, rate)
             FROM generate_series(:key::bigint, :key::bigint + 9) AS g)
WHERE id = :id;
INSERT INTO load_log
SELECT :id, g, 'merge' FROM generate_series(:key::bigint, :key::bigint + 9) AS g;
END;
