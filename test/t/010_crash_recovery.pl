#
# test/t/010_crash_recovery.pl: filters survive SIGKILL of the server.
#
# Builds and updates filters, then, twice, kills the server with SIGKILL in
# the middle of a bulk build (a bloom_agg sized for 50 million keys, 60 MB,
# fed a billion keys, so it is always cut off) and of concurrent updates
# (three sessions looping over small committed transactions: bloom_add,
# bloom_add_new under FOR UPDATE, and | with a bloom_agg; one of them on a
# 2.4 MB filter, so the kill often lands in the middle of writing its TOAST
# chunks):
#
#   round 1: SIGKILL of the bulk build's backend; the postmaster
#            terminates every session and recovers (restart_after_crash);
#   round 2: SIGKILL of the postmaster and all its children at once, then a
#            restart, which recovers from the WAL.
#
# After each recovery:
#   - every filter reads back through its text form and the bytea cast
#     (both validate every field);
#   - every committed key is in its filter, and no committed transaction
#     seen before the kill is lost;
#   - every filter is bit for bit the sized bloom_agg of exactly the keys
#     logged with it (no bit of an uncommitted write is left);
#   - the filters built and committed before the kill have the bytes they
#     had, and the bulk build in flight left nothing;
#   - amcheck finds the heap, TOAST and indexes intact;
#   - the filters can still be updated.
#
# The SIGKILL is of processes, not of the machine: the kernel keeps what
# was written, so fsync (off in test clusters) plays no part.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);

use FindBin;
use lib $FindBin::RealBin;
use BloomSessions qw(start_session stop_sessions);

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
wal_level = replica
restart_after_crash = on
log_statement = none
});
$node->start;

$node->safe_psql('postgres',
	"CREATE EXTENSION bloomfilter;\nCREATE EXTENSION amcheck;\n"
	  . slurp_file(dirname(__FILE__) . '/data/writers.sql'));

# Committed before any crash: bulk builds, unsized and sized, and one key
# in every filter.
$node->safe_psql(
	'postgres', q{
INSERT INTO bulk SELECT 1, 1000000, bloom_agg(g) FROM generate_series(1, 1000000) AS g;
INSERT INTO bulk SELECT 2, 1000000, bloom_agg(g, 2000000, 0.01) FROM generate_series(1, 1000000) AS g;
INSERT INTO bulk SELECT 3, 100, bloom_agg(g::text) FROM generate_series(1, 100) AS g;
CALL add_keys(0, 0, 13, ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13]);
});
my $bulk_md5 = $node->safe_psql('postgres',
	q{SELECT string_agg(id || ':' || md5(f::bytea), ' ' ORDER BY id) FROM bulk});

# Starts the bulk build and the updaters of round $rnd, waits until all are
# under way, and returns the sessions and the number of keys committed by
# then (a lower bound of what must survive).
sub start_load
{
	my ($rnd) = @_;
	my @sessions = (
		start_session($node, 'bulk',
			    "INSERT INTO bulk SELECT 100 + $rnd, 1000000000, "
			  . 'bloom_agg(g, 50000000, 0.01) '
			  . 'FROM (SELECT generate_series(1, 1000000000) AS g) AS s'),
		start_session($node, 'upd1',
			"CALL add_keys(1, $rnd, 1000000, ARRAY[1,2,3,7,8,9])"),
		start_session($node, 'upd2',
			"CALL add_keys(2, $rnd, 1000000, ARRAY[4,5,6,10,11,12])"),
		start_session($node, 'upd3',
			"CALL add_keys(3, $rnd, 1000000, ARRAY[13])"));

	# under way: the bulk build has run for a second, and every updater has
	# committed some keys
	ok( $node->poll_query_until(
			'postgres', qq{
SELECT (SELECT count(*) FROM pg_stat_activity
        WHERE application_name = 'bulk' AND state = 'active'
          AND now() - query_start > interval '1 second') = 1
   AND (SELECT count(*) FROM key_log WHERE round = $rnd AND id <= 12) >= 300
   AND (SELECT count(*) FROM key_log WHERE round = $rnd AND id = 13) >= 5}),
		"round $rnd: bulk build and updaters under way");

	my $committed = $node->safe_psql('postgres',
		"SELECT count(*) FROM key_log WHERE round = $rnd");
	my $bulk_active = $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity
		  WHERE application_name = 'bulk' AND state = 'active'});
	return (\@sessions, $committed, $bulk_active);
}

# Reaps the background sessions, which the kill cut off.
sub reap
{
	my ($sessions) = @_;
	stop_sessions(@$sessions);
	for my $s (@$sessions)
	{
		like(
			${ $s->{err} },
			qr/server closed the connection|terminating connection|connection to server was lost/,
			"session $s->{name} was cut off by the crash");
	}
}

# The checks after a recovery.
sub verify
{
	my ($label, $min_committed) = @_;

	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM filters
WHERE f::text::bloom::bytea <> f::bytea
   OR f::bytea::bloom::bytea <> f::bytea
   OR (bloom_info(f)).nbytes <> octet_length(f::bytea) + 4}),
		'0',
		"$label: every filter is valid");

	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM key_log AS l JOIN filters AS f USING (id)
