#
# test/t/021_index_corruption.pl: what a bloomfilter index answers when its
# pages are not what it wrote.
#
# 1. Bits lost (a page of a layer zeroed, its header intact): nothing in the
#    index can tell, and bloom_index_verify must count exactly the rows whose
#    key the index now misses.  An index of one bitmap page loses every key
#    (every row with a key, duplicates counted, NULLs not); an index of four
#    pages loses the keys of one, counted independently with the bloom type:
#    bloom_agg of the same column at the layer's size has the same bits (the
#    test checks that against the file), and the same page zeroed in it.
# 2. A metapage or bitmap page header that is not one the code wrote: each
#    check of the metapage (bf_check_meta in src/bfutils.c: format version,
#    layout and hash, layer count, operation in progress, capacity and rate,
#    key family and its enum labels, each layer's fields, a layer past the
#    end of the file or over another) and of a bitmap page (bf_page_is: layer id, first block,
#    block count, pd_lower, a page of zeros) is met by a field that only it
#    refuses; probes, inserts and bloom_index_verify each get an ERROR with
#    SQLSTATE XX002 (index_corrupted) and the detail naming what is wrong,
#    never an answer or a crash.  A metapage whose key family is another
#    than the column's is refused to probes and to inserts.  REINDEX repairs
#    every one of them.
# 3. A layer with every bit set (as one that took many times its capacity):
#    bloom_index_info reports a finite count of keys, a rate of 1 and advice
#    on what to do, never Infinity and a rate of 0.
#
# The pages are changed in the files with the server stopped, at the offsets
# of the structs in src/bfindex.h (host byte order, after the 24-byte page
# header); the test first reads every index's metapage at those offsets and
# checks it against bloom_index_info, so that a change of the structs fails
# here instead of making the test change the wrong bytes.
#
use strict;
use warnings;

use Digest::MD5 qw(md5_hex);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('corrupt');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');
my $blcksz = $node->safe_psql('postgres', 'SHOW block_size');

# Offsets (src/bfindex.h), from the start of the page: the page header is
# MAXALIGN(SizeOfPageHeaderData) = 24 bytes, then BfMetaPageData or
# BfPageHeader.
my $hdr = 24;
my %meta = (
	magic => 0, version => 4, layout => 8, hash => 9, op => 10,
	nlayers => 12, seed => 16, capacity => 24, rate => 32, family => 40,
	labels => 104, next_id => 120, replaced => 124, generation => 128,
	layers => 136);
my $family_len = 64;	# BLOOM_FAMILY_LEN
my $layer_size = 48;	# sizeof(BfLayer)
my %layer = (
	start => 0, npages => 4, k => 8, id => 12, nblocks => 16,
	capacity => 24, nkeys => 32, rate => 40);
my %page = (magic => 0, layer => 4, first_block => 8, nblocks => 16);
my $pd_lower = 12;		# offsetof(PageHeaderData, pd_lower)
my $bits_offset = 64;	# BF_BITS_OFFSET
my $blocks_per_page = ($blcksz - $bits_offset) / 64;
my $max_nblocks = 12500000;	# BLOOM_MAX_NBLOCKS

sub meta_off { return $hdr + $meta{ $_[0] }; }
sub layer_off { my ($i, $f) = @_; return $hdr + $meta{layers} + $i * $layer_size + $layer{$f}; }
sub page_off { return $hdr + $page{ $_[0] }; }

sub path_of
{
	my ($index) = @_;
	return $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$index')");
}

sub slurp_bytes
{
	my ($path) = @_;
	open my $fh, '<', $path or die "open $path: $!";
	binmode $fh;
	local $/;
	my $bytes = <$fh>;
	close $fh;
	return $bytes;
}

sub write_bytes
{
	my ($path, $bytes) = @_;
	open my $fh, '>', $path or die "open $path: $!";
	binmode $fh;
	print $fh $bytes or die "write $path: $!";
	close $fh or die "close $path: $!";
}

