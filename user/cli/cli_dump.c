// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf dump`: where every process of a job is now (dump/dump.h). */
#define _GNU_SOURCE
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_dump.h"
#include "dump/dump.h"
#include "dump/dump_procs.h"
#include "proc/proc_read.h"
#include "util/log.h"
#include "cli/pid_list.h"
#include "util/parse_count.h"

#define DUMP_PID_MAX 4194304 /* the kernel's largest pid_max */

enum { OPT_CHILDREN = 0x100, OPT_MATCH, OPT_JSON };

struct dump_opts {
	pid_t pids[DUMP_PROCS_MAX];
	unsigned int npids;
	bool children, json;
	const char *match;
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct dump_opts *o = state->input;

	switch (key) {
	case 'p':
		return pid_list_parse(arg, 1, DUMP_PID_MAX, o->pids, &o->npids, DUMP_PROCS_MAX,
				      "per dump");
	case OPT_CHILDREN:
		o->children = true;
		return 0;
	case OPT_MATCH:
		if (!*arg || strlen(arg) > 1024) {
			log_error("invalid --match: give a pattern of 1 to 1024 bytes");
			return EINVAL;
		}
		o->match = arg;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case 'v':
		if (log_verbosity < 3)
			log_verbosity++;
		return 0;
	case ARGP_KEY_ARG:
		log_error("unexpected argument '%s': several PIDs go in one -p, as -p 1,2", arg);
		return EINVAL;
	case ARGP_KEY_END:
		if (!o->npids && !o->match) {
			log_error("no process given: use -p PID[,PID...] (with --children for a "
				  "launcher's descendants) or --match REGEX");
			return EINVAL;
		}
		if (o->npids && o->match) {
			log_error("give -p or --match, not both");
			return EINVAL;
		}
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option options[] = {
	{ "pid", 'p', "PID[,PID...]", 0,
	  "Processes to dump (repeatable; PIDs apart by commas or whitespace)", 0 },
	{ "children", OPT_CHILDREN, NULL, 0,
	  "Dump the -p processes and all their descendants (torchrun's ranks under its launcher)", 0 },
	{ "match", OPT_MATCH, "REGEX", 0,
	  "Dump the processes whose command line matches (POSIX extended), each with its "
	  "descendants", 0 },
	{ "json", OPT_JSON, NULL, 0, "Write JSON instead of text (docs/hangs.md)", 0 },
	{ "verbose", 'v', NULL, 0, "Say more on stderr", 0 },
	{ 0 }
};

static const struct argp dump_argp = {
	options, parse_opt, "",
	"Show where every process (rank) of a job is now: each thread's Python stack "
	"(function, file, line), the system call it is blocked in and for how long, the "
	"torch.distributed collective it waits in, and on the first line which ranks wait in "
	"a collective and which of its ranks are absent, doing what.  Nothing is stopped: no "
	"ptrace, no signal; memory is read with process_vm_readv and /proc.\v"
	"Examples (as root):\n"
	"  fvbpf dump -p $(pgrep -o -f 'torchrun .*train.py') --children\n"
	"  fvbpf dump --match 'train\\.py' --json > dump.json\n"
	"See docs/hangs.md.",
	NULL, NULL, NULL
};

/* Each given process is there (-p) and readable: a line naming the fix if
 * not.  A process --match found that has gone since is the dump's to say. */
static int check_pids(const struct dump_opts *o)
{
	char path[64];
	unsigned int i;
	int fd;

	for (i = 0; i < o->npids; i++) {
		if (!proc_alive(o->pids[i]) && !o->match) {
			log_error("no process with PID %d: check the PID (ps -p %d)", o->pids[i],
				  o->pids[i]);
			return -ESRCH;
		}
		/* the same permission process_vm_readv needs */
		snprintf(path, sizeof(path), "/proc/%d/mem", o->pids[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			log_error("cannot read the memory of PID %d: run fvbpf dump as root (or with "
				  "CAP_SYS_PTRACE)", o->pids[i]);
			return -EPERM;
		}
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

static int find_match(struct dump_opts *o)
{
	char err[256] = "";
	unsigned int n, i;
	pid_t *v;
	int ret = dump_procs_match(o->match, &v, &n, err, sizeof(err));

	if (ret == -EINVAL) {
		log_error("invalid --match '%s': %s (a POSIX extended regular expression)", o->match,
			  err);
		return ret;
	}
	if (ret == -ENOENT) {
		log_error("no process matches --match '%s': check the pattern against `ps -eo args`",
			  o->match);
		return ret;
	}
	if (ret) {
		log_error("cannot walk /proc: %s", strerror(-ret));
		return ret;
	}
	for (i = 0; i < n; i++)
		o->pids[i] = v[i];
	o->npids = n;
	o->children = true;
	free(v);
	return 0;
}

static void say_exited(const struct dump *d)
{
	unsigned int i;

	for (i = 0; i < d->nprocs; i++)
		if (d->procs[i].exited)
			log_warn("PID %d exited %s the dump: %s", d->procs[i].pid,
				 d->procs[i].nthreads ? "during" : "before",
				 d->procs[i].nthreads ? "what was read before is in it"
						      : "it is listed as exited");
}

int dump_command(int argc, char **argv)
{
	struct dump_opts *o = calloc(1, sizeof(*o));
	struct dump_request req;
	struct dump *d = NULL;
	int ret = 1;

	if (!o) {
		log_error("out of memory");
		return 1;
	}
	argp_err_exit_status = 2;
	if (argp_parse(&dump_argp, argc, argv, 0, NULL, o)) {
		free(o);
		return 2;
	}
	if ((o->match && find_match(o)) || check_pids(o))
		goto out;
	req.pids = o->pids;
	req.npids = o->npids;
	req.children = o->children;
	if (dump_take(&req, &d))
		goto out;
	say_exited(d);
	if (d->exited == d->nprocs) {
		log_error("every process exited before or during the dump: nothing to show");
		goto out;
	}
	if (o->json ? dump_write_json(d, stdout) : dump_write_text(d, stdout)) {
		log_error("cannot write the dump: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	dump_free(d);
	free(o);
	return ret;
}
