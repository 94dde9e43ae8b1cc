#!/usr/bin/python3
#
# test/soak/soak.py: a randomized soak test of the bloomfilter index.
#
#   test/soak/soak.py [--seconds 60 | --steps N] [--seed N]
#                     [--pg-config PATH] [--keep-going] [--only S,..] [--skip S,..]
#
# Starts a primary and a streaming hot standby (hot_standby_feedback off, a
# small max_standby_streaming_delay) in a temporary directory, and runs a
# random mix of steps drawn from the seed against five tables, each with a
# bloomfilter index: writers (single-row and bulk INSERT, COPY, UPDATE of the
# key, DELETE, MERGE) in several sessions at once, transactions left open
# across VACUUMs, savepoints rolled back, two-phase commit, same-transaction
# DDL (REINDEX, ALTER COLUMN TYPE, TRUNCATE, SET UNLOGGED / LOGGED), enum
# labels added in transactions that commit and that roll back, manual VACUUM
# (parallel and not, FREEZE) beside an aggressive autovacuum, statement
# triggers whose probes run in parallel workers, and REPEATABLE READ readers
# on both servers that keep their snapshots across steps.  After every step
# it checks the index's promises (see README.md in this directory); on the
# first failure it prints the seed, the step, the operation and what failed,
# and exits 1 (with --keep-going it repairs the index, goes on, and lists
# every failure at the end).
#
# Needs Python 3 with psycopg2 (Debian: python3-psycopg2, for /usr/bin/python3)
# and the extension installed into the server that --pg-config names.  Run as
# root, it runs the servers as the postgres user (initdb refuses root).

import argparse
import collections
import io
import math
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

try:
	import psycopg2
	import psycopg2.extensions
except ImportError:
	sys.exit("soak.py: needs psycopg2: apt-get install python3-psycopg2, "
			 "and run it with /usr/bin/python3")

DEFAULT_PG_CONFIG = "/usr/lib/postgresql/15/bin/pg_config"

# The scenarios a step is drawn from, with their weights (--only / --skip
# take these names; "readers" are the REPEATABLE READ readers opened and
# closed between steps, "trigger" the parallel probes from statement
# triggers, "autovacuum" the aggressive autovacuum).
SCENARIOS = collections.OrderedDict([
	("write", 30),			# 1-4 concurrent writers, maybe a VACUUM and a prober beside them
	("vacuum", 12),			# manual VACUUM: plain, PARALLEL 2, FREEZE, ANALYZE
	("hold", 6),			# a bulk insert or a cursor left open across steps
	("open_vacuum", 5),		# bulk insert in an open transaction, VACUUM, commit / rollback, VACUUM
	("savepoint", 5),		# savepoints rolled back and released
	("twophase", 5),		# PREPARE TRANSACTION, COMMIT / ROLLBACK PREPARED, now or later
	("ddl", 8),				# inserts, then REINDEX / ALTER COLUMN TYPE / TRUNCATE / SET UNLOGGED|LOGGED
	("enum", 6),			# ALTER TYPE ... ADD VALUE with inserts / probes, commit or rollback
	("enum_rename", 1),		# the enum type or a label renamed: refusals, VACUUM goes on, REINDEX
	("maintenance", 2),		# CHECKPOINT, ANALYZE
	("short", 4),			# short connections inserting a few keys each, ANALYZE between
	("compact_race", 4),	# a long compaction of t_cmp with writers inserting all along
	("trickle", 2),			# t_fresh's layer past its capacity by keys counted one by one, the rate checked
	("horizon", 3),			# a standby snapshot that sees rows a compaction dropped (t_fresh)
])

# Every run begins with one step of each of these (then draws from the
# weights): each looks for a defect that the random mix finds too seldom
# for a short run (test/soak/README.md, "What the suite's run catches");
# --no-tour leaves them to the draw.
TOUR = [("compact_race", None), ("horizon", None), ("trickle", None), ("ddl", "alter_type"),
		("write", "trigger"), ("savepoint", "release")]
EXTRAS = ["readers", "trigger", "autovacuum"]

# SQLSTATEs
CANCEL_CONFLICT = "40001"	# serialization_failure: a recovery conflict on a standby
DEADLOCK = "40P01"
TRIGGER_MISS = "SOAK1"		# raised by the trigger below when a parallel probe misses


XLOG_BLCKSZ = 8192


def lsn_int(text):
	"""An LSN's text (X/Y) as a number."""
	hi, lo = text.split("/")
	return (int(hi, 16) << 32) | int(lo, 16)


class HarnessError(Exception):
	"""The run could not be set up (exit 2, not a failed check)."""


def log(msg=""):
	print(msg, flush=True)


# ---------------------------------------------------------------------------
# Failures

class Failure(Exception):
	"""An invariant that did not hold (or a command that should not fail)."""

	def __init__(self, check, detail, table=None, repair=True):
		super().__init__("%s: %s" % (check, detail))
		self.check = check
		self.detail = detail
		self.table = table
		self.repair = repair


def pgcode(e):
	return getattr(e, "pgcode", None)


def pgmessage(e):
	text = getattr(e, "pgerror", None) or str(e)
	return " ".join(text.strip().split())


# ---------------------------------------------------------------------------
# Statistics: the binomial bound of the false-positive check

def binom_threshold(n, p, alpha):
	"""The smallest x with P[Binomial(n, p) >= x] <= alpha."""
	lp, lq = math.log(p), math.log1p(-p)
	lnf = math.lgamma(n + 1)

	def pmf(k):
		return math.exp(lnf - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq)

	mean = n * p
	sd = math.sqrt(n * p * (1 - p))
	hi = min(n, int(mean + 25 * sd + 25))
	tail = 0.0
	for k in range(hi, -1, -1):
		tail += pmf(k)
		if tail > alpha:
			return k + 1
	return 0


# ---------------------------------------------------------------------------
# Sessions

class Session:
	"""One connection, autocommit (transactions are begun explicitly)."""

	def __init__(self, dsn, name):
		self.dsn = dsn
		self.name = name
		self.conn = None
		self.pid = None
		self.connect()

	def connect(self):
		if self.conn is not None:
			try:
				self.conn.close()
			except Exception:
				pass
		self.conn = psycopg2.connect(self.dsn, application_name="soak " + self.name)
		self.conn.autocommit = True
		self.pid = self.conn.get_backend_pid()

	def alive(self):
		return self.conn is not None and not self.conn.closed

	def q(self, sql, args=None):
		with self.conn.cursor() as cur:
			cur.execute(sql, args)
			return cur.fetchall() if cur.description else None

	def one(self, sql, args=None):
		rows = self.q(sql, args)
		return rows[0][0] if rows else None

	def copy(self, sql, data):
		with self.conn.cursor() as cur:
			cur.copy_expert(sql, io.StringIO(data))

	def reset(self):
		"""After an error: end any transaction, reconnect if need be."""
		try:
			if self.conn.closed:
				self.connect()
			else:
				self.q("ROLLBACK")
				self.q("RESET ALL")
		except Exception:
			try:
				self.connect()
			except Exception:
				pass

	def close(self):
		try:
			self.conn.close()
		except Exception:
			pass


# ---------------------------------------------------------------------------
# Servers

class Cluster:
	"""A primary and a streaming standby in a temporary directory."""

	def __init__(self, args, tmp):
		self.args = args
		self.tmp = tmp
		cfg = args.pg_config
		self.bindir = subprocess.check_output([cfg, "--bindir"], text=True).strip()
		sharedir = subprocess.check_output([cfg, "--sharedir"], text=True).strip()
		version = subprocess.check_output([cfg, "--version"], text=True).strip()
		m = re.match(r"PostgreSQL (\d+)", version)
		self.major = int(m.group(1)) if m else 0
		self.version = version
		if not os.path.exists(os.path.join(sharedir, "extension", "bloomfilter.control")):
			raise SystemExit("soak.py: the extension is not installed into %s (%s): "
							 "run make PG_CONFIG=%s install first" % (version, sharedir, cfg))
		# the module each backend loads when it first needs it: a make
		# install into the same tree during a run mixes two builds
		pkglibdir = subprocess.check_output([cfg, "--pkglibdir"], text=True).strip()
		self.module = os.path.join(pkglibdir, "bloomfilter.so")
		self.module_mtime = os.path.getmtime(self.module) if os.path.exists(self.module) else None
		self.as_postgres = os.geteuid() == 0
		self.ports = pick_ports(2)
		self.primary = os.path.join(tmp, "primary")
		self.standby = os.path.join(tmp, "standby")
		self.primary_log = os.path.join(tmp, "primary.log")
		self.standby_log = os.path.join(tmp, "standby.log")
		self.started = []

	def run(self, argv, check=True):
		if self.as_postgres:
			argv = ["runuser", "-u", "postgres", "--"] + argv
		p = subprocess.run(argv, cwd=self.tmp, stdout=subprocess.PIPE,
						   stderr=subprocess.STDOUT, text=True)
		if check and p.returncode != 0:
			raise SystemExit("soak.py: %s failed:\n%s" % (" ".join(argv), p.stdout))
		return p

	def bin(self, name):
		return os.path.join(self.bindir, name)

	def dsn(self, which):
		port = self.ports[0] if which == "primary" else self.ports[1]
		# statement_timeout: a statement that runs this long counts as hung
		return ("host=%s port=%d user=postgres dbname=postgres options='-c statement_timeout=%ds'"
				% (self.tmp, port, self.args.statement_timeout))

	def conf(self, datadir, text):
		path = os.path.join(datadir, "postgresql.conf")
		if self.as_postgres:
			p = subprocess.run(["runuser", "-u", "postgres", "--", "tee", "-a", path],
							   input=text, stdout=subprocess.DEVNULL, text=True)
			if p.returncode != 0:
				raise SystemExit("soak.py: cannot write %s" % path)
		else:
			with open(path, "a") as f:
				f.write(text)

	def start(self):
		a = self.args
		self.run([self.bin("initdb"), "-D", self.primary, "-A", "trust", "-U", "postgres",
				  "-E", "UTF8", "--locale=C", "-N"])
		autovacuum = "off" if "autovacuum" in a.skip_set else "on"
		self.conf(self.primary, """
# test/soak/soak.py
port = %d
listen_addresses = ''
unix_socket_directories = '%s'
max_connections = 50
shared_buffers = 64MB
fsync = off
synchronous_commit = off
wal_level = replica
max_wal_senders = 4
max_replication_slots = 4
max_prepared_transactions = 10
max_wal_size = 1GB
max_worker_processes = 10
max_parallel_workers = 6
max_parallel_workers_per_gather = 2
max_parallel_maintenance_workers = 2
deadlock_timeout = 100ms
lc_messages = 'C'
log_line_prefix = '%%m [%%p] <%%b> %%e '
log_min_messages = warning
log_autovacuum_min_duration = 0
log_recovery_conflict_waits = on
autovacuum = %s
autovacuum_naptime = 1s
autovacuum_max_workers = 2
autovacuum_vacuum_cost_delay = 0
autovacuum_vacuum_threshold = 200
autovacuum_vacuum_scale_factor = 0
autovacuum_vacuum_insert_threshold = 500
autovacuum_vacuum_insert_scale_factor = 0
autovacuum_analyze_threshold = 200
autovacuum_analyze_scale_factor = 0
hot_standby = on
hot_standby_feedback = off
max_standby_streaming_delay = %s
wal_receiver_status_interval = 1s
%s
""" % (self.ports[0], self.tmp, autovacuum, a.standby_delay,
			"wal_consistency_checking = 'generic'" if a.wal_consistency else ""))
		# (listed before its start: a start that fails or times out may
		# still leave a server running, which stop() then ends)
		self.started.append(self.primary)
		self.pg_ctl(self.primary, self.primary_log, "start")
		self.run([self.bin("pg_basebackup"), "-h", self.tmp, "-p", str(self.ports[0]),
				  "-U", "postgres", "-D", self.standby, "-R", "-X", "stream",
				  "--checkpoint=fast", "-C", "-S", "soak_standby"])
		self.conf(self.standby, "\nport = %d\n" % self.ports[1])
		self.started.append(self.standby)
		self.pg_ctl(self.standby, self.standby_log, "start")

	def pg_ctl(self, datadir, logfile, action):
		argv = [self.bin("pg_ctl"), "-D", datadir, "-w", "-t", "120"]
		if action == "start":
			argv += ["-l", logfile, "start"]
		else:
			argv += ["-m", action, "stop"]
		return self.run(argv, check=(action == "start"))

	def stop(self):
		"""Stop every server started (a fast stop, else an immediate one)."""
		for d in reversed(self.started):
			if not os.path.exists(os.path.join(d, "postmaster.pid")):
				continue
			if self.pg_ctl(d, None, "fast").returncode != 0:
				self.pg_ctl(d, None, "immediate")
		self.started = []


