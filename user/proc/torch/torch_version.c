// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fvbpf_fast.h"
#include "proc/torch/torch_version.h"

/* version.py is a few hundred bytes; the target's file may be anything. */
#define VERSION_PY_MAX 4096

int torch_version_parse(const char *text, char *ver, size_t len)
{
	const char *p = strstr(text, "__version__ = '");
	size_t n = 0;

	if (!p || !len)
		return -ENOENT;
	p += strlen("__version__ = '");
	while (p[n] && p[n] != '\'' && n + 1 < len) {
		/* a version is [0-9a-z.+]: anything else is not one */
		if (!((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'z') ||
		      p[n] == '.' || p[n] == '+'))
			return -ENOENT;
		n++;
	}
	if (!n || p[n] != '\'')
		return -ENOENT;
	memcpy(ver, p, n);
	ver[n] = '\0';
	return 0;
}

int torch_version_read(pid_t pid, const char *lib, char *ver, size_t len)
{
	char path[4200], text[VERSION_PY_MAX + 1];
	const char *slash = strrchr(lib, '/');
	ssize_t n;
	int fd, w;

	/* .../torch/lib/libtorch_cpu.so -> .../torch/lib/../version.py */
	if (!slash || lib[0] != '/')
		return -ENOENT;
	w = snprintf(path, sizeof(path), "/proc/%d/root%.*s/../version.py", (int)pid,
		     (int)(slash - lib), lib);
	if (w < 0 || (size_t)w >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, VERSION_PY_MAX);
	close(fd);
	if (n < 0)
		return -errno;
	text[n] = '\0';
#ifdef FVBPF_TEST_HOOKS
	/* build/fvbpf-test only: a torch version fvbpf did not check, for the
	 * fallback's end-to-end test */
	if (getenv("FVBPF_TEST_TORCH_VERSION"))
		snprintf(text, sizeof(text), "__version__ = '%s'\n", getenv("FVBPF_TEST_TORCH_VERSION"));
#endif
	return torch_version_parse(text, ver, len);
}

unsigned int torch_version_layout(const char *ver)
{
	static const char *const checked[] = { "2.13.", "2.14." };
	size_t i;

	for (i = 0; i < sizeof(checked) / sizeof(checked[0]); i++)
		if (!strncmp(ver, checked[i], strlen(checked[i])))
			return FVBPF_FAST_LAYOUT_TORCH2;
	return 0;
}
