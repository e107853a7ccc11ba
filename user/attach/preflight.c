// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"
#include "attach/preflight.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

int preflight_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return 0;
	if (!syscall(SYS_capget, &hdr, data) &&
	    (has_cap(data, CAP_SYS_ADMIN) ||
	     (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON))) &&
	    has_cap(data, CAP_SYS_PTRACE))
		return 0;
	log_error("fvbpf attach needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE): run it with sudo");
	return -EPERM;
}

int preflight_btf(void)
{
	static const char path[] = "/sys/kernel/btf/vmlinux";
	uint16_t magic = 0;
	ssize_t n = -1;
	int fd;

	/* Its magic, not only its presence: an empty or foreign file would
	 * fail later, in libbpf, with a message that names neither. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, &magic, sizeof(magic));
		close(fd);
	}
	if (n == (ssize_t)sizeof(magic) && magic == BTF_MAGIC)
		return 0;
	log_error("kernel BTF not found at %s: boot a kernel built with CONFIG_DEBUG_INFO_BTF=y", path);
	return -ENOENT;
}