def pick_ports(n):
	"""Free TCP port numbers outside 5870-5899 (the servers listen on a
	Unix socket only, but the number names it, and a port in use by another
	server could one day be used by it with TCP)."""
	ports = []
	rng = random.SystemRandom()
	while len(ports) < n:
		p = rng.randrange(20000, 40000)
		if p in ports:
			continue
		s = socket.socket()
		try:
			s.bind(("127.0.0.1", p))
		except OSError:
			continue
		finally:
			s.close()
		ports.append(p)
	return ports


class LogWatch:
	"""New lines of a server log, parsed by the log_line_prefix above."""

	LINE = re.compile(r"^\S+ \S+ \S+ \[(\d+)\] <([^>]*)> (\w{5}) ([A-Z]+\d?):\s+(.*)$")

	def __init__(self, path, server):
		self.path = path
		self.server = server
		self.pos = 0
		self.partial = ""

	def lines(self):
		try:
			with open(self.path, "r", errors="replace") as f:
				f.seek(self.pos)
				data = f.read()
				self.pos = f.tell()
		except FileNotFoundError:
			return []
		data = self.partial + data
		parts = data.split("\n")
		self.partial = parts.pop()
		out = []
		for line in parts:
			m = self.LINE.match(line)
			if m:
				out.append((m.group(2), m.group(3), m.group(4), m.group(5), line))
			else:
				out.append((None, None, None, line, line))
		return out


# ---------------------------------------------------------------------------
# Tables

class Table:
	def __init__(self, name, kind, idx, rate, max_rows, partitioned=False,
				 trigger=False, other_indexes=0, own=False):
		self.name = name
		self.own = own				# written only by its own scenarios (compact_race, trickle, horizon)
		self.kind = kind			# int, text, enum
		self.idx = idx
		self.rate = rate
		self.max_rows = max_rows
		self.partitioned = partitioned
		self.trigger = trigger
		self.other_indexes = other_indexes
		self.leaves = [idx]			# leaf indexes (the partitions' for a partitioned one)
		self.relids = [name]		# the tables VACUUM works on
		self.varchar = 24			# t_text's column: varchar(24) <-> varchar(32)
		self.unlogged = False
		self.rows = 0
		self.layers = {}			# leaf index -> layers at the last check
		self.next_key = 1
		self.lock = threading.Lock()

	def alloc(self, n):
		with self.lock:
			lo = self.next_key
			self.next_key += n
			return lo


# ---------------------------------------------------------------------------
# Things kept across steps

class Held:
	"""A transaction left open across steps: a bulk insert, or a cursor."""

	def __init__(self, kind, table, sess, until, commit, desc):
		self.kind = kind
		self.table = table
		self.sess = sess
		self.until = until
		self.commit = commit
		self.desc = desc


class Prepared:
	def __init__(self, gid, table, until, commit):
		self.gid = gid
		self.table = table
		self.until = until
		self.commit = commit


class Reader:
	"""A REPEATABLE READ transaction that keeps its snapshot across steps."""

	def __init__(self, server, sess, tables, opened, until, parallel):
		self.server = server
		self.sess = sess
		self.tables = tables
		self.opened = opened
		self.until = until
		self.parallel = parallel


class Op:
	"""One operation of a step, run in a session of its own."""

	def __init__(self, desc, cat, fn, table=None):
		self.desc = desc
		self.cat = cat				# write, maintenance, read, check
		self.fn = fn
		self.table = table


# ---------------------------------------------------------------------------
# The soak test

