
# Copyright (c) 2026, the bloomfilter developers
# run-tests: alone (it times itself: test/run-tests.sh runs it with
# nothing beside it)

# A cancel reaches the extension's own long loops, not only the row loops of
# PostgreSQL around them.
#
# Each statement below spends seconds inside one call of the extension (the
# text output of a large filter, the text input of its literal, the final
# function of a large unsized bloom_agg), after every row it needs has been
# produced.  The statement marks that moment itself: the expression just
# before the long call takes an advisory lock, which a second session watches
# for in pg_locks, and then cancels the backend with pg_cancel_backend.  The
# time from the mark to the end of the statement is measured once without a
# cancel (the work left, D) and once with one (the latency, L).  The
# extension checks for interrupts every chunk of its loops (tens of
# milliseconds to a few tenths of a second), so L must be a small part of D;
# without those checks the cancel waits for the call to end, and L is about
# D.  The bound, two thirds of D, is relative, so that a slower machine
# changes both sides, and loose, for a busy one.  (The filter's size comes
# from a generate_series, so that the planner cannot fold it into a
# constant.)
#
# The node is stopped in immediate mode, in case a backend still runs.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('cancel');
$node->init;
$node->append_conf('postgresql.conf', 'max_parallel_workers_per_gather = 0');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');

my $MARK = 'pg_try_advisory_lock(4242)';

# the watching session stays open, so that seeing the mark and sending the
# cancel take a query each, not a new connection
my $watch = $node->background_psql('postgres');

# Run $sql (which takes the advisory lock 4242 just before its long call) in
# a session of its own; once the lock shows in pg_locks, cancel that session
# if $cancel.  Returns the seconds from the mark to the end of the statement,
# its stderr and whether the mark was seen.
sub run_marked
{
	my ($sql, $cancel) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);
	my ($pid, $mark);
	my $deadline = time + 300;
	while (time < $deadline)
	{
		$pid = $watch->query_safe(
			"SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND granted"
		);
		last if $pid ne '';
		last unless $h->pumpable;
		usleep(2_000);
	}
	$mark = time;
	$watch->query_safe("SELECT pg_cancel_backend($pid)")
	  if $cancel && $pid ne '';
	$h->finish;
	return (time - $mark, $err, $pid ne '');
}

my @cases = (
	[
		'text output of a 400 MB filter',
		"SELECT length(CASE WHEN $MARK THEN f::text END) "
		  . "FROM (SELECT bloom_create(n) AS f FROM generate_series(320000000, 320000000) n OFFSET 0) s"
	],
	[
		'text input of a 530 MB literal',
		"SELECT octet_length(CASE WHEN $MARK THEN t::bloom::bytea END) "
		  . "FROM (SELECT bloom_create(n)::text AS t FROM generate_series(320000000, 320000000) n OFFSET 0) s"
	],
	[
		'final function of an unsized bloom_agg of 50 million keys',
		"SELECT octet_length(bloom_agg(k)::bytea) FROM ("
		  . "SELECT i::bigint AS k FROM generate_series(1, 50000000) i "
		  . "UNION ALL SELECT CASE WHEN $MARK THEN 0 END) s"
	]);

foreach my $case (@cases)
{
	my ($name, $sql) = @$case;

	my ($full, $err, $seen) = run_marked($sql, 0);
	ok($seen && $err eq '', "$name: runs to the end uncancelled")
	  or diag("stderr: $err");

	my ($late, $cerr, $cseen) = run_marked($sql, 1);
	like($cerr, qr/canceling statement due to user request/,
		"$name: is cancelled");
	ok( $cseen && $late < 2 * $full / 3,
		sprintf(
			'%s: the cancel ends it within two thirds of the work left (%.2f s after the cancel; %.2f s uncancelled)',
			$name, $late, $full));
}

is($node->safe_psql('postgres', 'SELECT nblocks FROM bloom_size(1000, 0.01)'),
	'20', 'the backend keeps working');

$watch->quit;
$node->stop('immediate');
done_testing();
