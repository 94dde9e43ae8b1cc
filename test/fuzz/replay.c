/*-------------------------------------------------------------------------
 *
 * replay.c
 *	  Run fuzz_decode.c's target once on each input file, without libFuzzer:
 *	  the regression test for everything the fuzzer ever found, and a smoke
 *	  test over the seed corpus.
 *
 *	  replay [-t seconds] FILE-or-DIRECTORY...
 *
 * Directories are read one level deep, in name order.  A sanitizer report or
 * a failed check aborts, as under libFuzzer; an input that runs longer than
 * the time limit (10 s by default) is reported and ends the run with status
 * 1, since a decoder must not hang either.  Prints one line per input run.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  test/fuzz/replay.c
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *current;
static unsigned timeout_s = 10;
static int	nrun;

static void
on_alarm(int sig)
{
	static const char msg1[] = "replay: TIMEOUT on ";
	(void) sig;
	/* async-signal-safe output only */
	if (write(2, msg1, sizeof(msg1) - 1) < 0 ||
		write(2, current, strlen(current)) < 0 ||
		write(2, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

static void
run_file(const char *path)
{
	FILE	   *fp = fopen(path, "rb");
	uint8_t    *buf;
	long		n;

	if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (n = ftell(fp)) < 0 ||
		fseek(fp, 0, SEEK_SET) != 0)
	{
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(2);
	}
	/* exactly n bytes, as libFuzzer passes them: overreads hit ASan */
	buf = malloc(n ? (size_t) n : 1);
	if (buf == NULL || (n > 0 && fread(buf, 1, (size_t) n, fp) != (size_t) n))
	{
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(2);
	}
	fclose(fp);

	current = path;
	printf("replay: %s (%ld bytes)\n", path, n);
	fflush(stdout);
	alarm(timeout_s);
	LLVMFuzzerTestOneInput(buf, (size_t) n);
	alarm(0);
	free(buf);
	nrun++;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static void
run_path(const char *path)
{
	struct stat st;
	DIR		   *d;
	struct dirent *e;
	char	  **names = NULL;
	size_t		n = 0,
				cap = 0;

	if (stat(path, &st) != 0)
	{
		fprintf(stderr, "replay: no such file: %s\n", path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode))
	{
		run_file(path);
		return;
	}
	if ((d = opendir(path)) == NULL)
	{
		fprintf(stderr, "replay: cannot open %s\n", path);
		exit(2);
	}
	while ((e = readdir(d)) != NULL)
	{
		char	   *full;
		struct stat fst;

		if (e->d_name[0] == '.')
			continue;
		full = malloc(strlen(path) + strlen(e->d_name) + 2);
		sprintf(full, "%s/%s", path, e->d_name);
		/* regular files only, and never the README beside the inputs */
		if (stat(full, &fst) != 0 || !S_ISREG(fst.st_mode) ||
			strcmp(e->d_name, "README.md") == 0)
		{
			free(full);
			continue;
		}
		if (n == cap)
		{
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof(char *));
		}
		names[n++] = full;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(char *), cmp_names);
	for (size_t i = 0; i < n; i++)
	{
		run_file(names[i]);
		free(names[i]);
	}
	free(names);
}

int
main(int argc, char **argv)
{
	int			i = 1;

	if (argc > 2 && strcmp(argv[1], "-t") == 0)
	{
		timeout_s = (unsigned) atoi(argv[2]);
		i = 3;
	}
	if (i >= argc)
	{
		fprintf(stderr, "usage: replay [-t seconds] FILE-or-DIRECTORY...\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	for (; i < argc; i++)
		run_path(argv[i]);
	printf("replay: %d inputs, no crash, no sanitizer report, no timeout\n", nrun);
	return 0;
}
