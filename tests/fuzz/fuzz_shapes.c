// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --record-shapes' decoding of what BPF copied out of a target
 * (user/pipeline/torch/torch_shapes.c) on any record: never a read outside it,
 * and a record that is taken gives a string the writers can split, whose
 * key and dims are bracketed lists.  Input: a byte choosing the op's name
 * (torch's FLOPs formulas and the extra ones), a byte giving the sig's
 * length, the sig, then the record as received (any length).  The same
 * bytes also go through the schema report parser and the layout parser.
 */
#include "fuzz.h" /* first: it asks for _GNU_SOURCE */

#include <string.h>

#include "probes/torch_abi.h"
#include "pipeline/torch/torch_shapes.h"

static const char *const names[] = {
	"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::conv2d", "aten::mul",
	"aten::add", "aten::linear", "aten::matmul", "aten::conv1d", "aten::conv3d",
	"aten::scaled_dot_product_attention", "aten::cat",
};

static void check_split(const char *out)
{
	struct torch_shapes_view v;

	if (torch_shapes_split(out, &v) || !v.key_len || v.key[0] != '[' ||
	    v.key[v.key_len - 1] != ']' || !v.dims_len || v.dims[0] != '[' ||
	    v.dims[v.dims_len - 1] != ']' || !v.types_len || v.types[0] != '[')
		abort();
}

static void text_parsers(const uint8_t *data, size_t size)
{
	struct fvbpf_tensor_layout lay;
	struct fvbpf_shape_plan plan;
	struct torch_schemas *ts = NULL;
	char *text = malloc(size + 1), sig[FVBPF_SHAPE_ARGS + 1];

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!torch_abi_layout(text, 0x7f0000000000ull, &lay) &&
	    (lay.win_len > FVBPF_SHAPE_WINDOW || !lay.sizes_inline || lay.sizes_inline > FVBPF_SHAPE_MAXDIM))
		abort();
	torch_abi_undef_dtype(text);
	if (!torch_schemas_parse(text, &ts)) {
		if (!torch_schemas_plan(ts, "aten::addmm", "", NULL, &plan, sig))
			abort(); /* no symbol: never a plan */
		torch_schemas_free(ts);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fvbpf_torch_shapes_event *e;
	char sig[FVBPF_SHAPE_ARGS + 16], *out;
	size_t n, rec;

	text_parsers(data, size);
	if (size < 2)
		return 0;
	n = data[1] % (sizeof(sig) - 1);
	if (size < 2 + n)
		return 0;
	memcpy(sig, data + 2, n);
	sig[n] = '\0';
	rec = size - 2 - n;
	/* the record as the ring gave it: its own length, zeroed beyond */
	e = calloc(1, sizeof(*e));
	out = malloc(TORCH_SHAPES_MAX);
	if (!e || !out)
		abort();
	memcpy(e, data + 2 + n, rec < sizeof(*e) ? rec : sizeof(*e));
	if (!torch_shapes_format(e, rec < sizeof(*e) ? rec : sizeof(*e),
				 names[data[0] % (sizeof(names) / sizeof(names[0]))], sig, out,
				 TORCH_SHAPES_MAX))
		check_split(out);
	free(out);
	free(e);
	return 0;
}
