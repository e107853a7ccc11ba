// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdbool.h>
#include <string.h>

#include "pipeline/torch/torch_flops.h"

/* *acc *= v, false on overflow (then *acc is 0). */
static bool mul(uint64_t *acc, uint64_t v)
{
	if (__builtin_mul_overflow(*acc, v, acc)) {
		*acc = 0;
		return false;
	}
	return true;
}

static uint64_t prod(const __u64 *d, int from, int to)
{
	uint64_t p = 1;
	int i;

	for (i = from; i < to; i++)
		if (!mul(&p, d[i]))
			return 0;
	return p;
}

/* Argument @i as a tensor of @ndim dims (-1 any): its sizes, or NULL. */
static const __u64 *tensor(const struct shape_arg *a, int n, int i, int ndim)
{
	if (i >= n || a[i].kind != FVBPF_ARG_TENSOR || (ndim >= 0 && a[i].ndim[0] != ndim))
		return NULL;
	return a[i].dims[0];
}

static uint64_t mm(const __u64 *x, const __u64 *y)
{
	uint64_t f = 2;

	return x && y && mul(&f, x[0]) && mul(&f, x[1]) && mul(&f, y[1]) ? f : 0;
}

static uint64_t bmm(const __u64 *x, const __u64 *y)
{
	uint64_t f = 2;

	return x && y && mul(&f, x[0]) && mul(&f, x[1]) && mul(&f, x[2]) && mul(&f, y[2]) ? f : 0;
}

/* Argument @i's integer list of @want entries (one broadcast when @bcast), or NULL. */
static bool ints(const struct shape_arg *a, int n, int i, int want, bool bcast, uint64_t *out)
{
	int k;

	if (i >= n || (a[i].kind != FVBPF_ARG_INTS) || !(a[i].n == want || (bcast && a[i].n == 1)))
		return false;
	for (k = 0; k < want; k++) {
		out[k] = a[i].ints[a[i].n == 1 ? 0 : k];
		if (out[k] >> 48)
			return false; /* a symbolic or negative size */
	}
	return true;
}

/* convNd(input, weight, bias, stride, padding, dilation, groups): @sp spatial dims. */
static uint64_t conv(const struct shape_arg *a, int n, int sp, bool bcast)
{
	const __u64 *x = tensor(a, n, 0, sp + 2), *w = tensor(a, n, 1, sp + 2);
	uint64_t st[3], pad[3], dil[3], g, f = 2, o;
	int k;

	if (!x || !w || !ints(a, n, 3, sp, bcast, st) || !ints(a, n, 4, sp, bcast, pad) ||
	    !ints(a, n, 5, sp, bcast, dil) || !ints(a, n, 6, 1, false, &g) || !g)
		return 0;
	if (!mul(&f, x[0]) || !mul(&f, x[1]) || !mul(&f, w[0]))
		return 0;
	for (k = 0; k < sp; k++) {
		uint64_t in = x[2 + k] + 2 * pad[k], span = dil[k] * (w[2 + k] ? w[2 + k] - 1 : 0) + 1;

		if (!st[k] || in < span)
			return 0;
		o = (in - span) / st[k] + 1;
		if (!mul(&f, o) || !mul(&f, w[2 + k]))
			return 0;
	}
	return f / g;
}

uint64_t torch_flops(const char *name, const struct shape_arg *a, int n)
{
	const __u64 *x;

	if (!strcmp(name, "aten::mm"))
		return mm(tensor(a, n, 0, 2), tensor(a, n, 1, 2));
	if (!strcmp(name, "aten::addmm"))
		return mm(tensor(a, n, 1, 2), tensor(a, n, 2, 2));
	if (!strcmp(name, "aten::bmm"))
		return bmm(tensor(a, n, 0, 3), tensor(a, n, 1, 3));
	if (!strcmp(name, "aten::baddbmm"))
		return bmm(tensor(a, n, 1, 3), tensor(a, n, 2, 3));
	if (!strcmp(name, "aten::conv2d"))
		return conv(a, n, 2, false);
	if (!strcmp(name, "aten::mul") || !strcmp(name, "aten::add")) {
		x = tensor(a, n, 0, -1);
		return x ? prod(x, 0, a[0].ndim[0]) : 0;
	}
	return 0;
}

/* [..., M, K] @ [..., K, N], batch dims broadcast: 2*batch*M*K*N. */
static uint64_t matmul(const struct shape_arg *a, int n)
{
	const __u64 *x = tensor(a, n, 0, -1), *y = tensor(a, n, 1, -1);
	int nx, ny;
	uint64_t bx, by, f = 2;

	if (!x || !y)
		return 0;
	nx = a[0].ndim[0];
	ny = a[1].ndim[0];
	if (nx < 2 || ny < 2)
		return 0;
	bx = prod(x, 0, nx - 2);
	by = prod(y, 0, ny - 2);
	return mul(&f, bx > by ? bx : by) && mul(&f, x[nx - 2]) && mul(&f, x[nx - 1]) &&
	       mul(&f, y[ny - 1]) ? f : 0;
}

/* linear(input [..., K], weight [N, K]): 2*numel(input)*N. */
static uint64_t linear(const struct shape_arg *a, int n)
{
	const __u64 *x = tensor(a, n, 0, -1), *w = tensor(a, n, 1, 2);
	uint64_t f = 2;

	return x && w && mul(&f, prod(x, 0, a[0].ndim[0])) && mul(&f, w[0]) ? f : 0;
}

/* q [B, H, Lq, D], k [B, H, Lk, D]: 4*B*H*Lq*Lk*D (QK^T and PV). */
static uint64_t attention(const struct shape_arg *a, int n)
{
	const __u64 *q = tensor(a, n, 0, 4), *k = tensor(a, n, 1, 4);
	uint64_t f = 4;

	return q && k && mul(&f, q[0]) && mul(&f, q[1]) && mul(&f, q[2]) && mul(&f, k[2]) &&
	       mul(&f, q[3]) ? f : 0;
}

uint64_t torch_flops_extra(const char *name, const struct shape_arg *a, int n)
{
	static const char *const attn[] = {
		"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
		"aten::_scaled_dot_product_efficient_attention",
		"aten::_scaled_dot_product_cudnn_attention",
		"aten::_scaled_dot_product_flash_attention_for_cpu",
	};
	size_t i;

	if (!strcmp(name, "aten::linear"))
		return linear(a, n);
	if (!strcmp(name, "aten::matmul"))
		return matmul(a, n);
	if (!strcmp(name, "aten::conv1d"))
		return conv(a, n, 1, true);
	if (!strcmp(name, "aten::conv3d"))
		return conv(a, n, 3, true);
	for (i = 0; i < sizeof(attn) / sizeof(attn[0]); i++)
		if (!strcmp(name, attn[i]))
			return attention(a, n);
	return 0;
}
