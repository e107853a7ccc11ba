// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Gloo collectives joined from their three calls (pipeline/comm/collectives.c),
 * the process group read from this process's own memory laid out as
 * c10d::Backend lays it out, and hostile groups refused and counted. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/comm/collectives.h"
#include "unit.h"

/* c10d::Backend's head as torch 2.13/2.14 lay it out: vptr, refcount,
 * rank_, size_, debug level, pg_uid_, pg_desc_ (libstdc++ strings). */
struct fake_string {
	char *p;
	size_t len;
	char buf[16];
};
struct fake_backend {
	void *vptr;
	uint64_t refcount;
	int32_t rank, size, debug, pad;
	struct fake_string uid, desc;
	char rest[160];
};

static void set_string(struct fake_string *s, char *text)
{
	s->len = strlen(text);
	if (s->len < 16) {
		memcpy(s->buf, text, s->len + 1);
		s->p = s->buf;
	} else {
		s->p = text; /* on the "heap" */
	}
}

static int find(const char *symbol)
{
	return cuda_api_find(symbol);
}

static int id_of(enum api_decoder d)
{
	unsigned int i;

	for (i = 0; i < cuda_api_count(); i++)
		if (cuda_api_row(i)->decoder == d)
			return (int)i;
	return -1;
}

static struct api_call made(uint64_t work, uint64_t seq, const char *title, uint64_t ts)
{
	struct api_call c = { .tid = 10, .api_id = (uint32_t)id_of(DEC_GLOO_WORK), .start_ns = ts,
			      .end_ns = ts + 5 };

	c.args[0] = work;
	c.args[3] = 1; /* OpType::ALLREDUCE */
	c.args[4] = seq;
	c.args[6] = (uint64_t)(uintptr_t)title;
	return c;
}

static struct api_call queued(uint64_t pg, uint64_t work)
{
	struct api_call c = { .tid = 10, .api_id = (uint32_t)id_of(DEC_GLOO_ENQUEUE) };

	c.args[0] = pg;
	memcpy(c.deref, &work, 8);
	c.deref_len = 8;
	return c;
}

static struct api_call ran(uint64_t work, uint64_t start, uint64_t end)
{
	struct api_call c = { .tid = 20, .api_id = (uint32_t)id_of(DEC_GLOO_EXEC), .start_ns = start,
			      .end_ns = end };

	memcpy(c.deref, &work, 8);
	c.deref_len = 8;
	return c;
}

static void test_rows(void)
{
	CHECK(find("_ZN4c10d16ProcessGroupGloo7enqueueEN3c1013intrusive_ptrINS0_9AsyncWorkENS1_6detail34"
		   "intrusive_target_default_null_typeIS3_EEEE") >= 0);
	CHECK(id_of(DEC_GLOO_WORK) >= 0 && id_of(DEC_GLOO_EXEC) >= 0);
	CHECK_EQ(cuda_api_row((unsigned int)id_of(DEC_GLOO_EXEC))->layer, LAYER_GLOO);
}

