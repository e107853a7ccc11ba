// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <string.h>

#include "dump/py_obj.h"

/* offsetof() over 3.11.7's, 3.12.1's and 3.13.0's own headers (equal in the
 * three but co_nlocalsplus, not read here) */
#define CO_ARGCOUNT_311 56      /* PyCodeObject.co_argcount: 3.11's, */
#define CO_ARGCOUNT_312 52      /* 3.12's and 3.13's */
#define FRAME_LOCALSPLUS 72     /* _PyInterpreterFrame.localsplus */
#define CO_LOCALSPLUSNAMES 96   /* PyCodeObject.co_localsplusnames (a tuple) */
#define TYPE_TP_NAME 24         /* PyTypeObject.tp_name */
#define TUPLE_ITEMS 24          /* PyTupleObject.ob_item */
#define DICT_KEYS 32            /* PyDictObject.ma_keys */
#define DICT_VALUES 40          /* PyDictObject.ma_values: split tables */
#define KEYS_LOG2_SIZE 8        /* PyDictKeysObject: dk_log2_size, */
#define KEYS_LOG2_INDEX 9       /* dk_log2_index_bytes, */
#define KEYS_KIND 10            /* dk_kind, */
#define KEYS_NENTRIES 24        /* dk_nentries, */
#define KEYS_INDICES 32         /* then the indices, then the entries */
#define CELL_REF 16             /* PyCellObject.ob_ref */
#define NAME_MAX_LEN 64         /* a local's or key's name compared */

static int rd64(const struct py_runtime *r, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return py_mem_read(r->pid, addr, v, sizeof(*v));
}

int pyo_type_name(const struct py_runtime *r, uint64_t obj, char *buf, size_t len)
{
	uint64_t type, name;
	size_t n;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (rd64(r, obj + r->lay->ob_type, &type) || rd64(r, type + TYPE_TP_NAME, &name) || !name)
		return -EFAULT;
	/* a C string in the target: as much as reads, to its NUL */
	for (n = len - 1; n; n /= 2)
		if (!py_mem_read(r->pid, name, buf, n))
			break;
	buf[n] = '\0';
	buf[strnlen(buf, n)] = '\0';
	return n ? 0 : -EFAULT;
}

bool pyo_is(const struct py_runtime *r, uint64_t obj, const char *type)
{
	char name[64];

	return !pyo_type_name(r, obj, name, sizeof(name)) && !strcmp(name, type);
}

