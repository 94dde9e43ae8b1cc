--
-- bloom_hash: golden values of the on-disk format.
--
-- The bits a key sets depend only on bytes this project defines (the key's
-- canonical bytes, XXH3-64 with the filter's seed, the block layout of
-- bloom.h), never on the platform or on PostgreSQL's own hash functions.
-- These values must never change: a diff here means that filters already
-- stored would answer "absent" for keys they hold.  They were checked
-- against an independent implementation of bloom.h (Python, with the
-- system's libxxhash).
--
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET extra_float_digits = 0;

-- the positions (0..511 per block, counted from the first bit of the bits)
-- that are set, in the bit numbering of bloom.h: bit j of the bits is bit
-- (j & 7) of byte (j >> 3), which is also get_bit()'s numbering
CREATE FUNCTION bits_set(f bloom) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT coalesce(string_agg(i::text, ',' ORDER BY i), '')
  FROM generate_series(0, (octet_length(f::bytea) - 124) * 8 - 1) AS i
  WHERE get_bit(substring(f::bytea FROM 125), i) = 1
$$;

-- the key family recorded in the header
CREATE FUNCTION family(f bloom) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT convert_from(rtrim(substring(f::bytea FROM 45 FOR 64), '\x00'::bytea), 'UTF8')
$$;

-- an unsigned little-endian integer of n bytes at byte offset off
CREATE FUNCTION le_uint(b bytea, off int, n int) RETURNS numeric
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT sum(get_byte(b, off + i)::numeric * 256::numeric ^ i)::numeric(21, 0)
  FROM generate_series(0, n - 1) AS i
$$;

--
-- The header, field by field (offsets of bloom.h, all little-endian).
-- bloom_create(100000) has 1948 = 0x079c blocks, so the byte order of
-- nblocks and capacity shows.
--
CREATE TABLE hdr AS SELECT bloom_add(bloom_create(100000), 42)::bytea AS b;
SELECT octet_length(b) AS payload_bytes,
       convert_from(substring(b FROM 1 FOR 4), 'SQL_ASCII') AS magic,
       get_byte(b, 4) AS version,
       get_byte(b, 5) AS layout,
       get_byte(b, 6) AS hash_scheme,
       get_byte(b, 7) AS nhashes
FROM hdr;
SELECT encode(substring(b FROM 9 FOR 8), 'hex') AS seed_hex,
       encode(substring(b FROM 17 FOR 8), 'hex') AS nblocks_hex,
       le_uint(b, 16, 8) AS nblocks,
       encode(substring(b FROM 25 FOR 8), 'hex') AS capacity_hex,
       le_uint(b, 24, 8) AS capacity
FROM hdr;
-- the rate is IEEE-754 binary64, little-endian: 0.01 is 0x3f847ae147ae147b
SELECT encode(substring(b FROM 33 FOR 8), 'hex') AS rate_hex,
       encode(substring(b FROM 41 FOR 4), 'hex') AS flags_hex,
       encode(rtrim(substring(b FROM 45 FOR 64), '\x00'::bytea), 'escape') AS family,
       substring(b FROM 45 + 7 FOR 64 - 7) = '\x00'::bytea || decode(repeat('00', 56), 'hex') AS family_nul_padded,
       substring(b FROM 109 FOR 16) = decode(repeat('00', 16), 'hex') AS reserved_zero,
       octet_length(b) = 124 + 64 * le_uint(b, 16, 8) AS length_matches
FROM hdr;
DROP TABLE hdr;

-- an empty filter: family all zero
SELECT encode(substring(bloom_create(10)::bytea FROM 1 FOR 48), 'hex') AS header_start,
       family(bloom_create(10)) = '' AS no_family,
       bits_set(bloom_create(10)) = '' AS no_bits;

-- the whole text form of a small filter (124 bytes of header, 64 of bits)
SELECT octet_length(bloom_add(bloom_create(1), 42)::bytea) AS payload_bytes;
SELECT bloom_add(bloom_create(1), 42)::text AS text_form;

--
-- One key in bloom_create(10, 0.01) (one block, k = 2) per family.  Keys
-- that are equal in SQL give the same bits (42::smallint and 42::bigint,
-- 'a'::char(3) and 'a', -0 and 0, 1.0 and 1.00).
--
CREATE TABLE golden (ord int, key text, f bloom);
INSERT INTO golden VALUES
  ( 1, 'integer 0',              bloom_add(bloom_create(10, 0.01), 0)),
  ( 2, 'integer 1',              bloom_add(bloom_create(10, 0.01), 1)),
  ( 3, 'integer -1',             bloom_add(bloom_create(10, 0.01), -1)),
  ( 4, 'integer 42',             bloom_add(bloom_create(10, 0.01), 42)),
  ( 5, 'smallint 42',            bloom_add(bloom_create(10, 0.01), 42::smallint)),
  ( 6, 'bigint 42',              bloom_add(bloom_create(10, 0.01), 42::bigint)),
  ( 7, 'bigint 2^40',            bloom_add(bloom_create(10, 0.01), 1099511627776::bigint)),
  ( 8, 'bigint min',             bloom_add(bloom_create(10, 0.01), (-9223372036854775807 - 1)::bigint)),
  ( 9, 'bigint max',             bloom_add(bloom_create(10, 0.01), 9223372036854775807::bigint)),
  (10, 'text ''''',              bloom_add(bloom_create(10, 0.01), ''::text)),
  (11, 'text a',                 bloom_add(bloom_create(10, 0.01), 'a'::text)),
  (12, 'varchar a',              bloom_add(bloom_create(10, 0.01), 'a'::varchar)),
  (13, 'char(3) a',              bloom_add(bloom_create(10, 0.01), 'a'::char(3))),
  (14, 'name a',                 bloom_add(bloom_create(10, 0.01), 'a'::name)),
  (15, 'text hello world',       bloom_add(bloom_create(10, 0.01), 'hello world'::text)),
  (16, 'text 300 chars',         bloom_add(bloom_create(10, 0.01), repeat('0123456789', 30))),
  (17, 'bytea empty',            bloom_add(bloom_create(10, 0.01), '\x'::bytea)),
  (18, 'bytea 00',               bloom_add(bloom_create(10, 0.01), '\x00'::bytea)),
  (19, 'bytea deadbeef',         bloom_add(bloom_create(10, 0.01), '\xdeadbeef'::bytea)),
  (20, 'uuid nil',               bloom_add(bloom_create(10, 0.01), '00000000-0000-0000-0000-000000000000'::uuid)),
  (21, 'uuid a0ee...',           bloom_add(bloom_create(10, 0.01), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid)),
  (22, 'boolean false',          bloom_add(bloom_create(10, 0.01), false)),
  (23, 'boolean true',           bloom_add(bloom_create(10, 0.01), true)),
  (24, 'float8 0',               bloom_add(bloom_create(10, 0.01), 0::float8)),
  (25, 'float8 -0',              bloom_add(bloom_create(10, 0.01), '-0'::float8)),
  (26, 'float8 1.5',             bloom_add(bloom_create(10, 0.01), 1.5::float8)),
  (27, 'float4 1.5',             bloom_add(bloom_create(10, 0.01), 1.5::float4)),
  (28, 'float8 NaN',             bloom_add(bloom_create(10, 0.01), 'NaN'::float8)),
  (29, 'float4 NaN',             bloom_add(bloom_create(10, 0.01), 'NaN'::float4)),
  (30, 'float8 -Infinity',       bloom_add(bloom_create(10, 0.01), '-Infinity'::float8)),
  (31, 'numeric 1',              bloom_add(bloom_create(10, 0.01), 1::numeric)),
  (32, 'numeric 1.0',            bloom_add(bloom_create(10, 0.01), 1.0)),
  (33, 'numeric 1.00',           bloom_add(bloom_create(10, 0.01), 1.00)),
  (34, 'numeric -3.14',          bloom_add(bloom_create(10, 0.01), -3.14)),
  (35, 'numeric 0.000',          bloom_add(bloom_create(10, 0.01), 0.000)),
  (36, 'numeric NaN',            bloom_add(bloom_create(10, 0.01), 'NaN'::numeric)),
  (37, 'date 2000-01-01',        bloom_add(bloom_create(10, 0.01), '2000-01-01'::date)),
  (38, 'date 1999-12-31',        bloom_add(bloom_create(10, 0.01), '1999-12-31'::date)),
  (39, 'date 2024-02-29',        bloom_add(bloom_create(10, 0.01), '2024-02-29'::date)),
  (40, 'timestamp 2000-01-01',   bloom_add(bloom_create(10, 0.01), '2000-01-01 00:00:00'::timestamp)),
  (41, 'timestamp 2024-02-29',   bloom_add(bloom_create(10, 0.01), '2024-02-29 12:34:56.789012'::timestamp)),
  (42, 'timestamptz 2000-01-01', bloom_add(bloom_create(10, 0.01), '2000-01-01 00:00:00+00'::timestamptz)),
  (43, 'timestamptz 2024-02-29', bloom_add(bloom_create(10, 0.01), '2024-02-29 12:34:56.789012+00'::timestamptz)),
  (44, 'time 00:00',             bloom_add(bloom_create(10, 0.01), '00:00'::time)),
  (45, 'time 12:34:56.789012',   bloom_add(bloom_create(10, 0.01), '12:34:56.789012'::time));

SELECT key, family(f) AS family, bits_set(f) AS bits, md5(f::bytea)
FROM golden ORDER BY ord;

-- a timestamptz key does not depend on the session time zone
SET timezone = 'America/New_York';
SELECT f::bytea = bloom_add(bloom_create(10, 0.01), '2024-02-29 07:34:56.789012-05'::timestamptz)::bytea AS tz_independent
FROM golden WHERE ord = 43;
RESET timezone;
SET timezone = 'UTC';

DROP TABLE golden;

--
-- Many keys in a filter of several blocks (bloom_create(1000, 0.01): 20
-- blocks, k = 5), so that the choice of block shows as well.
--
CREATE FUNCTION add_ints(f bloom, n int) RETURNS bloom
LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 0 .. n - 1 LOOP
    f := bloom_add(f, i);
  END LOOP;
  RETURN f;
END
$$;
CREATE FUNCTION add_texts(f bloom, n int) RETURNS bloom
LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 0 .. n - 1 LOOP
    f := bloom_add(f, 'key' || i);
  END LOOP;
  RETURN f;
END
$$;

CREATE TABLE multi AS
SELECT add_ints(bloom_create(1000, 0.01), 100) AS i100,
       add_texts(bloom_create(1000, 0.01), 100) AS t100;
SELECT octet_length(i100::bytea) AS payload_bytes,
       get_byte(i100::bytea, 7) AS nhashes,
       le_uint(i100::bytea, 16, 8) AS nblocks,
       md5(i100::bytea) AS md5_ints,
       md5(t100::bytea) AS md5_texts
FROM multi;
-- the set bits of keys 0..4 alone, across blocks
SELECT bits_set(add_ints(bloom_create(1000, 0.01), 5)) AS bits_ints_0_4;
-- the sized aggregate sets exactly the bits bloom_add does
SELECT (SELECT bloom_agg(g, 1000, 0.01) FROM generate_series(0, 99) AS g)::bytea = i100::bytea AS agg_matches_add
FROM multi;

DROP TABLE multi;
DROP FUNCTION add_ints(bloom, int);
DROP FUNCTION add_texts(bloom, int);
DROP FUNCTION bits_set(bloom);
DROP FUNCTION family(bloom);
DROP FUNCTION le_uint(bytea, int, int);
