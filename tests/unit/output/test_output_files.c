// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* out_open/out_commit (user/util/file/output_files.c): a file appears whole
 * under its name; a leftover or a planted symlink at the temporary name is
 * replaced, never written through. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output/earlier_run.h"
#include "util/file/output_files.h"
#include "unit.h"

static char dir[] = "/tmp/fvbpf-test-outfiles.XXXXXX";

static void read_all(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

static int write_file(const char *name, const char *text)
{
	struct out_file of;
	int ret = out_open(&of, dir, name);

	if (ret)
		return ret;
	fputs(text, of.f);
	return out_commit(&of);
}

static void test_plain(void)
{
	char path[512], buf[64];
	struct stat st;

	CHECK_EQ(write_file("a.txt", "one"), 0);
	snprintf(path, sizeof(path), "%s/a.txt", dir);
	read_all(path, buf, sizeof(buf));
	CHECK_STR(buf, "one");
	/* again over it: replaced, no temporary left */
	CHECK_EQ(write_file("a.txt", "two"), 0);
	read_all(path, buf, sizeof(buf));
	CHECK_STR(buf, "two");
	snprintf(path, sizeof(path), "%s/.a.txt.tmp.%d", dir, getpid());
	CHECK(lstat(path, &st) != 0 && errno == ENOENT);
}

/* The temporary name taken by a leftover file and by a symlink to a victim. */
static void test_leftover_and_symlink(void)
{
	char tmp[512], victim[512], path[512], buf[64];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.b.txt.tmp.%d", dir, getpid());
	f = fopen(tmp, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("stale", f);
		fclose(f);
	}
	CHECK_EQ(write_file("b.txt", "fresh"), 0);
	snprintf(path, sizeof(path), "%s/b.txt", dir);
	read_all(path, buf, sizeof(buf));
	CHECK_STR(buf, "fresh");

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("keep", f);
		fclose(f);
	}
	snprintf(tmp, sizeof(tmp), "%s/.c.txt.tmp.%d", dir, getpid());
	CHECK_EQ(symlink(victim, tmp), 0);
	CHECK_EQ(write_file("c.txt", "new"), 0);
	read_all(victim, buf, sizeof(buf));
	CHECK_STR(buf, "keep");
	snprintf(path, sizeof(path), "%s/c.txt", dir);
	read_all(path, buf, sizeof(buf));
	CHECK_STR(buf, "new");
}

/* An earlier attach's files by name only (output/earlier_run.h). */
static void test_earlier_run_names(void)
{
	static const char *const ours[] = {
		"manifest.json", "trace_rank0_segment0000_step.json",
		"summary_rank12_restart1_segment0042_training_train_one_step.txt",
		"trace_pid4242_segment12345_window.json.gz", "memory_rank0_segment0001_step.svg",
	};
	static const char *const theirs[] = {
		"notes.txt", "manifest.json.bak", "trace_rank_segment0000_step.json",
		"trace_rank0_segment000_step.json", "trace_rankX_segment0000_step.json",
		"Trace_rank0_segment0000_step.json", "trace_rank0_segment0000", "_rank0_segment0000_x",
		"trace_pid_segment0000_x", "trace_rank0_restart_segment0000_x",
	};
	char sub[PATH_MAX], path[PATH_MAX + 64];
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		CHECK(earlier_run_name(ours[i]));
	for (i = 0; i < sizeof(theirs) / sizeof(theirs[0]); i++)
		CHECK(!earlier_run_name(theirs[i]));
	snprintf(sub, sizeof(sub), "%s/earlier", dir);
	CHECK_EQ(earlier_run_files(sub, false), 0); /* no directory yet */
	CHECK_EQ(mkdir(sub, 0755), 0);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", sub, i ? theirs[0] : ours[1]);
		f = fopen(path, "w");
		CHECK(f != NULL);
		if (f)
			fclose(f);
	}
	CHECK_EQ(earlier_run_files(sub, false), 1);
	CHECK_EQ(earlier_run_files(sub, true), 1);
	CHECK_EQ(earlier_run_files(sub, false), 0);
	snprintf(path, sizeof(path), "%s/%s", sub, theirs[0]);
	CHECK_EQ(access(path, F_OK), 0); /* not ours: kept */
}

/* One fvbpf per node on a shared file system: each makes its own
 * directory under a parent none has made yet.  Both create the parent;
 * the one whose mkdir comes second must take the other's directory, not
 * fail with EEXIST (it did, about one srun in three). */
static void test_parents_made_at_once(void)
{
	enum { ROUNDS = 300, PROCS = 4 };
	int round, failures = 0;

	for (round = 0; round < ROUNDS; round++) {
		int go[2], i, status;
		pid_t kids[PROCS];

		if (pipe(go))
			break;
		for (i = 0; i < PROCS; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				char path[256], err[256], c;

				close(go[1]);
				/* all start together: at EOF of the pipe */
				while (read(go[0], &c, 1) > 0)
					;
				snprintf(path, sizeof(path), "%s/r%d/a/b/node-%d", dir, round, i);
				_exit(outdir_prepare(path, err, sizeof(err)) ? 1 : 0);
			}
		}
		close(go[0]);
		close(go[1]);
		for (i = 0; i < PROCS; i++) {
			if (kids[i] < 0 || waitpid(kids[i], &status, 0) != kids[i] ||
			    !WIFEXITED(status) || WEXITSTATUS(status))
				failures++;
		}
	}
	CHECK_EQ(failures, 0);
	CHECK_EQ(round, ROUNDS);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir))
		return 1;
	RUN(test_plain);
	RUN(test_leftover_and_symlink);
	RUN(test_earlier_run_names);
	RUN(test_parents_made_at_once);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
		/* best effort */
	}
	UNIT_DONE();
}
