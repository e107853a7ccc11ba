// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* out_open/out_commit (user/output/output_files.c): a file appears whole
 * under its name; a leftover or a planted symlink at the temporary name is
 * replaced, never written through. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/output_files.h"
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

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir))
		return 1;
	RUN(test_plain);
	RUN(test_leftover_and_symlink);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
		/* best effort */
	}
	UNIT_DONE();
}
