
# Copyright (c) 2026, the bloomfilter developers

# test/t/016_key_hunt.pl: no key type loses keys across a restore.
#
# Every built-in type with a default hash operator class (and an array of
# each), plus an enum, a composite, a domain and a range of our own, gets
# sample values; a filter of them is built with bloom_agg and stored with the
# values' text.  The database is then dumped and restored (pg_dump | psql)
# into a fresh UTF-8 database and into a LATIN1 one, and every value is
# probed there.  Each probe must answer true, or raise the extension's error
# (the type refused, or a family that does not match); "false" for a key that
# was added is a failure, whatever the type.  Types refused when the filter
# is built are fine too, but at least the canonical families must be found.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('hunt');
$node->init;
$node->start;
my $tmp = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres',
	"CREATE DATABASE src ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0");
$node->safe_psql('src', <<'EOS');
CREATE EXTENSION bloomfilter;
CREATE TYPE hunt_mood AS ENUM ('sad', 'ok', 'happy', 'très content');
CREATE TYPE hunt_pair AS (a int, b text);
CREATE DOMAIN hunt_dom AS text;
CREATE TYPE hunt_textrange AS RANGE (subtype = text, collation = "C");
CREATE TABLE hunt (typ text PRIMARY KEY, vals text[] NOT NULL, f bloom, refused text);

-- values that some type reads; each type keeps those it accepts (Latin-1
-- characters only, so that the LATIN1 restore can hold them)
CREATE FUNCTION hunt_samples(t regtype) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    cand text[] := ARRAY['0', '1', '-7', '3.25', '1e3', 'NaN', 't', 'f', 'x',
        'abc', 'café', 'Ünïcödé déjà', '', ' padded  ',
        '2024-02-29', '2024-02-29 12:34:56', '2024-02-29 12:34:56+02',
        '12:34:56', '12:34:56+02', '1 day 02:00:00', '1 mon',
        '192.168.0.1', '10.0.0.0/8', '::1', '08:00:2b:01:02:03',
        '08:00:2b:01:02:03:04:05', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
        '\x00ff', '{"a": 1, "b": [true, null]}', '[1, 2]', '101', '0/16B3748',
        '(0,1)', '[1,5)', '[2024-01-01,2024-02-01)', '{[1,5)}', '(1,abc)',
        '(2,café)', 'sad', 'très content', 'pg_class', 'int4', '12345',
        '{1,2,3}', '{abc,café}', '[a,b)', 'fr', 'a&b', 'simple'];
    out text[] := '{}';
    c text;
    v text;
BEGIN
    FOREACH c IN ARRAY cand LOOP
        BEGIN
            EXECUTE format('SELECT ($1::%s)::text', t) USING c INTO v;
            IF v IS NOT NULL AND NOT v = ANY (out) THEN
                out := out || v;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
        EXIT WHEN cardinality(out) >= 5;
    END LOOP;
    RETURN out;
END
$$;

