/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_CUDA_ERRORS_H
#define FVBPF_CUDA_ERRORS_H

struct cuda_error_name {
	int code;
	const char *name;
};

/* Terminated by { -1, NULL }. */
extern const struct cuda_error_name cuda_runtime_errors[];
extern const struct cuda_error_name cuda_driver_errors[];

#endif /* FVBPF_CUDA_ERRORS_H */