class Soak:
	def __init__(self, args, cluster):
		self.args = args
		self.cl = cluster
		self.seed = args.seed
		self.step = 0
		self.stats = collections.Counter()
		self.rate_max = {}			# leaf index -> (measured / requested) max
		self.failures = []
		self.signatures = collections.Counter()
		self.first_step = {}
		self.to_repair = []
		self.rng = random.Random(args.seed)
		self.current = ""			# the step's description
		self.doing = ""				# the check query being run
		self.autovacuumed = {}		# table -> the last step in which an autovacuum of it ended
		self.held = []
		self.prepared = []
		self.readers = []
		self.gid = 0
		self.enum_type = "mood"
		self.labels = ["l%d" % i for i in range(8)]
		self.next_label = 8
		self.reuse_label = None
		self.enum_refusal_lsn = None	# the standby may refuse t_enum until it replays this
		self.logs = [LogWatch(cluster.primary_log, "primary"),
					 LogWatch(cluster.standby_log, "standby")]
		self.merge = cluster.major >= 15
		self.parallel_guc = "debug_parallel_query" if cluster.major >= 16 else "force_parallel_mode"

	# -- connections ---------------------------------------------------------

	def connect_all(self):
		dp, ds = self.cl.dsn("primary"), self.cl.dsn("standby")
		self.dsn = {"primary": dp, "standby": ds}
		self.pool = [Session(dp, "op%d" % i) for i in range(7)]
		self.chk = Session(dp, "check")
		self.chk_s = Session(ds, "standby check")

	def session(self, server, name):
		return Session(self.dsn[server], name)

	# -- setup ---------------------------------------------------------------

	def setup(self):
		c = self.chk
		c.q("CREATE EXTENSION bloomfilter")
		c.q("CREATE TYPE mood AS ENUM (%s)" % ", ".join("'%s'" % l for l in self.labels))
		pg = self.parallel_guc
		# The trigger's query runs its probes in parallel workers (the
		# leader does not take part; a worker with a stale view of the index
		# would miss the keys its statement inserted) and raises SOAK1 with
		# the keys it missed.  The driver turns it on per statement.
		c.q("""
CREATE FUNCTION soak_trigger_probe() RETURNS trigger LANGUAGE plpgsql
SET parallel_setup_cost = 0 SET parallel_tuple_cost = 0
SET min_parallel_table_scan_size = 0 SET min_parallel_index_scan_size = 0
SET max_parallel_workers_per_gather = 2 SET parallel_leader_participation = off
SET %s = on
AS $$
DECLARE
	n bigint;
	ks text;
BEGIN
	IF coalesce(current_setting('soak.trigger_check', true), '') <> 'on' THEN
		RETURN NULL;
	END IF;
	EXECUTE format('SELECT count(*), string_agg(k::text, '' '') FROM (SELECT k FROM %%I
		WHERE batch = $1 AND k IS NOT NULL AND NOT bloom_index_contains(%%L::regclass, k)) s',
		TG_TABLE_NAME, TG_ARGV[0]) INTO n, ks USING txid_current();
	IF n > 0 THEN
		RAISE EXCEPTION USING ERRCODE = 'SOAK1',
			MESSAGE = format('%%s of the keys its transaction wrote into %%s not found by parallel probes of %%s in its statement trigger',
							 n, TG_TABLE_NAME, TG_ARGV[0]),
			DETAIL = 'keys: ' || left(ks, 200);
	END IF;
	RETURN NULL;
END $$""" % pg)
		t = collections.OrderedDict()
		# small capacity, three other indexes (parallel VACUUM), the trigger
		t["t_int"] = Table("t_int", "int", "t_int_bf", 0.02, 25000, trigger=True, other_indexes=3)
		# default options (capacity from the rows at build, rate 1 %), no other index
		t["t_big"] = Table("t_big", "int", "t_big_bf", 0.01, 40000)
		# text (varchar), two other indexes, the trigger
		t["t_text"] = Table("t_text", "text", "t_text_bf", 0.05, 25000, trigger=True, other_indexes=2)
		# an enum key, a tiny capacity: every few labels make a layer
		t["t_enum"] = Table("t_enum", "enum", "t_enum_bf", 0.01, 6000)
		# partitioned by hash of id into three, the trigger
		t["t_part"] = Table("t_part", "int", "t_part_bf", 0.02, 30000, partitioned=True, trigger=True)
		# the scenarios' own: t_cmp large (a compaction that takes long),
		# t_fresh emptied by each step that uses it
		t["t_cmp"] = Table("t_cmp", "int", "t_cmp_bf", 0.02, 90000, own=True)
		t["t_fresh"] = Table("t_fresh", "int", "t_fresh_bf", 0.01, 10 ** 9, own=True)
		self.tables = t
		c.q("""
CREATE TABLE t_int (id bigserial, k bigint, batch bigint DEFAULT txid_current(), pad text);
CREATE INDEX t_int_bf ON t_int USING bloomfilter (k) WITH (capacity = 1000, false_positive_rate = 0.02);
CREATE INDEX t_int_id ON t_int (id);
CREATE INDEX t_int_batch ON t_int (batch);
CREATE INDEX t_int_k ON t_int (k);
CREATE TRIGGER soak_probe AFTER INSERT OR UPDATE ON t_int
	FOR EACH STATEMENT EXECUTE FUNCTION soak_trigger_probe('t_int_bf');

CREATE TABLE t_big (id bigserial, k bigint, batch bigint DEFAULT txid_current());
INSERT INTO t_big (k) SELECT g FROM generate_series(1, 20000) g;
CREATE INDEX t_big_bf ON t_big USING bloomfilter (k);

CREATE TABLE t_text (id bigserial, k varchar(24), batch bigint DEFAULT txid_current());
CREATE INDEX t_text_bf ON t_text USING bloomfilter (k) WITH (capacity = 2000, false_positive_rate = 0.05);
CREATE INDEX t_text_id ON t_text (id);
CREATE INDEX t_text_k ON t_text (k);
CREATE TRIGGER soak_probe AFTER INSERT OR UPDATE ON t_text
	FOR EACH STATEMENT EXECUTE FUNCTION soak_trigger_probe('t_text_bf');

CREATE TABLE t_enum (id bigserial, k mood, batch bigint DEFAULT txid_current());
CREATE INDEX t_enum_bf ON t_enum USING bloomfilter (k) WITH (capacity = 4);

CREATE TABLE t_cmp (id bigserial, k bigint, batch bigint DEFAULT txid_current())
	WITH (autovacuum_enabled = off);
CREATE INDEX t_cmp_bf ON t_cmp USING bloomfilter (k) WITH (capacity = 1000, false_positive_rate = 0.02);

CREATE TABLE t_fresh (id bigserial, k bigint, batch bigint DEFAULT txid_current())
	WITH (autovacuum_enabled = off, vacuum_truncate = false);
ALTER TABLE t_fresh ALTER COLUMN id SET STATISTICS 1, ALTER COLUMN k SET STATISTICS 1,
	ALTER COLUMN batch SET STATISTICS 1;
CREATE INDEX t_fresh_bf ON t_fresh USING bloomfilter (k) WITH (capacity = 8192, false_positive_rate = 0.01);

CREATE SEQUENCE t_part_id_seq;
CREATE TABLE t_part (id bigint DEFAULT nextval('t_part_id_seq'), k bigint,
	batch bigint DEFAULT txid_current()) PARTITION BY HASH (id);
CREATE TABLE t_part_0 PARTITION OF t_part FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE t_part_1 PARTITION OF t_part FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE t_part_2 PARTITION OF t_part FOR VALUES WITH (MODULUS 3, REMAINDER 2);
CREATE INDEX t_part_bf ON t_part USING bloomfilter (k) WITH (capacity = 500, false_positive_rate = 0.02);
CREATE TRIGGER soak_probe AFTER INSERT OR UPDATE ON t_part
	FOR EACH STATEMENT EXECUTE FUNCTION soak_trigger_probe('t_part_bf');
""")
		t["t_big"].next_key = 20001
		t["t_big"].rate = c.one("SELECT false_positive_rate FROM bloom_index_info('t_big_bf')")
		t["t_part"].leaves = [r[0] for r in c.q(
			"SELECT indexrelid::regclass::text FROM bloom_index_info('t_part_bf') ORDER BY 1")]
		t["t_part"].relids = ["t_part_0", "t_part_1", "t_part_2"]
		for T in t.values():
			T.rows = c.one("SELECT count(*) FROM %s" % T.name)

	# -- keys ----------------------------------------------------------------

	def key_expr(self, T, lo, g="g", prefix="k"):
		"""SQL for the key number lo + g (an expression of g) of table T."""
		if T.kind == "int":
			return "(%d + %s)::bigint" % (lo, g)
		if T.kind == "text":
			return "('%s' || (%d + %s))" % (prefix, lo, g)
		# skewed, as an enum column's values are: the first labels common,
		# the later ones rare (and so, after trims and compactions, often
		# absent from the index)
		labels = ",".join("'%s'" % l for l in self.labels)
		return ("((ARRAY[%s])[1 + floor(%d * power(mod(abs(hashint8(%d + %s)), 1000003) / 1000003.0, 4))::int])::text::%s"
				% (labels, len(self.labels), lo, g, self.enum_type))

	def key_text(self, T, n, prefix="k"):
		if T.kind == "int":
			return str(n)
		if T.kind == "text":
			return "%s%d" % (prefix, n)
		return self.labels[self.skew(n)]

	def skew(self, n):
		return int(len(self.labels) * (((n * 2654435761) % 4294967296) / 4294967296.0) ** 4)

	def key_lit(self, T, n):
		if T.kind == "int":
			return "%d" % n
		if T.kind == "text":
			return "'k%d'" % n
		return "'%s'::%s" % (self.labels[self.skew(n)], self.enum_type)

	def pick_lo(self, rng, T, n):
		"""Fresh keys mostly; sometimes keys the table had before."""
		if rng.random() < 0.25 and T.next_key > n + 1:
			return rng.randrange(1, T.next_key - n)
		return T.alloc(n)

	def absent_expr(self, T, off):
		if T.kind == "int":
			return "(-(%d + g))::bigint" % off
		return "('absent:' || (%d + g))" % off

	# -- writers -------------------------------------------------------------

	def trigger_on(self, rng, T, p=0.4):
		return (T.trigger and "trigger" not in self.args.skip_set and rng.random() < p)

	def with_trigger(self, s, on, fn):
		"""fn() with the trigger's parallel probe on.  (After an error the
		session's reset ends the transaction and resets the setting: a RESET
		here would fail in the aborted transaction and hide the error.)"""
		if on:
			s.q("SET soak.trigger_check = on")
			self.stats["statements with the parallel trigger probe"] += 1
		fn()
		if on:
			s.q("RESET soak.trigger_check")

	def gen_write(self, rng, T, kind=None, trig=None):
		kinds = [("insert_single", 20), ("insert_bulk", 25), ("copy", 15),
				 ("update_key", 12), ("delete", 10)]
		if self.merge:
			kinds.append(("merge", 10))
		if kind is None:
			if T.rows > T.max_rows:
				kind = "delete"
			else:
				kind = weighted(rng, kinds)
		if trig is None:
			trig = self.trigger_on(rng, T)
		tag = " [trigger probe]" if trig else ""
		name = T.name
		if kind == "insert_single":
			n = rng.randint(5, 120)
			per_txn = rng.choice([1, 1, 10, n])
			keys = [self.pick_lo(rng, T, 1) for _ in range(n)]

			def fn(s):
				def body():
					for i, k in enumerate(keys):
						if per_txn > 1 and i % per_txn == 0:
							s.q("BEGIN")
						s.q("INSERT INTO %s (k) VALUES (%s)" % (name, self.key_lit(T, k)))
						if per_txn > 1 and (i % per_txn == per_txn - 1 or i == n - 1):
							s.q("COMMIT")
				self.with_trigger(s, trig and n <= 30, body)
			return Op("%d single-row INSERTs into %s (%s per transaction)%s" % (n, name, per_txn, tag if n <= 30 else ""), "write", fn, T)
		if kind == "insert_bulk":
			n = int(math.exp(rng.uniform(math.log(300), math.log(25000))))
			if rng.random() < 0.06:
				n = rng.randint(66000, 72000)		# more than a batch of pending hashes
			lo = self.pick_lo(rng, T, n)
			sql = "INSERT INTO %s (k) SELECT %s FROM generate_series(0, %d) g" % (
				name, self.key_expr(T, lo), n - 1)
			if rng.random() < 0.3:
				sql += " ORDER BY random()"

			def fn(s):
				self.with_trigger(s, trig, lambda: s.q(sql))
			return Op("INSERT ... SELECT of %d keys into %s (from %d)%s" % (n, name, lo, tag), "write", fn, T)
		if kind == "copy":
			n = int(math.exp(rng.uniform(math.log(100), math.log(20000))))
			lo = self.pick_lo(rng, T, n)
			data = "".join(self.key_text(T, lo + i) + "\n" for i in range(n))

			def fn(s):
				self.with_trigger(s, trig, lambda: s.copy("COPY %s (k) FROM STDIN" % name, data))
			return Op("COPY of %d keys into %s (from %d)%s" % (n, name, lo, tag), "write", fn, T)
		if kind == "update_key":
			n = rng.randint(10, 3000)
			lo = T.alloc(n)
			frac = rng.random()
			move = T.partitioned and rng.random() < 0.3
			setid = ", id = nextval('t_part_id_seq')" if move else ""

			def fn(s):
				lohi = s.q("SELECT min(id), max(id) FROM %s" % name)[0]
				if lohi[0] is None:
					return
				a = lohi[0] + int((lohi[1] - lohi[0]) * frac)
				sql = ("UPDATE %s t SET k = %s, batch = txid_current()%s FROM "
					   "(SELECT id, row_number() OVER (ORDER BY id) - 1 AS g FROM "
					   "(SELECT id FROM %s WHERE id >= %d ORDER BY id LIMIT %d) x) s "
					   "WHERE t.id = s.id" % (name, self.key_expr(T, lo, "s.g", "u"), setid, name, a, n))
				self.with_trigger(s, trig, lambda: s.q(sql))
			return Op("UPDATE of the key of %d rows of %s%s%s" % (n, name, " (moving partitions)" if move else "", tag), "write", fn, T)
		if kind == "delete":
			if T.rows > T.max_rows:
				n = T.rows - T.max_rows // 2
				oldest = True
			else:
				# mostly a few rows (one heap page or two), sometimes thousands
				n = int(math.exp(rng.uniform(math.log(5), math.log(max(10, T.rows // 4)))))
				oldest = rng.random() < 0.6
			frac = rng.random()

			def fn(s):
				if oldest:
					s.q("DELETE FROM %s WHERE id IN (SELECT id FROM %s ORDER BY id LIMIT %d)" % (name, name, n))
				else:
					lohi = s.q("SELECT min(id), max(id) FROM %s" % name)[0]
					if lohi[0] is None:
						return
					a = lohi[0] + int((lohi[1] - lohi[0]) * frac)
					s.q("DELETE FROM %s WHERE id IN (SELECT id FROM %s WHERE id >= %d ORDER BY id LIMIT %d)" % (name, name, a, n))
			return Op("DELETE of %d %s rows of %s" % (n, "oldest" if oldest else "middle", name), "write", fn, T)
		if kind == "merge":
			n = rng.randint(100, 5000)
			lo = T.alloc(n)
			frac = rng.random()

			def fn(s):
				lohi = s.q("SELECT min(id), max(id) FROM %s" % name)[0]
				a = 0 if lohi[0] is None else lohi[0] + int((lohi[1] - lohi[0]) * frac)
				sql = ("MERGE INTO %s t USING (SELECT %d + g AS id, %s AS nk FROM generate_series(0, %d) g) s "
					   "ON t.id = s.id "
					   "WHEN MATCHED AND mod(s.id, 7) = 0 THEN DELETE "
					   "WHEN MATCHED THEN UPDATE SET k = s.nk, batch = txid_current() "
					   "WHEN NOT MATCHED THEN INSERT (k) VALUES (s.nk)" % (
						   name, a, self.key_expr(T, lo, "g", "m"), n - 1))
				self.with_trigger(s, trig, lambda: s.q(sql))
			return Op("MERGE of %d keys into %s%s" % (n, name, tag), "write", fn, T)
		raise ValueError(kind)

	def own_keys(self, s, T, where):
		"""A transaction finds its own keys: every row it wrote (batch = its
		xid) is found by its own probes."""
		rows = s.q("SELECT k::text FROM %s WHERE batch = txid_current() AND k IS NOT NULL "
				   "AND NOT bloom_index_contains(%%s::regclass, k) LIMIT 6" % T.name, (T.idx,))
		self.stats["own-key checks in open transactions"] += 1
		if rows:
			raise Failure("false negative: a transaction's own keys",
						  "%s: rows its transaction wrote, %s, whose keys bloom_index_contains('%s', k) answers false: %s"
						  % (T.name, where, T.idx, ", ".join(r[0] for r in rows)), T)

	def vacuum_sql(self, rng, T, parallel=None):
		opts = []
		v = rng.random()
		if parallel or (parallel is None and T.other_indexes >= 2 and v < 0.45):
			opts.append("PARALLEL 2")
		elif v < 0.55:
			opts.append("FREEZE")
		elif v < 0.7:
			opts.append("ANALYZE")
		if rng.random() < 0.1:
			opts.append("INDEX_CLEANUP ON")
		return "VACUUM %s%s" % ("(%s) " % ", ".join(opts) if opts else "", T.name)

	def vacuum_op(self, rng, T, parallel=None):
		sql = self.vacuum_sql(rng, T, parallel)

		def fn(s):
			if "FREEZE" in sql:
				# an aggressive VACUUM waits for the cleanup lock of a page a
				# held cursor pins: close those first
				for h in [h for h in self.held if h.table is T and h.kind == "cursor"]:
					self.close_held(h)
			if "PARALLEL" in sql:
				s.q("SET min_parallel_index_scan_size = 0")
			before = self.layers(T)
			try:
				s.q(sql)
			finally:
				if "PARALLEL" in sql:
					s.q("RESET min_parallel_index_scan_size")
			after = self.layers(T)
			self.stats["manual VACUUMs"] += 1
			if "PARALLEL" in sql:
				self.stats["manual VACUUM (PARALLEL 2)"] += 1
			for leaf in before:
				if before[leaf] > 1 and after.get(leaf) == 1:
					self.stats["compactions seen (layers > 1 -> 1 in a manual VACUUM)"] += 1
		return Op(sql, "maintenance", fn, T)

	def layers(self, T):
		try:
			s = Session(self.dsn["primary"], "layers")
			try:
				return dict(s.q("SELECT indexrelid::regclass::text, layers FROM bloom_index_info(%s::regclass)", (T.idx,)))
			finally:
				s.close()
		except psycopg2.Error:
			return {}

	def prober_op(self, rng, T, rounds):
		"""Bulk probes of every key the statement's snapshot sees, in a loop,
		beside writers and VACUUM: each must find them all."""
		par = rng.random() < 0.5

		def fn(s):
			if par:
				self.set_parallel(s, local=False)
			try:
				for _ in range(rounds):
					rows = s.q("SELECT k::text FROM %s WHERE k IS NOT NULL AND NOT bloom_index_contains(%%s::regclass, k) LIMIT 6"
							   % T.name, (T.idx,))
					self.stats["concurrent bulk probes"] += 1
					if rows:
						raise Failure("false negative: a probe beside writers and VACUUM",
									  "%s: rows whose key bloom_index_contains('%s', k) answers false: %s"
									  % (T.name, T.idx, ", ".join(r[0] for r in rows)), T)
			finally:
				if par:
					s.q("RESET ALL")
		return Op("%d bulk probes of every key of %s%s" % (rounds, T.name, " (parallel)" if par else ""), "read", fn, T)

	def set_parallel(self, s, local=True):
		scope = "LOCAL " if local else ""
		for g, v in (("parallel_setup_cost", "0"), ("parallel_tuple_cost", "0"),
					 ("min_parallel_table_scan_size", "0"), (self.parallel_guc, "on")):
			s.q("SET %s%s = %s" % (scope, g, v))

	# -- running ops ---------------------------------------------------------

	def run_ops(self, ops, rng=None):
		"""Run ops at once, each in a session of the pool (drawn at random:
		each backend keeps its own view of an index); then judge their
		errors."""
		errs = [None] * len(ops)
		order = list(range(len(self.pool) - 1))		# the last is step_open_vacuum's
		(rng or self.rng).shuffle(order)

		def work(i):
			s = self.pool[order[i]]
			try:
				if not s.alive():
					s.connect()
				ops[i].fn(s)
			except BaseException as e:
				errs[i] = e
				s.reset()
		if len(ops) == 1:
			work(0)
		else:
			threads = [threading.Thread(target=work, args=(i,)) for i in range(len(ops))]
			for t in threads:
				t.start()
			for t in threads:
				t.join(self.args.statement_timeout * 4)
				if t.is_alive():
					raise Failure("a step hung", "an operation of this step did not finish in %d s" % (self.args.statement_timeout * 4), repair=False)
		for op, e in zip(ops, errs):
			if e is not None:
				self.judge(op, e)

	def terminated_by_conflict(self, e, sess):
		"""A standby session whose connection was lost: the standby's log
		says it was terminated by a recovery conflict (an idle-in-transaction
		session that held a lock or a snapshot replay needed)."""
		if sess is None or sess.pid is None or not isinstance(e, psycopg2.OperationalError):
			return False
		pat = "[%d] <client backend> 40001 FATAL:  terminating connection due to conflict with recovery" % sess.pid
		for _ in range(20):
			try:
				with open(self.cl.standby_log, errors="replace") as f:
					if any(pat in line for line in f):
						return True
			except OSError:
				pass
			time.sleep(0.1)
		return False

	def judge(self, op, e, server="primary", sess=None):
		"""An error from an op: accepted (and counted) or a failure."""
		if isinstance(e, StopRun):
			raise e
		if isinstance(e, Failure):
			self.failed(e, op.desc)
			return
		if not isinstance(e, psycopg2.Error):
			self.failed(Failure("driver error", "%s: %s" % (type(e).__name__, e), op.table, repair=False), op.desc)
			return
		code = pgcode(e)
		msg = pgmessage(e)
		if code == TRIGGER_MISS:
			self.failed(Failure("false negative: parallel probes in a statement trigger", msg, op.table), op.desc)
			return
		if op.cat == "write" and code in (DEADLOCK, CANCEL_CONFLICT):
			self.stats["writes ended by a deadlock or serialization failure (accepted)"] += 1
			return
		if server == "standby" and (code in (CANCEL_CONFLICT, DEADLOCK) or "conflict with recovery" in msg
									 or self.terminated_by_conflict(e, sess)):
			self.stats["standby queries cancelled by a recovery conflict (accepted)"] += 1
			return
		what = {"write": "a write failed", "maintenance": "a maintenance command failed",
				"read": "a read function failed", "check": "a check query failed"}[op.cat]
		self.failed(Failure(what, "%s%s" % ("[%s] " % code if code else "", msg), op.table,
							repair=(op.cat != "maintenance")), op.desc)

	# -- failures ------------------------------------------------------------

	def failed(self, f, opdesc):
		sig = (f.check, re.sub(r"\d+", "N", f.detail)[:120])
		self.signatures[sig] += 1
		self.first_step.setdefault(sig, self.step)
		self.failures.append((self.step, opdesc, f))
		if self.signatures[sig] <= 2:
			log("")
			log("FAIL: seed %d, step %d" % (self.seed, self.step))
			log("  step:      %s" % self.current)
			if opdesc and opdesc != self.current:
				log("  operation: %s" % opdesc)
			log("  check:     %s" % f.check)
			log("  what:      %s" % f.detail)
			log("  replay:    %s --seed %d --steps %d%s" % (
				sys.argv[0], self.seed, self.step,
				" --pg-config %s" % self.args.pg_config if self.args.pg_config != DEFAULT_PG_CONFIG else ""))
		elif self.signatures[sig] == 3:
			log("  (the failure of step %d (%s) again at step %d: not printed again, counted)"
				% (self.first_step[sig], f.check, self.step))
		if not self.args.keep_going:
			raise StopRun()
		if f.repair and f.table is not None and f.table not in self.to_repair:
			self.to_repair.append(f.table)

	def repair(self):
		"""--keep-going, after a step's checks: rebuild the indexes that
		failed a check, so that later checks mean something."""
		while self.to_repair:
			T = self.to_repair.pop(0)
			try:
				self.quiesce(T, standby=False)
				self.chk.q("REINDEX TABLE %s" % T.name)
				self.stats["repairs (REINDEX after a failure)"] += 1
			except psycopg2.Error as e:
				log("  (repair of %s failed: %s)" % (T.name, pgmessage(e)))
				self.chk.reset()

	# -- held transactions, prepared ones, readers ----------------------------

	def close_held(self, h, commit=None):
		if h not in self.held:
			return
		self.held.remove(h)
		commit = h.commit if commit is None else commit
		op = Op("%s of the transaction left open at %s" % ("COMMIT" if commit else "ROLLBACK", h.desc), "write", None, h.table)
		try:
			if h.kind == "bulk" and commit:
				self.own_keys(h.sess, h.table, "before its COMMIT")
			h.sess.q("COMMIT" if commit else "ROLLBACK")
			self.stats["held transactions %s" % ("committed" if commit else "rolled back")] += 1
		except (psycopg2.Error, Failure) as e:
			self.judge(op, e)
		finally:
			h.sess.close()

	def resolve_prepared(self, p, commit=None):
		if p not in self.prepared:
			return
		self.prepared.remove(p)
		commit = p.commit if commit is None else commit
		sql = "%s PREPARED '%s'" % ("COMMIT" if commit else "ROLLBACK", p.gid)
		try:
			self.chk.q(sql)
			self.stats["prepared transactions %s" % ("committed" if commit else "rolled back")] += 1
		except psycopg2.Error as e:
			self.judge(Op(sql, "maintenance", None, p.table), e)
			self.chk.reset()

	def close_reader(self, r, check=True):
		if r not in self.readers:
			return
		if check:
			self.check_reader(r)
		if r in self.readers:
			self.readers.remove(r)
			try:
				r.sess.q("COMMIT")
			except psycopg2.Error:
				pass
			r.sess.close()

	def quiesce(self, T, standby=False):
		"""End what holds a lock on T before DDL on it: held transactions and
		cursors, prepared transactions, primary readers (and the standby's,
		for SET UNLOGGED)."""
		for h in [h for h in self.held if h.table is T]:
			self.close_held(h)
		for p in [p for p in self.prepared if p.table is T]:
			self.resolve_prepared(p)
		for r in [r for r in self.readers if T in r.tables and (r.server == "primary" or standby)]:
			self.close_reader(r)

	def open_reader(self, rng, server):
		cand = [T for T in self.tables.values() if not (server == "standby" and T.unlogged)]
		tables = rng.sample(cand, min(len(cand), rng.randint(1, 3)))
		par = rng.random() < 0.4
		desc = "REPEATABLE READ reader on the %s over %s%s" % (
			server, ", ".join(T.name for T in tables), " (parallel probes)" if par else "")
		try:
			s = self.session(server, "reader")
		except psycopg2.Error as e:
			self.judge(Op("connect: " + desc, "check", None), e, server)
			return
		try:
			s.q("BEGIN ISOLATION LEVEL REPEATABLE READ")
			if par:
				self.set_parallel(s)
			for T in tables:
				s.q("SELECT count(*) FROM %s" % T.name)
		except psycopg2.Error as e:
			s.close()
			self.judge(Op("open " + desc, "read", None), e, server, s)
			return
		# (a primary reader holds back every table's horizon: not too long)
		r = Reader(server, s, tables, self.step, self.step + rng.randint(1, 6 if server == "primary" else 10), par)
		self.readers.append(r)
		self.stats["readers opened on the %s" % server] += 1

	def check_reader(self, r):
		"""Every key of every row the reader's snapshot sees is found."""
		desc = "re-check of the REPEATABLE READ reader on the %s opened at step %d" % (r.server, r.opened)
		for T in r.tables:
			if r.server == "standby" and T.unlogged:
				continue
			try:
				n = r.sess.one("SELECT count(*) FROM %s WHERE k IS NOT NULL AND NOT bloom_index_contains(%%s::regclass, k)"
							   % T.name, (T.idx,))
				self.stats["reader re-checks on the %s" % r.server] += 1
				if n:
					keys = r.sess.q("SELECT k::text FROM %s WHERE k IS NOT NULL AND NOT bloom_index_contains(%%s::regclass, k) LIMIT 6"
									% T.name, (T.idx,))
					self.close_reader(r, check=False)
					self.failed(Failure("false negative on the %s (a REPEATABLE READ snapshot kept since step %d)" % (r.server, r.opened),
										"%d rows of %s its snapshot sees whose key bloom_index_contains('%s', k) answers false, e.g. %s"
										% (n, T.name, T.idx, ", ".join(k[0] for k in keys)), T), desc)
					return
			except psycopg2.Error as e:
				self.close_reader(r, check=False)
				if not self.refusal_ok(e, T, r.server, r.sess):
					self.judge(Op(desc, "read", None, T), e, r.server, r.sess)
				return

	def refusal_ok(self, e, T, server, sess=None):
		"""The documented refusals this mix can cause: a probe of t_enum
		between a rename and the REINDEX after it (42804 for the type, 55000
		for a label); on the standby until it replays that REINDEX."""
		code = pgcode(e)
		if T is None or T.kind != "enum" or code not in ("42804", "55000"):
			return False
		if self.enum_refusal_lsn is None:
			return False
		if server == "standby":
			try:
				s = Session(self.dsn["standby"], "lsn")
				try:
					behind = s.one("SELECT pg_last_wal_replay_lsn() < %s::pg_lsn", (self.enum_refusal_lsn,))
				finally:
					s.close()
			except psycopg2.Error:
				behind = True
			if behind:
				self.stats["probes refused after an enum rename (documented, accepted)"] += 1
				return True
		return False

	# -- steps ---------------------------------------------------------------

	def pick_table(self, rng, kinds=None, exclude=()):
		cand = [T for T in self.tables.values() if (kinds is None or T.kind in kinds) and T.name not in exclude
				and not T.own]
		return rng.choice(cand)

	def do_step(self, rng):
		"""One step.  Its scenario and the scenario's parameters come from
		rng (the seed's and the step number's), drawn first; readers, trims
		and the sessions ops run in come from a second generator of the
		step, so that what they draw (which depends on the servers' state)
		does not change the scenario a replay runs at this step."""
		pre = []
		self.current = "(the start of step %d)" % self.step
		weights = [(s, w) for s, w in SCENARIOS.items() if s in self.args.scenarios]
		scen = weighted(rng, weights)
		self.forced = None
		tour = [t for t in TOUR if t[0] in self.args.scenarios] if not self.args.no_tour else []
		if self.step <= len(tour):
			scen, self.forced = tour[self.step - 1]
		aux = self.rng = random.Random("%d:%d:aux" % (self.seed, self.step))
		# tables past their size: the oldest rows go (a DELETE, and dead
		# tuples for VACUUM)
		trims = [self.gen_write(aux, T, "delete") for T in self.tables.values() if T.rows > T.max_rows]
		if trims:
			pre.append(" || ".join(o.desc for o in trims))
			self.current = "; ".join(pre)
			self.run_ops(trims)
			for o in trims:
				o.table.rows = min(o.table.rows, o.table.max_rows // 2)
		# what is due: held transactions, prepared ones, readers
		for h in [h for h in self.held if h.until <= self.step]:
			pre.append("%s held %s" % ("commit" if h.commit else "rollback", h.desc))
			self.close_held(h)
		for p in [p for p in self.prepared if p.until <= self.step]:
			pre.append("%s prepared %s" % ("commit" if p.commit else "rollback", p.gid))
			self.resolve_prepared(p)
		for r in [r for r in self.readers if r.until <= self.step]:
			self.close_reader(r)
		if "readers" not in self.args.skip_set:
			for server in ("primary", "standby"):
				# (the standby's are often ended by a recovery conflict: more chances)
				x = aux.random()
				if sum(1 for r in self.readers if r.server == server) < 2 and \
						x < (0.35 if server == "primary" else 0.6):
					self.open_reader(aux, server)
		if not self.prepared and not any(h.kind == "bulk" for h in self.held) and \
				not any(r.server == "primary" for r in self.readers):
			self.stats["steps begun with no old snapshot on the primary (cursors aside)"] += 1
		self.stats["steps: " + scen] += 1
		getattr(self, "step_" + scen)(rng, pre)

	def begin(self, desc, pre):
		self.current = ("; ".join(pre) + "; " if pre else "") + desc
		if self.args.verbose:
			log("step %d: %s" % (self.step, self.current))

	def step_write(self, rng, pre):
		if self.forced == "trigger" and "trigger" not in self.args.skip_set:
			# the tour's: a bulk insert whose statement trigger probes its
			# keys in parallel workers
			T = rng.choice([T for T in self.tables.values() if T.trigger])
			ops = [self.gen_write(rng, T, "insert_bulk", trig=True)]
			self.begin(ops[0].desc, pre)
			self.run_ops(ops)
			return
		n = rng.choice([1, 1, 2, 2, 3, 4])
		if rng.random() < 0.5:
			T = self.pick_table(rng)
			targets = [T] * n
		else:
			targets = [self.pick_table(rng) for _ in range(n)]
		ops = [self.gen_write(rng, T) for T in targets]
		if rng.random() < 0.25:
			# several bulk writers into one index at once
			T = targets[0]
			ops = [self.gen_write(rng, T, "insert_bulk") for _ in range(rng.randint(2, 4))]
			targets = [T]
		vac = None
		if rng.random() < 0.3:
			vac = rng.choice(targets)
			ops.append(self.vacuum_op(rng, vac))
		if rng.random() < 0.25:
			ops.append(self.prober_op(rng, rng.choice(targets), rng.randint(1, 5)))
		self.begin(" || ".join(o.desc for o in ops), pre)
		self.run_ops(ops)
		if vac is not None:
			self.rate_check(rng, vac, "after a VACUUM beside writers")
		else:
			bulk = [o.table for o in ops if o.table is not None and ("SELECT of" in o.desc or "COPY" in o.desc)]
			if bulk and rng.random() < 0.5:
				self.rate_check(rng, bulk[0], "after bulk writes")

	def step_vacuum(self, rng, pre):
		T = self.pick_table(rng)
		ops = [self.vacuum_op(rng, T)]
		if rng.random() < 0.3:
			U = self.pick_table(rng, exclude=(T.name,))
			ops.append(self.vacuum_op(rng, U))
		self.begin(" || ".join(o.desc for o in ops), pre)
		self.run_ops(ops)
		for o in ops:
			self.rate_check(rng, o.table, "after a VACUUM")

	def step_hold(self, rng, pre):
		if len(self.held) >= 3:
			h = rng.choice(self.held)
			self.begin("%s the transaction left open at %s" % ("COMMIT" if h.commit else "ROLLBACK", h.desc), pre)
			self.close_held(h)
			return
		T = self.pick_table(rng)
		until = self.step + rng.randint(1, 8)
		commit = rng.random() < 0.7
		try:
			s = self.session("primary", "held")
		except psycopg2.Error as e:
			self.judge(Op("connect", "check", None), e)
			return
		if rng.random() < 0.5:
			desc = "a cursor over %s (step %d)" % (T.name, self.step)
			self.begin("open " + desc, pre)
			sql = ["BEGIN", "DECLARE c CURSOR FOR SELECT * FROM %s" % T.name, "FETCH 1 FROM c"]
			kind = "cursor"
		else:
			n = int(math.exp(rng.uniform(math.log(2000), math.log(60000))))
			lo = self.pick_lo(rng, T, n)
			desc = "a bulk INSERT of %d keys into %s (step %d)" % (n, T.name, self.step)
			self.begin("open " + desc + " left open, to %s" % ("commit" if commit else "roll back"), pre)
			sql = ["BEGIN", "INSERT INTO %s (k) SELECT %s FROM generate_series(0, %d) g" % (T.name, self.key_expr(T, lo), n - 1)]
			kind = "bulk"
		try:
			for q in sql:
				s.q(q)
		except psycopg2.Error as e:
			s.close()
			self.judge(Op(desc, "write", None, T), e)
			return
		self.held.append(Held(kind, T, s, until, commit, desc))
		self.stats["transactions left open across steps (%s)" % kind] += 1

	def step_open_vacuum(self, rng, pre):
		T = self.pick_table(rng, kinds=("int", "text"))
		n = int(math.exp(rng.uniform(math.log(5000), math.log(60000))))
		lo = self.pick_lo(rng, T, n)
		commit = rng.random() < 0.7
		v1 = self.vacuum_sql(rng, T, parallel=False).replace("FREEZE", "ANALYZE")
		v2 = self.vacuum_sql(rng, T, parallel=False).replace("FREEZE", "ANALYZE")
		other = self.gen_write(rng, T, "insert_bulk") if rng.random() < 0.4 else None
		self.begin("session A: BEGIN; INSERT of %d keys into %s; session B: %s%s; A: %s; %s"
				   % (n, T.name, v1, " || " + other.desc if other else "",
					  "COMMIT" if commit else "ROLLBACK", v2), pre)
		a = self.pool[6]
		try:
			a.q("BEGIN")
			a.q("INSERT INTO %s (k) SELECT %s FROM generate_series(0, %d) g" % (T.name, self.key_expr(T, lo), n - 1))
		except psycopg2.Error as e:
			a.reset()
			self.judge(Op("open bulk insert", "write", None, T), e)
			return
		vop = Op(v1, "maintenance", lambda s: s.q(v1), T)
		self.run_ops([vop] + ([other] if other else []))
		self.stats["manual VACUUMs"] += 1
		self.rate_check(rng, T, "after a VACUUM during an open bulk insert")
		try:
			if commit:
				self.own_keys(a, T, "before its COMMIT")
			a.q("COMMIT" if commit else "ROLLBACK")
		except (psycopg2.Error, Failure) as e:
			a.reset()
			self.judge(Op("COMMIT of the open bulk insert", "write", None, T), e)
		self.run_ops([Op(v2, "maintenance", lambda s: s.q(v2), T)])
		self.stats["manual VACUUMs"] += 1
		self.rate_check(rng, T, "after the open bulk insert %s and a VACUUM" % ("committed" if commit else "rolled back"))

	def step_savepoint(self, rng, pre):
		T = self.pick_table(rng)
		sizes = [rng.choice([1, 50, 2000, 20000, 70000]) for _ in range(4)]
		if self.forced == "release":
			sizes[3] = max(sizes[3], 2000)
		los = [self.pick_lo(rng, T, n) for n in sizes]
		if self.forced == "release":
			# (fresh keys: a key the index holds already would hide a loss)
			los[3] = T.alloc(sizes[3])
		ins = ["INSERT INTO %s (k) SELECT %s FROM generate_series(0, %d) g" % (T.name, self.key_expr(T, lo), n - 1)
			   for lo, n in zip(los, sizes)]
		release = rng.random() < 0.5
		commit = rng.random() < 0.8
		if self.forced == "release":
			# the tour's: a released savepoint's keys must be set at the commit
			release = commit = True
		trig = self.trigger_on(rng, T, 0.3)
		self.begin("BEGIN; INSERT %d into %s; SAVEPOINT a; INSERT %d; ROLLBACK TO a; INSERT %d; SAVEPOINT b; INSERT %d; %s b; %s%s"
				   % (sizes[0], T.name, sizes[1], sizes[2], sizes[3], "RELEASE" if release else "ROLLBACK TO",
					  "COMMIT" if commit else "ROLLBACK", " [trigger probe]" if trig else ""), pre)

		def fn(s):
			def body():
				s.q("BEGIN")
				s.q(ins[0])
				s.q("SAVEPOINT a")
				s.q(ins[1])
				self.own_keys(s, T, "in a savepoint")
				s.q("ROLLBACK TO a")
				s.q(ins[2])
				s.q("SAVEPOINT b")
				s.q(ins[3])
				s.q("RELEASE b" if release else "ROLLBACK TO b")
				self.own_keys(s, T, "after the savepoints")
				s.q("COMMIT" if commit else "ROLLBACK")
			self.with_trigger(s, trig, body)
		self.run_ops([Op(self.current, "write", fn, T)])

	def step_twophase(self, rng, pre):
		if len(self.prepared) >= 4:
			p = rng.choice(self.prepared)
			self.begin("%s PREPARED '%s'" % ("COMMIT" if p.commit else "ROLLBACK", p.gid), pre)
			self.resolve_prepared(p)
			return
		T = self.pick_table(rng)
		self.gid += 1
		gid = "soak_%d_%d" % (self.step, self.gid)
		n = rng.choice([1, 100, 5000, 30000])
		lo = self.pick_lo(rng, T, n)
		sub = rng.random() < 0.4
		commit = rng.random() < 0.75
		later = rng.random() < 0.6
		self.begin("BEGIN; INSERT %d into %s;%s PREPARE TRANSACTION '%s'; %s PREPARED %s"
				   % (n, T.name, " SAVEPOINT s; INSERT; ROLLBACK TO s;" if sub else "", gid,
					  "COMMIT" if commit else "ROLLBACK", "in a later step" if later else "now"), pre)

		def fn(s):
			s.q("BEGIN")
			s.q("INSERT INTO %s (k) SELECT %s FROM generate_series(0, %d) g" % (T.name, self.key_expr(T, lo), n - 1))
			if sub:
				s.q("SAVEPOINT s")
				s.q("INSERT INTO %s (k) SELECT %s FROM generate_series(0, 999) g" % (T.name, self.key_expr(T, T.alloc(1000))))
				s.q("ROLLBACK TO s")
			self.own_keys(s, T, "before PREPARE TRANSACTION")
			s.q("PREPARE TRANSACTION '%s'" % gid)
			self.prepared.append(Prepared(gid, T, self.step + (rng.randint(1, 6) if later else 0), commit))
			self.stats["transactions prepared"] += 1
		self.run_ops([Op(self.current, "write", fn, T)])
		if not later:
			for p in [p for p in self.prepared if p.gid == gid]:
				self.resolve_prepared(p)

	def step_ddl(self, rng, pre):
		T = self.pick_table(rng, kinds=("int", "text") if self.forced else None)
		kinds = ["reindex_index", "alter_type", "truncate"]
		if not T.partitioned:
			kinds += ["reindex_table", "unlogged"]
		kind = rng.choice(kinds)
		if T.unlogged and rng.random() < 0.8:
			kind = "logged"
		if self.forced:
			# the tour's: keys of the transaction pending when the DDL comes
			kind = self.forced
		if kind == "alter_type" and T.kind == "text":
			T_new = 32 if T.varchar == 24 else 24
			ddl = ["ALTER TABLE %s ALTER COLUMN k TYPE varchar(%d)" % (T.name, T_new)]
		elif kind == "alter_type":
			typ = "bigint" if T.kind == "int" else self.enum_type
			ddl = ["ALTER TABLE %s ALTER COLUMN k TYPE %s" % (T.name, typ)]
		elif kind == "reindex_index":
			ddl = ["REINDEX INDEX %s" % rng.choice(T.leaves)]
		elif kind == "reindex_table":
			ddl = ["REINDEX TABLE %s" % T.name]
		elif kind == "truncate":
			ddl = ["TRUNCATE %s" % T.name]
		elif kind == "unlogged":
			ddl = ["ALTER TABLE %s SET UNLOGGED" % T.name]
			if rng.random() < 0.5:
				ddl.append("INSERT")
				ddl.append("ALTER TABLE %s SET LOGGED" % T.name)
		else:
			ddl = ["ALTER TABLE %s SET LOGGED" % T.name]
		n1 = rng.choice([1, 200, 5000, 30000, 70000] if not self.forced else [200, 5000])
		n2 = rng.choice([0, 1, 500, 5000])
		commit = rng.random() < 0.85
		lo1, lo2, lo3 = self.pick_lo(rng, T, n1), T.alloc(max(n2, 1)), T.alloc(100)
		self.quiesce(T, standby=(kind == "unlogged"))
		ins = lambda lo, n: "INSERT INTO %s (k) SELECT %s FROM generate_series(0, %d) g" % (T.name, self.key_expr(T, lo), n - 1)
		self.begin("BEGIN; INSERT %d into %s; %s;%s %s"
				   % (n1, T.name, "; ".join(d if d != "INSERT" else "INSERT 100" for d in ddl),
					  " INSERT %d;" % n2 if n2 else "", "COMMIT" if commit else "ROLLBACK"), pre)

		def fn(s):
			# an error is judged as a write's or as the DDL's
			op.cat = "write"
			s.q("BEGIN")
			s.q(ins(lo1, n1))
			for d in ddl:
				if d == "INSERT":
					op.cat = "write"
					s.q(ins(lo3, 100))
				else:
					op.cat = "maintenance"
					s.q(d)
			op.cat = "write"
			if n2:
				s.q(ins(lo2, n2))
			self.own_keys(s, T, "after %s" % ddl[0])
			op.cat = "maintenance"
			s.q("COMMIT" if commit else "ROLLBACK")
			if commit:
				if kind == "alter_type" and T.kind == "text":
					T.varchar = T_new
				if kind == "unlogged":
					T.unlogged = "ALTER TABLE %s SET LOGGED" % T.name not in ddl
				if kind == "logged":
					T.unlogged = False
				if kind == "truncate":
					T.rows = 0
			self.stats["same-transaction DDL: %s (%s)" % (kind, "committed" if commit else "rolled back")] += 1
		op = Op(self.current, "maintenance", fn, T)
		self.run_ops([op])

	def step_enum(self, rng, pre):
		T = self.tables["t_enum"]
		name = self.reuse_label or "l%d" % self.next_label
		if self.reuse_label is None:
			self.next_label += 1
		self.reuse_label = None
		commit = rng.random() < 0.5
		variant = rng.choice(["insert", "probe", "insert+probe", "info", "none"])
		where = ""
		if rng.random() < 0.3:
			where = " BEFORE '%s'" % rng.choice(self.labels)
		n = rng.choice([1, 20, 500])
		newest = rng.random() < 0.5
		self.begin("BEGIN; ALTER TYPE %s ADD VALUE '%s'%s; %s%s; %s"
				   % (self.enum_type, name, where, variant,
					  " (of label %s)" % self.labels[-1] if newest and "insert" in variant else "",
					  "COMMIT" if commit else "ROLLBACK"), pre)

		def fn(s):
			s.q("BEGIN")
			s.q("ALTER TYPE %s ADD VALUE '%s'%s" % (self.enum_type, name, where))
			if "insert" in variant:
				# the label added last (often new to the index), or all of them
				key = "'%s'::%s" % (self.labels[-1] if newest else rng.choice(self.labels), self.enum_type)
				s.q("INSERT INTO t_enum (k) SELECT %s FROM generate_series(0, %d) g" % (key, n - 1))
			if "probe" in variant:
				s.q("SELECT bloom_index_contains('t_enum_bf', %s)" % self.key_lit(T, rng.randrange(100)))
			if variant == "info":
				s.q("SELECT * FROM bloom_index_info('t_enum_bf')")
			s.q("COMMIT" if commit else "ROLLBACK")
			if commit:
				self.labels.append(name)
				self.stats["enum labels added (committed)"] += 1
			else:
				self.reuse_label = name
				self.stats["enum labels added and rolled back"] += 1
		self.run_ops([Op(self.current, "write", fn, T)])

	def step_enum_rename(self, rng, pre):
		T = self.tables["t_enum"]
		adds = rng.randint(0, 8)
		what = rng.choice(["type", "label"])
		self.quiesce(T, standby=False)
		if what == "type":
			new = "mood_r%d" % self.step
			rename = "ALTER TYPE %s RENAME TO %s" % (self.enum_type, new)
		else:
			old = rng.choice(self.labels)
			new = old + "_r%d" % self.step
			rename = "ALTER TYPE %s RENAME VALUE '%s' TO '%s'" % (self.enum_type, old, new)
		vac = self.vacuum_sql(rng, T, parallel=False).replace("FREEZE", "ANALYZE")
		self.begin("%d labels added and inserted; %s; %s; probe and insert (refusals accepted); REINDEX INDEX t_enum_bf"
				   % (adds, rename, vac), pre)
		c = self.pool[0]
		try:
			for _ in range(adds):
				lab = "l%d" % self.next_label
				self.next_label += 1
				c.q("ALTER TYPE %s ADD VALUE '%s'" % (self.enum_type, lab))
				self.labels.append(lab)
				c.q("INSERT INTO t_enum (k) SELECT '%s'::%s FROM generate_series(1, 5)" % (lab, self.enum_type))
			c.q(rename)
		except psycopg2.Error as e:
			c.reset()
			self.judge(Op(self.current, "write", None, T), e)
			return
		if what == "type":
			self.enum_type = new
		else:
			self.labels[self.labels.index(old)] = new
		self.enum_refusal_lsn = "FFFFFFFF/FFFFFFFF"
		self.run_ops([Op(vac, "maintenance", lambda s: s.q(vac), T)])
		self.stats["manual VACUUMs"] += 1
		for sql in ("SELECT bloom_index_contains('t_enum_bf', %s)" % self.key_lit(T, 0),
					"INSERT INTO t_enum (k) VALUES (%s)" % self.key_lit(T, 1)):
			try:
				c.q(sql)
				self.stats["probes and inserts answered after an enum rename"] += 1
			except psycopg2.Error as e:
				c.reset()
				if pgcode(e) in ("42804", "55000"):
					self.stats["probes and inserts refused after an enum rename (documented)"] += 1
				else:
					self.judge(Op(sql, "read", None, T), e)
		try:
			c.q("REINDEX INDEX t_enum_bf")
			self.enum_refusal_lsn = c.one("SELECT pg_current_wal_insert_lsn()::text")
		except psycopg2.Error as e:
			c.reset()
			self.judge(Op("REINDEX INDEX t_enum_bf", "maintenance", None, T), e)
		self.stats["enum renames (%s)" % what] += 1

	def step_short(self, rng, pre):
		"""Short-lived connections, each inserting one to three fresh keys in
		a transaction of its own, with ANALYZE now and then (it rebuilds the
		index's relcache entry): a count of keys a backend kept to itself
		would be lost at its exit or at the rebuild, and a layer would take
		keys past its capacity.  Then the rate is checked."""
		T = self.pick_table(rng, kinds=("int", "text"))
		n = rng.randint(150, 500)
		per = [rng.randint(1, 3) for _ in range(n)]
		keys = [T.alloc(m) for m in per]
		every = rng.choice([5, 20, 1000000])
		self.begin("%d short connections inserting 1 to 3 keys each into %s, ANALYZE every %s" % (
			n, T.name, every if every < 1000000 else "never"), pre)

		def fn(s):
			for i, (lo, m) in enumerate(zip(keys, per)):
				c = Session(s.dsn, "short")
				try:
					c.q("INSERT INTO %s (k) SELECT %s FROM generate_series(0, %d) g" % (
						T.name, self.key_expr(T, lo), m - 1))
				finally:
					c.conn.close()
				if i % every == every - 1:
					s.q("ANALYZE %s" % T.name)
		self.run_ops([Op("short connections", "write", fn, T)])
		self.rate_check(rng, T, "after short connections")

	def step_compact_race(self, rng, pre):
		"""A compaction that takes long, with writers inserting all along.
		t_cmp (capacity 1,000, no autovacuum) is loaded to 60,000 to 90,000
		rows, its oldest rows past that and every third row of the load
		deleted, so it has many layers and VACUUM compacts it, scanning the
		whole table; meanwhile two or three sessions insert batches of 10 to
		100 keys (fresh ones, and half of the time keys of the load's rows
		just deleted, which the newest old layers hold) in transactions of
		their own until the VACUUM ends.  An insert during
		the compaction must set its keys in the new layer whatever the
		layers being replaced say: their rows may lie where the scan has
		been already, and the old layers are dropped at its end (then
		bloom_index_verify counts the keys missed).  The VACUUM runs with a
		cost delay (2 ms every 2 pages), so that its compaction takes a
		second or so; the writers begin when it does, and insert 8,000 keys
		at most.  Then the rate."""
		T = self.tables["t_cmp"]
		target = rng.randint(60000, 90000)
		load = max(20000, target - T.rows)
		nwriters = rng.randint(2, 3)
		sizes = [rng.choice([10, 20, 50, 100]) for _ in range(nwriters)]
		vsql = rng.choice(["VACUUM t_cmp", "VACUUM t_cmp", "VACUUM (ANALYZE) t_cmp", "VACUUM (FREEZE) t_cmp"])
		wseeds = [rng.randrange(10 ** 9) for _ in range(nwriters)]
		self.quiesce(T)
		self.begin("INSERT ... SELECT of %d keys into t_cmp, DELETE of its oldest rows past %d and of every third row of the load; %s || %s"
				   % (load, target, vsql, " || ".join("INSERTs of %d keys until the VACUUM ends" % n for n in sizes)), pre)
		lo = T.alloc(load)

		def prepare(s):
			s.q("INSERT INTO t_cmp (k) SELECT %s FROM generate_series(0, %d) g" % (self.key_expr(T, lo), load - 1))
			s.q("DELETE FROM t_cmp WHERE id <= (SELECT max(id) FROM t_cmp) - %d" % target)
			# every third row of the load: their keys are in the newest
			# layers, their space spread over the load's pages
			s.q("DELETE FROM t_cmp WHERE k >= %d AND k < %d AND (k - %d) %% 3 = 0" % (lo, lo + load, lo))
		self.run_ops([Op("load t_cmp", "write", prepare, T)])
		done = threading.Event()
		counts = [0] * nwriters

		def vacuum(s):
			# a cost delay after every page or two: the compaction's scan
			# takes a second or so instead of a few milliseconds
			try:
				s.q("SET vacuum_cost_delay = '2ms'")
				s.q("SET vacuum_cost_limit = 2")
				s.q(vsql)
				self.stats["compactions raced by writers (VACUUMs of t_cmp)"] += 1
			finally:
				done.set()
				s.q("RESET vacuum_cost_delay")
				s.q("RESET vacuum_cost_limit")

		def writer(i):
			def fn(s):
				wr = random.Random(wseeds[i])
				deadline = time.time() + self.args.statement_timeout
				# from the moment VACUUM cleans up the index (the
				# compaction: t_cmp has no other index) to its end
				while not done.is_set() and time.time() < deadline and \
						s.one("SELECT count(*) FROM pg_stat_progress_vacuum WHERE relid = 't_cmp'::regclass "
							  "AND phase IN ('cleaning up indexes', 'truncating heap', 'performing final cleanup')") == 0:
					time.sleep(0.01)
				# (fewer keys in all than the new layer's headroom: more
				# would grow the index past it, and the compaction would
				# give its layer up and begin again)
				while not done.is_set() and time.time() < deadline and counts[i] < 8000 // nwriters:
					time.sleep(0.005)
					n = sizes[i]
					# fresh keys, or (half of the time) keys of the rows
					# just deleted, which the newest old layers hold
					if wr.random() < 0.5:
						j = wr.randrange(0, load // 3 - n)
						s.q("INSERT INTO t_cmp (k) SELECT (%d + 3 * (%d + g))::bigint FROM generate_series(0, %d) g"
							% (lo, j, n - 1))
					else:
						s.q("INSERT INTO t_cmp (k) SELECT %s FROM generate_series(0, %d) g" % (self.key_expr(T, T.alloc(n)), n - 1))
					counts[i] += n
			return fn
		ops = [Op(vsql, "maintenance", vacuum, T)] + \
			[Op("INSERTs of %d keys into t_cmp until the VACUUM ends" % sizes[i], "write", writer(i), T) for i in range(nwriters)]
		self.run_ops(ops)
		self.stats["keys inserted into t_cmp beside its VACUUM"] += sum(counts)
		T.rows = self.chk.one("SELECT count(*) FROM t_cmp")
		self.rate_check(rng, T, "after a compaction beside writers")

	def step_trickle(self, rng, pre):
		"""Keys counted one by one past a layer's capacity.  t_fresh (capacity
		8,192 at 1 %: a count batch of 2, so small batches' counts are
		sampled) is emptied, loaded to just under its capacity in one
		statement (counted exactly), then takes 1,500 to 2,200 keys, one per
		transaction, each followed by an ANALYZE (which rebuilds every
		backend's relcache entry of the index: a count a backend kept to
		itself would be lost).  The layer is then past its capacity unless
		those keys were counted and it grew; the rate check tells."""
		T = self.tables["t_fresh"]
		slack = rng.randint(30, 200)
		m = rng.randint(1500, 2200)
		self.quiesce(T, standby=True)
		self.begin("TRUNCATE t_fresh; INSERT ... SELECT of %d keys; %d transactions of one key each, each followed by ANALYZE t_fresh"
				   % (8192 - slack, m), pre)
		lo = T.alloc(8192 - slack)
		lo2 = T.alloc(m)

		def fn(s):
			s.q("TRUNCATE t_fresh")
			s.q("INSERT INTO t_fresh (k) SELECT %s FROM generate_series(0, %d) g" % (self.key_expr(T, lo), 8192 - slack - 1))
			s.q("""DO $$ BEGIN
	FOR i IN 0 .. %d LOOP
		INSERT INTO t_fresh (k) VALUES (%d + i);
		COMMIT;
		ANALYZE t_fresh;
	END LOOP;
END $$""" % (m - 1, lo2))
		self.run_ops([Op("the keys of t_fresh", "write", fn, T)])
		T.rows = self.chk.one("SELECT count(*) FROM t_fresh")
		self.stats["trickles of single-key transactions past a layer's capacity"] += 1
		self.rate_check(rng, T, "after keys counted one by one")

	def step_horizon(self, rng, pre):
		"""A standby snapshot that sees rows a compaction judged dead (test
		022_index_standby's recipe).  Whatever holds the primary's horizon
		back is ended first (held transactions, prepared ones, primary
		readers).  t_fresh is emptied and loaded with 12,000 to 20,000 keys
		(two or more layers); a REPEATABLE READ transaction on the standby
		takes its snapshot; the rows of the heap's last page (not full:
		reading it does not prune it) but one are deleted, a cursor pins
		that page (VACUUM cannot prune it), and VACUUM compacts the index.
		Once the standby has replayed that, the standby transaction's probes
		of the deleted rows it still sees must not answer false: it is
		cancelled instead (the compaction's snapshot-conflict horizon)."""
		T = self.tables["t_fresh"]
		n = rng.randint(12000, 20000)
		for h in list(self.held):
			self.close_held(h)
		for p in list(self.prepared):
			self.resolve_prepared(p)
		for r in [r for r in self.readers if r.server == "primary" or T in r.tables]:
			self.close_reader(r)
		self.begin("TRUNCATE t_fresh; INSERT ... SELECT of %d keys; a standby REPEATABLE READ transaction; "
				   "DELETE of the heap's last page but one row; a cursor pinning it; VACUUM t_fresh; the standby's probes" % n, pre)
		lo = T.alloc(n + 200)
		c = self.chk
		rdr = pin = None
		op = Op(self.current, "write", None, T)
		try:
			c.q("TRUNCATE t_fresh")
			c.q("INSERT INTO t_fresh (k) SELECT %s FROM generate_series(0, %d) g" % (self.key_expr(T, lo), n - 1))
			last = c.one("SELECT max((ctid::text::point)[0])::int FROM t_fresh")
			full = c.one("SELECT count(*) FROM t_fresh WHERE ctid < '(1,0)'")
			if c.one("SELECT count(*) FROM t_fresh WHERE ctid >= '(%d,0)'" % last) > 0.8 * full:
				# a nearly full page may be pruned when read: begin another
				c.q("INSERT INTO t_fresh (k) SELECT %s FROM generate_series(0, %d) g"
					% (self.key_expr(T, lo + n), max(20, full // 2) - 1))
				last = c.one("SELECT max((ctid::text::point)[0])::int FROM t_fresh")
			where = "ctid >= '(%d,0)'" % last
			kept = c.one("SELECT max(k) FROM t_fresh WHERE %s" % where)
			gone = c.one("SELECT count(*) FROM t_fresh WHERE %s AND k <> %d" % (where, kept))
			T.rows = c.one("SELECT count(*) FROM t_fresh")
			if not self.catch_up(timeout=self.args.statement_timeout):
				self.stats["horizon steps skipped (the standby did not catch up)"] += 1
				return
			op.cat = "read"
			rdr = self.session("standby", "horizon reader")
			rdr.q("BEGIN ISOLATION LEVEL REPEATABLE READ")
			seen = rdr.one("SELECT count(*) FROM t_fresh WHERE %s AND k <> %d" % (where, kept))
			op.cat = "write"
			c.q("DELETE FROM t_fresh WHERE %s AND k <> %d" % (where, kept))
			pin = self.session("primary", "pin")
			pin.q("BEGIN")
			pin.q("DECLARE pin CURSOR FOR SELECT k FROM t_fresh WHERE %s" % where)
			pin.q("FETCH 1 FROM pin")
			op.cat = "maintenance"
			layers = c.one("SELECT layers FROM bloom_index_info('t_fresh_bf')")
			c.q("VACUUM t_fresh")
			after = c.one("SELECT layers FROM bloom_index_info('t_fresh_bf')")
			self.stats["horizon: compactions of t_fresh (%s)" % ("compacted" if after < layers else "not compacted")] += 1
			if seen != gone:
				self.stats["horizon: standby snapshot without the rows (it had not replayed them)"] += 1
			if not self.catch_up(timeout=self.args.statement_timeout):
				self.stats["horizon steps skipped (the standby did not catch up)"] += 1
				return
			op.cat = "read"
			try:
				missed = rdr.one("SELECT count(*) FILTER (WHERE NOT bloom_index_contains('t_fresh_bf', k)) "
								 "FROM t_fresh WHERE %s AND k <> %d" % (where, kept))
			except psycopg2.Error as e:
				self.judge(op, e, "standby", rdr)
				self.stats["horizon: standby snapshots cancelled by the compaction's replay"] += 1
				return
			self.stats["horizon: standby snapshots that outlived the compaction's replay"] += 1
			if missed:
				raise Failure("false negative on the standby (a REPEATABLE READ snapshot older than a compaction)",
							  "%d of the %d deleted rows of t_fresh its snapshot sees answer false from "
							  "bloom_index_contains('t_fresh_bf', k) after the standby replayed VACUUM t_fresh "
							  "(%d layers before it, %d after): the query was not cancelled" % (missed, seen, layers, after), T)
		except (psycopg2.Error, Failure) as e:
			c.reset()
			self.judge(op, e)
		finally:
			if pin is not None:
				pin.close()
			if rdr is not None:
				rdr.close()

	def step_maintenance(self, rng, pre):
		T = self.pick_table(rng)
		sql = rng.choice(["CHECKPOINT", "ANALYZE %s" % T.name])
		self.begin(sql, pre)
		self.run_ops([Op(sql, "maintenance", lambda s: s.q(sql), T)])

	# -- checks --------------------------------------------------------------

	def vacuum_running(self, T):
		return self.chk.one("SELECT count(*) FROM pg_stat_progress_vacuum WHERE relid = ANY(%s::regclass[])",
							(T.relids,)) > 0

	def rate_check(self, rng, T, when):
		"""The measured false-positive rate is within 1.2 x the requested one:
		probe N keys no row ever held; fail when the count of "maybe" answers
		is one that a rate of 1.2 x r gives with probability below alpha."""
		if T.kind == "enum" or "rate" in self.args.skip_set:
			return
		n = self.args.fp_probes
		self.check_logs()
		auto = [t for t in T.relids if self.autovacuumed.get(t) == self.step]
		for leaf in T.leaves:
			try:
				if self.vacuum_running(T):
					self.stats["rate checks skipped (a VACUUM of the table was running)"] += 1
					continue
				info = self.chk.q("SELECT false_positive_rate, layers, estimated_keys, expected_rate, advice "
								  "FROM bloom_index_info(%s::regclass)", (leaf,))[0]
				r, layers, keys, expected, advice = info
				if advice and "under way" in advice:
					self.stats["rate checks skipped (a compaction under way)"] += 1
					continue
				off = rng.randrange(10 ** 12)
				hits = self.chk.one("SELECT count(*) FROM generate_series(1, %%s) g WHERE bloom_index_contains(%%s::regclass, %s)"
									% self.absent_expr(T, off), (n, leaf))
				if self.vacuum_running(T):
					self.stats["rate checks skipped (a VACUUM of the table was running)"] += 1
					continue
			except psycopg2.Error as e:
				self.chk.reset()
				self.judge(Op("false-positive rate of %s" % leaf, "read", None, T), e)
				continue
			self.stats["rate checks (%d probes of absent keys each)" % n] += 1
			measured = hits / n
			ratio = measured / r
			self.rate_max[leaf] = max(self.rate_max.get(leaf, 0), ratio)
			limit = binom_threshold(n, min(0.999, 1.2 * r), self.args.alpha)
			if hits >= limit:
				self.failed(Failure("false-positive rate %s" % when,
									"%s: %d of %d absent keys answered true: %.4f, %.2f x the requested %g "
									"(the bound: %d, beyond which a rate of 1.2 x %g gives fewer than %g of samples); "
									"bloom_index_info: %d layers, estimated_keys %s, expected_rate %s, advice %s%s"
									% (leaf, hits, n, measured, ratio, r, limit, r, self.args.alpha,
									   layers, fmt(keys), fmt(expected), advice or "none",
									   "; an autovacuum of %s ended during this step" % ", ".join(auto) if auto else ""), T), self.current)
				return
			# bloom_index_info's expected_rate must tell the truth about it
			if expected is not None and math.isfinite(expected):
				hi = binom_threshold(n, min(0.999, max(2 * expected, expected + 0.005)), self.args.alpha)
				if hits >= hi:
					self.failed(Failure("bloom_index_info understates the rate",
										"%s: measured %.4f (%d of %d), bloom_index_info's expected_rate %s"
										% (leaf, measured, hits, n, fmt(expected)), T, repair=False), self.current)

	def check_info(self, sess, server, T):
		self.doing = "bloom_index_info('%s') on the %s" % (T.idx, server)
		rows = sess.q("SELECT indexrelid::regclass::text, layers, estimated_keys, expected_rate, advice "
					  "FROM bloom_index_info(%s::regclass)", (T.idx,))
		for leaf, layers, keys, expected, advice in rows:
			# (a tiny layer's rate may round to 0; a saturated one must not
			# read as Infinity keys at rate 0)
			if keys is None or not math.isfinite(keys) or keys < 0 or expected is None or \
					not math.isfinite(expected) or not (0 <= expected <= 1):
				raise Failure("bloom_index_info on the %s is not telling the truth" % server,
							  "%s: layers %s, estimated_keys %s, expected_rate %s, advice %s"
							  % (leaf, layers, fmt(keys), fmt(expected), advice), T, repair=True)
			if server == "primary":
				old = T.layers.get(leaf)
				if old is not None and layers > old:
					self.stats["growths seen (layers added between checks)"] += layers - old
				T.layers[leaf] = layers
		self.doing = "bloom_index_filters('%s') on the %s" % (T.idx, server)
		sess.q("SELECT count(*) FROM bloom_index_filters(%s::regclass)", (T.idx,))

	def check_all(self):
		"""The invariants, after every step."""
		c = self.chk
		# the primary: bloom_index_verify = 0 (a fresh snapshot), info, filters
		for T in self.tables.values():
			desc = self.doing = "bloom_index_verify('%s') on the primary" % T.idx
			try:
				n = c.one("SELECT bloom_index_verify(%s::regclass)", (T.idx,))
				self.stats["verify checks on the primary"] += 1
				if n:
					keys = c.q("SELECT k::text FROM %s WHERE k IS NOT NULL AND NOT bloom_index_contains(%%s::regclass, k) LIMIT 6"
							   % T.name, (T.idx,))
					self.failed(Failure("bloom_index_verify on the primary",
										"%s = %d, e.g. keys %s" % (desc, n, ", ".join(k[0] for k in keys)), T), self.current)
					continue
				T.rows = c.one("SELECT count(*) FROM %s" % T.name)
				if T.partitioned:
					self.doing = "bloom_index_partitions('t_part_bf', k) on the primary"
					# the partition of each sampled row is among bloom_index_partitions
					bad = c.one("SELECT count(*) FROM (SELECT tableoid::regclass AS p, k FROM t_part "
								"ORDER BY random() LIMIT 200) s WHERE k IS NOT NULL AND NOT EXISTS "
								"(SELECT FROM bloom_index_partitions('t_part_bf', s.k) b WHERE b = s.p)")
					if bad:
						self.failed(Failure("bloom_index_partitions on the primary",
											"%d of 200 sampled rows of t_part whose partition bloom_index_partitions does not name" % bad, T), self.current)
				c.q("BEGIN READ ONLY")
				try:
					self.check_info(c, "primary", T)
				finally:
					c.q("COMMIT")
			except Failure as f:
				c.reset()
				self.failed(f, self.current)
			except psycopg2.Error as e:
				c.reset()
				if not self.refusal_ok(e, T, "primary"):
					self.judge(Op(self.doing, "read", None, T), e)
		for r in [r for r in self.readers if r.server == "primary"]:
			self.check_reader(r)
		# the standby: caught up (or as far as it gets), a fresh check of every
		# logged table, info and filters, then its readers
		self.catch_up()
		s = self.chk_s
		for T in self.tables.values():
			if T.unlogged:
				continue
			desc = self.doing = "bloom_index_contains('%s', k) of every row of %s on the standby" % (T.idx, T.name)
			try:
				if not s.alive():
					s.connect()
				n = s.one("SELECT count(*) FROM %s WHERE k IS NOT NULL AND NOT bloom_index_contains(%%s::regclass, k)"
						  % T.name, (T.idx,))
				self.stats["fresh checks on the standby"] += 1
				if n:
					keys = s.q("SELECT k::text FROM %s WHERE k IS NOT NULL AND NOT bloom_index_contains(%%s::regclass, k) LIMIT 6"
							   % T.name, (T.idx,))
					self.failed(Failure("false negative on the standby (a fresh snapshot)",
										"%d rows of %s whose key bloom_index_contains('%s', k) answers false, e.g. %s"
										% (n, T.name, T.idx, ", ".join(k[0] for k in keys)), T), self.current)
					continue
				self.check_info(s, "standby", T)
			except Failure as f:
				s.reset()
				self.failed(f, self.current)
			except psycopg2.Error as e:
				pid = s.pid
				s.reset()
				if not self.refusal_ok(e, T, "standby"):
					self.judge(Op(self.doing, "read", None, T), e, "standby",
							   type("S", (), {"pid": pid})())
		for r in [r for r in self.readers if r.server == "standby"]:
			self.check_reader(r)
		self.check_logs()

	def catch_up(self, timeout=None):
		"""Wait until the standby has replayed everything the primary has
		inserted into its WAL so far.  The primary runs synchronous_commit =
		off: its last commits may still be in the WAL buffers, beyond
		pg_current_wal_lsn() (the write position), so the target is the
		insert position; the WAL writer flushes them within
		wal_writer_delay, and the standby gets them then.  Returns whether
		it caught up within timeout seconds (default --catchup-timeout;
		None: counted, and the checks run on what it has replayed)."""
		try:
			target = lsn_int(self.chk.one("SELECT pg_current_wal_insert_lsn()::text"))
		except psycopg2.Error:
			self.chk.reset()
			return False
		# an insert position at the start of a page points past the page's
		# header, where replay (the end of the last record) stops short of
		if target % XLOG_BLCKSZ in (24, 40):
			target -= target % XLOG_BLCKSZ
		limit = self.args.catchup_timeout if timeout is None else timeout
		deadline = time.time() + limit
		while True:
			try:
				if not self.chk_s.alive():
					self.chk_s.connect()
				replayed = self.chk_s.one("SELECT pg_last_wal_replay_lsn()::text")
				if replayed is not None and lsn_int(replayed) >= target:
					return True
			except psycopg2.Error:
				self.chk_s.reset()
			if time.time() > deadline:
				if timeout is None:
					self.stats["standby checks before it caught up (lagging > %d s)" % limit] += 1
				return False
			time.sleep(0.05)

	def check_logs(self):
		for w in self.logs:
			for btype, code, level, msg, line in w.lines():
				if btype is None:
					continue
				if btype == "autovacuum worker":
					if msg.startswith("automatic vacuum of table"):
						m = re.search(r'"[^".]*\.[^".]*\.([^"]*)"', msg)
						self.stats["autovacuums of %s" % (m.group(1) if m else "?")] += 1
						if m:
							self.autovacuumed[m.group(1)] = self.step
					if level == "ERROR" and code != "57014":
						self.failed(Failure("autovacuum failed (server log)", "%s: %s" % (w.server, line),
											None, repair=False), "autovacuum")
				if level == "PANIC" or "terminated by signal" in msg or "was terminated by exception" in msg:
					self.failed(Failure("server crash (%s log)" % w.server, line, None, repair=False), self.current)
					raise StopRun()
				if w.server == "standby" and btype == "startup" and level in ("FATAL", "ERROR"):
					self.failed(Failure("replay failed on the standby", line, None, repair=False), self.current)
					raise StopRun()
				if w.server == "standby" and "conflict with recovery" in msg:
					self.stats["recovery conflicts in the standby's log"] += 1

	# -- the end -------------------------------------------------------------

	def finish(self):
		"""End everything kept, VACUUM every table, check once more."""
		self.current = "end of run: commit what is held, VACUUM every table, last checks"
		for h in list(self.held):
			self.close_held(h, commit=True)
		for p in list(self.prepared):
			self.resolve_prepared(p)
		for r in list(self.readers):
			self.close_reader(r)
		rng = random.Random("%d:end" % self.seed)
		for T in self.tables.values():
			if T.unlogged:
				self.run_ops([Op("ALTER TABLE %s SET LOGGED" % T.name, "maintenance",
								 lambda s, T=T: s.q("ALTER TABLE %s SET LOGGED" % T.name), T)])
				T.unlogged = False
			self.run_ops([Op("VACUUM %s" % T.name, "maintenance", lambda s, T=T: s.q("VACUUM %s" % T.name), T)])
			self.rate_check(rng, T, "after the last VACUUM")
		self.check_all()

	def summary(self, elapsed):
		log("")
		log("soak: seed %d, %d steps in %.0f s on %s" % (self.seed, self.step, elapsed, self.cl.version))
		for k in sorted(self.stats):
			log("  %-72s %d" % (k, self.stats[k]))
		for leaf in sorted(self.rate_max):
			log("  %-72s %.2f" % ("highest measured / requested false-positive rate, %s" % leaf, self.rate_max[leaf]))
		log("  %-72s %s" % ("rows now", ", ".join("%s %d" % (T.name, T.rows) for T in self.tables.values())))
		if self.failures:
			log("")
			log("soak: %d failures (seed %d):" % (len(self.failures), self.seed))
			seen = set()
			for step, opdesc, f in self.failures:
				sig = (f.check, re.sub(r"\d+", "N", f.detail)[:120])
				if sig in seen:
					continue
				seen.add(sig)
				log("  step %d: %s (%d times): %s" % (step, f.check, self.signatures[sig], f.detail[:300]))


class StopRun(Exception):
	pass


def weighted(rng, pairs):
	total = sum(w for _, w in pairs)
	x = rng.random() * total
	for k, w in pairs:
		x -= w
		if x < 0:
			return k
	return pairs[-1][0]


def fmt(x):
	if x is None:
		return "NULL"
	if isinstance(x, float):
		return "%.6g" % x
	return str(x)


# ---------------------------------------------------------------------------

def main():
	ap = argparse.ArgumentParser(description="Randomized soak test of the bloomfilter index (see test/soak/README.md).")
	ap.add_argument("--seconds", type=float, default=60, help="run steps for this long (default 60)")
	ap.add_argument("--steps", type=int, default=0, help="run exactly this many steps instead (a replay)")
	ap.add_argument("--seed", type=int, default=None, help="the random seed (default: a random one, printed)")
	ap.add_argument("--pg-config", default=DEFAULT_PG_CONFIG, help="pg_config of the server to run (default %(default)s)")
	ap.add_argument("--no-tour", action="store_true", help="no tour: the first steps are drawn like the others")
	ap.add_argument("--keep-going", action="store_true", help="after a failure, REINDEX the index and go on; exit 1 at the end")
	ap.add_argument("--only", default="", help="only these scenarios (comma-separated: %s)" % ", ".join(SCENARIOS))
	ap.add_argument("--skip", default="", help="leave out these scenarios, or: %s, rate" % ", ".join(EXTRAS))
	ap.add_argument("--fp-probes", type=int, default=50000, help="absent keys probed per false-positive check (default %(default)s)")
	ap.add_argument("--alpha", type=float, default=1e-6, help="false-alarm probability of one false-positive check (default %(default)s)")
	ap.add_argument("--standby-delay", default="1s", help="the standby's max_standby_streaming_delay (default %(default)s)")
	ap.add_argument("--catchup-timeout", type=int, default=20, help="seconds to wait for the standby before its checks (default %(default)s)")
	ap.add_argument("--setup-timeout", type=int, default=600, help="seconds to wait for the standby to replay the setup, else exit 2 (default %(default)s)")
	ap.add_argument("--statement-timeout", type=int, default=300, help="seconds after which a statement counts as hung (default %(default)s)")
	ap.add_argument("--wal-consistency", action="store_true", help="wal_consistency_checking = 'generic' on the primary")
	ap.add_argument("--keep", action="store_true", help="keep the temporary directory (servers stopped)")
	ap.add_argument("--verbose", "-v", action="store_true", help="print every step")
	args = ap.parse_args()
	if args.seed is None:
		args.seed = random.SystemRandom().randrange(1, 10 ** 9)
	only = set(filter(None, args.only.split(",")))
	args.skip_set = set(filter(None, args.skip.split(",")))
	for name in only | args.skip_set:
		if name not in SCENARIOS and name not in EXTRAS + ["rate"]:
			ap.error("unknown scenario %r" % name)
	args.scenarios = [s for s in SCENARIOS if (not only or s in only) and s not in args.skip_set]
	if not args.scenarios:
		ap.error("no scenario left")

	log("soak: seed %d (replay with --seed %d)" % (args.seed, args.seed))
	tmp = tempfile.mkdtemp(prefix="bfsoak.")
	os.chmod(tmp, 0o755)
	if os.geteuid() == 0:
		pw = pwd.getpwnam("postgres")
		os.chown(tmp, pw.pw_uid, pw.pw_gid)
	cl = None
	soak = None
	status = 1
	t0 = time.time()
	signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
	try:
		cl = Cluster(args, tmp)
		log("soak: %s, primary and standby in %s (sockets, ports %d and %d)" % (cl.version, tmp, cl.ports[0], cl.ports[1]))
		log("soak: module %s, installed %s" % (cl.module, time.strftime(
			"%Y-%m-%d %H:%M:%S", time.localtime(cl.module_mtime)) if cl.module_mtime else "?"))
		# the setup: anything that fails here is the harness's failure
		# (exit 2), not a check's; the servers are stopped below
		try:
			cl.start()
			soak = Soak(args, cl)
			soak.connect_all()
			soak.setup()
		except (psycopg2.Error, Failure, StopRun, OSError, subprocess.SubprocessError) as e:
			raise HarnessError("the setup failed: %s: %s" % (type(e).__name__, e))
		# the standby must have the tables before the first step's checks
		if not soak.catch_up(timeout=args.setup_timeout):
			raise HarnessError("the standby did not replay the setup in %d s" % args.setup_timeout)
		log("soak: %s" % ("%d steps" % args.steps if args.steps else "%g s of steps" % args.seconds))
		t0 = time.time()
		last = t0
		try:
			while (soak.step < args.steps) if args.steps else (time.time() - t0 < args.seconds):
				soak.step += 1
				rng = random.Random("%d:%d" % (args.seed, soak.step))
				soak.do_step(rng)
				soak.check_all()
				soak.repair()
				if time.time() - last >= 15 and not args.verbose:
					last = time.time()
					log("soak: %.0f s, %d steps, %d failures" % (last - t0, soak.step, len(soak.failures)))
			soak.finish()
		except StopRun:
			pass
		except Failure as f:
			soak.failed(f, soak.current)
		status = 1 if soak.failures else 0
	except StopRun:
		status = 1
	except KeyboardInterrupt:
		log("soak: interrupted")
		status = 130
	except (SystemExit, HarnessError) as e:
		log("soak: %s" % e if isinstance(e, HarnessError) else str(e))
		status = 2
	except Exception:
		traceback.print_exc()
		if soak is not None:
			log("soak: driver error at step %d (seed %d): %s" % (soak.step, args.seed, soak.current))
		status = 2
	finally:
		if cl is not None and cl.module_mtime and os.path.exists(cl.module) and \
				os.path.getmtime(cl.module) != cl.module_mtime:
			log("soak: WARNING: %s was installed again during the run: its backends may have run two builds" % cl.module)
		# a second SIGTERM or ^C must not cut the cleanup short
		signal.signal(signal.SIGTERM, signal.SIG_IGN)
		signal.signal(signal.SIGINT, signal.SIG_IGN)
		if soak is not None:
			soak.summary(time.time() - t0)
			if status != 0:
				for w in soak.logs:
					tail_errors(w.path, w.server)
		if cl is not None:
			try:
				cl.stop()
			except BaseException:
				pass
		if args.keep:
			log("soak: kept %s" % tmp)
		else:
			shutil.rmtree(tmp, ignore_errors=True)
	log("soak: %s (seed %d)" % ({0: "passed", 1: "FAILED", 2: "could not run", 130: "interrupted"}.get(status, "?"), args.seed))
	sys.exit(status)


def tail_errors(path, server, n=15):
	"""The server's last ERROR / FATAL / PANIC lines, for a failed run."""
	try:
		with open(path, errors="replace") as f:
			lines = [l.rstrip("\n") for l in f if re.search(r"\b(ERROR|FATAL|PANIC):", l)]
	except OSError:
		return
	if lines:
		log("")
		log("last errors in the %s's log:" % server)
		for l in lines[-n:]:
			log("  " + l[:400])


if __name__ == "__main__":
	main()
