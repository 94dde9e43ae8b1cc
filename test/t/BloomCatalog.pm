
# Copyright (c) 2026, the bloomfilter developers

=pod

=head1 NAME

BloomCatalog - helpers shared by the bloomfilter TAP tests

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use BloomCatalog;

  my $dump = BloomCatalog::catalog_dump($node, 'postgres');
  my @problems = BloomCatalog::lint_script('sql/bloomfilter--1.0.sql');
  my $diff = BloomCatalog::diff_lines($expected, $got);

=head1 DESCRIPTION

catalog_dump describes every member of the bloomfilter extension in one
database, one sorted line per fact, with nothing in it that differs between
two databases that hold the same extension objects (no OIDs): functions with
their signatures, labels, C symbols and comments, aggregates with their
support functions and flags, types, operators, operator classes and families,
casts.  Two databases are alike when their dumps are equal; upgrade tests
compare a walked install with a fresh one that way.

lint_script checks an extension script for the hygiene rules in DEVELOPER.md.

=cut

package BloomCatalog;

use strict;
use warnings;

# Run with search_path = pg_catalog, so that every object outside pg_catalog
# is printed schema-qualified.
our $CATALOG_QUERY = <<'EOQ';
WITH ext AS (
	SELECT oid, extname, extnamespace, extrelocatable, extconfig, extcondition
	FROM pg_extension WHERE extname = 'bloomfilter'
), m AS (
	SELECT d.classid, d.objid, d.objsubid
	FROM pg_depend d JOIN ext ON d.refobjid = ext.oid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
)
SELECT line FROM (
	SELECT format('extension %s: schema=%s relocatable=%s config=%s condition=%s',
				  extname, extnamespace::regnamespace, extrelocatable,
				  extconfig, extcondition) AS line
	FROM ext
UNION ALL
	SELECT format('member %s', pg_describe_object(classid, objid, objsubid))
	FROM m
UNION ALL
	SELECT format('function %s: kind=%s language=%s returns=%s%s volatility=%s strict=%s parallel=%s security_definer=%s leakproof=%s cost=%s rows=%s support=%s config=%s arguments=[%s] result=[%s] symbol=%s library=%s owner=%s acl=%s comment=%s',
				  p.oid::regprocedure, p.prokind, l.lanname,
				  CASE WHEN p.proretset THEN 'setof ' ELSE '' END, p.prorettype::regtype,
				  p.provolatile, p.proisstrict, p.proparallel, p.prosecdef,
				  p.proleakproof, p.procost, p.prorows, p.prosupport::regprocedure,
				  p.proconfig, pg_get_function_arguments(p.oid),
				  pg_get_function_result(p.oid), p.prosrc, p.probin,
				  pg_get_userbyid(p.proowner), p.proacl,
				  obj_description(p.oid, 'pg_proc'))
	FROM m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
	JOIN pg_language l ON l.oid = p.prolang
UNION ALL
	SELECT format('aggregate %s: kind=%s direct_args=%s transfn=%s finalfn=%s combinefn=%s serialfn=%s deserialfn=%s mtransfn=%s minvtransfn=%s mfinalfn=%s finalextra=%s mfinalextra=%s finalmodify=%s mfinalmodify=%s sortop=%s stype=%s sspace=%s mstype=%s msspace=%s initcond=%s minitcond=%s',
				  a.aggfnoid::regprocedure, a.aggkind, a.aggnumdirectargs,
				  a.aggtransfn::oid::regprocedure, a.aggfinalfn::oid::regprocedure,
				  a.aggcombinefn::oid::regprocedure, a.aggserialfn::oid::regprocedure,
				  a.aggdeserialfn::oid::regprocedure, a.aggmtransfn::oid::regprocedure,
				  a.aggminvtransfn::oid::regprocedure, a.aggmfinalfn::oid::regprocedure,
				  a.aggfinalextra, a.aggmfinalextra, a.aggfinalmodify,
				  a.aggmfinalmodify, a.aggsortop::regoperator,
				  a.aggtranstype::regtype, a.aggtransspace,
				  a.aggmtranstype::regtype, a.aggmtransspace,
				  a.agginitval, a.aggminitval)
	FROM m JOIN pg_aggregate a ON m.classid = 'pg_proc'::regclass AND a.aggfnoid = m.objid
UNION ALL
	SELECT format('type %s: type=%s category=%s preferred=%s length=%s byval=%s delimiter=%s input=%s output=%s receive=%s send=%s typmod_in=%s typmod_out=%s analyze=%s subscript=%s alignment=%s storage=%s notnull=%s basetype=%s element=%s array=%s default=%s collation=%s owner=%s acl=%s comment=%s',
				  t.oid::regtype, t.typtype, t.typcategory, t.typispreferred,
				  t.typlen, t.typbyval, t.typdelim, t.typinput::oid::regprocedure,
				  t.typoutput::oid::regprocedure, t.typreceive::oid::regprocedure,
				  t.typsend::oid::regprocedure, t.typmodin::oid::regprocedure,
				  t.typmodout::oid::regprocedure, t.typanalyze::oid::regprocedure,
				  t.typsubscript::oid::regprocedure, t.typalign, t.typstorage,
				  t.typnotnull, t.typbasetype::regtype, t.typelem::regtype,
				  t.typarray::regtype, t.typdefault, t.typcollation,
				  pg_get_userbyid(t.typowner), t.typacl,
				  obj_description(t.oid, 'pg_type'))
	FROM m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
UNION ALL
	SELECT format('operator %s: kind=%s result=%s function=%s commutator=%s negator=%s restrict=%s join=%s merges=%s hashes=%s owner=%s comment=%s',
				  o.oid::regoperator, o.oprkind, o.oprresult::regtype,
				  o.oprcode::oid::regprocedure, o.oprcom::regoperator,
				  o.oprnegate::regoperator, o.oprrest::oid::regprocedure,
				  o.oprjoin::oid::regprocedure, o.oprcanmerge, o.oprcanhash,
				  pg_get_userbyid(o.oprowner), obj_description(o.oid, 'pg_operator'))
	FROM m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
UNION ALL
	SELECT format('operator class %s.%s using %s: type=%s default=%s storage=%s family=%s owner=%s comment=%s',
				  c.opcnamespace::regnamespace, c.opcname, am.amname,
				  c.opcintype::regtype, c.opcdefault, c.opckeytype::regtype,
				  f.opfname, pg_get_userbyid(c.opcowner),
				  obj_description(c.oid, 'pg_opclass'))
	FROM m JOIN pg_opclass c ON m.classid = 'pg_opclass'::regclass AND c.oid = m.objid
	JOIN pg_am am ON am.oid = c.opcmethod
	JOIN pg_opfamily f ON f.oid = c.opcfamily
UNION ALL
	SELECT format('operator family %s.%s using %s: operator %s %s for (%s, %s) purpose=%s sortfamily=%s',
				  f.opfnamespace::regnamespace, f.opfname, am.amname,
				  ao.amopstrategy, ao.amopopr::regoperator, ao.amoplefttype::regtype,
				  ao.amoprighttype::regtype, ao.amoppurpose, ao.amopsortfamily)
	FROM pg_opfamily f JOIN pg_am am ON am.oid = f.opfmethod
	JOIN pg_amop ao ON ao.amopfamily = f.oid
	WHERE f.oid IN (SELECT objid FROM m WHERE classid = 'pg_opfamily'::regclass)
UNION ALL
	SELECT format('operator family %s.%s using %s: function %s %s for (%s, %s)',
				  f.opfnamespace::regnamespace, f.opfname, am.amname,
				  ap.amprocnum, ap.amproc::oid::regprocedure,
				  ap.amproclefttype::regtype, ap.amprocrighttype::regtype)
	FROM pg_opfamily f JOIN pg_am am ON am.oid = f.opfmethod
	JOIN pg_amproc ap ON ap.amprocfamily = f.oid
	WHERE f.oid IN (SELECT objid FROM m WHERE classid = 'pg_opfamily'::regclass)
UNION ALL
	SELECT format('cast (%s AS %s): function=%s context=%s method=%s comment=%s',
				  c.castsource::regtype, c.casttarget::regtype,
				  c.castfunc::regprocedure, c.castcontext, c.castmethod,
				  obj_description(c.oid, 'pg_cast'))
	FROM m JOIN pg_cast c ON m.classid = 'pg_cast'::regclass AND c.oid = m.objid
) AS dump
ORDER BY line COLLATE "C";
EOQ

