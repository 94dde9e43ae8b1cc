--
-- test/t/data/writers.sql: the tables and the writer procedure that
-- 010_crash_recovery.pl and 011_standby.pl load.
--
-- 1-6: 1.4 KB, in line; 7-12: 122 KB, TOAST; 13: 2.4 MB, TOAST
CREATE TABLE filters (
    id int PRIMARY KEY,
    capacity bigint NOT NULL,
    rate float8 NOT NULL,
    f bloom NOT NULL
);
INSERT INTO filters
SELECT id, cap, 0.01, bloom_create(cap, 0.01)
FROM generate_series(1, 13) AS id,
     LATERAL (SELECT CASE WHEN id <= 6 THEN 1000
                          WHEN id <= 12 THEN 100000
                          ELSE 2000000 END AS cap) AS c;

-- the committed keys: each written in the transaction that adds it
CREATE TABLE key_log (id int NOT NULL, key bigint NOT NULL, round int NOT NULL);

-- bulk builds
CREATE TABLE bulk (id int PRIMARY KEY, nkeys bigint NOT NULL, f bloom NOT NULL);

-- n small committed transactions, cycling over the filters in ids, by
-- three patterns: bloom_add; bloom_add_new under FOR UPDATE (the README's
-- pattern); | of a bloom_agg of ten keys.  Keys are unique per
-- (round, session, i).
CREATE PROCEDURE add_keys(sess int, rnd int, n int, ids int[])
LANGUAGE plpgsql AS $$
DECLARE
    k bigint;
    fid int;
BEGIN
    FOR i IN 1 .. n LOOP
        k := rnd * 1000000000::bigint + sess * 100000000::bigint + i * 10;
        fid := ids[1 + i % array_length(ids, 1)];
        CASE i % 3
        WHEN 0 THEN
            UPDATE filters SET f = bloom_add(f, k) WHERE id = fid;
            INSERT INTO key_log VALUES (fid, k, rnd);
        WHEN 1 THEN
            PERFORM 1 FROM filters WHERE id = fid FOR UPDATE;
            UPDATE filters o SET f = r.filter
            FROM filters s, LATERAL bloom_add_new(s.f, k) r
            WHERE o.id = fid AND s.id = o.id;
            INSERT INTO key_log VALUES (fid, k, rnd);
        ELSE
            UPDATE filters
            SET f = f | (SELECT bloom_agg(g, capacity, rate)
                         FROM generate_series(k, k + 9) AS g)
            WHERE id = fid;
            INSERT INTO key_log SELECT fid, g, rnd FROM generate_series(k, k + 9) AS g;
        END CASE;
        COMMIT;
    END LOOP;
END
$$;
