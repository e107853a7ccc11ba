// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Temporary files of killed fvbpf runs (user/output/stale_tmp.c). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output/stale_tmp.h"
#include "unit.h"

static void test_owner_names(void)
{
	CHECK_EQ(stale_tmp_owner(".trace_rank0_segment0000_training_forward.json.tmp.123"), 123);
	CHECK_EQ(stale_tmp_owner(".summary_pid7_segment10000_x.txt.tmp.4194304"), 4194304);
	CHECK_EQ(stale_tmp_owner(".manifest.json.tmp.5"), 5);
	CHECK_EQ(stale_tmp_owner(".fvbpf-write-test.42"), 42);
	/* a region name holding ".tmp." itself: the last one counts */
	CHECK_EQ(stale_tmp_owner(".trace_rank0_segment0001_a.tmp.b.json.tmp.77"), 77);
	/* none of ours */
	CHECK_EQ(stale_tmp_owner("trace_rank0_segment0000_x.json"), 0);
	CHECK_EQ(stale_tmp_owner(".bashrc"), 0);
	CHECK_EQ(stale_tmp_owner(".other.json.tmp.5"), 0);
	CHECK_EQ(stale_tmp_owner(".trace_x.json.tmp."), 0);
	CHECK_EQ(stale_tmp_owner(".trace_x.json.tmp.12a"), 0);
	CHECK_EQ(stale_tmp_owner(".trace_x.json.tmp.-1"), 0);
	CHECK_EQ(stale_tmp_owner(".trace_x.json.tmp.0"), 0);
	CHECK_EQ(stale_tmp_owner(".trace_x.json.tmp.99999999999999999999"), 0);
	CHECK_EQ(stale_tmp_owner(".trace_x.json"), 0);
}

static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static void touch(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

static void test_clean_removes_only_dead_ones(void)
{
	char dir[] = "/tmp/fvbpf-stale-XXXXXX", dead[128], reused[128], mine[128], link[128];
	char path[512];
	pid_t gone = dead_pid();

	CHECK(mkdtemp(dir) != NULL);
	snprintf(dead, sizeof(dead), ".trace_rank0_segment0000_x.json.tmp.%d", (int)gone);
	/* our parent is alive, and no fvbpf: its PID was reused */
	snprintf(reused, sizeof(reused), ".summary_rank0_segment0000_x.txt.tmp.%d", (int)getppid());
	snprintf(mine, sizeof(mine), ".manifest.json.tmp.%d", (int)getpid());
	snprintf(link, sizeof(link), ".trace_rank0_segment0001_x.json.tmp.%d", (int)gone);
	touch(dir, dead);
	touch(dir, reused);
	touch(dir, mine);
	touch(dir, "trace_rank0_segment0000_x.json");
	snprintf(path, sizeof(path), "%s/%s", dir, link);
	CHECK_EQ(symlink("/etc/passwd", path), 0);

	CHECK_EQ(stale_tmp_clean(dir), 2);
	CHECK(!exists(dir, dead));
	CHECK(!exists(dir, reused));
	CHECK(exists(dir, mine));                 /* this process's own */
	CHECK(exists(dir, link));                 /* not a regular file */
	CHECK(exists(dir, "trace_rank0_segment0000_x.json"));
	CHECK_EQ(stale_tmp_clean(dir), 0);

	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, mine);
	unlink(path);
	snprintf(path, sizeof(path), "%s/trace_rank0_segment0000_x.json", dir);
	unlink(path);
	CHECK_EQ(rmdir(dir), 0);
	CHECK(stale_tmp_clean(dir) < 0);
}

int main(void)
{
	RUN(test_owner_names);
	RUN(test_clean_removes_only_dead_ones);
	UNIT_DONE();
}
