--
-- bloom_type: the bloom type's text and binary forms, the casts to and from
-- bytea, the validation of every input path, and storage.
--
-- The text form is the base64 of the payload (bloom.h); the binary form and
-- bloom::bytea are the payload itself.  Whatever the path, a filter comes
-- back with the same bytes and still finds every key added to it.
--
\set VERBOSITY default

-- add the integers 1..n one by one
CREATE FUNCTION add_ints(f bloom, n int) RETURNS bloom
LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. n LOOP
    f := bloom_add(f, i);
  END LOOP;
  RETURN f;
END
$$;

-- the filters used below, with the keys that were added to them
CREATE TABLE filters (id int PRIMARY KEY, what text, f bloom, nkeys int);
INSERT INTO filters VALUES
  (1, 'bloom_create(1), empty',       bloom_create(1), 0),
  (2, 'bloom_create(1) + 42',         bloom_add(bloom_create(1), 42), NULL),
  (3, 'bloom_create(1000, 0.001) + 1..1000', add_ints(bloom_create(1000, 0.001), 1000), 1000),
  (4, 'bloom_agg over 1..100000',     (SELECT bloom_agg(g) FROM generate_series(1, 100000) AS g), 100000),
  (5, 'bloom_agg of text k1..k1000',  (SELECT bloom_agg('k' || g) FROM generate_series(1, 1000) AS g), NULL),
  (6, 'NULL',                         NULL, NULL);

-- how many of the keys of filter id are missing from g (must be 0: no
-- false negatives)
CREATE FUNCTION missing(g bloom, id int) RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN g IS NULL THEN NULL
    WHEN id = 2 THEN (SELECT count(*) FILTER (WHERE NOT bloom_contains(g, 42)))
    WHEN id = 5 THEN (SELECT count(*) FILTER (WHERE NOT bloom_contains(g, 'k' || k))
                 FROM generate_series(1, 1000) AS k)
    ELSE (SELECT count(*) FILTER (WHERE NOT bloom_contains(g, k))
          FROM generate_series(1, (SELECT nkeys FROM filters AS x WHERE x.id = missing.id)) AS k)
  END
$$;

SELECT id, what, octet_length(f::bytea) AS payload_bytes,
       length(f::text) AS text_length, md5(f::text) AS text_md5
FROM filters ORDER BY id;

--
-- Text round trip: output, input, output gives the same text and the same
-- bytes; the text form is canonical base64 of the payload
--
SELECT id,
       f::text::bloom::text = f::text AS text_round_trip,
       (f::text::bloom)::bytea = f::bytea AS bytes_round_trip,
       f::text = translate(encode(f::bytea, 'base64'), E'\n', '') AS is_base64_of_payload
FROM filters ORDER BY id;

-- the keys are still there (filters are materialized first, so that the
-- probes do not decode the text form once per key)
CREATE TABLE from_text AS SELECT id, f::text::bloom AS f FROM filters;
SELECT id, missing(f, id) AS missing_keys FROM from_text ORDER BY id;
DROP TABLE from_text;

--
-- Casts to and from bytea
--
SELECT id,
       f::bytea::bloom::bytea = f::bytea AS bytea_round_trip,
       (f::bytea::bloom)::text = f::text AS same_text
FROM filters ORDER BY id;
CREATE TABLE from_bytea AS SELECT id, f::bytea::bloom AS f FROM filters;
SELECT id, missing(f, id) AS missing_keys FROM from_bytea ORDER BY id;
DROP TABLE from_bytea;

-- the bytea may itself be compressed in a table (an empty filter compresses
-- well) or held in a column of its own
CREATE TABLE as_bytea (id int, b bytea);
INSERT INTO as_bytea SELECT id, f::bytea FROM filters;
INSERT INTO as_bytea VALUES (7, bloom_create(100000)::bytea);
SELECT id, pg_column_size(b) < octet_length(b) AS compressed,
       b::bloom::bytea = b AS round_trip
FROM as_bytea WHERE id IN (4, 7) ORDER BY id;
DROP TABLE as_bytea;

--
-- COPY binary: the binary form is the payload, and it round-trips
--
\copy (SELECT id, f FROM filters ORDER BY id) TO 'results/bloom_binary.data' WITH (FORMAT binary)
CREATE TABLE from_binary (id int, f bloom);
\copy from_binary FROM 'results/bloom_binary.data' WITH (FORMAT binary)
SELECT id, b.f::bytea IS NOT DISTINCT FROM a.f::bytea AS same_bytes,
       b.f IS NULL AS is_null, missing(b.f, id) AS missing_keys
