#
# test/t/012_dump_restore.pl: pg_dump / pg_restore and COPY give back the
# same filters, bit for bit.
#
# A database holds filters from 1 KB to 25 MB (bloom_create and sized or
# unsized bloom_agg), of several key families, an empty filter and a NULL,
# an array of filters, a table with a hash index on a bloom column (the
# bloom_ops operator class), and a materialized view built by bloom_agg.
#
#   - pg_dump plain (restored with psql), custom (compressed, pg_restore)
#     and directory format (uncompressed, pg_restore -j 2): every filter in every restored database has
#     the same bytes (md5 of f::bytea), answers the same probes, and reads
#     back through its text form; the hash index works; a plain dump of
#     each restored database is byte for byte the dump of the original;
#   - COPY TO a file and back, in text and binary format: the same bytes
#     in the table, and COPYing the copy out again gives byte-identical
#     files; a text file loaded and written out as binary gives the binary
#     file of the original.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Compare qw(compare);

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
log_statement = none
shared_buffers = 256MB
});
$node->start;

my $tmp = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE filters (id int PRIMARY KEY, label text NOT NULL, f bloom);
INSERT INTO filters VALUES
  (1, '1 KB, 700 integer keys',
      (SELECT bloom_agg(g, 700, 0.01) FROM generate_series(1, 700) AS g)),
  (2, '1 KB, text keys',
      (SELECT bloom_agg('key' || g, 700, 0.01) FROM generate_series(1, 500) AS g)),
  (3, '12 KB, uuid keys',
      (SELECT bloom_agg(md5(g::text)::uuid, 10000, 0.01) FROM generate_series(1, 10000) AS g)),
  (4, '120 KB, numeric keys',
      (SELECT bloom_agg(g / 7.0, 100000, 0.01) FROM generate_series(1, 50000) AS g)),
  (5, '1.2 MB, unsized bloom_agg of 1,000,000 bigints',
      (SELECT bloom_agg(g::bigint) FROM generate_series(1, 1000000) AS g)),
  (6, '12 MB, 1,000,000 keys',
      (SELECT bloom_agg(g, 10000000, 0.01) FROM generate_series(1, 1000000) AS g)),
  (7, '25 MB, 2,000,000 keys',
      (SELECT bloom_agg(g, 20000000, 0.01) FROM generate_series(1, 2000000) AS g)),
  (8, 'empty', bloom_create(1000, 0.01)),
  (9, 'NULL', NULL),
  (10, 'timestamptz keys',
      (SELECT bloom_agg(timestamptz '2024-01-01 00:00+00' + g * interval '1 hour')
       FROM generate_series(1, 1000) AS g)),
  (11, 'non-ASCII text keys',
      (SELECT bloom_agg('ключ ' || g || ' ✓') FROM generate_series(1, 1000) AS g)),
  (12, 'interval keys (family tied to the major version)',
      (SELECT bloom_agg(g * interval '1 minute') FROM generate_series(1, 1000) AS g)),
  (13, 'a filter with every bit set',
      (SELECT bloom_agg(g, 10, 0.5) FROM generate_series(1, 100000) AS g));

CREATE TABLE arrays (id int PRIMARY KEY, fs bloom[]);
INSERT INTO arrays
SELECT 1, array_agg(f ORDER BY id) FROM filters WHERE id <= 4 OR id = 9;

CREATE TABLE indexed (id int, f bloom NOT NULL);
INSERT INTO indexed
SELECT g, bloom_add(bloom_create(100), g) FROM generate_series(1, 1000) AS g;
CREATE INDEX indexed_f ON indexed USING hash (f);

CREATE MATERIALIZED VIEW per_part AS
SELECT g % 10 AS part, bloom_agg(g, 1000, 0.01) AS f
FROM generate_series(1, 10000) AS g GROUP BY 1;
});

# The fingerprint of a database: bytes and answers of every filter.
my $fingerprint_sql = q{
SELECT 'filters', id, octet_length(f::bytea), md5(f::bytea),
       f::text::bloom::bytea = f::bytea,
       (SELECT count(*) FROM generate_series(1, 3000) AS g
        WHERE CASE i.key_family
              WHEN 'integer' THEN bloom_contains(f, g)
              WHEN 'text' THEN bloom_contains(f, 'key' || g)
              WHEN 'uuid' THEN bloom_contains(f, md5(g::text)::uuid)
              WHEN 'numeric' THEN bloom_contains(f, g / 7.0)
              WHEN 'timestamptz' THEN
                bloom_contains(f, timestamptz '2024-01-01 00:00+00' + g * interval '1 hour')
              END)
FROM filters LEFT JOIN LATERAL bloom_info(f) AS i ON true
UNION ALL
SELECT 'arrays', id, octet_length(fs::text), md5(fs::text), NULL, NULL FROM arrays
UNION ALL
SELECT 'indexed', count(*), sum(octet_length(f::bytea)), md5(string_agg(f::text, ',' ORDER BY id)),
       NULL, NULL FROM indexed
UNION ALL
SELECT 'per_part', part, octet_length(f::bytea), md5(f::bytea), NULL, NULL FROM per_part
ORDER BY 1, 2};

my $src_fingerprint = $node->safe_psql('src', $fingerprint_sql);

is( $node->safe_psql(
		'src',
		q{SELECT min(octet_length(f::bytea)) <= 1100
		     AND max(octet_length(f::bytea)) >= 20000000 FROM filters}),
	't',
	'the filters range from 1 KB to over 20 MB');

