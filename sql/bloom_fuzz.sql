--
-- bloom_fuzz: thousands of randomly mutated valid filters through the cast
-- from bytea and the text input.  Each must be either accepted and usable
-- (bloom_info and bloom_contains work, bloom_add then finds its key, the
-- bytes come back unchanged, and, where only capacity or rate changed,
-- every key the filter was built with is still found), or refused with the
-- input errcode of its path: 22P03 (invalid_binary_representation) for the
-- cast from bytea, 22P02 (invalid_text_representation) for the text input.
-- Never an internal error, never a crash.
--
-- The mutations come from a Park-Miller generator seeded per case, not from
-- random(), so the cases, and the counts printed, are the same on every
-- platform and PostgreSQL version; they change when the format, the
-- validator or the sizing of the filters below does.  The verdict at the end
-- is what must hold.  test/fuzz holds the libFuzzer harness that does the
-- same to the C core at a much larger scale.
--

-- the next state of the generator (Park-Miller "minimal standard")
CREATE FUNCTION fz_lcg(s bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT s * 48271 % 2147483647 $$;

-- v as 8 little-endian bytes
CREATE FUNCTION fz_le64(v bigint) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  b bytea := '\x0000000000000000';
BEGIN
  FOR i IN 0 .. 7 LOOP
    b := set_byte(b, i, ((v >> (8 * i)) & 255)::int);
  END LOOP;
  RETURN b;
END
$$;

CREATE FUNCTION fz_random_bytes(INOUT s bigint, n int, OUT b bytea)
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
  b := '\x';
  FOR i IN 1 .. n LOOP
    s := fz_lcg(s);
    b := b || set_byte('\x00', 0, (s % 256)::int);
  END LOOP;
END
$$;

-- the mutation kinds, in the order fz_mutate numbers them
CREATE TABLE fz_kinds (kind int PRIMARY KEY, name text);
INSERT INTO fz_kinds VALUES
  (0, 'header bit flip'), (1, 'header byte'), (2, 'version/layout/hash/k'),
  (3, '64-bit field'), (4, 'key family'), (5, 'flags/reserved'),
  (6, 'truncate'), (7, 'extend'), (8, 'resize consistently'),
  (9, 'bits byte'), (10, 'several bytes'), (11, 'garbage');

-- Mutation "kind" of the payload f, drawn from generator state "seed".
CREATE FUNCTION fz_mutate(f bytea, kind int, seed bigint) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  s bigint := fz_lcg(fz_lcg(seed));
  n int := length(f);
  m bytea := f;
  pos int;
  nb bigint := 0;
  r bytea;
  -- interesting 64-bit values: 0, 1, -1, 2^63, 2^63-1, 0.5, 1.0, NaN,
  -- +inf, -0.5, BLOOM_MAX_NBLOCKS and one more
  vals text[] := ARRAY['0000000000000000', '0100000000000000',
    'ffffffffffffffff', '0000000000000080', 'ffffffffffffff7f',
    '000000000000e03f', '000000000000f03f', '000000000000f87f',
    '000000000000f07f', '000000000000e0bf', '20bcbe0000000000',
    '21bcbe0000000000'];
  -- key family names: another valid one, empty, unterminated, junk after
  -- the NUL, bad UTF-8 (stray continuation, overlong, surrogate, beyond
  -- U+10FFFF, truncated), a control character, and valid UTF-8
  families text[] := ARRAY['74657874', '', repeat('61', 64), '61' || repeat('00', 62) || '01',
    '80', 'c0af', 'eda080', 'f4908080', 'e282', '696e01', '7f',
    'f48fbfbf', 'c3a9'];
BEGIN
  CASE kind
  WHEN 0 THEN                   -- flip one bit of the header
    s := fz_lcg(s); pos := (s % 124)::int;
    s := fz_lcg(s);
    m := set_byte(m, pos, get_byte(m, pos) # (1 << (s % 8)::int));
  WHEN 1 THEN                   -- one header byte to any value
    s := fz_lcg(s); pos := (s % 124)::int;
    s := fz_lcg(s);
    m := set_byte(m, pos, (s % 256)::int);
  WHEN 2 THEN                   -- version, layout, hash scheme or k
    s := fz_lcg(s); pos := 4 + (s % 4)::int;
    s := fz_lcg(s);
    m := set_byte(m, pos, (ARRAY[0, 1, 2, 31, 32, 33, 255, (s / 16 % 256)::int])[(1 + s % 8)::int]);
  WHEN 3 THEN                   -- seed, nblocks, capacity or rate
    s := fz_lcg(s); pos := 8 + 8 * (s % 4)::int;
    s := fz_lcg(s);
    IF s % 4 = 0 THEN
      SELECT * INTO s, r FROM fz_random_bytes(s, 8);
    ELSE
      r := decode(vals[(1 + s / 4 % array_length(vals, 1))::int], 'hex');
    END IF;
    m := overlay(m PLACING r FROM pos + 1 FOR 8);
  WHEN 4 THEN                   -- the key family (64 bytes at 44)
    s := fz_lcg(s);
    IF s % 3 = 0 THEN           -- one byte of it, anywhere, to anything
      s := fz_lcg(s); pos := 44 + (s % 64)::int;
      s := fz_lcg(s);
      m := set_byte(m, pos, (s % 256)::int);
    ELSE                        -- one of the names above
      r := decode(families[(1 + s / 3 % array_length(families, 1))::int], 'hex');
      m := overlay(m PLACING r || decode(repeat('00', 64 - length(r)), 'hex') FROM 45 FOR 64);
    END IF;
  WHEN 5 THEN                   -- flags (40..43) or reserved (108..123)
    s := fz_lcg(s); pos := 40 + (s % 4)::int;
    IF s % 5 > 0 THEN
      pos := 108 + (s / 5 % 16)::int;
    END IF;
    s := fz_lcg(s);
    m := set_byte(m, pos, 1 + (s % 255)::int);
  WHEN 6 THEN                   -- cut short
    s := fz_lcg(s);
    m := substr(m, 1, (s % n)::int);
  WHEN 7 THEN                   -- a block of zeros, or a few random bytes
    s := fz_lcg(s);
    IF s % 3 = 0 THEN
      m := m || decode(repeat('00', 64), 'hex');
    ELSE
      SELECT * INTO s, r FROM fz_random_bytes(s, 1 + (s / 3 % 130)::int);
      m := m || r;
    END IF;
  WHEN 8 THEN                   -- one block more or less, length to match
    FOR i IN 0 .. 7 LOOP
      nb := nb + (get_byte(m, 16 + i)::bigint << (8 * i));
    END LOOP;
    s := fz_lcg(s);
    IF nb > 1 AND s % 2 = 0 THEN
      m := overlay(substr(m, 1, n - 64) PLACING fz_le64(nb - 1) FROM 17 FOR 8);
    ELSE
      SELECT * INTO s, r FROM fz_random_bytes(s, 64);
      m := overlay(m || r PLACING fz_le64(nb + 1) FROM 17 FOR 8);
    END IF;
  WHEN 9 THEN                   -- one byte of the bits
    s := fz_lcg(s); pos := 124 + (s % (n - 124))::int;
    s := fz_lcg(s);
    m := set_byte(m, pos, (s % 256)::int);
  WHEN 10 THEN                  -- two to six bytes anywhere
    s := fz_lcg(s);
    FOR i IN 1 .. 2 + (s % 5)::int LOOP
      s := fz_lcg(s); pos := (s % n)::int;
      s := fz_lcg(s);
      m := set_byte(m, pos, (s % 256)::int);
    END LOOP;
  WHEN 11 THEN                  -- random bytes, some behind a good prefix
    s := fz_lcg(s);
    SELECT * INTO s, m FROM fz_random_bytes(s, (s % 300)::int);
    IF s % 2 = 0 THEN
      m := substr(f, 1, 8 + (s / 2 % 120)::int) || m;
    END IF;
  END CASE;
  RETURN m;
END
$$;

-- Is the accepted filter v usable: its header readable, its keys probed
-- (how many of them are missing), a new key found once added?
CREATE FUNCTION fz_use(v bloom, ikeys int[], tkeys text[],
                       OUT ok boolean, OUT missing int, OUT err text)
LANGUAGE plpgsql AS $$
DECLARE
  found int;
BEGIN
  PERFORM * FROM bloom_info(v);
  PERFORM bloom_cardinality(v), bloom_false_positive_rate(v);
  IF tkeys IS NOT NULL THEN
    SELECT count(*) FILTER (WHERE bloom_contains(v, k)) INTO found FROM unnest(tkeys) AS k;
    missing := cardinality(tkeys) - found;
    ok := bloom_contains(bloom_add(v, 'a new key'::text), 'a new key'::text);
  ELSE
    SELECT count(*) FILTER (WHERE bloom_contains(v, k)) INTO found FROM unnest(ikeys) AS k;
    missing := cardinality(ikeys) - found;
    ok := bloom_contains(bloom_add(v, -123456789), -123456789);
  END IF;
EXCEPTION WHEN OTHERS THEN
  ok := false;
  missing := NULL;
  err := SQLSTATE;
END
$$;

-- One case: the mutated payload m of orig through both paths.
CREATE FUNCTION fz_check(orig bytea, m bytea, ikeys int[], tkeys text[],
                         OUT bytea_result text, OUT text_result text,
                         OUT usable boolean, OUT family_changed boolean,
                         OUT protected boolean, OUT missing int,
                         OUT canonical boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v bloom;
  vt bloom;
  u record;
BEGIN
  BEGIN
    v := m::bloom;
    bytea_result := 'accepted';
  EXCEPTION WHEN OTHERS THEN
    bytea_result := SQLSTATE;
  END;
  BEGIN
    vt := translate(encode(m, 'base64'), E'\n', '')::bloom;
    text_result := 'accepted';
  EXCEPTION WHEN OTHERS THEN
    text_result := SQLSTATE;
  END;
  IF v IS NULL THEN
    RETURN;
  END IF;

  -- the same value whichever way it came in, and its bytes unchanged
  canonical := v::bytea = m AND vt IS NOT NULL AND vt::bytea = m AND
    v::text::bloom::bytea = m;
  -- everything that decides where a key's bits are is as it was built
  family_changed := substr(m, 45, 64) <> substr(orig, 45, 64);
  protected := length(m) = length(orig) AND
    substr(m, 1, 24) = substr(orig, 1, 24) AND substr(m, 41) = substr(orig, 41);
  SELECT * INTO u FROM fz_use(v, ikeys, tkeys);
  -- a filter of another key family refuses our keys, by errcode
  usable := u.ok OR (family_changed AND u.err = '42804');
  missing := u.missing;
END
$$;

-- The filters to mutate, with the keys that were added to them.
CREATE TABLE fz_base (id int PRIMARY KEY, f bytea, ikeys int[], tkeys text[]);
INSERT INTO fz_base VALUES
  (1, bloom_add(bloom_create(1, 0.5), 7)::bytea, '{7}', NULL),
  (2, (SELECT bloom_agg(i, 100, 0.01) FROM generate_series(1, 100) AS i)::bytea,
      (SELECT array_agg(i) FROM generate_series(1, 100) AS i), NULL),
  (3, (SELECT bloom_agg(i) FROM generate_series(1, 500) AS i)::bytea,
      (SELECT array_agg(i) FROM generate_series(1, 500) AS i), NULL),
  (4, (SELECT bloom_agg('k' || i, 50, 0.05) FROM generate_series(1, 50) AS i)::bytea,
      NULL, (SELECT array_agg('k' || i) FROM generate_series(1, 50) AS i)),
  (5, (SELECT bloom_agg(i::bigint, 2000, 0.001) FROM generate_series(1, 2000) AS i)::bytea,
      (SELECT array_agg(i) FROM generate_series(1, 2000) AS i), NULL),
  (6, bloom_create(10)::bytea, '{}', NULL);

-- every filter, every mutation kind, 40 draws each
CREATE TABLE fz_results AS
SELECT b.id, k.kind, r, c.*
FROM fz_base AS b, fz_kinds AS k, generate_series(1, 40) AS r,
  LATERAL fz_mutate(b.f, k.kind, 1 + (b.id * 1000003 + k.kind * 1009 + r) % 2147483646) AS m,
  LATERAL fz_check(b.f, m, b.ikeys, b.tkeys) AS c;

-- Text that is not the base64 of a payload: one character replaced by
-- another (in or out of the alphabet), deleted, or inserted.
CREATE FUNCTION fz_mutate_text(t text, seed bigint) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  s bigint := fz_lcg(fz_lcg(seed));
  n int := length(t);
  pos int;
  c text;
BEGIN
  s := fz_lcg(s); pos := 1 + (s % n)::int;
  s := fz_lcg(s);
  c := (ARRAY['A', 'z', '0', '+', '/', '=', '-', '_', '!', ' ', E'\n', 'é', '\'])[(1 + s % 13)::int];
  s := fz_lcg(s);
  CASE s % 3
  WHEN 0 THEN
    RETURN overlay(t PLACING c FROM pos FOR 1);
  WHEN 1 THEN
    RETURN overlay(t PLACING '' FROM pos FOR 1);
  ELSE
    RETURN overlay(t PLACING c FROM pos FOR 0);
  END CASE;
END
$$;

CREATE FUNCTION fz_check_text(t text, ikeys int[], tkeys text[],
                              OUT text_result text, OUT usable boolean,
                              OUT canonical boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v bloom;
  u record;
BEGIN
  v := t::bloom;
  text_result := 'accepted';
  canonical := v::text = t;
  SELECT * INTO u FROM fz_use(v, ikeys, tkeys);
  usable := u.ok OR u.err = '42804';
EXCEPTION WHEN OTHERS THEN
  text_result := SQLSTATE;
END
$$;

CREATE TABLE fz_text_results AS
SELECT b.id, r, c.*
FROM fz_base AS b, generate_series(1, 200) AS r,
  LATERAL fz_mutate_text(b.f::bloom::text, 1 + (b.id * 7919 + r) % 2147483646) AS t,
  LATERAL fz_check_text(t, b.ikeys, b.tkeys) AS c;

-- outcomes per mutation kind (both paths agree, see below)
SELECT k.name AS mutation, count(*) AS cases,
  count(*) FILTER (WHERE bytea_result = 'accepted') AS accepted,
  count(*) FILTER (WHERE bytea_result <> 'accepted') AS refused,
  count(*) FILTER (WHERE protected) AS keys_must_be_found
FROM fz_results JOIN fz_kinds AS k USING (kind)
GROUP BY k.kind, k.name ORDER BY k.kind;

SELECT bytea_result, text_result, count(*) AS cases
FROM fz_results GROUP BY 1, 2 ORDER BY 1, 2;

SELECT text_result, count(*) AS cases
FROM fz_text_results GROUP BY 1 ORDER BY 1;

-- the verdict
SELECT count(*) AS cases,
  count(*) FILTER (WHERE bytea_result = 'accepted') AS accepted,
  bool_and(bytea_result = text_result OR
           (bytea_result = '22P03' AND text_result = '22P02')) AS paths_agree,
  bool_and(usable) FILTER (WHERE bytea_result = 'accepted') AS accepted_and_usable,
  bool_and(canonical) FILTER (WHERE bytea_result = 'accepted') AS accepted_unchanged,
  bool_and(bytea_result = '22P03') FILTER (WHERE bytea_result <> 'accepted') AS bytea_refused_with_22p03,
  bool_and(text_result = '22P02') FILTER (WHERE text_result <> 'accepted') AS text_refused_with_22p02,
  coalesce(sum(missing) FILTER (WHERE protected), -1) AS false_negatives,
  count(*) FILTER (WHERE bytea_result LIKE 'XX%' OR text_result LIKE 'XX%') AS internal_errors
FROM fz_results;

SELECT count(*) AS text_cases,
  count(*) FILTER (WHERE text_result = 'accepted') AS accepted,
  bool_and(usable) FILTER (WHERE text_result = 'accepted') AS accepted_and_usable,
  bool_and(canonical) FILTER (WHERE text_result = 'accepted') AS accepted_unchanged,
  bool_and(text_result = '22P02') FILTER (WHERE text_result <> 'accepted') AS refused_with_22p02,
  count(*) FILTER (WHERE text_result LIKE 'XX%') AS internal_errors
FROM fz_text_results;

DROP TABLE fz_results, fz_text_results, fz_base, fz_kinds;
DROP FUNCTION fz_check_text, fz_mutate_text, fz_check, fz_use, fz_mutate,
  fz_random_bytes, fz_le64, fz_lcg;
