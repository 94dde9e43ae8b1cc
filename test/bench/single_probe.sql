-- test/bench/single_probe.sql: pgbench script of the single-key probe, run by
-- test/bench/run.sh as
--   pgbench -n -M prepared -c 1 -j 1 -T SECONDS -D id=ID -D maxkey=MAX -f test/bench/single_probe.sql
-- so that the key and the id are parameters of a prepared statement.
\set key random(1, :maxkey)
SELECT bloom_contains(f, :key::bigint) FROM bench_filters WHERE id = :id;