CREATE FUNCTION hunt_build(t regtype, vals text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    f bloom;
BEGIN
    EXECUTE format('SELECT bloom_agg(v::%s) FROM unnest($1) v', t) USING vals INTO f;
    INSERT INTO hunt VALUES (t::text, vals, f, NULL);
EXCEPTION WHEN OTHERS THEN
    INSERT INTO hunt VALUES (t::text, vals, NULL, SQLSTATE || ' ' || SQLERRM);
END
$$;

DO $$
DECLARE
    t regtype;
    arr oid;
    vals text[];
    avals text[];
BEGIN
    FOR t IN
        SELECT DISTINCT ty.oid::regtype
        FROM pg_opclass oc
        JOIN pg_am am ON am.oid = oc.opcmethod AND am.amname = 'hash'
        JOIN pg_type ty ON ty.oid = oc.opcintype
        WHERE oc.opcdefault AND ty.typtype IN ('b', 'r', 'm')
          AND ty.typnamespace = 'pg_catalog'::regnamespace AND ty.oid <> 'anyarray'::regtype
        UNION
        SELECT unnest(ARRAY['character varying', 'hunt_mood', 'hunt_pair', 'hunt_dom', 'hunt_textrange']::regtype[])
    LOOP
        vals := hunt_samples(t);
        CONTINUE WHEN cardinality(vals) = 0;
        PERFORM hunt_build(t, vals);
        -- and the type's array: two arrays of its values
        arr := (SELECT typarray FROM pg_type WHERE oid = t);
        CONTINUE WHEN arr = 0;
        EXECUTE format('SELECT ARRAY[ARRAY(SELECT v::%1$s FROM unnest($1) v)::text,
                                     ARRAY(SELECT v::%1$s FROM unnest($1[1:1]) v)::text]', t)
            USING vals INTO avals;
        PERFORM hunt_build(arr::regtype, avals);
    END LOOP;
END
$$;

-- every value of a stored filter, probed: 'found', 'MISSING' or the error
CREATE FUNCTION hunt_probe() RETURNS TABLE (typ text, val text, outcome text)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    v text;
    hit boolean;
BEGIN
    FOR r IN SELECT * FROM hunt WHERE f IS NOT NULL ORDER BY 1 LOOP
        FOREACH v IN ARRAY r.vals LOOP
            typ := r.typ;
            val := v;
            BEGIN
                EXECUTE format('SELECT bloom_contains($1, $2::%s)', r.typ) USING r.f, v INTO hit;
                outcome := CASE WHEN hit THEN 'found' ELSE 'MISSING' END;
            EXCEPTION WHEN OTHERS THEN
                outcome := SQLSTATE;
            END;
            RETURN NEXT;
        END LOOP;
    END LOOP;
END
$$;
EOS

my $built = $node->safe_psql('src', 'SELECT count(*) FROM hunt WHERE f IS NOT NULL');
my $refused = $node->safe_psql('src', 'SELECT count(*) FROM hunt WHERE f IS NULL');
cmp_ok($built, '>=', 40, "filters built for $built key types ($refused refused)");
note $node->safe_psql('src',
	"SELECT string_agg(typ || ': ' || refused, E'\n' ORDER BY typ) FROM hunt WHERE f IS NULL");

# the refusals are the extension's own, not a failure of the sampling
is( $node->safe_psql('src',
		"SELECT string_agg(typ || ': ' || refused, ', ') FROM hunt
		 WHERE f IS NULL AND left(refused, 5) NOT IN ('0A000', '42883')"),
	'', 'every refused type is refused as a key type (0A000 or 42883)');
like($node->safe_psql('src', "SELECT string_agg(typ, ',') FROM hunt WHERE f IS NULL"),
	qr/hunt_mood\[\]/, 'an enum array is refused');

sub missing
{
	my ($db) = @_;
	return $node->safe_psql($db,
		"SELECT coalesce(string_agg(typ || ' ' || quote_literal(val), ', '), '')
		 FROM hunt_probe() WHERE outcome = 'MISSING'");
}

sub outcomes
{
	my ($db, $where) = @_;
	return $node->safe_psql($db,
		"SELECT count(*) FROM hunt_probe() WHERE $where");
}

is(missing('src'), '', 'in the database that built them, every key is found');

my $dump = "$tmp/src.sql";
$node->command_ok([ 'pg_dump', '-Fp', '-f', $dump, '-d', 'src' ], 'pg_dump');

for my $target ([ 'utf8', 'UTF8' ], [ 'latin1', 'LATIN1' ])
{
	my ($db, $enc) = @$target;
	$node->safe_psql('postgres',
		"CREATE DATABASE $db ENCODING '$enc' LOCALE 'C' TEMPLATE template0");
	$node->command_ok(
		[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $dump, '-d', $db ],
		"restore into a $enc database");
	is(missing($db), '', "restored into $enc: no key answered false");
	my $found = outcomes($db, "outcome = 'found'");
	my $errors = $node->safe_psql($db,
		"SELECT coalesce(string_agg(DISTINCT outcome, ','), '') FROM hunt_probe()
		 WHERE outcome NOT IN ('found', 'MISSING')");
	like($errors, qr/^(42804)?$/, "restored into $enc: the only refusal is a family mismatch ($errors)");
	note "$enc: $found keys found";
}

# the canonical families survive both restores, text in LATIN1 too
for my $db ('utf8', 'latin1')
{
	for my $typ ('integer', 'bigint', 'text', 'character varying', 'character',
		'name', 'bytea', 'uuid', 'numeric', 'double precision', 'date',
		'timestamp with time zone', 'hunt_mood', 'hunt_dom')
	{
		is( $node->safe_psql($db,
				"SELECT count(*) > 0 AND bool_and(outcome = 'found')
				 FROM hunt_probe() WHERE typ = '$typ'"),
			't', "$db: every $typ key found");
	}
}
# the LATIN1 database refuses generic families made in UTF-8 (their hash
# functions hash the encoding's bytes), and finds its own
is( $node->safe_psql('latin1',
		"SELECT count(*) > 0 AND bool_and(outcome = '42804')
		 FROM hunt_probe() WHERE typ IN ('jsonb', 'text[]', 'hunt_pair')"),
	't', 'latin1: generic families of the UTF-8 database are refused');
is( $node->safe_psql('latin1',
		"SELECT bloom_contains(bloom_agg(v), ARRAY['café', 'x']) AND
		        (bloom_info(bloom_agg(v))).key_family LIKE '%/LATIN1'
		 FROM (VALUES (ARRAY['café', 'x'])) AS s(v)"),
	't', 'latin1: a generic family records the encoding, and finds its keys');

$node->stop;
done_testing();