# The metapage of an index file's bytes, as a hash of its fields.
sub meta_of
{
	my ($bytes) = @_;
	my %m;
	@m{qw(magic version layout hash op nlayers)} =
	  unpack('L L C C S L', substr($bytes, meta_off('magic'), 16));
	$m{capacity} = unpack('Q', substr($bytes, meta_off('capacity'), 8));
	$m{rate} = unpack('d', substr($bytes, meta_off('rate'), 8));
	($m{family}) = unpack('Z*', substr($bytes, meta_off('family'), $family_len));
	@m{qw(labels_count labels_sum)} = unpack('L x4 Q', substr($bytes, meta_off('labels'), 16));
	@m{qw(next_id replaced)} = unpack('L L', substr($bytes, meta_off('next_id'), 8));
	for my $i (0 .. $m{nlayers} - 1)
	{
		my %l;
		@l{qw(start npages k id)} = unpack('L L L L', substr($bytes, layer_off($i, 'start'), 16));
		@l{qw(nblocks capacity)} = unpack('Q Q', substr($bytes, layer_off($i, 'nblocks'), 16));
		push @{ $m{layers} }, \%l;
	}
	return \%m;
}

# The bits of one layer, page after page.
sub layer_bits
{
	my ($bytes, $l) = @_;
	my $bits = '';
	for my $p (0 .. $l->{npages} - 1)
	{
		my $n = $l->{nblocks} - $p * $blocks_per_page;
		$n = $blocks_per_page if $n > $blocks_per_page;
		$bits .= substr($bytes, ($l->{start} + $p) * $blcksz + $bits_offset, $n * 64);
	}
	return $bits;
}

# Overwrite bytes at (block, offset in the block).
sub patch
{
	my ($bytes, $block, $off, $new) = @_;
	substr($$bytes, $block * $blcksz + $off, length($new)) = $new;
	return;
}

# The SQLSTATE, message and detail of the error $sql gives (checksum
# failures, if the cluster has checksums, are only warned of).
sub error_of
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET ignore_checksum_failure = on;\n\\set VERBOSITY verbose\n$sql");
	my ($state, $msg) = $err =~ /ERROR:\s+(\w{5}):\s+(.*)/;
	my ($detail) = $err =~ /DETAIL:\s+(.*)/;
	return "no error (exit $ret): $out" unless defined $state;
	return "$state: $msg" . (defined $detail ? " | $detail" : '');
}

#
# The indexes.  Every table turns autovacuum off: nothing but the test reads
# the corrupted indexes.
#
# lost bits: one page of 100 keys, 20 repeated, and NULLs; four pages of
# 20,000 keys (capacity 20,000 at 1%: the layer's 424 blocks, three pages
# of 127 and one of 43)
$node->safe_psql(
	'postgres', q{
CREATE TABLE lost1 (k int) WITH (autovacuum_enabled = off);
INSERT INTO lost1 SELECT g FROM generate_series(1, 100) g;
INSERT INTO lost1 SELECT g FROM generate_series(1, 20) g;
INSERT INTO lost1 SELECT NULL FROM generate_series(1, 5);
CREATE INDEX lost1_bf ON lost1 USING bloomfilter (k) WITH (capacity = 1000);
CREATE TABLE lost4 (k int) WITH (autovacuum_enabled = off);
INSERT INTO lost4 SELECT g FROM generate_series(1, 20000) g;
CREATE INDEX lost4_bf ON lost4 USING bloomfilter (k) WITH (capacity = 20000);
});

# Each case: a name, the kind of index it changes, the change (a sub given
# a reference to the file's bytes and its metapage, which returns the size
# to truncate or extend the file to, or nothing), and the error every reader
# must get.
# Kinds: "one", one layer of one bitmap page (capacity 1,000); "pages", one
# layer of 17 pages (capacity 100,000); "layers", four layers of one page
# (capacity 10, 100 keys).
my $corrupt = qr/^XX002: bloomfilter index "\w+" is corrupted/;
sub meta_says { my ($what) = @_; return qr/$corrupt \| The metapage has \Q$what\E\.$/; }
sub page_says
{
	my ($block, $p, $id) = @_;
	return qr/$corrupt \| Bitmap page $block is not page $p of layer $id\.$/;
}