FROM filters AS a JOIN from_binary AS b USING (id) ORDER BY id;

-- read back as bytea: the binary form is exactly bloom::bytea
CREATE TABLE binary_as_bytea (id int, b bytea);
\copy binary_as_bytea FROM 'results/bloom_binary.data' WITH (FORMAT binary)
SELECT id, b.b IS NOT DISTINCT FROM a.f::bytea AS binary_is_payload
FROM filters AS a JOIN binary_as_bytea AS b USING (id) ORDER BY id;
DROP TABLE binary_as_bytea;
DROP TABLE from_binary;

--
-- COPY text
--
\copy (SELECT id, f FROM filters ORDER BY id) TO 'results/bloom_text.data'
CREATE TABLE from_copy_text (id int, f bloom);
\copy from_copy_text FROM 'results/bloom_text.data'
SELECT id, b.f::bytea IS NOT DISTINCT FROM a.f::bytea AS same_bytes,
       b.f IS NULL AS is_null, missing(b.f, id) AS missing_keys
FROM filters AS a JOIN from_copy_text AS b USING (id) ORDER BY id;
DROP TABLE from_copy_text;

--
-- Malformed input.  Each case below corrupts one thing in a valid filter
-- (bloom_add(bloom_create(10), 42): 124 bytes of header and one 64-byte
-- block; offsets as in bloom.h, 0-based for set_byte, 1-based for overlay)
-- and is fed to the cast from bytea (SQLSTATE 22P03) and, as base64, to the
-- text input (22P02).  "ok" means accepted with the bytes unchanged.
--
CREATE FUNCTION try_bytea(b bytea, OUT state text, OUT message text, OUT detail text)
LANGUAGE plpgsql AS $$
BEGIN
  state := CASE WHEN (b::bloom)::bytea = b THEN 'ok' ELSE 'changed' END;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                          detail = PG_EXCEPTION_DETAIL;
END
$$;
CREATE FUNCTION try_text(t text, OUT state text, OUT message text, OUT detail text)
LANGUAGE plpgsql AS $$
BEGIN
  state := CASE WHEN (t::bloom)::text = t THEN 'ok' ELSE 'changed' END;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                          detail = PG_EXCEPTION_DETAIL;
END
$$;
-- 8 bytes, little-endian
CREATE FUNCTION le8(x numeric) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT string_agg(set_byte('\x00'::bytea, 0, (div(x, 256::numeric ^ i) % 256)::int),
                    ''::bytea ORDER BY i)
  FROM generate_series(0, 7) AS i
$$;
CREATE FUNCTION le_float8(d float8) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT string_agg(substring(float8send(d) FROM 9 - i FOR 1), ''::bytea ORDER BY i)
  FROM generate_series(1, 8) AS i
$$;

CREATE TABLE valid AS SELECT bloom_add(bloom_create(10), 42)::bytea AS v;
SELECT octet_length(v) AS payload_bytes, le8(1) = substring(v FROM 17 FOR 8) AS one_block,
       le_float8(0.01) = substring(v FROM 33 FOR 8) AS rate_0_01
FROM valid;

