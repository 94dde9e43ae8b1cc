#
# test/t/015_index.pl: a bloomfilter index through crashes, replication,
# dump and restore, and corruption.
#
# 1. A primary with a streaming standby.  A table with a bloomfilter index of
#    small capacity (so that it grows by layers while the test runs) and a
#    partitioned table with one, written by four sessions looping over small
#    committed inserts, and by a COPY of two million rows.  In the middle of
#    all that, an immediate shutdown (no checkpoint: recovery replays the
#    index's GenericXLog records, possibly a layer's pages added with no
#    metapage naming them yet), then a restart.  After it: every live row's
#    key is found (bloom_index_verify = 0), every insert committed before the
#    kill is there, and the index still grows (past pages a growth cut off).
#    Then REINDEX CONCURRENTLY of both indexes while three sessions insert:
#    verify 0 again.
# 2. The standby, caught up, answers every probe as the primary does (the
#    same answers for 200,000 keys, present and absent), and verifies 0.
# 3. pg_dump and pg_restore rebuild the index: verify 0, every key found.
# 4. A corrupted metapage (its magic number, then its layer count) and a
#    corrupted bitmap page header each give an ERROR with SQLSTATE XX002
#    (index_corrupted) to probes and inserts, never a crash; REINDEX
#    repairs the index.  A plain NOT EXISTS into the table, which probes the
#    index by itself while it is sound, is planned without it once its
#    metapage is corrupted: the plain plan's rows, no error.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomSessions qw(start_session stop_sessions);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
max_connections = 20
log_statement = none
});
$primary->start;
$primary->safe_psql('postgres',
	q{SELECT pg_create_physical_replication_slot('standby')});
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{primary_slot_name = 'standby'});
$standby->start;

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE keys (k bigint, who int);
CREATE INDEX keys_bf ON keys USING bloomfilter (k) WITH (capacity = 10000);
CREATE TABLE regions (region int, k text) PARTITION BY LIST (region);
CREATE TABLE regions_0 PARTITION OF regions FOR VALUES IN (0);
CREATE TABLE regions_1 PARTITION OF regions FOR VALUES IN (1);
CREATE INDEX regions_bf ON regions USING bloomfilter (k) WITH (capacity = 2000);
-- what each writer committed, in the same transaction as its rows
CREATE TABLE done (who int PRIMARY KEY, n bigint);
CREATE PROCEDURE writer(w int, n int) LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO done VALUES (w, 0);
	COMMIT;
	FOR i IN 1 .. n LOOP
		INSERT INTO keys SELECT w * 100000000 + i * 10 + j, w FROM generate_series(0, 9) j;
		INSERT INTO regions VALUES (i % 2, w || ':' || i);
		UPDATE done SET n = i WHERE who = w;
		COMMIT;
	END LOOP;
END $$;
});

#
# 1. Immediate shutdown in the middle of concurrent inserts and a COPY
#
my @sessions =
  map { start_session($primary, "w$_", "CALL writer($_, 1000000)") } 1 .. 4;
push @sessions,
  start_session($primary, 'copy',
	q{COPY keys (k) FROM PROGRAM 'seq 900000001 902000000'});

ok( $primary->poll_query_until(
		'postgres', q{
SELECT (SELECT count(*) FROM done WHERE n >= 300) = 4
   AND (SELECT count(*) FROM pg_stat_activity
        WHERE application_name = 'copy' AND state = 'active'
          AND now() - query_start > interval '1 second') = 1}),
	'writers and COPY under way');
my $layers_before =
  $primary->safe_psql('postgres', q{SELECT layers FROM bloom_index_info('keys_bf')});
my $committed = $primary->safe_psql('postgres', q{SELECT sum(n) FROM done});

$primary->stop('immediate');
stop_sessions(@sessions);
$primary->start;

is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('keys_bf')}),
	'0', 'after the crash: every live row of keys is found');
is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('regions_bf')}),
	'0', 'after the crash: every live row of the partitions is found');
cmp_ok($primary->safe_psql('postgres', q{SELECT sum(n) FROM done}),
	'>=', $committed, "the $committed inserts committed before the kill are there");
is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) FROM keys k JOIN done d ON d.who = k.who
WHERE k.k % 100000000 / 10 > d.n}),
	'0',
	'no row past a writer\'s last committed insert');
is($primary->safe_psql('postgres', q{SELECT count(*) FROM keys WHERE who IS NULL}),
	'0', 'the COPY cut off left no row');
cmp_ok($layers_before, '>', 1, "the index had grown to $layers_before layers before the kill");

# it still grows, past whatever a cut-off growth left, and loses nothing.
# Autovacuum may have compacted the index since the restart (into fewer
# layers, with room): it is turned off for the table (the ALTER waits for a
# VACUUM under way), and keys go in until a layer is added.
$primary->safe_psql('postgres', q{ALTER TABLE keys SET (autovacuum_enabled = off)});
my $layers_mid =
  $primary->safe_psql('postgres', q{SELECT layers FROM bloom_index_info('keys_bf')});
