// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --with-stack's user side: the 3.11 location table against CPython's own
 * co_lines() (python3.11 run here; skipped without it), hostile tables and
 * code objects (built in this process, read back through
 * process_vm_readv like a target's), and the folded stacks of a segment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/stacks/flame_svg.h"
#include "output/stacks/pystack_fold.h"
#include "output/stacks/pystack_lines.h"
#include "pipeline/pystack.h"
#include "proc/python/py_code.h"
#include "unit.h"

/* Functions whose tables have every entry kind: short forms, one-line
 * forms, long forms (big jumps, multi-line spans), and no location. */
static const char py_script[] =
	"import sys\n"
	"assert sys.version_info[:2] >= (3, 10)\n"
	"src = '''\n"
	"def a(x):\n"
	"    y = x + 1\n"
	"    return y\n"
	"def b(x):\n"
	"    for i in range(3):\n"
	"        x = (x +\n"
	"             i *\n"
	"             2)\n"
	"    try:\n"
	"        pass\n"
	"    except Exception:\n"
	"        raise\n"
	"    return x\n"
	"def c():\n"
	"    return [i for i in range(3)]\n"
	"''' + '\\n' * 500 + '''\n"
	"def d(x):\n"
	"    return x\n"
	"'''\n"
	"g = {}\n"
	"exec(compile(src + '\\n' * 3000 + 'def e():\\n  pass\\n', 'f.py', 'exec'), g)\n"
	"def codes(co):\n"
	"    yield co\n"
	"    for k in co.co_consts:\n"
	"        if hasattr(k, 'co_lines'):\n"
	"            yield from codes(k)\n"
	"for n in 'abcde':\n"
	"    for co in codes(g[n].__code__):\n"
	"        t = co.co_linetable\n"
	"        print(co.co_firstlineno, len(t), t.hex())\n"
	"        for s, e, l in co.co_lines():\n"
	"            for u in range(s // 2, e // 2):\n"
	"                print(u, l or 0)\n"
	"        print('end')\n";

/* The location table of 3.11 is also 3.12's and 3.13's: each one found;
 * 3.10's co_linetable (@v310) maps byte addresses, two a code unit. */
static void linetable_against(const char *python, int v310)
{
	char line[65536], cmd[320];
	uint8_t tab[16384];
	int first = 0, ncodes = 0, nunits = 0;
	size_t len = 0, i;
	FILE *p, *f;

	f = fopen("/tmp/fvbpf-test-pystack.py", "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(py_script, f);
	fclose(f);
	/* on PATH, else any pyenv installation of that version */
	snprintf(cmd, sizeof(cmd), "for p in %s \"$(pyenv root 2>/dev/null)\"/versions/*/bin/%s; do "
		 "\"$p\" -c 1 >/dev/null 2>&1 && exec \"$p\" /tmp/fvbpf-test-pystack.py 2>/dev/null; "
		 "done; exit 127", python, python);
	p = popen(cmd, "r");
	if (!p) {
		printf("# no %s: skipped\n", python);
		return;
	}
	while (fgets(line, sizeof(line), p)) {
		static char hex[32768];
		unsigned int v;
		long u, l;

		if (!strncmp(line, "end", 3)) {
			ncodes++;
			continue;
		}
		int f0;
		size_t l0;

		if (sscanf(line, "%d %zu %32767s", &f0, &l0, hex) == 3) {
			first = f0;
			len = l0;
			CHECK(len <= sizeof(tab));
			for (i = 0; i < len && i < sizeof(tab) && sscanf(hex + 2 * i, "%2x", &v) == 1; i++)
				tab[i] = (uint8_t)v;
			continue;
		}
		if (sscanf(line, "%ld %ld", &u, &l) == 2) {
			int got = v310 ? py310_addr2line(tab, len, first, 2 * (int64_t)u)
				       : py311_addr2line(tab, len, first, u);

			if (got != l)
				printf("# unit %ld: %d, CPython %ld\n", u, got, l);
			CHECK_EQ(got, l);
			nunits++;
		}
	}
	unlink("/tmp/fvbpf-test-pystack.py");
	if (pclose(p) != 0 && !ncodes) {
		printf("# %s did not run: skipped\n", python);
		return;
	}
	printf("# %s: %d code objects, %d code units checked against co_lines()\n", python,
	       ncodes, nunits);
	CHECK(ncodes >= 5 && nunits > 50); /* 3.12 inlines the comprehension */
}

static void test_linetable_cpython(void)
{
	/* 3.11 is the machine's interpreter: without it the test fails */
	FILE *p = popen("python3.11 -c 1 2>/dev/null", "r");

	CHECK(p && pclose(p) == 0);
	linetable_against("python3.11", 0);
	linetable_against("python3.12", 0);
	linetable_against("python3.13", 0);
	linetable_against("python3.10", 1);
}

static void test_linetable_hostile(void)
{
	const uint8_t none[] = { 0x80 | (15 << 3) | 3 };              /* 4 units, no line */
	const uint8_t cont[] = { 0x12, 0x34 };                        /* no entry start */
	const uint8_t longv[] = { 0x80 | (13 << 3), 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f };
	const uint8_t neg[] = { 0x80 | (13 << 3), 0x3f, 0x3f };       /* -(big) */
	const uint8_t ok[] = { 0x80 | (13 << 3) | 1, 4, 0x80 | (11 << 3), 0, 0 };

	CHECK_EQ(py311_addr2line(NULL, 0, 7, 0), 0);
	CHECK_EQ(py311_addr2line(NULL, 0, 7, -1), 7);
	CHECK_EQ(py311_addr2line(none, sizeof(none), 7, 2), 0);
	CHECK_EQ(py311_addr2line(none, sizeof(none), 7, 4), 0);
	CHECK_EQ(py311_addr2line(cont, sizeof(cont), 7, 0), 0);
	CHECK_EQ(py311_addr2line(longv, sizeof(longv), 7, 0), 0);
	CHECK_EQ(py311_addr2line(longv, 2, 7, 0), 0);
	CHECK_EQ(py311_addr2line(neg, sizeof(neg), 7, 0), 0);
	/* +2 for units 0-1, then +1 for unit 2 */
	CHECK_EQ(py311_addr2line(ok, sizeof(ok), 7, 1), 9);
	CHECK_EQ(py311_addr2line(ok, sizeof(ok), 7, 2), 10);
	CHECK_EQ(py311_addr2line(ok, sizeof(ok), 7, 3), 0);
}

/* 3.10's pairs (byte delta, line delta), -128: no line. */
static void test_linetable310_hostile(void)
{
	const uint8_t ok[] = { 4, 2, 0, 1, 2, 1, 2, 0x80, 2, 3 };
	const uint8_t big[] = { 2, 127, 2, 127 };
	const uint8_t neg[] = { 2, 0x80 + 1 /* -127 */ };

	CHECK_EQ(py310_addr2line(NULL, 0, 7, 0), 0);
	CHECK_EQ(py310_addr2line(NULL, 0, 7, -2), 7);
	CHECK_EQ(py310_addr2line(ok, sizeof(ok), 7, 0), 9);
	CHECK_EQ(py310_addr2line(ok, sizeof(ok), 7, 3), 9);
	/* the empty range (0, +1) moves the line, holds no address */
	CHECK_EQ(py310_addr2line(ok, sizeof(ok), 7, 4), 11);
	CHECK_EQ(py310_addr2line(ok, sizeof(ok), 7, 6), 0);  /* no line */
	CHECK_EQ(py310_addr2line(ok, sizeof(ok), 7, 8), 14); /* after it: the line before + 3 */
	CHECK_EQ(py310_addr2line(ok, sizeof(ok), 7, 10), 0); /* past the table */
	CHECK_EQ(py310_addr2line(ok, sizeof(ok) - 1, 7, 8), 0); /* a half pair is no pair */
	CHECK_EQ(py310_addr2line(big, sizeof(big), 1 << 30, 2), 0);
	CHECK_EQ(py310_addr2line(neg, sizeof(neg), 7, 0), 0);

	/* a 3.10 frame's instruction is f_lasti, a code unit's index (BPF
	 * keeps its 32 bits): -1 before the first, as CPython says */
	struct py_runtime r = { .lay = py_layout_for(3, 10) };
	struct py_code c = { .firstlineno = 7, .table = (uint8_t *)ok, .ntable = sizeof(ok) };

	CHECK(r.lay && r.lay->frame_object);
	if (!r.lay)
		return;
	CHECK_EQ(py_code_line(&r, &c, 0xffffffffu), 7);
	CHECK_EQ(py_code_line(&r, &c, 2), 11);
	CHECK_EQ(py_code_line(&r, &c, 4), 14);
	CHECK_EQ(py_code_line(&r, &c, 0x7fffffffu), 0);
}

/* Fake objects in this process, laid out as 3.11's. */
static uint8_t fake_code_type[8], fake_str_type[8], fake_bytes_type[8];

struct fake_str {
	uint64_t refcnt, type, length, hash;
	uint32_t state, pad;
	uint64_t wstr;
	char data[64];
};

static void make_str(struct fake_str *s, const char *text)
{
	memset(s, 0, sizeof(*s));
	s->type = (uint64_t)(uintptr_t)fake_str_type;
	s->length = strlen(text);
	s->state = 0x20 | 0x40 | (1 << 2); /* compact, ascii, kind 1 */
	memcpy(s->data, text, strlen(text));
}

static void test_code_hostile(void)
{
	static uint8_t code[256], bytes[64];
	static struct fake_str file, name, ucs2;
	struct py_runtime r = { .pid = getpid(), .code_type = (uintptr_t)fake_code_type,
				.unicode_type = (uintptr_t)fake_str_type,
				.bytes_type = (uintptr_t)fake_bytes_type };
	uint64_t v;
	int32_t first = 12;
	struct py_code c;
	uint16_t u[3] = { 'a', 0x3b1, 'b' };    /* a, alpha, b */

	r.lay = py_layout_for(3, 11);
	CHECK(r.lay != NULL);
	if (!r.lay)
		return;
	make_str(&file, "/x/f.py");
	make_str(&name, "Cls.meth");
	memset(bytes, 0, sizeof(bytes));
	v = (uintptr_t)fake_bytes_type;
	memcpy(bytes + 8, &v, 8);
	v = 1;
	memcpy(bytes + 16, &v, 8);
	bytes[32] = 0x80 | (10 << 3) | 7; /* 8 units on the first line */
	memset(code, 0, sizeof(code));
	v = (uintptr_t)fake_code_type;
	memcpy(code + 8, &v, 8);
	memcpy(code + r.lay->co_firstlineno, &first, 4);
	v = (uintptr_t)&file;
	memcpy(code + r.lay->co_filename, &v, 8);
	v = (uintptr_t)&name;
	memcpy(code + r.lay->co_qualname, &v, 8);
	v = (uintptr_t)bytes;
	memcpy(code + r.lay->co_linetable, &v, 8);

	CHECK_EQ(py_code_read(&r, (uintptr_t)code, &c), PY_CODE_OK);
	CHECK_STR(c.file, "/x/f.py");
	CHECK_STR(c.name, "Cls.meth");
	CHECK_EQ(py_code_line(&r, &c, (uintptr_t)code + r.lay->co_code + 6), 12);
	CHECK_EQ(py_code_line(&r, &c, (uintptr_t)code + r.lay->co_code - 2), 12);
	CHECK_EQ(py_code_line(&r, &c, (uintptr_t)code + r.lay->co_code + 16), 0); /* past it */
	py_code_free(&c);

	/* a UCS-2 name comes out as UTF-8 */
	make_str(&ucs2, "");
	ucs2.state = 0x20 | (2 << 2);
	ucs2.length = 3;
	memcpy((uint8_t *)&ucs2 + r.lay->uni_compact_data, u, sizeof(u));
	v = (uintptr_t)&ucs2;
	memcpy(code + r.lay->co_qualname, &v, 8);
	CHECK_EQ(py_code_read(&r, (uintptr_t)code, &c), PY_CODE_OK);
	CHECK_STR(c.name, "a\xce\xb1" "b");
	py_code_free(&c);

	/* hostile: not code, a non-str name, a huge table, no memory there */
	v = (uintptr_t)fake_str_type;
	memcpy(code + 8, &v, 8);
	CHECK_EQ(py_code_read(&r, (uintptr_t)code, &c), PY_CODE_NOT_CODE);
	v = (uintptr_t)fake_code_type;
	memcpy(code + 8, &v, 8);
	v = (uintptr_t)bytes;
	memcpy(code + r.lay->co_qualname, &v, 8);
	memcpy(code + r.lay->co_name, &v, 8);
	CHECK_EQ(py_code_read(&r, (uintptr_t)code, &c), PY_CODE_BAD_STRING);
	v = (uintptr_t)&name;
	memcpy(code + r.lay->co_qualname, &v, 8);
	v = (uint64_t)PY_LINETABLE_MAX + 1;
	memcpy(bytes + 16, &v, 8);
	CHECK_EQ(py_code_read(&r, (uintptr_t)code, &c), PY_CODE_HUGE_TABLE);
	CHECK_STR(c.name, "Cls.meth"); /* the function is known, its lines are not */
	CHECK_EQ(py_code_line(&r, &c, (uintptr_t)code + r.lay->co_code), 0);
	py_code_free(&c);
	CHECK_EQ(py_code_read(&r, 16, &c), PY_CODE_UNREADABLE);
	name.length = 1ull << 40; /* a length past any string */
	CHECK_EQ(py_code_read(&r, (uintptr_t)code, &c), PY_CODE_BAD_STRING);
	CHECK(c.file == NULL && c.name == NULL && c.table == NULL);
}

static struct pystack_entry *entry(uint32_t n)
{
	struct pystack_entry *e = calloc(1, sizeof(*e) + n * sizeof(e->f[0]));

	e->n = n;
	return e;
}

static void test_fold(void)
{
	struct torch_call ops[4] = {
		{ .start_ns = 0, .end_ns = 100, .tid = 1, .depth = 0, .kind = 1, .stack = 1 },
		{ .start_ns = 10, .end_ns = 40, .tid = 1, .depth = 1, .kind = 1, .stack = 1 },
		{ .start_ns = 50, .end_ns = 60, .tid = 1, .depth = 1, .kind = 1, .stack = 0 },
		{ .start_ns = 5, .end_ns = 55, .tid = 2, .depth = 0, .kind = 1, .stack = 0 },
	};
	struct segment seg = { .ops = ops, .nops = 4, .end_ns = 200 };
	struct region_registry reg = { 0 };
	struct name_table names;
	struct pystack_table tab;
	struct seg_output_ctx c = { .seg = &seg, .reg = &reg, .knames = &names, .pystacks = &tab };
	struct pystack_entry *e;
	struct fold_set fs;
	char *buf = NULL;
	size_t blen = 0;
	FILE *f;

	name_table_init(&names);
	pystack_table_init(&tab, &names);
	ops[0].name = name_table_intern(&names, "aten::x");
	ops[1].name = name_table_intern(&names, "aten::y");
	ops[2].name = name_table_intern(&names, "aten::w");
	ops[3].name = name_table_intern(&names, "aten::z");
	e = entry(2);
	e->f[0] = (struct pystack_frame){ name_table_intern(&names, "inner"),
					  name_table_intern(&names, "/a/site-packages/m/a.py"), 3, 2 };
	e->f[1] = (struct pystack_frame){ name_table_intern(&names, "outer;x"),
					  name_table_intern(&names, "b.py"), 5, 1 };
	tab.e = calloc(1, sizeof(*tab.e));
	tab.e[0] = e;
	tab.n = tab.cap = 1;
	CHECK_EQ(pystack_fold_build(&c, &fs), 0);
	pystack_fold_sort(&fs);
	f = open_memstream(&buf, &blen);
	CHECK_EQ(pystack_fold_write(f, &fs), 0);
	fclose(f);
	CHECK_STR(buf, "[no Python stack];aten::z 50\n"
		       "outer:x (b.py:5);inner (m/a.py:3);aten::x 60\n"
		       "outer:x (b.py:5);inner (m/a.py:3);aten::x;aten::w 10\n"
		       "outer:x (b.py:5);inner (m/a.py:3);aten::x;aten::y 30\n");
	CHECK_EQ(fs.total_ns, 150);
	CHECK_EQ(fs.ops_with_stack, 2);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &blen);
	CHECK_EQ(flame_svg_write(f, &fs, "t<&>", "self CPU time"), 0);
	fclose(f);
	CHECK(strstr(buf, "<svg ") && strstr(buf, "</svg>\n") && strstr(buf, "t&lt;&amp;&gt;"));
	CHECK(strstr(buf, "<title>inner (m/a.py:3) (0.000 ms, 66.67%)</title>") != NULL);
	CHECK(strstr(buf, "<title>[no Python stack] (0.000 ms, 33.33%)</title>") != NULL);
	free(buf);
	pystack_fold_free(&fs);

	/* pylines: a launch from the stack and its kernel's 2 us */
	struct api_call call = { .tid = 1, .start_ns = 20, .end_ns = 30, .stack = 1 };
	struct gpu_activity k = { .kind = FVBPF_GPU_KERNEL, .start = 1000, .end = 3000, .call = 0 };
	struct pyline_set ls;

	seg.calls = &call;
	seg.ncalls = 1;
	seg.gpu = &k;
	seg.ngpu = 1;
	/* device folding: the launch's stack, its call, the kernel */
	k.name = name_table_intern(&names, "void k<1>(float*)");
	CHECK_EQ(pystack_fold_device(&c, &fs), 0);
	pystack_fold_sort(&fs);
	f = open_memstream(&buf, &blen);
	CHECK_EQ(pystack_fold_write(f, &fs), 0);
	fclose(f);
	CHECK_STR(buf, "outer:x (b.py:5);inner (m/a.py:3);cudaLaunchKernel;void k<1>(float*) 2000\n");
	free(buf);
	pystack_fold_free(&fs);
	CHECK_EQ(pylines_build(&c, 2, &ls), 0);
	buf = NULL;
	f = open_memstream(&buf, &blen);
	CHECK_EQ(pylines_write(f, &ls, "t", 2), 0);
	fclose(f);
	CHECK(strstr(buf, "sorted by device time") != NULL);
	/* 100 of 150 ns of self CPU, all 2,000 ns of device time */
	CHECK(strstr(buf, "       0.000   66.7        0.002  100.0        3        1  "
			  "inner (m/a.py:3) <- outer:x (b.py:5)\n") != NULL);
	CHECK(strstr(buf, "       0.000   33.3        0.000    0.0        1        0  "
			  "[no Python stack]\n") != NULL);
	free(buf);
	pylines_free(&ls);
	pystack_table_free(&tab);
	name_table_free(&names);
}

int main(void)
{
	RUN(test_linetable_cpython);
	RUN(test_linetable_hostile);
	RUN(test_linetable310_hostile);
	RUN(test_code_hostile);
	RUN(test_fold);
	UNIT_DONE();
}