CREATE TABLE bad_bytes (ord int, what text, b bytea);
INSERT INTO bad_bytes
SELECT ord, what, b FROM valid, LATERAL (VALUES
  ( 1, 'valid',                          v),
  ( 2, 'empty',                          '\x'::bytea),
  ( 3, 'one byte',                       '\x42'::bytea),
  ( 4, 'header less one byte',           substring(v FROM 1 FOR 123)),
  ( 5, 'header only, no bits',           substring(v FROM 1 FOR 124)),
  ( 6, 'text, not a filter',             convert_to(rpad('this is not a bloom filter', 188, '.'), 'SQL_ASCII')),
  ( 7, 'magic blmf',                     overlay(v PLACING 'blmf'::bytea FROM 1 FOR 4)),
  ( 8, 'magic last byte',                set_byte(v, 3, 0)),
  ( 9, 'version 0',                      set_byte(v, 4, 0)),
  (10, 'version 2',                      set_byte(v, 4, 2)),
  (11, 'version 255',                    set_byte(v, 4, 255)),
  (12, 'layout 0',                       set_byte(v, 5, 0)),
  (13, 'layout 2',                       set_byte(v, 5, 2)),
  (14, 'hash scheme 0',                  set_byte(v, 6, 0)),
  (15, 'hash scheme 2',                  set_byte(v, 6, 2)),
  (16, 'nhashes 0',                      set_byte(v, 7, 0)),
  (17, 'nhashes 32',                     set_byte(v, 7, 32)),
  (18, 'nhashes 33',                     set_byte(v, 7, 33)),
  (19, 'nhashes 255',                    set_byte(v, 7, 255)),
  (20, 'seed 1',                         set_byte(v, 8, 1)),
  (21, 'nblocks 0',                      overlay(v PLACING le8(0) FROM 17 FOR 8)),
  (22, 'nblocks 2',                      overlay(v PLACING le8(2) FROM 17 FOR 8)),
  (23, 'nblocks 12500000 (largest)',     overlay(v PLACING le8(12500000) FROM 17 FOR 8)),
  (24, 'nblocks 12500001',               overlay(v PLACING le8(12500001) FROM 17 FOR 8)),
  (25, 'nblocks 2^32 + 1',               overlay(v PLACING le8(4294967297) FROM 17 FOR 8)),
  (26, 'nblocks 2^64 - 1',               overlay(v PLACING le8(18446744073709551615) FROM 17 FOR 8)),
  (27, 'nblocks big-endian 1',           overlay(v PLACING '\x0000000000000001'::bytea FROM 17 FOR 8)),
  (28, 'bits one byte short',            substring(v FROM 1 FOR 187)),
  (29, 'bits one byte long',             v || '\x00'::bytea),
  (30, 'bits one block long',            v || decode(repeat('00', 64), 'hex')),
  (31, 'capacity 0',                     overlay(v PLACING le8(0) FROM 25 FOR 8)),
  (32, 'capacity 2^63 - 1',              overlay(v PLACING le8(9223372036854775807) FROM 25 FOR 8)),
  (33, 'capacity 2^63',                  overlay(v PLACING le8(9223372036854775808) FROM 25 FOR 8)),
  (34, 'rate 0',                         overlay(v PLACING le_float8(0) FROM 33 FOR 8)),
  (35, 'rate -0',                        overlay(v PLACING le_float8('-0') FROM 33 FOR 8)),
  (36, 'rate 1',                         overlay(v PLACING le_float8(1) FROM 33 FOR 8)),
  (37, 'rate NaN',                       overlay(v PLACING le_float8('NaN') FROM 33 FOR 8)),
  (38, 'rate -0.5',                      overlay(v PLACING le_float8(-0.5) FROM 33 FOR 8)),
  (39, 'rate Infinity',                  overlay(v PLACING le_float8('Infinity') FROM 33 FOR 8)),
  (40, 'rate 5e-324 (smallest)',         overlay(v PLACING le_float8('4.9406564584124654e-324') FROM 33 FOR 8)),
  (41, 'rate 0.99999999999999989',       overlay(v PLACING le_float8(0.99999999999999989) FROM 33 FOR 8)),
  (42, 'flags first byte',               set_byte(v, 40, 1)),
  (43, 'flags last byte',                set_byte(v, 43, 128)),
  (44, 'reserved first byte',            set_byte(v, 108, 1)),
  (45, 'reserved last byte',             set_byte(v, 123, 255)),
  (46, 'family not NUL-terminated',      overlay(v PLACING convert_to(repeat('a', 64), 'SQL_ASCII') FROM 45 FOR 64)),
  (47, 'family 63 bytes',                overlay(v PLACING convert_to(repeat('a', 63), 'SQL_ASCII') FROM 45 FOR 63)),
  (48, 'family byte after NUL',          set_byte(v, 107, ascii('x'))),
  (49, 'family empty, byte after NUL',   set_byte(v, 44, 0)),
  (50, 'family control character',       set_byte(v, 46, 10)),
  (51, 'family DEL',                     set_byte(v, 46, 127)),
  -- bloom.h: the family is a UTF-8 name; it is quoted in error messages
  (52, 'family not UTF-8',               set_byte(v, 46, 255)),
  (53, 'family of no known type',        overlay(v PLACING convert_to('no such', 'SQL_ASCII') FROM 45 FOR 7)),
  (54, 'bits all ones',                  substring(v FROM 1 FOR 124) || decode(repeat('ff', 64), 'hex'))
) AS c(ord, what, b);

SELECT what, x.state AS bytea_state, y.state AS text_state,
       x.message, x.detail,
       (x.message, x.detail) IS NOT DISTINCT FROM (y.message, y.detail) AS same_error