my $layers_after = $layers_mid;
for my $i (1 .. 40)
{
	$primary->safe_psql('postgres',
		"INSERT INTO keys SELECT 5000000000 + $i * 1000000 + g, 0 FROM generate_series(1, 100000) g"
	);
	$layers_after =
	  $primary->safe_psql('postgres', q{SELECT layers FROM bloom_index_info('keys_bf')});
	last if $layers_after > $layers_mid;
}
cmp_ok($layers_after, '>', $layers_mid,
	"the index grows after recovery (from $layers_mid layers; $layers_before before the crash)");
is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('keys_bf')}),
	'0', 'after more growth: every live row is found');

#
# 1b. REINDEX CONCURRENTLY while three sessions keep inserting: the rebuilt
#     index (a new one, swapped in) holds every key, those inserted while it
#     was built and validated included
#
my $oid_before = $primary->safe_psql('postgres',
	q{SELECT 'keys_bf'::regclass::oid || ' ' || 'regions_bf'::regclass::oid});
my @writers =
  map { start_session($primary, "r$_", "CALL writer($_, 1000000)") } 5 .. 7;
ok( $primary->poll_query_until(
		'postgres', q{SELECT count(*) = 3 FROM done WHERE who >= 5 AND n >= 100}),
	'three writers under way');
$primary->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY keys_bf');
$primary->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY regions_bf');
my $after_reindex = $primary->safe_psql('postgres',
	q{SELECT sum(n) FROM done WHERE who >= 5});
ok( $primary->poll_query_until(
		'postgres', qq{SELECT sum(n) > $after_reindex + 300 FROM done WHERE who >= 5}),
	'the writers go on after the REINDEX');
$primary->safe_psql('postgres',
	q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name IN ('r5', 'r6', 'r7')});
stop_sessions(@writers);
isnt($primary->safe_psql('postgres',
		q{SELECT 'keys_bf'::regclass::oid || ' ' || 'regions_bf'::regclass::oid}),
	$oid_before, 'REINDEX CONCURRENTLY swapped in new indexes');
is( $primary->safe_psql(
		'postgres', q{
SELECT bloom_index_verify('keys_bf') + bloom_index_verify('regions_bf')}),
	'0', 'after REINDEX CONCURRENTLY under inserts: every live row is found');
is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) FROM keys k JOIN done d ON d.who = k.who
WHERE d.who >= 5 AND NOT bloom_index_contains('keys_bf', k.k)}),
	'0', 'every key the writers committed is found');

#
# 2. The standby answers as the primary
#
# (no autovacuum from here on: a compaction of a partition's index on the
# primary between the standby's probes and the primary's changes which
# absent keys answer "maybe" there; the ALTER waits for one under way)
$primary->safe_psql('postgres', q{
ALTER TABLE regions_0 SET (autovacuum_enabled = off);
ALTER TABLE regions_1 SET (autovacuum_enabled = off)});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $answers = q{
SELECT md5(string_agg(bloom_index_contains('keys_bf', g)::int::text, '' ORDER BY g))
    || ' ' || md5(string_agg(bloom_index_contains('regions_bf', '1:' || g)::int::text, '' ORDER BY g))
FROM generate_series(1, 200000) g};
my $primary_answers = $primary->safe_psql('postgres', $answers);
is($standby->safe_psql('postgres', $answers),
	$primary_answers, 'the standby answers 2 x 200,000 probes as the primary');
is($standby->safe_psql('postgres', q{SELECT bloom_index_verify('keys_bf')}),
	'0', 'the standby verifies 0');
is( $standby->safe_psql('postgres',
		q{SELECT string_agg(layers::text, ',' ORDER BY indexrelid::text) FROM bloom_index_info('regions_bf')}),
	$primary->safe_psql('postgres',
		q{SELECT string_agg(layers::text, ',' ORDER BY indexrelid::text) FROM bloom_index_info('regions_bf')}),
	'the standby has the layers of the primary');

# inserts write their own generic WAL records (src/bfxlog.c): with
# wal_consistency_checking, each carries the page as the primary has it,
# and the standby compares it with the page its replay made (a difference
# stops the standby with "inconsistent page found")
$primary->safe_psql(
	'postgres', q{
SET wal_consistency_checking = 'generic';
INSERT INTO keys SELECT g, 0 FROM generate_series(7000001, 7003000) g;
INSERT INTO regions SELECT g % 2, 'c:' || g FROM generate_series(1, 2000) g;
});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is($standby->safe_psql('postgres', $answers),
	$primary->safe_psql('postgres', $answers),
	'the standby replayed the checked records and answers as the primary');
unlike(slurp_file($standby->logfile), qr/inconsistent page/,
	'no inconsistent page');

#
# 3. Dump and restore
#
my $tmp = PostgreSQL::Test::Utils::tempdir;
$primary->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/db.dump", '-d', 'postgres' ],
	'pg_dump');
$primary->safe_psql('postgres', 'CREATE DATABASE restored');
$primary->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', 'restored', "$tmp/db.dump" ],
	'pg_restore');
