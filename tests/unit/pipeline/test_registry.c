// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The region registry (user/pipeline/registry.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/registry.h"
#include "unit.h"

static const char *const builtins[] = {
	"model_loading",
	"inference_denoising",
	"training_train",
	"training_train_one_step",
	"training_dataloader",
	"training_forward",
	"training_backward",
	"training_optimizer",
	"training_callbacks",
	"training_validation",
	"training_save_checkpoint",
	"distillation_teacher_forward",
	"distillation_student_forward",
	"distillation_loss",
	"distillation_update",
	"dmd2_student_rollout",
	"dmd2_generator_loss",
	"dmd2_critic_loss",
};
#define NBUILTIN (sizeof(builtins) / sizeof(builtins[0]))

/* The registry is large (256 entries): keep it off the stack. */
static struct region_registry reg;

struct warns {
	int n;
	char last[256];
};

static void warn_cb(const char *msg, void *ctx)
{
	struct warns *w = ctx;

	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

/* Write @text to a fresh temporary file; its path goes to @path. */
static int write_temp(char *path, size_t len, const char *text)
{
	int fd;
	size_t n = strlen(text);

	snprintf(path, len, "/tmp/fvbpf_test_regions_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, text, n) != (ssize_t)n) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

static void test_builtins(void)
{
	unsigned int i;

	registry_init(&reg);
	CHECK_EQ(NBUILTIN, 18);
	CHECK_EQ(reg.count, 18);
	for (i = 0; i < NBUILTIN && i < reg.count; i++) {
		CHECK_STR(reg.defs[i].name, builtins[i]);
		CHECK(reg.defs[i].builtin);
		CHECK(!reg.defs[i].enabled);
		CHECK_EQ(reg.defs[i].entered, 0);
		CHECK(reg.defs[i].desc[0] != '\0');
		CHECK(reg.defs[i].hash == fvbpf_region_hash(builtins[i]));
		CHECK_EQ(registry_find(&reg, builtins[i]), i);
		CHECK_EQ(registry_find_hash(&reg, fvbpf_region_hash(builtins[i])), i);
	}
	CHECK_EQ(registry_enabled_count(&reg), 0);
	/* init resets a registry that was used before. */
	registry_add(&reg, "custom", "x");
	reg.defs[0].enabled = true;
	registry_init(&reg);
	CHECK_EQ(reg.count, 18);
	CHECK_EQ(registry_enabled_count(&reg), 0);
	CHECK(registry_find(&reg, "custom") < 0);
}

static void test_find(void)
{
	registry_init(&reg);
	CHECK_EQ(registry_find(&reg, "training_train_one_step"), 3);
	CHECK_EQ(registry_find(&reg, "profiler_region_training_train_one_step"), 3);
	CHECK_EQ(registry_find(&reg, "  PROFILER_REGION_Training_Train_One_Step \t\n"), 3);
	CHECK_EQ(registry_find(&reg, "TRAINING_FORWARD"), 5);
	CHECK_EQ(registry_find(&reg, " training_forward"), 5);
	CHECK_EQ(registry_find(&reg, "profiler_region_dmd2_critic_loss"), 17);
	CHECK_EQ(registry_find(&reg, "dmd2_critic_loss"), 17);
	CHECK_EQ(registry_find(&reg, "model_loading"), 0);
	/* Unknown and invalid names. */
	CHECK(registry_find(&reg, "training_foo") < 0);
	CHECK(registry_find(&reg, "training_forwardx") < 0);
	CHECK(registry_find(&reg, "training forward") < 0);
	CHECK(registry_find(&reg, "profiler_region_") < 0);
	CHECK(registry_find(&reg, "") < 0);
	CHECK(registry_find(&reg, "   ") < 0);
	CHECK(registry_find_hash(&reg, fvbpf_region_hash("training_foo")) < 0);
	CHECK(registry_find_hash(&reg, 0) < 0);
	CHECK_EQ(registry_find_hash(&reg, fvbpf_region_hash("Profiler_Region_Training_Forward")), 5);
}

static void test_add(void)
{
	char name[80];
	int idx, i, ret;

	registry_init(&reg);
	idx = registry_add(&reg, "  Profiler_Region_My_Region ", "mine");
	CHECK_EQ(idx, 18);
	CHECK_EQ(reg.count, 19);
	CHECK_STR(reg.defs[18].name, "my_region");
	CHECK_STR(reg.defs[18].desc, "mine");
	CHECK(!reg.defs[18].builtin);
	CHECK(!reg.defs[18].enabled);
	CHECK(reg.defs[18].hash == fvbpf_region_hash("my_region"));
	CHECK_EQ(registry_find(&reg, "MY_REGION"), 18);
	/* Adding again returns the same entry; a custom description is updated. */
	CHECK_EQ(registry_add(&reg, "my_region", "better"), 18);
	CHECK_EQ(reg.count, 19);
	CHECK_STR(reg.defs[18].desc, "better");
	CHECK_EQ(registry_add(&reg, "my_region", ""), 18);
	CHECK_STR(reg.defs[18].desc, "better");
	CHECK_EQ(registry_add(&reg, "my_region", NULL), 18);
	CHECK_STR(reg.defs[18].desc, "better");
	/* A builtin keeps its description and stays builtin. */
	CHECK_EQ(registry_add(&reg, "training_forward", "override"), 5);
	CHECK_STR(reg.defs[5].desc, "forward pass");
	CHECK(reg.defs[5].builtin);
	/* Invalid names. */
	CHECK_EQ(registry_add(&reg, "", "x"), -EINVAL);
	CHECK_EQ(registry_add(&reg, " \t ", "x"), -EINVAL);
	memset(name, 'n', 64);
	name[64] = '\0';
	CHECK_EQ(registry_add(&reg, name, "x"), -EINVAL);
	name[63] = '\0';
	CHECK_EQ(registry_add(&reg, name, "x"), 19);
	CHECK_EQ(reg.count, 20);
	/* A NULL description is an empty one. */
	CHECK_EQ(registry_add(&reg, "nodesc", NULL), 20);
	CHECK_STR(reg.defs[20].desc, "");
	/* Fill it up. */
	for (i = (int)reg.count; i < FVBPF_MAX_REGIONS; i++) {
		snprintf(name, sizeof(name), "fill_%d", i);
		ret = registry_add(&reg, name, NULL);
		if (ret != i) {
			CHECK_EQ(ret, i);
			break;
		}
	}
	CHECK_EQ(reg.count, FVBPF_MAX_REGIONS);
	CHECK_EQ(registry_add(&reg, "one_too_many", NULL), -ENOSPC);
	CHECK_EQ(reg.count, FVBPF_MAX_REGIONS);
	/* A name already there is still found when full. */
	CHECK_EQ(registry_add(&reg, "my_region", NULL), 18);
}

/*
 * The library hashes the name exactly as the application wrote it
 * (fvbpf_region_hash(name), user/lib/markers.c) and BPF looks that hash up
 * among the enabled regions' hashes: for any name, the hash route and the
 * name route must agree on the region.
 */
static void test_hash_route_matches_name_route(void)
{
	static const char *const spellings[] = {
		"training_forward",
		"PROFILER_REGION_training_forward",
		"  Training_Forward\n",
		"profiler_region_profiler_region_x",
		"PROFILER_REGION_Profiler_Region_X ",
	};
	size_t i;
	int idx;

	registry_init(&reg);
	idx = registry_add(&reg, "profiler_region_profiler_region_x", "double prefix");
	CHECK(idx >= 0);
	if (idx >= 0)
		CHECK_STR(reg.defs[idx].name, "profiler_region_x");
	for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		int by_name = registry_find(&reg, spellings[i]);
		int by_hash = registry_find_hash(&reg, fvbpf_region_hash(spellings[i]));

		if (by_name != by_hash)
			printf("# '%s': registry_find %d, registry_find_hash %d\n",
			       spellings[i], by_name, by_hash);
		CHECK(by_name >= 0);
		CHECK_EQ(by_name, by_hash);
	}
	/* "x" and "profiler_region_x" are two different canonical names. */
	registry_init(&reg);
	CHECK(registry_add(&reg, "x", NULL) >= 0);
	CHECK(registry_add(&reg, "profiler_region_profiler_region_x", NULL) >= 0);
}

static void test_enable_list(void)
{
	struct warns w = { 0 };

	registry_init(&reg);
	CHECK_EQ(registry_enable_list(&reg, "training_forward,Training_Forward, profiler_region_training_forward",
				      warn_cb, &w), 1);
	CHECK_EQ(w.n, 0);
	CHECK(reg.defs[5].enabled);
	CHECK_EQ(registry_enabled_count(&reg), 1);

	registry_init(&reg);
	memset(&w, 0, sizeof(w));
	CHECK_EQ(registry_enable_list(&reg, "training_train_one_step nope,dmd2_critic_loss ,, also_nope\ttraining_backward\n",
				      warn_cb, &w), 3);
	CHECK_EQ(w.n, 2);
	CHECK(strstr(w.last, "also_nope") != NULL);
	CHECK(reg.defs[3].enabled);
	CHECK(reg.defs[6].enabled);
	CHECK(reg.defs[17].enabled);
	CHECK(!reg.defs[5].enabled);
	CHECK_EQ(registry_enabled_count(&reg), 3);

	/* Each unknown name warns once, with its name in the message. */
	registry_init(&reg);
	memset(&w, 0, sizeof(w));
	CHECK_EQ(registry_enable_list(&reg, "bogus_one", warn_cb, &w), 0);
	CHECK_EQ(w.n, 1);
	CHECK(strstr(w.last, "bogus_one") != NULL);
	/* An invalid (too long) name is just unknown. */
	memset(&w, 0, sizeof(w));
	CHECK_EQ(registry_enable_list(&reg,
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,model_loading",
				      warn_cb, &w), 1);
	CHECK_EQ(w.n, 1);
	/* Without a callback unknown names are still ignored. */
	registry_init(&reg);
	CHECK_EQ(registry_enable_list(&reg, "nope,training_optimizer", NULL, NULL), 1);
	CHECK(reg.defs[7].enabled);

	/* Empty lists. */
	registry_init(&reg);
	memset(&w, 0, sizeof(w));
	CHECK_EQ(registry_enable_list(&reg, "", warn_cb, &w), 0);
	CHECK_EQ(registry_enable_list(&reg, " , ,\t,\n", warn_cb, &w), 0);
	CHECK_EQ(registry_enable_list(&reg, NULL, warn_cb, &w), 0);
	CHECK_EQ(w.n, 0);
	CHECK_EQ(registry_enabled_count(&reg), 0);

	/* Lists add up; custom regions can be enabled too. */
	registry_init(&reg);
	CHECK_EQ(registry_add(&reg, "my_region", NULL), 18);
	CHECK_EQ(registry_enable_list(&reg, "training_forward", NULL, NULL), 1);
	CHECK_EQ(registry_enable_list(&reg, "PROFILER_REGION_MY_REGION", NULL, NULL), 2);
	CHECK(reg.defs[18].enabled);
}

static void test_load_file(void)
{
	char path[64], err[512] = "";
	int ret, idx;

	registry_init(&reg);
	ret = write_temp(path, sizeof(path),
			 "# custom FastVideo regions\n"
			 "\n"
			 "   \t\n"
			 "my_custom_region   my description, with spaces  \n"
			 "  # an indented comment\n"
			 "training_forward duplicate of a builtin\n"
			 "PROFILER_REGION_Other_Thing\n"
			 "tabbed\tdescription after a tab\n"
			 "no_newline_at_end");
	CHECK_EQ(ret, 0);
	if (ret)
		return;
	ret = registry_load_file(&reg, path, err, sizeof(err));
	unlink(path);
	CHECK_EQ(ret, 0);
	CHECK_EQ(reg.count, 22);
	idx = registry_find(&reg, "my_custom_region");
	CHECK_EQ(idx, 18);
	if (idx >= 0) {
		CHECK_STR(reg.defs[idx].desc, "my description, with spaces");
		CHECK(!reg.defs[idx].builtin);
	}
	CHECK_STR(reg.defs[5].name, "training_forward");
	CHECK_STR(reg.defs[5].desc, "forward pass");
	CHECK(reg.defs[5].builtin);
	idx = registry_find(&reg, "other_thing");
	CHECK_EQ(idx, 19);
	if (idx >= 0)
		CHECK_STR(reg.defs[idx].desc, "");
	idx = registry_find(&reg, "tabbed");
	CHECK_EQ(idx, 20);
	if (idx >= 0)
		CHECK_STR(reg.defs[idx].desc, "description after a tab");
	CHECK_EQ(registry_find(&reg, "no_newline_at_end"), 21);
	CHECK(registry_find(&reg, "my") < 0);
	CHECK(registry_find(&reg, "#") < 0);
}

static void test_load_file_bad_line(void)
{
	char path[64], err[512] = "", want[128];
	int ret;

	registry_init(&reg);
	ret = write_temp(path, sizeof(path),
			 "# header\n"
			 "\n"
			 "good_one first\n"
			 "training_backward dup\n"
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa too long\n"
			 "after_bad never read\n");
	CHECK_EQ(ret, 0);
	if (ret)
		return;
	ret = registry_load_file(&reg, path, err, sizeof(err));
	unlink(path);
	CHECK(ret < 0);
	snprintf(want, sizeof(want), "%s:5:", path);
	if (!strstr(err, want))
		printf("# err: %s\n", err);
	CHECK(strstr(err, want) != NULL);
	CHECK(strstr(err, "aaaaaaaaaa") != NULL);
	/* Lines before the bad one were loaded, none after it. */
	CHECK_EQ(registry_find(&reg, "good_one"), 18);
	CHECK(registry_find(&reg, "after_bad") < 0);
	CHECK_EQ(reg.count, 19);

	/* A file that does not exist. */
	err[0] = '\0';
	ret = registry_load_file(&reg, "/nonexistent/fvbpf/regions.txt", err, sizeof(err));
	CHECK_EQ(ret, -ENOENT);
	CHECK(strstr(err, "/nonexistent/fvbpf/regions.txt") != NULL);
}

static void test_names(void)
{
	char buf[4096], small[24], want[64];
	unsigned int i;

	registry_init(&reg);
	registry_add(&reg, "my_custom_region", NULL);
	registry_names(&reg, buf, sizeof(buf));
	for (i = 0; i < NBUILTIN; i++) {
		snprintf(want, sizeof(want), "%s%s%s", i ? ", " : "", builtins[i],
			 i + 1 < NBUILTIN ? ", " : "");
		if (!strstr(buf, want)) {
			printf("# '%s' not in names\n", want);
			CHECK(0);
		}
	}
	CHECK(strncmp(buf, "model_loading, inference_denoising, training_train, ", 52) == 0);
	CHECK(strstr(buf, ", dmd2_critic_loss, my_custom_region") != NULL);
	/* It ends with the last name, no trailing separator. */
	CHECK(strlen(buf) > 18);
	if (strlen(buf) > 18)
		CHECK_STR(buf + strlen(buf) - 18, ", my_custom_region");

	/* A small buffer is filled and NUL-terminated, never overrun. */
	memset(small, 'Z', sizeof(small));
	registry_names(&reg, small, 20);
	CHECK_EQ(strlen(small), 19);
	CHECK(strncmp(small, "model_loading, infe", 19) == 0);
	CHECK_EQ(small[20], 'Z');
	memset(small, 'Z', sizeof(small));
	registry_names(&reg, small, 1);
	CHECK_STR(small, "");
	CHECK_EQ(small[1], 'Z');
	registry_names(&reg, small, 0);
	CHECK_EQ(small[1], 'Z');
	/* An empty registry gives an empty string. */
	memset(&reg, 0, sizeof(reg));
	registry_names(&reg, buf, sizeof(buf));
	CHECK_STR(buf, "");
}


/* Load @text as a region file: the error, or "" when it loaded. */
static const char *load_text(const char *text)
{
	static char err[512];
	char path[64];
	int ret;

	err[0] = '\0';
	registry_init(&reg);
	if (write_temp(path, sizeof(path), text))
		return "(cannot write a temporary file)";
	ret = registry_load_file(&reg, path, err, sizeof(err));
	unlink(path);
	if (!ret)
		err[0] = '\0';
	else if (!err[0])
		snprintf(err, sizeof(err), "(error %d without a message)", ret);
	return err;
}

/* Whatever the region file names: refused at once, with one line. */
static void test_load_file_not_regular(void)
{
	char err[512], dir[] = "/tmp/fvbpf_test_dir_XXXXXX", fifo[128];
	int ret;

	registry_init(&reg);
	ret = registry_load_file(&reg, "/dev/zero", err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	CHECK(strstr(err, "/dev/zero is a device") != NULL);
	CHECK(mkdtemp(dir) != NULL);
	ret = registry_load_file(&reg, dir, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	CHECK(strstr(err, "is a directory") != NULL);
	/* A FIFO without a writer: opened without blocking, then refused. */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	ret = registry_load_file(&reg, fifo, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	CHECK(strstr(err, "is a FIFO") != NULL);
	unlink(fifo);
	rmdir(dir);
	CHECK(strchr(err, '\n') == NULL);
	CHECK_EQ(reg.count, NBUILTIN);
}

static void test_load_file_size_cap(void)
{
	char path[64], err[512];
	int fd, ret;

	/* One byte past 1 MiB (sparse): refused without reading it all. */
	registry_init(&reg);
	CHECK_EQ(write_temp(path, sizeof(path), "my_region\n"), 0);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, REGISTRY_FILE_MAX + 1), 0);
	close(fd);
	ret = registry_load_file(&reg, path, err, sizeof(err));
	CHECK_EQ(ret, -EFBIG);
	CHECK(strstr(err, "larger than 1048576 bytes") != NULL);
	/* Exactly 1 MiB of comment lines is fine. */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	{
		static char line[1024];
		size_t i;

		memset(line, ' ', sizeof(line));
		line[0] = '#';
		line[sizeof(line) - 1] = '\n';
		for (i = 0; i < REGISTRY_FILE_MAX / sizeof(line) && fd >= 0; i++)
			if (write(fd, line, sizeof(line)) != (ssize_t)sizeof(line))
				CHECK(0);
	}
	close(fd);
	/* ...but its lines are longer than allowed. */
	ret = registry_load_file(&reg, path, err, sizeof(err));
	CHECK_EQ(ret, -EINVAL);
	CHECK(strstr(err, ":1: line longer than 512 bytes") != NULL);
	unlink(path);
}

static void test_load_file_lines(void)
{
	char line[REGISTRY_LINE_MAX + 2];

	/* A line of exactly REGISTRY_LINE_MAX bytes loads; one more does not. */
	memset(line, ' ', sizeof(line));
	memcpy(line, "long_line_region", 16);
	line[REGISTRY_LINE_MAX] = '\0';
	CHECK_STR(load_text(line), "");
	CHECK(registry_find(&reg, "long_line_region") >= 0);
	line[REGISTRY_LINE_MAX] = 'x';
	line[REGISTRY_LINE_MAX + 1] = '\0';
	CHECK(strstr(load_text(line), ":1: line longer than 512 bytes") != NULL);
	/* Text only: NUL, control characters, invalid UTF-8. */
	{
		char path[64], err[512];
		int fd;

		registry_init(&reg);
		CHECK_EQ(write_temp(path, sizeof(path), "good\n"), 0);
		fd = open(path, O_WRONLY | O_APPEND);
		CHECK(fd >= 0 && write(fd, "bad\0name\n", 9) == 9);
		close(fd);
		CHECK(registry_load_file(&reg, path, err, sizeof(err)) < 0);
		CHECK(strstr(err, ":2: NUL byte") != NULL);
		unlink(path);
	}
	CHECK(strstr(load_text("ok\nr\x1b[31m desc\n"), ":2: control characters or invalid UTF-8") != NULL);
	CHECK(strstr(load_text("r desc\x07\n"), ":1: control characters") != NULL);
	CHECK(strstr(load_text("r\xff\n"), ":1: control characters or invalid UTF-8") != NULL);
	CHECK(strstr(load_text("r\xc0\xaf\n"), ":1: control characters or invalid UTF-8") != NULL);
	CHECK(strstr(load_text("r\xc2\x9b\n"), ":1: control characters or invalid UTF-8") != NULL);
	/* Plain UTF-8, tabs and CRLF line ends are text. */
	CHECK_STR(load_text("caf\xc3\xa9_step\tle pas\r\nother\r\n"), "");
	CHECK(registry_find(&reg, "caf\xc3\xa9_step") >= 0);
	CHECK(registry_find(&reg, "other") >= 0);
	/* The 256-region bound, named. */
	{
		char *big = malloc(300 * 16), *p = big;
		int i;

		CHECK(big != NULL);
		if (!big)
			return;
		for (i = 0; i < 300; i++)
			p += sprintf(p, "r%d\n", i);
		CHECK(strstr(load_text(big), "registry full") != NULL);
		CHECK_EQ(reg.count, FVBPF_MAX_REGIONS);
		free(big);
	}
}

/* A region list has no length limit: the last name counts too. */
static void test_enable_long_list(void)
{
	struct warns w = { 0 };
	char *list;
	size_t n = 10000, i;

	list = malloc(n + 64);
	CHECK(list != NULL);
	if (!list)
		return;
	for (i = 0; i < n; i++)
		list[i] = i % 10 == 9 ? ',' : 'x';
	strcpy(list + n, ",training_forward");
	registry_init(&reg);
	CHECK_EQ(registry_enable_list(&reg, list, warn_cb, &w), 1);
	CHECK(reg.defs[registry_find(&reg, "training_forward")].enabled);
	CHECK_EQ(w.n, 1000);
	free(list);
	/* A huge unknown name is cut in the warning. */
	list = malloc(5000);
	CHECK(list != NULL);
	if (!list)
		return;
	memset(list, 'y', 4999);
	list[4999] = '\0';
	w.n = 0;
	CHECK_EQ(registry_enable_list(&reg, list, warn_cb, &w), 1);
	CHECK_EQ(w.n, 1);
	CHECK(strstr(w.last, "yyy...' ignored") != NULL);
	CHECK(strlen(w.last) < 200);
	free(list);
}

int main(void)
{
	RUN(test_builtins);
	RUN(test_find);
	RUN(test_add);
	RUN(test_hash_route_matches_name_route);
	RUN(test_enable_list);
	RUN(test_load_file);
	RUN(test_load_file_bad_line);
	RUN(test_names);
	RUN(test_load_file_not_regular);
	RUN(test_load_file_size_cap);
	RUN(test_load_file_lines);
	RUN(test_enable_long_list);
	UNIT_DONE();
}