FROM bad_bytes,
     LATERAL try_bytea(b) AS x,
     LATERAL try_text(translate(encode(b, 'base64'), E'\n', '')) AS y
ORDER BY ord;

--
-- Malformed text that is not base64 of anything
--
CREATE TABLE valid_text AS SELECT v::bloom::text AS t FROM valid;
SELECT length(t) AS text_length, right(t, 4) AS last_group FROM valid_text;

CREATE TABLE bad_text (ord int, what text, t text);
INSERT INTO bad_text
SELECT ord, what, s FROM valid_text, LATERAL (VALUES
  ( 1, 'valid',                          t),
  ( 2, 'empty string',                   ''),
  ( 3, 'length 3',                       'abc'),
  ( 4, 'length 5',                       'QkxNR'),
  ( 5, 'one character short',            left(t, -1)),
  ( 6, 'trailing newline',               t || E'\n'),
  ( 7, 'leading space',                  ' ' || t),
  ( 8, 'line breaks of encode()',        encode(t::bloom::bytea, 'base64')),
  ( 9, 'bad character *',                overlay(t PLACING '*' FROM 1 FOR 1)),
  (10, 'bad character, late',            overlay(t PLACING '.' FROM 200 FOR 1)),
  (11, 'base64url - and _',              overlay(t PLACING '-_-_' FROM 5 FOR 4)),
  (12, 'spaces inside',                  overlay(t PLACING '    ' FROM 5 FOR 4)),
  (13, 'NUL-like padding inside',        overlay(t PLACING 'QQ==' FROM 5 FOR 4)),
  (14, '= at the end of a middle group', overlay(t PLACING 'AAA=' FROM 101 FOR 4)),
  (15, 'padding only',                   '===='),
  (16, 'three = ',                       'Q==='),
  (17, 'padding then data',              'QQ==QUJD'),
  (18, 'non-zero bits before ==',        'QR=='),
  (19, 'non-zero bits before =',         'QUJ='),
  (20, 'non-zero padding bits, filter',  overlay(t PLACING 'AAB=' FROM length(t) - 3 FOR 4)),
  (21, 'padding dropped',                left(t, -1) || 'A'),
  (22, 'one valid byte',                 'QQ=='),
  (23, 'two valid bytes',                'QUI='),
  (24, 'three valid bytes',              'QUJD'),
  (25, 'valid base64 of text',           translate(encode(convert_to(rpad('not a bloom filter', 200, '!'), 'SQL_ASCII'), 'base64'), E'\n', ''))
) AS c(ord, what, s);

SELECT what, x.state, x.message, x.detail
FROM bad_text, LATERAL try_text(t) AS x
ORDER BY ord;

-- the quoted literal is cut at a character boundary: a multibyte character
-- (chr(233) is two bytes in UTF-8) straddling the 40-byte limit must not be
-- cut in half, or the message is not valid in the database encoding (and a
-- client in another encoding gets "invalid byte sequence" instead of the
-- error).  The check is written to give the same output in any encoding.
SELECT x.state,
       convert_to(x.message, getdatabaseencoding()) IS NOT NULL AS message_is_valid_text
FROM try_text(repeat('a', 39) || chr(233) || 'aaaa') AS x;

-- the same errors as a plain cast shows them
SELECT 'abc'::bloom;
SELECT 'QkxN*kVB'::bloom;
SELECT ''::bloom;
SELECT 'QQ=='::bloom;
SELECT '\x424c4d46'::bytea::bloom;
SELECT set_byte(v, 7, 33)::bloom FROM valid;