# Passes if two files are byte for byte the same; otherwise shows where
# they first differ.
sub same_file
{
	my ($got, $expected, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return 1 if ok(compare($got, $expected) == 0, $name);
	open(my $a, '<:raw', $got) or die "$got: $!";
	open(my $b, '<:raw', $expected) or die "$expected: $!";
	my ($off, $ba, $bb) = (0, '', '');
	while (1)
	{
		my $na = read($a, $ba, 65536);
		my $nb = read($b, $bb, 65536);
		last if !$na && !$nb;
		if ($ba ne $bb)
		{
			my $i = 0;
			$i++ while $i < length($ba) && substr($ba, $i, 1) eq substr($bb, $i, 1);
			my $from = $i > 200 ? $i - 200 : 0;
			diag "first difference at byte " . ($off + $i) . "\n"
			  . "got:      " . substr($ba, $from, 400) . "\n"
			  . "expected: " . substr($bb, $from, 400);
			last;
		}
		$off += $na;
	}
	return 0;
}

# Passes if two plain dumps are the same line for line, except for the
# random key of their \restrict and \unrestrict lines (PostgreSQL 15.14 on).
sub same_dump
{
	my ($got, $expected, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	open(my $a, '<:raw', $got) or die "$got: $!";
	open(my $b, '<:raw', $expected) or die "$expected: $!";
	my $line = 0;
	while (1)
	{
		my $la = <$a>;
		my $lb = <$b>;
		$line++;
		last if !defined $la && !defined $lb;
		next
		  if defined $la
		  && defined $lb
		  && $la =~ /^\\(un)?restrict / && $lb =~ /^\\(un)?restrict /;
		if (!defined $la || !defined $lb || $la ne $lb)
		{
			fail($name);
			diag "line $line differs:\n"
			  . 'got:      ' . substr($la // '(end of file)', 0, 300) . "\n"
			  . 'expected: ' . substr($lb // '(end of file)', 0, 300);
			return 0;
		}
	}
	pass($name);
	return 1;
}

# A probe through the hash index of a restored database.
sub check_index
{
	my ($db) = @_;
	my $plan = $node->safe_psql(
		$db, q{
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM indexed WHERE f = bloom_add(bloom_create(100), 777)});
	like($plan, qr/indexed_f/, "$db: the hash index on bloom is used");
	is( $node->safe_psql(
			$db, q{
SET enable_seqscan = off;
SELECT string_agg(id::text, ',') FROM indexed WHERE f = bloom_add(bloom_create(100), 777)}),
		'777',
		"$db: the hash index finds the filter");
	return;
}

# A plain dump of $db into $file.
sub plain_dump
{
	my ($db, $file) = @_;
	$node->command_ok([ 'pg_dump', '-Fp', '-f', $file, '-d', $db ],
		"pg_dump plain of $db");
	return;
}

plain_dump('src', "$tmp/src.sql");
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/src.dump", '-d', 'src' ],
	'pg_dump custom');
$node->command_ok(
	[ 'pg_dump', '-Fd', '-j', '2', '-Z', '0', '-f', "$tmp/src.dir", '-d', 'src' ],
	'pg_dump directory, 2 jobs, uncompressed');
cmp_ok(-s "$tmp/src.sql", '>', 33_000_000,
	'the plain dump holds the 25 MB filter as text (' . (-s "$tmp/src.sql") . ' bytes)');

$node->safe_psql('postgres', 'CREATE DATABASE from_plain');
$node->command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'from_plain',
		'-f', "$tmp/src.sql"
	],
	'restore the plain dump with psql');

$node->safe_psql('postgres', 'CREATE DATABASE from_custom');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', 'from_custom', "$tmp/src.dump" ],
	'pg_restore the custom dump');

$node->safe_psql('postgres', 'CREATE DATABASE from_dir');
$node->command_ok(
	[
		'pg_restore', '--exit-on-error', '-j', '2', '-d', 'from_dir',
		"$tmp/src.dir"
	],
	'pg_restore the directory dump, 2 jobs');

for my $db (qw(from_plain from_custom from_dir))
{
	is($node->safe_psql($db, $fingerprint_sql),
		$src_fingerprint, "$db: every filter has the same bytes and answers");
	check_index($db);
	plain_dump($db, "$tmp/$db.sql");
	same_dump("$tmp/$db.sql", "$tmp/src.sql",
		"$db: its plain dump is byte for byte the original's");
}

#
# COPY round trips, text and binary, through files on the server.
#
$node->safe_psql(
	'src', qq{
COPY filters TO '$tmp/filters.txt';
COPY filters TO '$tmp/filters.bin' WITH (FORMAT binary);
CREATE TABLE from_text (LIKE filters);
CREATE TABLE from_binary (LIKE filters);
COPY from_text FROM '$tmp/filters.txt';
COPY from_binary FROM '$tmp/filters.bin' WITH (FORMAT binary);
COPY from_text TO '$tmp/again.txt';
COPY from_binary TO '$tmp/again.bin' WITH (FORMAT binary);
COPY from_text TO '$tmp/text_as.bin' WITH (FORMAT binary);
});

for my $copy (qw(from_text from_binary))
{
	is( $node->safe_psql(
			'src', qq{
SELECT count(*), count(*) FILTER (WHERE c.f::bytea IS NOT DISTINCT FROM o.f::bytea)
FROM filters AS o JOIN $copy AS c USING (id)}),
		'13|13',
		"COPY $copy: every filter has the same bytes");
}
same_file("$tmp/again.txt", "$tmp/filters.txt",
	'COPY text out of the copy: byte-identical file');
same_file("$tmp/again.bin", "$tmp/filters.bin",
	'COPY binary out of the copy: byte-identical file');
same_file("$tmp/text_as.bin", "$tmp/filters.bin",
	'text loaded, written as binary: the original binary file');

$node->stop;
done_testing();
