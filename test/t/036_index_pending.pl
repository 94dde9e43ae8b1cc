#
# test/t/036_index_pending.pl: a bloomfilter index's keys are set when their
# transaction commits or prepares, not before (issue 37, item 1): every
# committed key is found by every session, on a hot standby, after crash
# recovery, and after a prepared transaction commits from another session
# (across a crash too); a rolled-back batch, or savepoint, leaves no bits,
# on the primary nor on the standby.  The committed batch is larger than the memory a
# transaction keeps (4 MB, 524,288 hashes): its hashes are partly read back
# from the temporary file.
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
max_prepared_transactions = 5
});
$primary->start;
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', q{
max_prepared_transactions = 5
});
$standby->start;

$primary->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE t (k bigint) WITH (autovacuum_enabled = off);
CREATE INDEX t_k ON t USING bloomfilter (k) WITH (capacity = 2000000);
INSERT INTO t SELECT g FROM generate_series(1, 1000) g;
});

# keys of [lo, hi] that the index does not report (0: none lost)
sub missed
{
	my ($node, $lo, $hi) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM generate_series($lo, $hi) g WHERE NOT bloom_index_contains('t_k', g)");
}

# keys of [lo, hi] that the index reports (false positives, for absent keys)
sub found
{
	my ($node, $lo, $hi) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM generate_series($lo, $hi) g WHERE bloom_index_contains('t_k', g)");
}

# 1. a committed batch past the memory bound, and a rolled-back one
$primary->safe_psql('postgres',
	q{INSERT INTO t SELECT g FROM generate_series(1000001, 1600000) g});
$primary->psql('postgres', q{
BEGIN;
INSERT INTO t SELECT g FROM generate_series(3000001, 3150000) g;
ROLLBACK;
});
is(missed($primary, 1000001, 1600000), '0', 'a committed batch: every key found by another session');
is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('t_k')}), '0',
	'bloom_index_verify: no row missing');
cmp_ok(found($primary, 3000001, 3150000), '<', 150000 * 0.03,
	'a rolled-back batch of 150,000 keys: found at the index rate only');
$primary->wait_for_catchup($standby);
is(missed($standby, 1000001, 1600000), '0', 'the standby finds every committed key');
cmp_ok(found($standby, 3000001, 3150000), '<', 150000 * 0.03,
	'the standby: the rolled-back keys found at the index rate only');

# 1b. a savepoint rolled back to whose keys were partly written to the
# temporary file with the transaction's earlier ones: the file's part is cut
# back to the savepoint's mark
$primary->safe_psql('postgres', q{
BEGIN;
INSERT INTO t SELECT g FROM generate_series(7000001, 7300000) g;
SAVEPOINT s;
INSERT INTO t SELECT g FROM generate_series(8000001, 8600000) g;
ROLLBACK TO SAVEPOINT s;
INSERT INTO t SELECT g FROM generate_series(7300001, 7310000) g;
COMMIT;
});
is(missed($primary, 7000001, 7310000), '0', 'a savepoint cut back into the file: the keys before it and after it found');
cmp_ok(found($primary, 8000001, 8600000), '<', 600000 * 0.03,
	'a savepoint cut back into the file: its keys found at the index rate only');

# 2. a prepared transaction committed from another session
$primary->safe_psql('postgres', q{
BEGIN;
INSERT INTO t SELECT g FROM generate_series(4000001, 4010000) g;
PREPARE TRANSACTION 'p1';
});
$primary->safe_psql('postgres', q{COMMIT PREPARED 'p1'});
is(missed($primary, 4000001, 4010000), '0', 'a prepared transaction: its keys found after COMMIT PREPARED');

# 3. a committed batch and a prepared transaction, then a crash
$primary->safe_psql('postgres', q{
INSERT INTO t SELECT g FROM generate_series(5000001, 5020000) g;
BEGIN;
INSERT INTO t SELECT g FROM generate_series(6000001, 6010000) g;
PREPARE TRANSACTION 'p2';
});
$primary->stop('immediate');
$primary->start;
$primary->safe_psql('postgres', q{COMMIT PREPARED 'p2'});
is(missed($primary, 5000001, 5020000), '0', 'after crash recovery: a committed batch found');
is(missed($primary, 6000001, 6010000), '0', 'after crash recovery: a prepared transaction committed, found');
is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('t_k')}), '0',
	'after crash recovery: bloom_index_verify finds no row missing');
$primary->wait_for_catchup($standby);
is(missed($standby, 4000001, 4010000) + missed($standby, 6000001, 6010000), 0,
	'the standby finds the prepared transactions\' keys');

$standby->stop;
$primary->stop;
done_testing();