/* Latin-1 to UTF-8, controls as '?' (names go on lines of their own). */
static void latin1_utf8(const uint8_t *in, size_t n, char *out, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 2 < len; i++) {
		uint8_t c = in[i];

		if (c < 0x20 || c == 0x7f) {
			out[o++] = '?';
		} else if (c < 0x80) {
			out[o++] = (char)c;
		} else {
			out[o++] = (char)(0xc0 | (c >> 6));
			out[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[o] = '\0';
}

int pyo_text(const struct py_runtime *r, uint64_t obj, char *buf, size_t len)
{
	const struct py_layout *L = r->lay;
	uint8_t hdr[80], raw[256];
	uint64_t type, size;
	size_t n;

	if (!len || L->uni_compact_data > sizeof(hdr))
		return -EINVAL;
	buf[0] = '\0';
	if (py_mem_read(r->pid, obj, hdr, L->uni_compact_data))
		return -EFAULT;
	memcpy(&type, hdr + L->ob_type, 8);
	memcpy(&size, hdr + L->var_size, 8);
	if (type == r->unicode_type) {
		uint8_t state = hdr[L->uni_state];

		/* compact, one byte a character (ASCII or latin-1) */
		if (!(state & 0x20) || ((state >> 2) & 7) != 1)
			return -EINVAL;
		obj += (state & 0x40) ? L->uni_ascii_data : L->uni_compact_data;
	} else if (type == r->bytes_type) {
		obj += L->bytes_data;
	} else {
		return -EINVAL;
	}
	n = size < sizeof(raw) ? (size_t)size : sizeof(raw);
	if (size > (1u << 30) || py_mem_read(r->pid, obj, raw, n))
		return -EFAULT;
	latin1_utf8(raw, n, buf, len);
	return 0;
}

/* @obj is a str equal to @name. */
static bool str_is(const struct py_runtime *r, uint64_t obj, const char *name)
{
	char text[NAME_MAX_LEN];
	uint64_t type;

	return !rd64(r, obj + r->lay->ob_type, &type) && type == r->unicode_type &&
	       !pyo_text(r, obj, text, sizeof(text)) && !strcmp(text, name);
}

static int tuple_size(const struct py_runtime *r, uint64_t tuple, uint64_t *n)
{
	if (!pyo_is(r, tuple, "tuple"))
		return -EINVAL;
	return rd64(r, tuple + r->lay->var_size, n) ? -EFAULT : 0;
}

int pyo_tuple_item(const struct py_runtime *r, uint64_t tuple, unsigned int idx, uint64_t *item)
{
	uint64_t n;
	int err = tuple_size(r, tuple, &n);

	if (err)
		return err;
	if (idx >= n)
		return -ENOENT;
	return rd64(r, tuple + TUPLE_ITEMS + 8ull * idx, item) ? -EFAULT : 0;
}

static bool locals_known(const struct py_runtime *r)
{
	return !r->lay->frame_object && r->lay->major == 3 && r->lay->minor >= 11 &&
	       r->lay->minor <= 13;
}

/* The index of local @name in @code's co_localsplusnames: >= 0, or -errno. */
static int local_index(const struct py_runtime *r, uint64_t code, const char *name)
{
	uint64_t names, n, item;
	unsigned int i;
	int err;

	if (!locals_known(r))
		return -ENOTSUP;
	if (rd64(r, code + CO_LOCALSPLUSNAMES, &names))
		return -EFAULT;
	err = tuple_size(r, names, &n);
	if (err)
		return err;
	for (i = 0; i < n && i < PYO_NAMES_MAX; i++) {
		if (rd64(r, names + TUPLE_ITEMS + 8ull * i, &item))
			return -EFAULT;
		if (str_is(r, item, name))
			return (int)i;
	}
	return -ENOENT;
}

int pyo_local(const struct py_runtime *r, const struct pyw_frame *f, const char *name,
	      uint64_t *obj)
{
	int i = local_index(r, f->code, name);

	*obj = 0;
	if (i < 0)
		return i;
	if (rd64(r, f->addr + FRAME_LOCALSPLUS + 8ull * (unsigned int)i, obj))
		return -EFAULT;
	return *obj ? 0 : -ENOENT;
}

int pyo_param_index(const struct py_runtime *r, uint64_t code, const char *name)
{
	int i = local_index(r, code, name);
	int32_t argc;

	if (i < 0)
		return i;
	/* parameters come first among the locals, positional ones first of all */
	if (py_mem_read(r->pid, code + (r->lay->minor == 11 ? CO_ARGCOUNT_311 : CO_ARGCOUNT_312),
			&argc, sizeof(argc)))
		return -EFAULT;
	return i < argc ? i : -ENOENT;
}

int pyo_dict_get(const struct py_runtime *r, uint64_t dict, const char *key, uint64_t *val)
{
	uint64_t keys, values, nentries, k;
	uint8_t hdr[KEYS_INDICES];
	unsigned int i, esize;
	uint64_t entries;

	*val = 0;
	if (!pyo_is(r, dict, "dict"))
		return -EINVAL;
	if (rd64(r, dict + DICT_KEYS, &keys) || rd64(r, dict + DICT_VALUES, &values) ||
	    py_mem_read(r->pid, keys, hdr, sizeof(hdr)))
		return -EFAULT;
	if (values)
		return -EINVAL; /* a split table (an instance's __dict__): not a kwargs dict */
	memcpy(&nentries, hdr + KEYS_NENTRIES, 8);
	if (hdr[KEYS_LOG2_INDEX] > 32 || hdr[KEYS_LOG2_SIZE] > 32 || nentries > (1ull << 32))
		return -EINVAL;
	/* entries follow the indices: {key, value} for str-only keys (kind 1
	 * and 2), {hash, key, value} for general ones (kind 0) */
	esize = hdr[KEYS_KIND] ? 16 : 24;
	entries = keys + KEYS_INDICES + (1ull << hdr[KEYS_LOG2_INDEX]);
	for (i = 0; i < nentries && i < PYO_DICT_MAX; i++) {
		uint64_t e = entries + (uint64_t)i * esize + (esize == 24 ? 8 : 0);

		if (rd64(r, e, &k))
			return -EFAULT;
		if (!k || !str_is(r, k, key))
			continue; /* a deleted entry's key is NULL */
		if (rd64(r, e + 8, val))
			return -EFAULT;
		return *val ? 0 : -ENOENT;
	}
	return -ENOENT;
}

int pyo_cell(const struct py_runtime *r, uint64_t cell, uint64_t *val)
{
	*val = 0;
	if (!pyo_is(r, cell, "cell"))
		return -EINVAL;
	if (rd64(r, cell + CELL_REF, val))
		return -EFAULT;
	return *val ? 0 : -ENOENT;
}