sub set_meta
{
	my ($field, $fmt, $value) = @_;
	return sub { my ($b) = @_; patch($b, 0, meta_off($field), pack($fmt, $value)); };
}

sub set_layer
{
	my ($i, $field, $fmt, $value) = @_;
	return sub { my ($b) = @_; patch($b, 0, layer_off($i, $field), pack($fmt, $value)); };
}

my @cases = (
	[ 'format version 1', 'one', set_meta('version', 'L', 1),
		qr/^XX002: bloomfilter index "\w+" has format version 1, not 2$/ ],
	[ 'unknown layout', 'one', set_meta('layout', 'C', 2),
		meta_says('an unknown layout or hash scheme') ],
	[ 'unknown hash', 'one', set_meta('hash', 'C', 2),
		meta_says('an unknown layout or hash scheme') ],
	[ '33 layers', 'one', set_meta('nlayers', 'L', 33), meta_says('too many layers') ],
	[ 'unknown operation', 'layers',
		sub {
			my ($b) = @_;
			set_meta('op', 'S', 3)->($b);
			set_meta('replaced', 'L', 1)->($b);
		},
		meta_says('an invalid operation in progress') ],
	[ 'layers replaced with no operation', 'one',
		set_meta('replaced', 'L', 1), meta_says('an invalid operation in progress') ],
	[ 'compaction replacing no layer', 'one', set_meta('op', 'S', 1),
		meta_says('an invalid operation in progress') ],
	[ 'compaction replacing every layer', 'one',
		sub {
			my ($b) = @_;
			set_meta('op', 'S', 1)->($b);
			set_meta('replaced', 'L', 1)->($b);
		},
		meta_says('an invalid operation in progress') ],
	[ 'more layers replaced than there are', 'layers',
		sub {
			my ($b) = @_;
			set_meta('op', 'S', 1)->($b);
			set_meta('replaced', 'L', 5)->($b);
		},
		meta_says('an invalid operation in progress') ],
	[ 'rate 0', 'one', set_meta('rate', 'd', 0), meta_says('an invalid capacity or rate') ],
	[ 'rate 1.5', 'one', set_meta('rate', 'd', 1.5), meta_says('an invalid capacity or rate') ],
	[ 'capacity 0', 'one', set_meta('capacity', 'Q', 0),
		meta_says('an invalid capacity or rate') ],
	[ 'unterminated family', 'one', set_meta('family', "a$family_len", 'x' x $family_len),
		meta_says('an unterminated key family') ],
	[ 'enum labels for an integer family', 'one', set_meta('labels', 'L', 3),
		meta_says('enum labels for a key family of no enum') ],
	[ 'layer at block 0', 'one', set_layer(0, 'start', 'L', 0), meta_says('an invalid layer') ],
	[ 'layer with k 0', 'one', set_layer(0, 'k', 'L', 0), meta_says('an invalid layer') ],
	[ 'layer with k 33', 'one', set_layer(0, 'k', 'L', 33), meta_says('an invalid layer') ],
	[ 'layer of no block', 'one',
		sub {
			my ($b) = @_;
			set_layer(0, 'nblocks', 'Q', 0)->($b);
			set_layer(0, 'npages', 'L', 0)->($b);
		},
		meta_says('an invalid layer') ],
	# larger than the largest filter, its pages in the file (a sparse file
	# of 800 MB: its pages read as zeros and take no room)
	[ 'layer larger than a filter', 'one',
		sub {
			my ($b, $m) = @_;
			my $n = $max_nblocks + 1;
			my $npages = int(($n + $blocks_per_page - 1) / $blocks_per_page);
			set_layer(0, 'nblocks', 'Q', $n)->($b);
			set_layer(0, 'npages', 'L', $npages)->($b);
			return ($m->{layers}[0]{start} + $npages) * $blcksz;
		},
		meta_says('an invalid layer') ],
	[ 'layer of too few pages', 'pages',
		sub {
			my ($b, $m) = @_;
			set_layer(0, 'npages', 'L', $m->{layers}[0]{npages} - 1)->($b);
		},
		meta_says('an invalid layer') ],
	[ 'layer past the end of the file', 'pages',
		sub { my ($b) = @_; return length($$b) - $blcksz; },
		meta_says('an invalid layer') ],
	[ 'layer id not below next_id', 'one',
		sub {
			my ($b, $m) = @_;
			set_meta('next_id', 'L', $m->{layers}[0]{id})->($b);
		},
		meta_says('an invalid layer') ],
	[ 'layers over each other', 'layers',
		sub {
			my ($b, $m) = @_;
			set_layer(1, 'start', 'L', $m->{layers}[0]{start})->($b);
		},
		meta_says('overlapping layers') ],
	[ 'two layers of one id', 'layers',
		sub {
			my ($b, $m) = @_;
			set_layer(1, 'id', 'L', $m->{layers}[0]{id})->($b);
		},
		meta_says('overlapping layers') ],
	[ 'bitmap page of another layer', 'one',
		sub { my ($b) = @_; patch($b, 1, page_off('layer'), pack('L', 99)); },
		page_says(1, 0, 1) ],
	[ 'bitmap page at another first block', 'one',
		sub { my ($b) = @_; patch($b, 1, page_off('first_block'), pack('Q', 5)); },
		page_says(1, 0, 1) ],
	[ 'bitmap page of one block less', 'one',
		sub {
			my ($b, $m) = @_;
			patch($b, 1, page_off('nblocks'), pack('L', $m->{layers}[0]{nblocks} - 1));
		},
		page_says(1, 0, 1) ],
	[ 'bitmap page of no block', 'one',
		sub { my ($b) = @_; patch($b, 1, page_off('nblocks'), pack('L', 0)); },
		page_says(1, 0, 1) ],
	[ 'bitmap page with pd_lower short of the end', 'one',
		sub { my ($b) = @_; patch($b, 1, $pd_lower, pack('S', $blcksz - 64)); },
		page_says(1, 0, 1) ],
	[ 'bitmap page of zeros', 'one',
		sub { my ($b) = @_; patch($b, 1, 0, "\0" x $blcksz); },
		page_says(1, 0, 1) ],
	[ 'third page saying it is the first', 'pages',
		sub { my ($b) = @_; patch($b, 3, page_off('first_block'), pack('Q', 0)); },
		page_says(3, 2, 1) ],);

