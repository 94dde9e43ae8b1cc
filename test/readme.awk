# test/readme.awk: the README's doc test, as a pg_regress test.
#
#   awk -v mode=sql -f test/readme.awk README.md > sql/bloom_readme.sql
#   awk -v mode=out -f test/readme.awk README.md > expected/bloom_readme.out
#
# (the Makefile does both before `make installcheck`: REGRESS_PREP).
#
# The convention: every ```sql block of the README runs, in the order of
# the file, in one psql session in a fresh database (bloom_readme, dropped
# at the end), stopping at the first error (ON_ERROR_STOP).  What psql
# prints for a block must be what the ```text block right after it shows
# (blank lines between two results, as psql prints them), or nothing where
# no ```text block follows.  Both sides are compared with their runs of
# blanks made one and those at either end of a line removed (psql's output
# goes through sed, the README's through this script): the alignment of
# columns and psql's trailing blanks do not matter, anything else does.
# So a block whose results vary (timings, sizes) must not print them: wrap
# them in an expression that does not vary.  Each block's output begins
# with a line naming its line in the README.
#
# Plain POSIX awk (Debian's mawk too): no gawk extensions.

BEGIN {
	if (mode != "sql" && mode != "out") {
		print "readme.awk: mode must be sql or out" > "/dev/stderr"
		exit 2
	}
	state = "text"		# text, sql, after (an sql block just ended), out
	nblocks = 0
	header[1] = "-- generated from README.md by test/readme.awk: do not edit (see that file)"
	header[2] = "\\set ECHO none"
	for (i = 1; i <= 2; i++)
		print header[i]
	if (mode == "sql") {
		# query output and \qecho through the same normalisation as the
		# README's text below (normal())
		print "\\o | sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//'"
		print "\\set ON_ERROR_STOP 1"
		print "SET client_min_messages = warning;"
		print "SELECT current_database() AS readme_regress_db \\gset"
		print "DROP DATABASE IF EXISTS bloom_readme;"
		print "CREATE DATABASE bloom_readme TEMPLATE template0;"
		print "\\c bloom_readme"
		# what psql shows by default, not pg_regress's PGDATESTYLE
		print "SET datestyle = 'ISO, MDY';"
	}
}

function block_start(line) {
	nblocks++
	if (mode == "sql")
		print "\\qecho '---- README.md line " line "'"
	else
		print "---- README.md line " line
}

# a line as the sed of the preamble makes psql's
function normal(l) {
	gsub(/[ \t]+/, " ", l)
	sub(/^ /, "", l)
	sub(/ $/, "", l)
	return l
}

# the blank line psql prints after the last result of a block
function output_end() {
	if (shown)
		print ""
	shown = 0
}

{
	sub(/\r$/, "")
}

state == "after" && /^[ \t]*$/ {
	next
}

state == "after" && /^```text[ \t]*$/ {
	state = "out"
	next
}

state == "after" {
	state = "text"
}

state == "out" && /^```[ \t]*$/ {
	state = "text"
	if (mode == "out")
		output_end()
	next
}

state == "out" {
	if (mode == "out") {
		print normal($0)
		shown = 1
	}
	next
}

state == "sql" && /^```[ \t]*$/ {
	state = "after"
	next
}

state == "sql" {
	if (mode == "sql")
		print
	next
}

/^```sql[ \t]*$/ {
	state = "sql"
	block_start(NR + 1)
	next
}

END {
	if (state == "sql" || state == "out") {
		print "readme.awk: a code block of README.md is not closed" > "/dev/stderr"
		exit 1
	}
	if (nblocks == 0) {
		print "readme.awk: no ```sql block in README.md" > "/dev/stderr"
		exit 1
	}
	if (mode == "sql") {
		print "\\qecho '---- end of README.md'"
		print "\\o"
		print "\\c :readme_regress_db"
		print "SET client_min_messages = warning;"
		print "DROP DATABASE bloom_readme;"
	} else
		print "---- end of README.md"
}
