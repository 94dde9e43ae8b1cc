-- test/load/setup.sql: the tables of the concurrent-writer load test.
--
-- load_filters: 16 filters, ids 1-8 small (bloom_create(1000), stored in
-- line), ids 9-16 larger (bloom_create(20000), 24 KB, stored out of line),
-- so that 8 clients collide on the same rows all the time.
-- load_log: one row per key added, written in the same transaction as the
-- add, so it holds exactly the committed keys.
CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP TABLE IF EXISTS load_filters, load_log;
CREATE TABLE load_filters (
    id int PRIMARY KEY,
    capacity bigint NOT NULL,
    rate float8 NOT NULL,
    f bloom NOT NULL
);
INSERT INTO load_filters
SELECT id, cap, 0.01, bloom_create(cap, 0.01)
FROM generate_series(1, 16) AS id,
     LATERAL (SELECT CASE WHEN id <= 8 THEN 1000 ELSE 20000 END AS cap) AS c;
CREATE TABLE load_log (
    id int NOT NULL,
    key bigint NOT NULL,
    script text NOT NULL
);
