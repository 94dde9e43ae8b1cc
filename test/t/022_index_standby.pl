#
# test/t/022_index_standby.pl: what a hot standby's queries see of a
# bloomfilter index while the primary compacts it and changes what it hashes
# (issue 29, items 1 and 10).
#
# 1. A compaction drops the keys of rows dead to all by the primary's
#    horizon.  A standby without hot_standby_feedback may still have a
#    snapshot that sees those rows (the primary does not know of it).  The
#    rows stay in the heap: a session on the primary holds a cursor on their
#    page (the heap's last, which is not full, so that reading it does not
#    prune it), so VACUUM cannot prune it, and the table's vacuum_truncate is off,
#    so the index's file is not truncated (whose ACCESS EXCLUSIVE lock would
#    cancel the standby's query for another reason).  The standby's
#    REPEATABLE READ transaction sees the rows before and after the
#    compaction's replay; it must never be told that the index lacks their
#    keys: the compaction WAL-logs a snapshot-conflict horizon, as nbtree
#    does when it removes index entries, and the standby cancels the
#    transaction (SQLSTATE 40001, "conflict with recovery").  A transaction
#    begun after the replay does not see the rows, and probes without error.
# 2. Reading never writes: after an enum label is added on the primary,
#    bloom_index_filters, bloom_index_info, bloom_index_contains and
#    bloom_index_verify work on the standby (a read that recorded the new
#    labels in the metapage would fail there: no WAL during recovery).
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
autovacuum = off
hot_standby_feedback = off
});
$primary->start;
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
hot_standby_feedback = off
max_standby_streaming_delay = 100ms
});
$standby->start;

#
# 1. A standby snapshot that sees rows a compaction judged dead
#
$primary->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE t2 (k int)
	WITH (autovacuum_enabled = off, vacuum_truncate = false);
CREATE INDEX t2_k ON t2 USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO t2 SELECT g FROM generate_series(1, 20000) g;
});
is($primary->safe_psql('postgres', q{SELECT layers FROM bloom_index_info('t2_k')}),
	'5', 'the index has grown to five layers');
$primary->wait_for_catchup($standby);

# the rows of the heap's last page, which is not full: reading it does not
# prune it (PostgreSQL prunes a page on access only when it is nearly full)
my $last = $primary->safe_psql('postgres',
	q{SELECT max((ctid::text::point)[0])::int FROM t2});
my $kept = $primary->safe_psql('postgres',
	"SELECT max(k) FROM t2 WHERE ctid >= '($last,0)'");
my $gone = $primary->safe_psql('postgres',
	"SELECT count(*) FROM t2 WHERE ctid >= '($last,0)' AND k <> $kept");
cmp_ok($gone, '>', 50, "the heap's last page holds $gone rows");

my $reader = $standby->background_psql('postgres', on_error_stop => 0);
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($reader->query_safe('SELECT count(*) FROM t2'), '20000',
	'the standby transaction sees every row');

$primary->safe_psql('postgres',
	"DELETE FROM t2 WHERE ctid >= '($last,0)' AND k <> $kept");
# (the cursor's transaction begins after the delete: it does not hold the
# deleted rows back, it only pins their page)
my $pin = $primary->background_psql('postgres');
$pin->query_safe('BEGIN');
$pin->query_safe("DECLARE c CURSOR FOR SELECT k FROM t2 WHERE ctid >= '($last,0)'");
is($pin->query_safe('FETCH 1 FROM c'), $kept,
	'a cursor pins the last heap page (on its one row left)');
my ($out, $err) = ('', '');
$primary->psql('postgres', 'VACUUM (VERBOSE) t2', stdout => \$out, stderr => \$err);
like($err, qr/$gone dead from 1 pages not removed due to cleanup lock contention/,
	'VACUUM could not prune the page of the deleted rows');
is($primary->safe_psql('postgres', q{SELECT layers FROM bloom_index_info('t2_k')}),
	'1', 'VACUUM compacted the index into one layer');
$primary->wait_for_catchup($standby);

# the same transaction: its snapshot sees the deleted rows; a probe of their
# keys must not answer false (the transaction is cancelled instead)
# (a terminated session ends its psql: that is a failure too)
my ($seen, $failed) = ('', 1);
eval {
	($seen, $failed) = $reader->query(
		qq{SELECT count(*) || ' ' || count(*) FILTER (WHERE NOT bloom_index_contains('t2_k', k))
		  FROM t2 WHERE ctid >= '($last,0)' AND k <> $kept});
	$reader->quit;
};
note "the standby transaction's probe: '$seen', failed: $failed";
unlike($seen, qr/^$gone [1-9]/,
	'no probe of a row the standby snapshot sees answered false');
ok( $failed
	  && $standby->log_contains(
		qr/(canceling statement|terminating connection) due to conflict with recovery/),
	'the standby transaction was cancelled by a recovery conflict');

# a transaction begun after the replay does not see the rows
is( $standby->safe_psql('postgres', q{SELECT count(*) FROM t2}),
	20000 - $gone, 'a new standby transaction sees none of the deleted rows');
is( $standby->safe_psql('postgres',
		q{SELECT count(*) FROM t2 WHERE NOT bloom_index_contains('t2_k', k)}),
	'0', 'and finds every key of the rows it sees');
$pin->query_safe('COMMIT');
$pin->quit;

#
# 2. Reading on a standby after an enum label was added
#
$primary->safe_psql('postgres', q{
CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TABLE e2 (m mood);
CREATE INDEX e2_m ON e2 USING bloomfilter (m);
INSERT INTO e2 VALUES ('sad'), ('ok');
ALTER TYPE mood ADD VALUE 'happy';
});
$primary->wait_for_catchup($standby);
my ($ret, $stdout, $stderr) = $standby->psql('postgres', q{
SELECT count(*) FROM bloom_index_filters('e2_m');
SELECT layers FROM bloom_index_info('e2_m');
SELECT bloom_index_contains('e2_m', 'ok'::mood), bloom_index_contains('e2_m', 'happy'::mood);
SELECT bloom_index_verify('e2_m');
});
is($ret, 0, 'the read functions work on the standby after a label was added')
  or diag($stderr);
is($stdout, "1\n1\nt|f\n0", 'and answer as on the primary');
# on the primary, a read-only transaction reads without writing either
($ret, $stdout, $stderr) = $primary->psql('postgres', q{
BEGIN READ ONLY;
SELECT count(*) FROM bloom_index_filters('e2_m');
COMMIT;
});
is($ret, 0, 'bloom_index_filters works in a read-only transaction') or diag($stderr);
# the first insert of the new label records it, and the standby follows
$primary->safe_psql('postgres', q{INSERT INTO e2 VALUES ('happy')});
$primary->wait_for_catchup($standby);
is( $standby->safe_psql('postgres',
		q{SELECT bloom_index_contains('e2_m', 'happy'::mood), bloom_index_verify('e2_m')}),
	't|0', 'the standby finds the new label\'s key');

$standby->stop;
$primary->stop;
done_testing();
