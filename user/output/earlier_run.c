// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "output/earlier_run.h"

static bool lower_word(const char **p)
{
	const char *s = *p;

	while (**p >= 'a' && **p <= 'z')
		(*p)++;
	return *p > s;
}

static bool digits(const char **p, unsigned int least)
{
	const char *s = *p;

	while (**p >= '0' && **p <= '9')
		(*p)++;
	return (unsigned int)(*p - s) >= least;
}

static bool literal(const char **p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*p, word, n))
		return false;
	*p += n;
	return true;
}

/* KIND_ (rankR[_restartK] | pidP) _segmentNNNN_ ... */
static bool segment_file(const char *p)
{
	if (!lower_word(&p) || !literal(&p, "_"))
		return false;
	if (literal(&p, "rank")) {
		if (!digits(&p, 1))
			return false;
		if (literal(&p, "_restart") && !digits(&p, 1))
			return false;
	} else if (!literal(&p, "pid") || !digits(&p, 1)) {
		return false;
	}
	return literal(&p, "_segment") && digits(&p, 4) && *p == '_';
}

bool earlier_run_name(const char *name)
{
	return !strcmp(name, "manifest.json") || segment_file(name);
}

int earlier_run_files(const char *dir, bool remove)
{
	struct dirent *e;
	int n = 0, err = 0, fd;
	DIR *d;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((e = readdir(d))) {
		if ((e->d_type != DT_REG && e->d_type != DT_UNKNOWN) || !earlier_run_name(e->d_name))
			continue;
		if (remove && unlinkat(fd, e->d_name, 0) && errno != ENOENT) {
			err = -errno;
			break;
		}
		n++;
	}
	closedir(d);
	return err ? err : n;
}