my %capacity = (one => 1000, pages => 100000, layers => 10);
my $setup = '';
for my $i (0 .. $#cases)
{
	my $kind = $cases[$i][1];
	$setup .= qq{
CREATE TABLE c$i (k int) WITH (autovacuum_enabled = off);
INSERT INTO c$i SELECT g FROM generate_series(1, 100) g;
CREATE INDEX c${i}_bf ON c$i USING bloomfilter (k) WITH (capacity = $capacity{$kind});
};
}
# a key family another than the column's
$setup .= q{
CREATE TABLE fam (k int) WITH (autovacuum_enabled = off);
INSERT INTO fam SELECT g FROM generate_series(1, 100) g;
CREATE INDEX fam_bf ON fam USING bloomfilter (k) WITH (capacity = 1000);
CREATE TABLE sat (k int) WITH (autovacuum_enabled = off);
INSERT INTO sat SELECT g FROM generate_series(1, 100) g;
CREATE INDEX sat_bf ON sat USING bloomfilter (k) WITH (capacity = 1000);
};
$node->safe_psql('postgres', $setup);

my %info;
for my $index ('lost1_bf', 'lost4_bf', 'fam_bf', 'sat_bf', map { "c${_}_bf" } 0 .. $#cases)
{
	$info{$index} = $node->safe_psql('postgres',
		"SELECT layers || ' ' || capacity FROM bloom_index_info('$index')");
	$info{$index} .= ' ' . path_of($index);
}
$node->stop;

# The offsets above against what bloom_index_info says of each index.
for my $index (sort keys %info)
{
	my ($layers, $capacity, $path) = split / /, $info{$index};
	my $bytes = slurp_bytes($path);
	my $m = meta_of($bytes);
	my $end = 1;
	$end = $_->{start} + $_->{npages} for @{ $m->{layers} };
	if (   $m->{magic} != 0x42465831
		|| $m->{version} != 2
		|| $m->{nlayers} != $layers
		|| $m->{capacity} != $capacity
		|| $m->{family} ne 'integer'
		|| $m->{labels_count} != 0
		|| $m->{labels_sum} != 0
		|| $m->{layers}[0]{capacity} != $capacity
		|| $m->{layers}[-1]{id} != $m->{next_id} - 1
		|| length($bytes) != $end * $blcksz)
	{
		BAIL_OUT("the offsets of this test do not match src/bfindex.h ($index)");
	}
	$info{$index} = { path => $path, bytes => $bytes, meta => $m };
}
my %shape;
for my $i (0 .. $#cases)
{
	my $m = $info{"c${i}_bf"}{meta};
	$shape{ $cases[$i][1] } = "$m->{nlayers} layers, $m->{layers}[0]{npages} pages";
}
is( join('; ', map { "$_: $shape{$_}" } sort keys %shape),
	'layers: 4 layers, 1 pages; one: 1 layers, 1 pages; pages: 1 layers, 17 pages',
	'the three kinds of index: one page, one layer of 17 pages, four layers');

#
# 1. Lost bits
#
my $lost1 = $info{lost1_bf};
my $bits1 = $lost1->{meta}{layers}[0];
patch(\$lost1->{bytes}, $bits1->{start}, $bits_offset,
	"\0" x ($blcksz - $bits_offset));
write_bytes($lost1->{path}, $lost1->{bytes});

my $lost4 = $info{lost4_bf};
my $bits4 = $lost4->{meta}{layers}[0];
my $lost4_md5 = md5_hex(layer_bits($lost4->{bytes}, $bits4));
my $page = 1;	# the layer's second page, 127 blocks
patch(\$lost4->{bytes}, $bits4->{start} + $page, $bits_offset,
	"\0" x ($blocks_per_page * 64));
write_bytes($lost4->{path}, $lost4->{bytes});

#
# 2. Corrupted pages
#
for my $i (0 .. $#cases)
{
	my $c = $info{"c${i}_bf"};
	my $size = $cases[$i][2]->(\$c->{bytes}, $c->{meta});
	write_bytes($c->{path}, $c->{bytes});
	# a change that returns a size: the file truncated or extended to it
	truncate($c->{path}, $size) or die "truncate: $!" if defined $size;
}
my $fam = $info{fam_bf};
patch(\$fam->{bytes}, 0, meta_off('family'), pack("a$family_len", 'text'));
write_bytes($fam->{path}, $fam->{bytes});
# a layer with every bit set, as one that took many times its capacity
my $sat = $info{sat_bf};
my $satl = $sat->{meta}{layers}[0];
patch(\$sat->{bytes}, $satl->{start}, $bits_offset, "\xff" x ($satl->{nblocks} * 64));
write_bytes($sat->{path}, $sat->{bytes});

$node->start;

#
# 1. bloom_index_verify counts the rows the index misses, exactly
#
is( $node->safe_psql('postgres',
		q{SET ignore_checksum_failure = on; SELECT bloom_index_verify('lost1_bf')}),
	'120', 'one page of bits lost: all 120 rows with a key are missing (100 keys, 20 repeated)');
is( $node->safe_psql('postgres',
		q{SET ignore_checksum_failure = on;
SELECT count(*) FROM lost1 WHERE k IS NOT NULL AND NOT bloom_index_contains('lost1_bf', k)}),
	'120', 'and every probe of them answers false');

# the bloom type at the layer's size has the bits the index had
my $size = $node->safe_psql('postgres', q{
SELECT nblocks || ' ' || nhashes
FROM bloom_info((SELECT bloom_agg(k, 20000, 0.01 * 0.92 * 0.75) FROM lost4))});
is($size, "$bits4->{nblocks} $bits4->{k}",
	'bloom_agg at the first layer\'s rate has the layer\'s blocks and k');
is( $node->safe_psql('postgres', q{
SELECT md5(substr(bloom_agg(k, 20000, 0.01 * 0.92 * 0.75)::bytea, 125)) FROM lost4}),
	$lost4_md5, 'and the bits the index had in its file');
# the keys whose block lies in the zeroed page: not found in the bloom value
# with those blocks zeroed
my $start = 125 + $page * $blocks_per_page * 64;
my $len = $blocks_per_page * 64;
my $expected = $node->safe_psql(
	'postgres', qq{
SELECT count(*) FILTER (WHERE NOT bloom_contains(b, k))
FROM lost4,
	 (SELECT overlay(bloom_agg(k, 20000, 0.01 * 0.92 * 0.75)::bytea
					 PLACING decode(repeat('00', $len), 'hex') FROM $start FOR $len)::bloom AS b
	  FROM lost4) s});
cmp_ok($expected, '>', 20000 / 6,
	"the keys in 127 of the layer's $bits4->{nblocks} blocks: $expected");
cmp_ok($expected, '<', 20000 / 3, 'not more');
is( $node->safe_psql('postgres',
		q{SET ignore_checksum_failure = on; SELECT bloom_index_verify('lost4_bf')}),
	$expected, "one page of four lost: bloom_index_verify counts those $expected rows");
is( $node->safe_psql('postgres',
		q{SET ignore_checksum_failure = on;
SELECT count(*) FROM lost4 WHERE NOT bloom_index_contains('lost4_bf', k)}),
	$expected, 'and probes miss those keys');

#
# 2. Every check refuses, to probes, inserts and bloom_index_verify
#
for my $i (0 .. $#cases)
{
	my ($name, $kind, undef, $want) = @{ $cases[$i] };
	like(error_of(qq{SELECT count(*) FROM generate_series(1, 5000) g WHERE bloom_index_contains('c${i}_bf', g)}),
		$want, "$name: probes get an error");
	like(error_of(qq{INSERT INTO c$i SELECT g FROM generate_series(101, 5100) g}),
		$want, "$name: inserts get an error");
	like(error_of(qq{SELECT bloom_index_verify('c${i}_bf')}),
		$want, "$name: bloom_index_verify gets an error");
}
like(error_of(q{SELECT bloom_index_contains('fam_bf', 1)}),
	qr/^42804: bloom filter key of type integer does not match the filter's key family \| The filter holds keys of family "text"; the key is of family "integer"\.$/,
	'another key family: probes are refused');
like(error_of(q{INSERT INTO fam VALUES (1000)}),
	qr/^42804: bloomfilter index "fam_bf" holds keys of family "text", not "integer" \| Its keys were hashed by another PostgreSQL version or platform\.$/,
	'another key family: inserts are refused');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

# a saturated layer: bloom_index_info tells the truth (a rate of 1, a finite
# count of keys at least the layer's capacity), and the advice says what to do
is( $node->safe_psql('postgres',
		q{SET ignore_checksum_failure = on;
		SELECT estimated_keys < 'Infinity' AND estimated_keys >= 1000, expected_rate,
		advice LIKE 'Its bits answer "maybe" for 1 of absent keys, above its false_positive_rate of 0.01:%VACUUM compacts it%REINDEX.'
		FROM bloom_index_info('sat_bf')}),
	't|1|t',
	'a saturated layer: finite estimated keys, an expected rate of 1, advice');
is( $node->safe_psql('postgres',
		q{SET ignore_checksum_failure = on;
		SELECT count(*) FROM generate_series(-1000, -1) g WHERE bloom_index_contains('sat_bf', g)}),
	'1000', 'and every probe of it answers "maybe"');

# REINDEX repairs them all
my $reindex = join '', map { "REINDEX INDEX c${_}_bf;\n" } 0 .. $#cases;
$node->safe_psql('postgres',
	"SET ignore_checksum_failure = on;\n$reindex REINDEX INDEX fam_bf; REINDEX INDEX sat_bf; REINDEX INDEX lost1_bf; REINDEX INDEX lost4_bf;");
is( $node->safe_psql(
		'postgres',
		'SELECT '
		  . join(' + ',
			map { "bloom_index_verify('$_')" }
			  ('lost1_bf', 'lost4_bf', 'fam_bf', 'sat_bf', map { "c${_}_bf" } 0 .. $#cases))),
	'0',
	'after REINDEX every index verifies 0');

$node->stop;
done_testing();
