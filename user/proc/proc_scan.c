// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/proc_read.h"
#include "proc/proc_scan.h"

#define SCAN_MAX 4194304   /* the kernel's largest pid_max */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int proc_scan_all(struct proc_entry **out)
{
	struct proc_entry *v = NULL, *grown;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	long pid;

	*out = NULL;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < SCAN_MAX) {
		if (!all_digits(de->d_name))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (pid <= 0 || pid > SCAN_MAX)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = grown;
		}
		v[n].pid = (pid_t)pid;
		if (proc_read_stat_ppid(v[n].pid, &v[n].ppid, &v[n].start))
			continue; /* gone meanwhile */
		n++;
	}
	closedir(d);
	*out = v;
	return (int)n;
}

/* AT_RANDOM's address from /proc/PID/auxv, 0 when absent. */
static uint64_t at_random(pid_t pid)
{
	char path[64], buf[4096];
	ssize_t n;
	size_t i;
	Elf64_auxv_t a;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	n = proc_read_file(path, buf, sizeof(buf));
	for (i = 0; n > 0 && i + sizeof(a) <= (size_t)n; i += sizeof(a)) {
		memcpy(&a, buf + i, sizeof(a));
		if (a.a_type == AT_NULL)
			break;
		if (a.a_type == AT_RANDOM)
			return a.a_un.a_val;
	}
	return 0;
}

static int read_random(pid_t pid, uint64_t addr, unsigned char bytes[16])
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, bytes, 16, (off_t)addr);
	close(fd);
	return n == 16 ? 0 : -EIO;
}

int proc_same_image(pid_t parent, pid_t child)
{
	unsigned char a[16], b[16];
	uint64_t pa = at_random(parent), ca = at_random(child);
	int err;

	if (!pa || !ca)
		return -ENOENT;
	if (pa != ca)
		return 0;
	err = read_random(parent, pa, a);
	if (!err)
		err = read_random(child, ca, b);
	if (err)
		return err;
	return !memcmp(a, b, sizeof(a));
}

pid_t proc_ns_pid(pid_t pid)
{
	char path[64], buf[4096], *line, *p, *last, *save = NULL;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	line = strstr(buf, "\nNSpid:");
	if (!line)
		return 0;
	line += 7;
	line[strcspn(line, "\n")] = '\0';
	last = NULL;
	for (p = strtok_r(line, " \t", &save); p; p = strtok_r(NULL, " \t", &save))
		last = p;
	if (!last)
		return 0;
	v = strtol(last, NULL, 10);
	return v > 0 && v <= SCAN_MAX ? (pid_t)v : 0;
}

/* The kernel gives the initial PID namespace this fixed inode number
 * (PROC_PID_INIT_INO).  NSpid in /proc/self/status cannot tell: with a
 * /proc mounted for a child namespace it lists that namespace's PID only. */
#define INIT_PID_NS_INO 0xEFFFFFFCu

bool proc_self_in_init_pidns(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return true; /* cannot tell: let the attach say what it finds */
	return st.st_ino == INIT_PID_NS_INO;
}

unsigned long long proc_ticks_from_boot_ns(unsigned long long ns)
{
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || hz > 1000000000L)
		hz = 100;
	return ns / (1000000000ull / (unsigned long long)hz);
}

uint64_t proc_maps_signature(pid_t pid)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char path[64], buf[16384];
	size_t total = 0;
	ssize_t n, i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* Bounded: a process with more maps than this changes them anyway. */
	while (total < (64u << 20) && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			h ^= (unsigned char)buf[i];
			h *= 0x100000001b3ULL;
		}
		total += (size_t)n;
	}
	close(fd);
	return h ? h : 1;
}