=pod

=item catalog_dump($node, $dbname)

The extension's catalog in database $dbname, one fact per line, sorted.
Dies if the extension is not installed there.

=cut

sub catalog_dump
{
	my ($node, $dbname) = @_;
	my $dump = $node->safe_psql($dbname,
		"SET search_path = pg_catalog;\n$CATALOG_QUERY");

	die "bloomfilter is not installed in database \"$dbname\""
	  unless $dump =~ /^extension bloomfilter:/m;
	return $dump;
}

=pod

=item diff_lines($expected, $got)

The lines only in $expected (prefixed "- ") and only in $got ("+ "), or ''
when both hold the same lines.

=cut

sub diff_lines
{
	my ($expected, $got) = @_;
	my (%e, %g);

	$e{$_}++ for split /\n/, $expected;
	$g{$_}++ for split /\n/, $got;
	my @out;
	push @out, map { "- $_" } grep { ($e{$_} // 0) > ($g{$_} // 0) } sort keys %e;
	push @out, map { "+ $_" } grep { ($g{$_} // 0) > ($e{$_} // 0) } sort keys %g;
	return join("\n", @out);
}

# Split SQL text into statements, dropping comments; quoted literals,
# quoted identifiers and dollar-quoted bodies are kept whole.  psql
# backslash commands are returned as their own statements.
sub split_statements
{
	my ($sql) = @_;
	my @stmts;
	my $cur = '';

	pos($sql) = 0;
	while (pos($sql) < length $sql)
	{
		if ($sql =~ /\G--[^\n]*/gc)
		{
			# a line comment
		}
		elsif ($sql =~ m{\G/\*.*?(?:\*/|\z)}gcs)
		{
			$cur .= ' ';
		}
		elsif ($sql =~ /\G(\$[A-Za-z_0-9]*\$).*?(?:\1|\z)/gcs)
		{
			$cur .= $&;
		}
		elsif ($sql =~ /\G(?:'(?:[^']|'')*'|"(?:[^"]|"")*")/gc)
		{
			$cur .= $&;
		}
		elsif ($cur !~ /\S/ && $sql =~ /\G\\[^\n]*/gc)
		{
			push @stmts, $&;
			$cur = '';
		}
		elsif ($sql =~ /\G;/gc)
		{
			# a SQL-standard body ends at its END, not at its first ';'
			if ($cur =~ /\bBEGIN\s+ATOMIC\b/i && $cur !~ /\bEND\s*$/i)
			{
				$cur .= ';';
				next;
			}
			push @stmts, $cur if $cur =~ /\S/;
			$cur = '';
		}
		elsif ($sql =~ /\G[^-\/\$'";\\]+|\G./gcs)
		{
			$cur .= $&;
		}
	}
	push @stmts, $cur if $cur =~ /\S/;
	s/\s+/ /g, s/^ | $//g for @stmts;
	return @stmts;
}

=pod

=item lint_script($path)

The hygiene problems of one extension script, as a list of sentences (empty
when there are none).  The rules (see DEVELOPER.md):

=over

=item * the \echo ... \quit guard of its kind (CREATE EXTENSION for an
install script bloomfilter--V.sql, ALTER EXTENSION ... UPDATE TO 'B' for an
upgrade script bloomfilter--A--B.sql);

=item * no CREATE OR REPLACE in an install script (it could take over an
object someone else created first); an upgrade script may replace a function
the extension already owns;

=item * every CREATE FUNCTION states its LANGUAGE, its volatility
(IMMUTABLE, STABLE or VOLATILE) and PARALLEL SAFE, RESTRICTED or UNSAFE, and
none is SECURITY DEFINER;

=item * C functions name AS 'MODULE_PATHNAME', never a library path;

=item * a function in any other language either has a SQL-standard body
(BEGIN ATOMIC, bound at creation) or a SET search_path clause, so that a
hostile search_path at call time cannot redirect what it calls;

=item * every CREATE AGGREGATE states PARALLEL.

=back

=cut

sub lint_script
{
	my ($path) = @_;
	my @problems;
	my $name = $path;
	$name =~ s{.*/}{};

	open my $fh, '<', $path or return ("$name: cannot read: $!");
	local $/;
	my $sql = <$fh>;
	close $fh;

	my ($from, $to);
	if ($name =~ /^bloomfilter--(.+)\.sql$/)
	{
		my @v = split /--/, $1;
		return ("$name: not a bloomfilter extension script name")
		  if @v > 2 || grep { $_ eq '' } @v;
		($from, $to) = @v == 2 ? @v : (undef, $v[0]);
	}
	else
	{
		return ("$name: not a bloomfilter extension script name");
	}

	my $guard =
	  defined $from
	  ? qr/^\\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '\Q$to\E'" to load this file\. \\quit$/m
	  : qr/^\\echo Use "CREATE EXTENSION bloomfilter" to load this file\. \\quit$/m;
	push @problems, "$name: the \\echo ... \\quit guard is missing or wrong"
	  unless $sql =~ $guard;

	foreach my $stmt (split_statements($sql))
	{
		next if $stmt =~ /^\\/;
		my ($head) = $stmt =~ /^((?:\S+\s+){0,5}\S+)/;
		$head //= $stmt;

		if ($stmt =~ /^CREATE\s+OR\s+REPLACE\b/i && !defined $from)
		{
			push @problems, "$name: CREATE OR REPLACE in an install script: $head";
		}

		if ($stmt =~ /^CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([^\s(]+)/i)
		{
			my $fn = $1;
			# the labels come after the argument list and RETURNS; drop
			# dollar-quoted and single-quoted bodies before looking
			(my $labels = $stmt) =~ s/\$([A-Za-z_0-9]*)\$.*?\$\1\$/ /gs;
			$labels =~ s/'(?:[^']|'')*'/ /g;
			$labels =~ s/BEGIN\s+ATOMIC\b.*//is;
			my ($lang) = $labels =~ /\bLANGUAGE\s+"?(\w+)"?/i;

			push @problems, "$name: function $fn has no LANGUAGE"
			  unless defined $lang;
			push @problems,
			  "$name: function $fn does not state IMMUTABLE, STABLE or VOLATILE"
			  unless $labels =~ /\b(IMMUTABLE|STABLE|VOLATILE)\b/i;
			push @problems,
			  "$name: function $fn does not state PARALLEL SAFE, RESTRICTED or UNSAFE"
			  unless $labels =~ /\bPARALLEL\s+(SAFE|RESTRICTED|UNSAFE)\b/i;
			push @problems, "$name: function $fn is SECURITY DEFINER"
			  if $labels =~ /\bSECURITY\s+DEFINER\b/i;
			if (defined $lang && lc $lang eq 'c')
			{
				push @problems,
				  "$name: C function $fn does not use AS 'MODULE_PATHNAME'"
				  unless $stmt =~ /\bAS\s+'MODULE_PATHNAME'/i;
			}
			elsif (defined $lang)
			{
				push @problems,
				  "$name: $lang function $fn has neither BEGIN ATOMIC nor SET search_path"
				  unless $stmt =~ /\bBEGIN\s+ATOMIC\b/i
				  || $labels =~ /\bSET\s+search_path\b/i;
			}
		}

		if ($stmt =~ /^CREATE\s+(?:OR\s+REPLACE\s+)?AGGREGATE\s+([^\s(]+)/i)
		{
			my $agg = $1;
			push @problems, "$name: aggregate $agg does not state PARALLEL"
			  unless $stmt =~ /\bPARALLEL\s*=\s*(SAFE|RESTRICTED|UNSAFE)\b/i;
		}
	}
	return @problems;
}

1;
