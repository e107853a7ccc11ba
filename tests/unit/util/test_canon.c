// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Region name canonicalisation and hashing (include/fvbpf_canon.h). */
#include <stdint.h>
#include <string.h>

#include "fvbpf_canon.h"
#include "unit.h"

/* Canonical form of @name in a static buffer, or "<-1>" when rejected. */
static const char *canon(const char *name)
{
	static char buf[FVBPF_REGION_NAME_MAX + 1];

	if (fvbpf_region_canon(name, buf, sizeof(buf)) < 0)
		return "<-1>";
	return buf;
}

static void fill(char *buf, char c, size_t n)
{
	memset(buf, c, n);
	buf[n] = '\0';
}

static void test_plain_and_case(void)
{
	char out[FVBPF_REGION_NAME_MAX + 1];

	CHECK_EQ(fvbpf_region_canon("training_forward", out, sizeof(out)), 16);
	CHECK_STR(out, "training_forward");
	CHECK_STR(canon("Training_Forward"), "training_forward");
	CHECK_STR(canon("TRAINING_FORWARD"), "training_forward");
	CHECK_STR(canon("dmd2_Critic_LOSS"), "dmd2_critic_loss");
	/* Only ASCII letters fold; digits and punctuation stay. */
	CHECK_STR(canon("A-B.C/9_Z"), "a-b.c/9_z");
	/* A single character is a valid name. */
	CHECK_EQ(fvbpf_region_canon("X", out, sizeof(out)), 1);
	CHECK_STR(out, "x");
}

static void test_white_space(void)
{
	char out[FVBPF_REGION_NAME_MAX + 1];

	CHECK_EQ(fvbpf_region_canon("  training_forward  ", out, sizeof(out)), 16);
	CHECK_STR(out, "training_forward");
	CHECK_STR(canon("\ttraining_forward\n"), "training_forward");
	CHECK_STR(canon("\r\n\v\f training_forward \t\r\n"), "training_forward");
	/* Inner white space is part of the name. */
	CHECK_STR(canon(" my region "), "my region");
}

static void test_prefix(void)
{
	char out[FVBPF_REGION_NAME_MAX + 1];

	CHECK_EQ(fvbpf_region_canon("profiler_region_training_forward", out, sizeof(out)), 16);
	CHECK_STR(out, "training_forward");
	CHECK_STR(canon("PROFILER_REGION_training_forward"), "training_forward");
	CHECK_STR(canon("Profiler_Region_Training_Forward"), "training_forward");
	CHECK_STR(canon("  profiler_region_training_forward\n"), "training_forward");
	/* Only a leading prefix is dropped, and only once. */
	CHECK_STR(canon("my_profiler_region_x"), "my_profiler_region_x");
	CHECK_STR(canon("profiler_region_profiler_region_x"), "profiler_region_x");
	/* Almost the prefix is not the prefix. */
	CHECK_STR(canon("profiler_regionx_y"), "profiler_regionx_y");
	CHECK_STR(canon("profiler-region_x"), "profiler-region_x");
	/* One character after the prefix is enough. */
	CHECK_STR(canon("profiler_region_x"), "x");
}

static void test_prefix_alone(void)
{
	char out[FVBPF_REGION_NAME_MAX + 1];

	/* The span is not longer than the prefix: it stays as it is. */
	CHECK_EQ(fvbpf_region_canon("profiler_region_", out, sizeof(out)), 16);
	CHECK_STR(out, "profiler_region_");
	CHECK_STR(canon("PROFILER_REGION_"), "profiler_region_");
	CHECK_STR(canon("  profiler_region_ \n"), "profiler_region_");
	/* Shorter than the prefix. */
	CHECK_STR(canon("profiler_region"), "profiler_region");
	CHECK_STR(canon("profiler"), "profiler");
}

