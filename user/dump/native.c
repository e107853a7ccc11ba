// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/native.h"
#include "dump/syscall_names.h"
#include "proc/proc_read.h"

#define CPUS_MAX CPU_SETSIZE

struct sched_now {
	uint64_t ns[CPUS_MAX];      /* 0: not read yet */
	bool failed[CPUS_MAX];
	cpu_set_t saved;
	bool have_saved;
};

struct sched_now *sched_now_new(void)
{
	struct sched_now *s = calloc(1, sizeof(*s));

	if (s)
		s->have_saved = !sched_getaffinity(0, sizeof(s->saved), &s->saved);
	return s;
}

void sched_now_free(struct sched_now *s)
{
	free(s);
}

int native_parse_exec_start(const char *text, uint64_t *ns)
{
	const char *p;
	unsigned long long ms, frac = 0;
	int digits = 0;

	/* past the first line, which holds the thread's comm (its own choice),
	 * and the line of dashes under it */
	p = strstr(text, "\n---");
	p = p ? strchr(p + 1, '\n') : NULL;
	p = p ? strstr(p, "\nse.exec_start") : NULL;
	if (!p || !(p = strchr(p, ':')))
		return -EINVAL;
	p++;
	while (*p == ' ')
		p++;
	if (sscanf(p, "%llu", &ms) != 1 || ms > UINT64_MAX / 1000000u)
		return -EINVAL;
	p += strspn(p, "0123456789");
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
			frac = frac * 10 + (unsigned)(*p - '0');
		for (; digits < 6; digits++)
			frac *= 10;
	}
	*ns = ms * 1000000u + frac;
	return 0;
}

static int exec_start(pid_t pid, pid_t tid, uint64_t *ns)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", pid, tid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	return native_parse_exec_start(buf, ns);
}

/*
 * CPU @cpu's scheduler clock now: our own se.exec_start just after the
 * scheduler picked us there (a move, then a yield).  rq clocks are per CPU
 * and leave out time stolen by the hypervisor, so a thread's exec_start is
 * only compared with its own CPU's.
 */
static uint64_t now_on(struct sched_now *s, int cpu)
{
	pid_t self = gettid();
	cpu_set_t one;
	uint64_t ns = 0;

	if (cpu < 0 || cpu >= CPUS_MAX || s->failed[cpu])
		return 0;
	if (s->ns[cpu])
		return s->ns[cpu];
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (!s->have_saved || sched_setaffinity(0, sizeof(one), &one)) {
		s->failed[cpu] = true;
		return 0;
	}
	sched_yield();
	if (exec_start(getpid(), self, &ns))
		ns = 0;
	sched_setaffinity(0, sizeof(s->saved), &s->saved);
	s->ns[cpu] = ns;
	s->failed[cpu] = !ns;
	return ns;
}

int native_parse_syscall(const char *line, struct dump_native *n)
{
	unsigned long long v[9];
	long nr;
	int i, off = 0, used;

	if (!strncmp(line, "running", 7)) {
		n->call = NATIVE_RUNNING;
		return 0;
	}
	if (sscanf(line, "%ld%n", &nr, &used) != 1)
		return -EINVAL;
	off = used;
	if (nr == -1) {
		if (sscanf(line + off, " 0x%llx 0x%llx", &v[0], &v[1]) != 2)
			return -EINVAL;
		n->call = NATIVE_NOT_IN_SYSCALL;
		n->sp = v[0];
		n->pc = v[1];
		return 0;
	}
	if (nr < 0)
		return -EINVAL;
	for (i = 0; i < 8; i++) {
		if (sscanf(line + off, " 0x%llx%n", &v[i], &used) != 1)
			return -EINVAL;
		off += used;
	}
	n->call = NATIVE_SYSCALL;
	n->nr = nr;
	for (i = 0; i < 6; i++)
		n->args[i] = v[i];
	n->sp = v[6];
	n->pc = v[7];
	return 0;
}

/* State and last CPU from /proc stat: fields count from the last ')' (the
 * comm may hold any). */
static int read_stat(pid_t pid, pid_t tid, struct dump_native *n)
{
	char path[64], buf[1024], *p;
	int field, cpu;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EIO;
	n->state = p[2];
	/* processor is field 39; the state is field 3 */
	for (field = 3, p += 2; field < 39 && p; field++)
		p = strchr(p + 1, ' ');
	if (p && sscanf(p + 1, "%d", &cpu) == 1 && cpu >= 0 && cpu < CPUS_MAX)
		n->cpu = cpu;
	return 0;
}

int native_read(pid_t pid, pid_t tid, struct sched_now *now, struct dump_native *n)
{
	char path[64], buf[512];
	uint64_t start, at;

	memset(n, 0, sizeof(*n));
	n->state = '?';
	n->call = NATIVE_UNKNOWN;
	n->off_cpu_ns = -1;
	n->cpu = -1;
	if (read_stat(pid, tid, n))
		return -ESRCH;
	/* the kernel reads this without stopping the thread: "running" when
	 * it is on a CPU */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if (proc_read_file(path, buf, sizeof(buf)) > 0 && native_parse_syscall(buf, n))
		n->call = NATIVE_UNKNOWN;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, tid);
	if (proc_read_file(path, buf, sizeof(buf)) > 0 && strcmp(buf, "0"))
		snprintf(n->wchan, sizeof(n->wchan), "%.63s", buf);
	if (n->state == 'R' || n->call == NATIVE_RUNNING)
		return 0;
	if (exec_start(pid, tid, &start))
		return 0;
	at = now_on(now, n->cpu);
	if (at && at < start) { /* it ran since that CPU's clock was read: read it again */
		now->ns[n->cpu] = 0;
		at = now_on(now, n->cpu);
	}
	if (at && at >= start)
		n->off_cpu_ns = (int64_t)(at - start);
	return 0;
}

const char *native_call_name(const struct dump_native *n, char *buf, size_t len)
{
	const char *name;

	switch (n->call) {
	case NATIVE_SYSCALL:
		name = syscall_name(n->nr);
		if (name)
			return name;
		snprintf(buf, len, "syscall %ld", n->nr);
		return buf;
	case NATIVE_NOT_IN_SYSCALL:
		return "no system call";
	case NATIVE_RUNNING:
		return "running";
	default:
		return "unknown";
	}
}

const char *native_state_name(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "traced";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	case 'P': return "parked";
	default: return "unknown";
	}
}
