
# Copyright (c) 2026, the bloomfilter developers

# Parallel CREATE INDEX of a bloomfilter index: the workers really run,
# pg_stat_progress_create_index shows the build's phases, a cancel midway
# ends the build with no shared memory left behind, and a crash midway
# leaves no half-built index in use.
#
# The build is held at a known point without a clock: the index's key is an
# expression that reads a gate table, which another session keeps locked;
# every participant (the leader and both workers) waits on that lock at its
# first row, until the test lets them go, cancels the build or crashes the
# server.  (The expression's function claims to be IMMUTABLE: a test-only
# lie that lets it stand in an index; it names the gate with its schema, as
# PostgreSQL 17 and later build indexes under a safe search_path.)  Dynamic
# shared memory is made of files in the data directory
# (dynamic_shared_memory_type = mmap), so that the segments of this server,
# and only its, can be counted.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomSessions qw(start_session stop_sessions);

my $node = PostgreSQL::Test::Cluster->new('parallel_build');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
max_worker_processes = 8
max_parallel_workers = 8
max_parallel_maintenance_workers = 2
maintenance_work_mem = 128MB
log_min_messages = debug1
dynamic_shared_memory_type = mmap
});
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE gate (x int);
CREATE TABLE t (k bigint) WITH (parallel_workers = 2, autovacuum_enabled = off);
INSERT INTO t SELECT hashint8(g) FROM generate_series(1, 300000) g;
ANALYZE t;
CREATE FUNCTION gated(k bigint) RETURNS bigint LANGUAGE plpgsql
	IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	PERFORM count(*) FROM public.gate;
	RETURN k;
END $$;
});

# the server's dynamic shared memory segments (its control segment too)
sub dsm_segments
{
	opendir(my $dh, $node->data_dir . '/pg_dynshmem') or return -1;
	my $n = grep { /^mmap\./ } readdir($dh);
	closedir($dh);
	return $n;
}

# 1. the workers run: the build says so in the log (DEBUG1)
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', 'CREATE INDEX t_bf ON t USING bloomfilter (k)');
ok( $node->log_contains(
		qr/bloomfilter index "t_bf": 2 parallel workers launched of 2 planned/,
		$log_offset),
	'CREATE INDEX launched 2 parallel workers');
$log_offset = -s $node->logfile;
$node->safe_psql('postgres', 'REINDEX INDEX t_bf');
ok( $node->log_contains(
		qr/bloomfilter index "t_bf": 2 parallel workers launched of 2 planned/,
		$log_offset),
	'REINDEX launched 2 parallel workers');
is($node->safe_psql('postgres', q{SELECT bloom_index_verify('t_bf')}),
	'0', 'the parallel build misses no key');

# A build in a session of its own (application_name "builder"), held at the
# gate by another session's lock; returns both once the leader and its two
# workers wait there.
sub gated_build
{
	my ($sql) = @_;
	my $holder = $node->background_psql('postgres');
	$holder->query_safe('BEGIN');
	$holder->query_safe('LOCK gate IN ACCESS EXCLUSIVE MODE');
	my $builder = start_session($node, 'builder', $sql);
	ok( $node->poll_query_until(
			'postgres', q{
SELECT count(*) = 2 FROM pg_stat_activity w
JOIN pg_stat_activity l ON l.pid = w.leader_pid
WHERE l.application_name = 'builder' AND w.backend_type = 'parallel worker'
  AND w.wait_event_type = 'Lock' AND l.wait_event_type = 'Lock'}),
		"the leader and two parallel workers wait at the gate: $sql");
	return ($holder, $builder);
}

# 2. progress, while the leader and its two workers wait at the gate
my $segments_before = dsm_segments();
my ($holder, $builder) =
  gated_build('CREATE INDEX t_gated ON t USING bloomfilter (gated(k))');
is( $node->safe_psql(
		'postgres', q{
SELECT phase || ' | ' || (blocks_total > 0) FROM pg_stat_progress_create_index}),
	'building index: scanning table | true',
	'pg_stat_progress_create_index shows the scan of the table, with its blocks');
$holder->query_safe('COMMIT');
stop_sessions($builder);
$holder->quit;
is(${ $builder->{err} }, '', 'the gated build ends without an error');
is( $node->safe_psql(
		'postgres', q{
SELECT phase FROM pg_stat_progress_create_index}),
	'', 'and its progress is gone');
is($node->safe_psql('postgres', q{SELECT bloom_index_verify('t_gated')}),
	'0', 'the gated parallel build finished with every key');
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT array_agg(filter::bytea) FROM bloom_index_filters('t_gated'))
     = (SELECT array_agg(filter::bytea) FROM bloom_index_filters('t_bf'))}),
	't', 'and the bits of the build without the gate (the same keys)');
is(dsm_segments(), $segments_before, 'no shared memory segment left behind');

# 3. a cancel midway: the build ends with 57014, no index, no segment left
($holder, $builder) =
  gated_build('CREATE INDEX t_cancelled ON t USING bloomfilter (gated(k))');
$node->safe_psql('postgres',
	q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'builder'});
stop_sessions($builder);
$holder->query_safe('COMMIT');
$holder->quit;
like(${ $builder->{err} }, qr/canceling statement due to user request/,
	'the cancel ends the build');
ok( $node->poll_query_until(
		'postgres',
		q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'parallel worker'}),
	'its workers are gone');
is($node->safe_psql('postgres', q{SELECT to_regclass('t_cancelled') IS NULL}),
	't', 'no index is left');
is(dsm_segments(), $segments_before, 'no shared memory segment left behind');

# 4. a crash midway (CREATE INDEX CONCURRENTLY, which leaves a catalog entry)
($holder, $builder) = gated_build(
	'CREATE INDEX CONCURRENTLY t_crashed ON t USING bloomfilter (gated(k))');
$node->stop('immediate');
stop_sessions($builder);
eval { $holder->quit };
$node->start;
is( $node->safe_psql(
		'postgres', q{SELECT indisvalid FROM pg_index WHERE indexrelid = 't_crashed'::regclass}),
	'f', 'after the crash the concurrent build left an invalid index');
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', q{SELECT bloom_index_contains('t_crashed', 1::bigint)});
like($stderr, qr/bloomfilter index "t_crashed" is not valid/,
	'which no probe uses');
$node->safe_psql('postgres', 'DROP INDEX t_crashed');
is(dsm_segments(), $segments_before, 'no shared memory segment left after the restart');
is($node->safe_psql('postgres', q{SELECT bloom_index_verify('t_bf')}),
	'0', 'the index built before the crash still misses no key');

$node->stop;
done_testing();