WHERE NOT bloom_contains(f.f, l.key)}),
		'0',
		"$label: every committed key is in its filter");

	for my $rnd (sort keys %$min_committed)
	{
		my $n = $node->safe_psql('postgres',
			"SELECT count(*) FROM key_log WHERE round = $rnd");
		cmp_ok($n, '>=', $min_committed->{$rnd},
			"$label: the $min_committed->{$rnd} keys of round $rnd committed before the kill are there ($n)"
		);
	}

	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FROM filters AS f,
     LATERAL (SELECT bloom_agg(l.key, f.capacity, f.rate) AS rebuilt
              FROM key_log AS l WHERE l.id = f.id) AS r
WHERE f.f <> r.rebuilt}),
		'0',
		"$label: every filter is exactly the filter of its committed keys");

	is( $node->safe_psql(
			'postgres',
			q{SELECT string_agg(id || ':' || md5(f::bytea), ' ' ORDER BY id) FROM bulk}),
		$bulk_md5,
		"$label: committed bulk builds unchanged, the one in flight left nothing");

	is( $node->safe_psql(
			'postgres', q{
SELECT bool_and(CASE id WHEN 3 THEN bloom_contains(f, '77'::text)
                        ELSE bloom_contains(f, 777777) END)
FROM bulk}),
		't',
		"$label: bulk builds still answer");

	is( $node->safe_psql(
			'postgres', q{
SELECT (SELECT count(*) FROM verify_heapam('filters', check_toast => true))
     + (SELECT count(*) FROM verify_heapam('bulk', check_toast => true))
     + (SELECT count(*) FROM verify_heapam('key_log'))}),
		'0',
		"$label: amcheck finds heap and TOAST intact");
	$node->safe_psql('postgres',
		q{SELECT bt_index_check('filters_pkey', true), bt_index_check('bulk_pkey', true)});

	is( $node->safe_psql(
			'postgres', q{
UPDATE filters SET f = bloom_add(f, -1::bigint) WHERE id = 13;
INSERT INTO key_log VALUES (13, -1, -1);
SELECT bloom_contains(f, -1::bigint) FROM filters WHERE id = 13}),
		't',
		"$label: filters can still be updated");
	return;
}

my %committed;

#
# Round 1: SIGKILL of the backend running the bulk build.
#
{
	my ($sessions, $committed, $bulk_active) = start_load(1);
	$committed{1} = $committed;
	is($bulk_active, '1', 'round 1: the bulk build is still running at the kill');
	my $pid = $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE application_name = 'bulk'});
	my $log_offset = -s $node->logfile;
	ok(kill('KILL', $pid), "round 1: SIGKILL of backend $pid");

	$node->wait_for_log(qr/all server processes terminated; reinitializing/,
		$log_offset);
	$node->wait_for_log(qr/database system is ready to accept connections/,
		$log_offset);
	ok( $node->log_contains(qr/automatic recovery in progress/, $log_offset),
		'round 1: crash recovery ran');
	reap($sessions);
	verify('after backend SIGKILL', \%committed);
}

#
# Round 2: SIGKILL of the postmaster and every child at once.
#
{
	my ($sessions, $committed, $bulk_active) = start_load(2);
	$committed{2} = $committed;
	is($bulk_active, '1', 'round 2: the bulk build is still running at the kill');

	my $postmaster = $node->{_pid};
	my @children;
	opendir(my $proc, '/proc') or die "no /proc: $!";
	for my $p (grep { /^\d+$/ } readdir $proc)
	{
		open(my $fh, '<', "/proc/$p/stat") or next;
		my $stat = <$fh>;
		close $fh;
		# pid (comm) state ppid ...; comm may hold spaces and parentheses
		push @children, $p
		  if defined $stat && $stat =~ /\)\s+\S+\s+(\d+)/ && $1 == $postmaster;
	}
	closedir $proc;
	cmp_ok(scalar @children, '>=', 5,
		'round 2: found the server\'s processes (' . scalar(@children) . ')');
	my $log_offset = -s $node->logfile;
	my $killed = kill('KILL', $postmaster, @children);
	# a child may have exited on its own since the listing (a poll's backend)
	cmp_ok($killed, '>=', 5,
		"round 2: SIGKILL of the postmaster and all children ($killed processes)");
	$node->{_pid} = undef;    # as kill9 does
	# Wait until they are gone, reaped included: the new postmaster refuses to
	# start while the old one's pid, in postmaster.pid, still exists.
	for my $p ($postmaster, @children)
	{
		my $tries = 0;
		select(undef, undef, undef, 0.1)
		  while -e "/proc/$p" && $tries++ < 300;
	}
	ok(!-e "/proc/$postmaster", 'round 2: the old postmaster is gone');
	reap($sessions);

	$node->start;
	ok( $node->log_contains(
			qr/database system was interrupted|not properly shut down/,
			$log_offset),
		'round 2: the restart found an unclean shutdown');
	ok($node->log_contains(qr/redo starts at/, $log_offset),
		'round 2: the restart replayed the WAL');
	verify('after postmaster SIGKILL and restart', \%committed);
}

$node->stop;
done_testing();