static void test_join(void)
{
	static char heap_desc[] = "a process group with a long description";
	static const char title[] = "gloo:all_reduce";
	struct fake_backend pg = { .rank = 1, .size = 3, .debug = 0 };
	struct name_table names;
	struct coll_state *st = coll_state__new();
	struct collective out;
	struct api_call c;
	char buf[128];
	uint64_t pgp = (uint64_t)(uintptr_t)&pg;

	name_table_init(&names);
	set_string(&pg.uid, "7");
	set_string(&pg.desc, heap_desc);
	c = made(0x1000, 54, title, 100);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 0);
	c = queued(pgp, 0x1000);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 0);
	c = ran(0x1000, 200, 900);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 1);
	CHECK_EQ(out.seq, 54);
	CHECK_EQ(out.arrive_ns, 100);
	CHECK_EQ(out.start_ns, 200);
	CHECK_EQ(out.end_ns, 900);
	CHECK_EQ(out.tid, 20);
	CHECK_EQ(out.arrive_tid, 10);
	CHECK_EQ(out.group_rank, 1);
	CHECK_EQ(out.group_size, 3);
	name_table_get(&names, out.name, buf, sizeof(buf));
	CHECK(!strcmp(buf, "gloo:all_reduce"));
	CHECK(!strcmp(coll_short_name(buf), "all_reduce"));
	name_table_get(&names, out.pg_name, buf, sizeof(buf));
	CHECK(!strcmp(buf, "7"));
	name_table_get(&names, out.pg_desc, buf, sizeof(buf));
	CHECK(!strcmp(buf, heap_desc));
	/* run twice: the work is gone after its run */
	c = ran(0x1000, 300, 400);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 0);
	CHECK_EQ(coll_counts(st)->no_work, 1);
	CHECK_EQ(coll_counts(st)->joined, 1);
	CHECK_EQ(coll_ngroups(st), 1);
	/* run and returned before the queueing call returned: whole at the
	 * queueing call, with its group */
	c = made(0x1100, 55, title, 1000);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 0);
	c = ran(0x1100, 1100, 1200);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 0);
	c = queued(pgp, 0x1100);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 1);
	CHECK_EQ(out.seq, 55);
	CHECK_EQ(out.start_ns, 1100);
	CHECK_EQ(out.end_ns, 1200);
	CHECK_EQ(out.tid, 20);
	name_table_get(&names, out.pg_name, buf, sizeof(buf));
	CHECK(!strcmp(buf, "7"));
	coll_state__free(st);
	name_table_free(&names);
}

/* What the target controls: a group that is not a Backend, a title with
 * escapes, an unmapped title. */
static void test_hostile(void)
{
	static const char title[] = "gloo:\x1b[31mred\xe2\x80\xae";
	struct fake_backend pg;
	struct name_table names;
	struct coll_state *st = coll_state__new();
	struct collective out;
	struct api_call c;
	char buf[128];

	name_table_init(&names);
	memset(&pg, 0x41, sizeof(pg)); /* no rank, size, strings anywhere */
	c = made(0x2000, 1, title, 10);
	coll_on_call(st, getpid(), &names, &c, &out);
	c = queued((uint64_t)(uintptr_t)&pg, 0x2000);
	coll_on_call(st, getpid(), &names, &c, &out);
	c = ran(0x2000, 20, 30);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 1);
	CHECK_EQ(out.pg_name, 0);
	CHECK_EQ(out.group_size, -1);
	CHECK_EQ(coll_counts(st)->pg_unread, 1);
	name_table_get(&names, out.name, buf, sizeof(buf));
	CHECK(!strchr(buf, '\x1b'));
	CHECK(!strstr(buf, "\xe2\x80\xae"));
	CHECK(coll_counts(st)->name_cut >= 1);
	/* a title at an unmapped address, a group at NULL */
	c = made(0x3000, 2, (const char *)8, 10);
	coll_on_call(st, getpid(), &names, &c, &out);
	c = ran(0x3000, 20, 30);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 0); /* waits for its queueing */
	c = queued(0, 0x3000);
	CHECK_EQ(coll_on_call(st, getpid(), &names, &c, &out), 1);
	CHECK_EQ(out.name, 0);
	CHECK_EQ(out.pg_name, 0);
	/* more works made than the table holds, never run: counted */
	for (int i = 0; i < 600; i++) {
		c = made(0x10000 + (uint64_t)i * 16, (uint64_t)i, title, 10);
		coll_on_call(st, getpid(), &names, &c, &out);
	}
	CHECK(coll_counts(st)->evicted >= 88);
	coll_state__free(st);
	name_table_free(&names);
}

int main(void)
{
	RUN(test_rows);
	RUN(test_join);
	RUN(test_hostile);
	UNIT_DONE();
}