is( $primary->safe_psql(
		'restored',
		q{SELECT bloom_index_verify('keys_bf') + bloom_index_verify('regions_bf')}),
	'0',
	'restored: verify 0');
is( $primary->safe_psql(
		'restored', q{
SELECT count(*) FROM keys WHERE NOT bloom_index_contains('keys_bf', k)}),
	'0',
	'restored: every key found');
is( $primary->safe_psql('restored',
		q{SELECT capacity FROM bloom_index_info('keys_bf')}),
	'10000', 'restored: the capacity option came along');

#
# 4. Corruption: an ERROR, never a crash
#
$primary->safe_psql(
	'postgres', q{
CREATE TABLE c (k int);
INSERT INTO c SELECT g FROM generate_series(1, 100) g;
CREATE INDEX c_bf ON c USING bloomfilter (k);
CREATE INDEX c_k ON c (k);
CREATE TABLE ci AS SELECT g AS k FROM generate_series(1, 300) g;
ANALYZE c;
ANALYZE ci;
});

# A NOT EXISTS into c, with the plans other than the filter's discouraged:
# its plan and its count.
my $join_settings = q{SET ignore_checksum_failure = on;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SET max_parallel_workers_per_gather = 0;};
my $join_query = q{SELECT count(*) FROM ci WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.k = ci.k)};
sub join_plan_and_count
{
	my ($ret, $out, $err) = $primary->psql('postgres',
		"$join_settings EXPLAIN (COSTS OFF) $join_query; $join_query");
	return ($out =~ /BloomAntiJoin/ ? 'filter' : 'plain') . ' '
	  . (($out =~ /^(\d+)$/m) ? $1 : "error: $err");
}
is(join_plan_and_count(), 'filter 200',
	'sound index: the NOT EXISTS probes the filter and counts 200');
# Overwrites 4 bytes at $offset of the index's file, the server stopped.
sub corrupt
{
	my ($offset, $bytes) = @_;
	my $path = $primary->data_dir . '/'
	  . $primary->safe_psql('postgres', q{SELECT pg_relation_filepath('c_bf')});
	$primary->stop;
	open my $fh, '+<', $path or die "open $path: $!";
	binmode $fh;
	seek $fh, $offset, 0 or die "seek: $!";
	print $fh $bytes or die "write: $!";
	close $fh or die "close: $!";
	$primary->start;
}

# Runs $sql (with checksum failures only warned of), returns the SQLSTATE
# and message of its error.
sub error_of
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $primary->psql('postgres',
		"SET ignore_checksum_failure = on;\n\\set VERBOSITY verbose\n$sql");
	my ($state) = $err =~ /ERROR:\s+(\w{5}):/;
	my ($msg) = $err =~ /ERROR:\s+\w{5}:\s+(.*)/;
	return ($state // "no error (exit $ret)") . ': ' . ($msg // '');
}

my $page_header = 24;    # MAXALIGN(SizeOfPageHeaderData)
my $blcksz = $primary->safe_psql('postgres', 'SHOW block_size');

# the metapage's magic number
corrupt($page_header, pack('V', 0xdeadbeef));
like(error_of(q{SELECT bloom_index_contains('c_bf', 1)}),
	qr/^XX002: bloomfilter index "c_bf" is corrupted/, 'bad magic: probe errors');
like(error_of(q{INSERT INTO c VALUES (1000)}),
	qr/^XX002: bloomfilter index "c_bf" is corrupted/, 'bad magic: insert errors');
like(error_of(q{SELECT * FROM bloom_index_info('c_bf')}),
	qr/^XX002: /, 'bad magic: bloom_index_info errors');
is(join_plan_and_count(), 'plain 200',
	'bad magic: the NOT EXISTS is planned without the filter, no error');
is($primary->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

# the metapage's layer count (after magic, version, layout, hash, reserved)
$primary->safe_psql('postgres', 'SET ignore_checksum_failure = on; REINDEX INDEX c_bf');
corrupt($page_header + 12, pack('V', 200));
like(error_of(q{SELECT bloom_index_contains('c_bf', 1)}),
	qr/^XX002: bloomfilter index "c_bf" is corrupted/, 'too many layers: probe errors');

# a bitmap page's header (block 1, its magic number)
$primary->safe_psql('postgres', 'SET ignore_checksum_failure = on; REINDEX INDEX c_bf');
corrupt($blcksz + $page_header, pack('V', 0));
like(error_of(q{SELECT bloom_index_contains('c_bf', 1)}),
	qr/^XX002: bloomfilter index "c_bf" is corrupted/, 'bad bitmap page: probe errors');
like(error_of(q{SELECT bloom_index_verify('c_bf')}),
	qr/^XX002: /, 'bad bitmap page: verify errors');
like(error_of(q{INSERT INTO c VALUES (1000)}),
	qr/^XX002: /, 'bad bitmap page: insert errors');
is($primary->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

# REINDEX repairs it
$primary->safe_psql('postgres', 'SET ignore_checksum_failure = on; REINDEX INDEX c_bf');
is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('c_bf')}),
	'0', 'after REINDEX: verify 0');

$standby->stop;
$primary->stop;
done_testing();
