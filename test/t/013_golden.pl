#
# test/t/013_golden.pl: filters written by an earlier build load and answer
# the same here.
#
# test/golden/filters.txt holds filters made once (by
# test/golden/generate.sql) and checked in: every key family with
# canonical bytes, several capacities and rates, the unsized bloom_agg's
# sizing, a union and an intersection, each with the SQL expression that
# built it.  sql/bloom_hash.sql already pins the bytes of filters built
# now; this test pins what a machine must do with filters built elsewhere:
#
#   - COPY reads the file (every filter passes validation);
#   - every filter is bit for bit what its expression builds here, so
#     hashing, sizing and byte order agree with the machine that wrote it;
#   - COPY writes the same file back, byte for byte;
#   - a stored filter finds the keys it was built from.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);
use File::Compare qw(compare);
use Cwd qw(abs_path);

my $golden = abs_path(dirname(__FILE__) . '/../golden/filters.txt');
ok(-f $golden, "golden file $golden exists");

my $node = PostgreSQL::Test::Cluster->new('golden');
$node->init;
$node->append_conf('postgresql.conf', 'log_statement = none');
$node->start;

$node->safe_psql('postgres',
	q{CREATE DATABASE golden TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'});

# the same objects as test/golden/generate.sql creates
$node->safe_psql(
	'golden', q{
CREATE EXTENSION bloomfilter;
CREATE TYPE golden_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN golden_posint AS integer CHECK (VALUE > 0);
CREATE FUNCTION golden_eval(expr text) RETURNS bloom
LANGUAGE plpgsql AS $$
DECLARE
    f bloom;
BEGIN
    EXECUTE 'SELECT ' || expr INTO f;
    RETURN f;
END
$$;
CREATE TABLE golden (ord serial, name text NOT NULL, expr text NOT NULL, f bloom NOT NULL);
});

$node->safe_psql('golden',
	"COPY golden (name, expr, f) FROM '$golden'");
is($node->safe_psql('golden', 'SELECT count(*) FROM golden'),
	'26', 'every golden filter loads');
is( $node->safe_psql(
		'golden', q{SELECT count(*) FROM golden WHERE (bloom_info(f)).version <> 1}),
	'0',
	'all of format version 1');

is( $node->safe_psql(
		'golden', q{
SET timezone = 'UTC';
SELECT string_agg(name, ', ' ORDER BY ord) FROM golden
WHERE golden_eval(expr)::bytea IS DISTINCT FROM f::bytea}),
	'',
	'every golden filter is bit for bit what its expression builds here');

my $out = PostgreSQL::Test::Utils::tempdir . '/filters.txt';
$node->safe_psql('golden',
	"COPY (SELECT name, expr, f FROM golden ORDER BY ord) TO '$out'");
ok(compare($out, $golden) == 0, 'COPY writes the golden file back byte for byte');

is( $node->safe_psql(
		'golden', q{
SELECT count(*) FROM golden, generate_series(1, 1000) AS g
WHERE name = 'integers 1..1000 at 1%' AND bloom_contains(f, g)}),
	'1000',
	'a stored filter finds every key it was built from');
is( $node->safe_psql(
		'golden', q{
SELECT bool_and(bloom_contains(f, m))
FROM golden, unnest(enum_range(NULL::golden_mood)) AS m WHERE name = 'enum'}),
	't',
	'a stored enum filter finds its labels');
$node->safe_psql('golden', q{ALTER TYPE golden_mood ADD VALUE 'meh' BEFORE 'ok'});
is( $node->safe_psql(
		'golden', q{
SELECT string_agg(m::text || '=' || bloom_contains(f, m), ',' ORDER BY m)
FROM golden, unnest(enum_range(NULL::golden_mood)) AS m WHERE name = 'enum'}),
	'sad=true,meh=false,ok=true,happy=true',
	'and still, with the same answers, after a label is added');

$node->stop;
done_testing();