static void test_lengths(void)
{
	char name[256], out[FVBPF_REGION_NAME_MAX + 1], want[FVBPF_REGION_NAME_MAX + 1];

	/* 63 characters: the longest valid name. */
	fill(name, 'a', 63);
	CHECK_EQ(fvbpf_region_canon(name, out, sizeof(out)), 63);
	CHECK_STR(out, name);
	/* 64 characters: too long, but out is still NUL-terminated. */
	fill(name, 'a', 64);
	memset(out, 'Z', sizeof(out));
	CHECK_EQ(fvbpf_region_canon(name, out, sizeof(out)), -1);
	CHECK(memchr(out, '\0', sizeof(out)) != NULL);
	/* Too long even when @out has room for it. */
	{
		char big[256];

		CHECK_EQ(fvbpf_region_canon(name, big, sizeof(big)), -1);
		fill(name, 'a', 63);
		CHECK_EQ(fvbpf_region_canon(name, big, sizeof(big)), 63);
		fill(name, 'a', 64);
	}
	fill(name, 'b', 200);
	CHECK_EQ(fvbpf_region_canon(name, out, sizeof(out)), -1);
	CHECK(memchr(out, '\0', sizeof(out)) != NULL);
	/* The length limit applies after the prefix and the white space. */
	snprintf(name, sizeof(name), "  PROFILER_REGION_%063d  ", 0);
	fill(want, '0', 63);
	CHECK_EQ(fvbpf_region_canon(name, out, sizeof(out)), 63);
	CHECK_STR(out, want);
	snprintf(name, sizeof(name), "profiler_region_%064d", 0);
	CHECK_EQ(fvbpf_region_canon(name, out, sizeof(out)), -1);
	/* A valid name that does not fit in @out is refused, NUL-terminated. */
	memset(out, 'Z', sizeof(out));
	CHECK_EQ(fvbpf_region_canon("training_forward", out, 8), -1);
	CHECK_STR(out, "trainin");
	CHECK_EQ(out[8], 'Z');
	CHECK_EQ(fvbpf_region_canon("abc", out, 0), -1);
	CHECK_EQ(out[0], 't');
	/* Exactly fitting. */
	CHECK_EQ(fvbpf_region_canon("ABC", out, 4), 3);
	CHECK_STR(out, "abc");
}

static void test_empty(void)
{
	char out[FVBPF_REGION_NAME_MAX + 1];

	memset(out, 'Z', sizeof(out));
	CHECK_EQ(fvbpf_region_canon("", out, sizeof(out)), -1);
	CHECK_STR(out, "");
	CHECK_EQ(fvbpf_region_canon(" ", out, sizeof(out)), -1);
	CHECK_EQ(fvbpf_region_canon(" \t\r\n\v\f ", out, sizeof(out)), -1);
	CHECK_STR(out, "");
}

static void test_hash_equivalent(void)
{
	uint64_t h = fvbpf_region_hash("training_forward");

	CHECK(h == fvbpf_region_hash("Training_Forward"));
	CHECK(h == fvbpf_region_hash("TRAINING_FORWARD"));
	CHECK(h == fvbpf_region_hash("profiler_region_training_forward"));
	CHECK(h == fvbpf_region_hash("PROFILER_REGION_Training_Forward"));
	CHECK(h == fvbpf_region_hash(" \tprofiler_region_training_forward\n"));
	CHECK(h == fvbpf_region_hash("  training_forward  "));
	/* The prefix alone hashes as itself. */
	CHECK(fvbpf_region_hash("profiler_region_") == fvbpf_region_hash(" PROFILER_REGION_ "));
	/* Deterministic FNV-1a 64 over the canonical bytes: "a" is a known vector. */
	CHECK(fvbpf_region_hash("a") == 0xaf63dc4c8601ec8cULL);
	CHECK(fvbpf_region_hash("A") == 0xaf63dc4c8601ec8cULL);
	CHECK(fvbpf_region_hash("profiler_region_a") == 0xaf63dc4c8601ec8cULL);
}

static void test_hash_different(void)
{
	static const char *names[] = {
		"training_forward", "training_backward", "training_train",
		"training_train_one_step", "dmd2_critic_loss", "dmd2_generator_loss",
		"profiler_region_", "profiler_region", "a", "b", "ab", "ba",
		"training_forward_", "my region", "myregion",
	};
	size_t i, j, n = sizeof(names) / sizeof(names[0]);

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (fvbpf_region_hash(names[i]) == fvbpf_region_hash(names[j])) {
				printf("# same hash: '%s' and '%s'\n", names[i], names[j]);
				CHECK(0);
			}
}

static void test_hash_never_zero(void)
{
	char name[8];
	unsigned int i;

	CHECK(fvbpf_region_hash("") != 0);
	CHECK(fvbpf_region_hash("   ") != 0);
	CHECK(fvbpf_region_hash("profiler_region_") != 0);
	for (i = 0; i < 200000; i++) {
		snprintf(name, sizeof(name), "r%u", i);
		if (fvbpf_region_hash(name) == 0) {
			CHECK(0);
			break;
		}
	}
}

int main(void)
{
	RUN(test_plain_and_case);
	RUN(test_white_space);
	RUN(test_prefix);
	RUN(test_prefix_alone);
	RUN(test_lengths);
	RUN(test_empty);
	RUN(test_hash_equivalent);
	RUN(test_hash_different);
	RUN(test_hash_never_zero);
	UNIT_DONE();
}