--
-- COPY binary validates too (bloom_recv): a bytea column written in binary
-- has the wire format of a bloom, so a corrupt one can be fed to COPY FROM
--
CREATE TABLE from_raw (f bloom);
CREATE TABLE raw (b bytea);
INSERT INTO raw SELECT v FROM valid;
\copy raw TO 'results/bloom_raw.data' WITH (FORMAT binary)
\copy from_raw FROM 'results/bloom_raw.data' WITH (FORMAT binary)
SELECT f::bytea = v AS valid_accepted FROM from_raw, valid;
TRUNCATE raw;
INSERT INTO raw SELECT overlay(v PLACING 'blmf'::bytea FROM 1 FOR 4) FROM valid;
\copy raw TO 'results/bloom_raw.data' WITH (FORMAT binary)
\copy from_raw FROM 'results/bloom_raw.data' WITH (FORMAT binary)
TRUNCATE raw;
INSERT INTO raw SELECT set_byte(v, 7, 33) FROM valid;
\copy raw TO 'results/bloom_raw.data' WITH (FORMAT binary)
\copy from_raw FROM 'results/bloom_raw.data' WITH (FORMAT binary)
TRUNCATE raw;
INSERT INTO raw SELECT substring(v FROM 1 FOR 187) FROM valid;
\copy raw TO 'results/bloom_raw.data' WITH (FORMAT binary)
\copy from_raw FROM 'results/bloom_raw.data' WITH (FORMAT binary)
TRUNCATE raw;
INSERT INTO raw SELECT set_byte(v, 40, 1) FROM valid;
\copy raw TO 'results/bloom_raw.data' WITH (FORMAT binary)
\copy from_raw FROM 'results/bloom_raw.data' WITH (FORMAT binary)
TRUNCATE raw;
INSERT INTO raw VALUES ('\x');
\copy raw TO 'results/bloom_raw.data' WITH (FORMAT binary)
\copy from_raw FROM 'results/bloom_raw.data' WITH (FORMAT binary)
SELECT count(*) AS rows_loaded FROM from_raw;
DROP TABLE raw;
DROP TABLE from_raw;

DROP TABLE bad_bytes;
DROP TABLE bad_text;
DROP TABLE valid_text;

--
-- Storage: a filter above 2 kB is stored out of line (STORAGE external, so
-- uncompressed) and reads back unchanged, also after an UPDATE of another
-- column; a NULL stays NULL
--
CREATE FUNCTION toast_values(rel regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
                 (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
    INTO n;
  RETURN n;
END
$$;

CREATE TABLE stored (id int PRIMARY KEY, note text, f bloom);
CREATE TABLE before_storing AS
SELECT id, f::bytea AS b FROM filters WHERE id IN (2, 3, 4, 6);
INSERT INTO stored SELECT id, 'original', f FROM filters WHERE id IN (2, 3, 4, 6);
SELECT attstorage FROM pg_attribute WHERE attrelid = 'stored'::regclass AND attname = 'f';
-- filters 3 (2 kB) and 4 (122 kB) are in the TOAST table, uncompressed
SELECT toast_values('stored') AS toasted_values;
SELECT id, pg_column_compression(f) IS NULL AS uncompressed,
       pg_column_size(f) >= octet_length(f::bytea) AS full_size
FROM stored WHERE f IS NOT NULL ORDER BY id;

SELECT s.id, s.f::bytea IS NOT DISTINCT FROM b.b AS unchanged, s.f IS NULL AS is_null
FROM stored AS s JOIN before_storing AS b USING (id) ORDER BY id;

UPDATE stored SET note = 'updated';
SELECT s.id, s.note, s.f::bytea IS NOT DISTINCT FROM b.b AS unchanged,
       s.f IS NULL AS is_null, missing(s.f, s.id) AS missing_keys
FROM stored AS s JOIN before_storing AS b USING (id) ORDER BY id;

-- probing a stored filter row by row, and through a scalar subquery
SELECT count(*) FILTER (WHERE NOT bloom_contains(s.f, g)) AS missing_keys
FROM stored AS s, generate_series(1, 100000) AS g WHERE s.id = 4;
SELECT count(*) FILTER (WHERE NOT bloom_contains((SELECT f FROM stored WHERE id = 3), g)) AS missing_keys
FROM generate_series(1, 1000) AS g;

-- keeping a stored filter current with bloom_add keeps the old keys
UPDATE stored SET f = bloom_add(f, 1001) WHERE id = 3;
SELECT bloom_contains(f, 1001) AS new_key, missing(f, id) AS missing_keys,
       f::bytea <> b.b AS changed, octet_length(f::bytea) = octet_length(b.b) AS same_size
FROM stored AS s JOIN before_storing AS b USING (id) WHERE id = 3;

-- a filter read back from the table has the same text form
SELECT s.id, s.f::text IS NOT DISTINCT FROM f.f::text AS same_text
FROM stored AS s JOIN filters AS f USING (id) WHERE s.id <> 3 ORDER BY s.id;

DROP TABLE stored;
DROP TABLE before_storing;
DROP TABLE valid;
DROP TABLE filters;
DROP FUNCTION toast_values(regclass);
DROP FUNCTION missing(bloom, int);
DROP FUNCTION add_ints(bloom, int);
DROP FUNCTION try_bytea(bytea);
DROP FUNCTION try_text(text);
DROP FUNCTION le8(numeric);
DROP FUNCTION le_float8(float8);
