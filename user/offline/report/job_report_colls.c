// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "offline/report/job_report_colls.h"
#include "util/grow.h"

/* Steps listed in text with their heaviest collectives, and how many each. */
#define COLLS_TEXT_STEPS 20
#define COLLS_TEXT_PER_STEP 3
#define COLLS_TEXT_STRAGGLERS 8
#define COLLS_TEXT_RANKS 8 /* ranks a step's line names (the JSON has all) */

struct item {
	const char *pg, *name, *dtype;
	int64_t bytes;
	uint64_t seq;
	size_t stream, step;
	int64_t arrive, end;
};

static int cmp_item(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	int c = strcmp(a->pg, b->pg);

	if (c)
		return c;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return a->arrive < b->arrive ? -1 : a->arrive > b->arrive;
}

static int cmp_coll(const void *x, const void *y)
{
	const struct jr_coll *a = x, *b = y;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_strag(const void *x, const void *y)
{
	const struct jr_strag *a = x, *b = y;

	if (a->wait_caused_ns != b->wait_caused_ns)
		return a->wait_caused_ns > b->wait_caused_ns ? -1 : 1;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

/* A segment's collectives on the wall clock, placed as the segment is. */
static int add_file(const struct job_report *r, const struct sp_seg *sg, size_t step,
		    struct item **v, size_t *n, size_t *cap, struct jr_colls *c)
{
	const struct manifest *m = &r->ms[sg->m];
	const struct mf_file *f = &m->files[sg->f];
	int64_t a, e;
	size_t i;

	for (i = 0; i < f->ncolls; i++) {
		const struct mf_coll *k = &f->colls[i];

		if (!k->pg[0]) {
			c->no_group++;
			continue;
		}
		if (mf_file_at(m, f, k->arrive_ns, &a) || mf_file_at(m, f, k->end_ns, &e))
			continue;
		if (grow_one(v, *n, cap, sizeof(**v), 64))
			return -ENOMEM;
		(*v)[(*n)++] = (struct item){ k->pg, k->name, k->dtype, k->bytes, k->seq, sg->stream,
					      step, a, e };
	}
	return 0;
}

static int gather(const struct job_report *r, const struct jr_region *g, struct item **v,
		  size_t *n, struct jr_colls *c)
{
	const struct sp_step *t;
	size_t s, i, cap = 0;
	int ret;

	for (s = 0; g->pairs && s < g->pairs->nsteps; s++) {
		t = &r->pairs.steps[g->pairs->first_step + s];
		for (i = t->first; i < t->first + t->n; i++) {
			ret = add_file(r, &r->pairs.segs[i], g->pairs->first_step + s, v, n, &cap, c);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* One (group, seq) run of items: a collective of 2 ranks or more. */
static int one_coll(struct jr_colls *c, const struct item *it, size_t n, size_t *rcap,
		    size_t *ccap)
{
	struct jr_coll k = { it->name, it->pg, it->dtype, it->bytes, it->seq, it->step, c->nranks,
			     0, 0, 0, 0 };
	int64_t last = INT64_MIN, first_exit = INT64_MAX;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i && it[i].stream == it[i - 1].stream)
			continue; /* one rank's twice (a step key reused): its first */
		if (grow_one(&c->ranks, c->nranks, rcap, sizeof(*c->ranks), 64))
			return -ENOMEM;
		c->ranks[c->nranks++] = (struct jr_coll_rank){ it[i].stream, it[i].arrive, it[i].end };
		if (it[i].step < k.step)
			k.step = it[i].step;
		if (it[i].bytes != k.bytes)
			k.bytes = -1; /* the ranks disagree: not shown as one size */
		k.n++;
	}
	if (k.n < 2) {
		c->nranks = k.first;
		c->alone++;
		return 0;
	}
	for (i = 0; i < k.n; i++)
		if (c->ranks[k.first + i].arrive_ns > last) {
			last = c->ranks[k.first + i].arrive_ns;
			k.last = i;
		}
	for (i = 0; i < k.n; i++) {
		k.wait_ns += last - c->ranks[k.first + i].arrive_ns;
		if (c->ranks[k.first + i].end_ns < first_exit)
			first_exit = c->ranks[k.first + i].end_ns;
	}
	k.transfer_ns = first_exit > last ? first_exit - last : 0;
	if (grow_one(&c->v, c->n, ccap, sizeof(*c->v), 64))
		return -ENOMEM;
	c->v[c->n++] = k;
	return 0;
}

/*
 * A collective some of whose ranks are missing (a rank's record of it fell
 * outside its segments) would name the wrong last rank: where the same
 * group has collectives with more ranks in the report, those with fewer are
 * counted (partial), not shown.  A report of some ranks only keeps its own.
 */
static void drop_partial(struct jr_colls *c)
{
	size_t i, j, a, k = 0, most;

	/* c->v comes by group, then sequence number (one_coll()'s order) */
	for (a = 0; a < c->n; a = j) {
		most = 0;
		for (j = a; j < c->n && !strcmp(c->v[j].pg, c->v[a].pg); j++)
			most = c->v[j].n > most ? c->v[j].n : most;
		for (i = a; i < j; i++) {
			if (c->v[i].n < most)
				c->partial++;
			else
				c->v[k++] = c->v[i];
		}
	}
	c->n = k;
}

static int stragglers(const struct job_report *r, struct jr_colls *c)
{
	size_t i, j, s;

	c->nstrag = r->pairs.nstreams;
	if (!c->nstrag)
		return 0;
	c->strag = calloc(c->nstrag, sizeof(*c->strag));
	if (!c->strag)
		return -ENOMEM;
	for (s = 0; s < c->nstrag; s++)
		c->strag[s].stream = s;
	for (i = 0; i < c->n; i++) {
		s = c->ranks[c->v[i].first + c->v[i].last].stream;
		c->strag[s].times_last++;
		c->strag[s].wait_caused_ns += c->v[i].wait_ns;
	}
	/* only the ranks that took part in one */
	for (i = j = 0; i < c->nstrag; i++)
		if (c->strag[i].times_last)
			c->strag[j++] = c->strag[i];
	c->nstrag = j;
	qsort(c->strag, c->nstrag, sizeof(*c->strag), cmp_strag);
	return 0;
}

int jr_colls_build(const struct job_report *r, const struct jr_region *g, struct jr_colls *c)
{
	struct item *v = NULL;
	size_t n = 0, i, j, rcap = 0, ccap = 0;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = gather(r, g, &v, &n, c);
	if (!ret && n)
		qsort(v, n, sizeof(*v), cmp_item);
	for (i = 0; !ret && i < n; i = j) {
		for (j = i + 1; j < n && v[j].seq == v[i].seq && !strcmp(v[j].pg, v[i].pg); j++)
			;
		ret = one_coll(c, &v[i], j - i, &rcap, &ccap);
	}
	free(v);
	if (!ret)
		drop_partial(c);
	if (!ret && c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_coll);
	if (!ret)
		ret = stragglers(r, c);
	if (ret)
		jr_colls_free(c);
	return ret;
}

void jr_colls_free(struct jr_colls *c)
{
	free(c->v);
	free(c->ranks);
	free(c->strag);
	memset(c, 0, sizeof(*c));
}

/* A rank's time in a step's collectives: waiting for the last to arrive,
 * then in transfer until its own exit. */
struct rank_comm {
	size_t stream;
	int64_t wait_ns, transfer_ns;
	size_t n;
};

static size_t step_comm(const struct jr_colls *c, size_t step, struct rank_comm *out, size_t max)
{
	size_t i, j, k, n = 0;

	for (i = 0; i < c->n; i++) {
		const struct jr_coll *x = &c->v[i];
		int64_t last;

		if (x->step != step)
			continue;
		last = c->ranks[x->first + x->last].arrive_ns;
		for (j = 0; j < x->n; j++) {
			const struct jr_coll_rank *e = &c->ranks[x->first + j];

			for (k = 0; k < n && out[k].stream != e->stream; k++)
				;
			if (k == n) {
				if (n == max)
					continue;
				out[n++] = (struct rank_comm){ e->stream, 0, 0, 0 };
			}
			out[k].wait_ns += last - e->arrive_ns;
			out[k].transfer_ns += e->end_ns > last ? e->end_ns - last : 0;
			out[k].n++;
		}
	}
	return n;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void print_coll(FILE *f, const struct job_report *r, const struct jr_colls *c,
		       const struct jr_coll *k)
{
	char label[512];
	char *name = jr_tty(k->name), *pg = jr_tty(k->pg);

	jr_stream_label(r, c->ranks[k->first + k->last].stream, label, sizeof(label));
	fprintf(f, "    %s group %s seq %llu", name ? name : "?", pg ? pg : "?",
		(unsigned long long)k->seq);
	if (k->bytes >= 0)
		fprintf(f, " (%lld bytes)", (long long)k->bytes);
	fprintf(f, ": last %s; the others waited %.3f ms for it; transfer %.3f ms\n", label,
		ms(k->wait_ns), ms(k->transfer_ns));
	free(name);
	free(pg);
}

/* A step's heaviest collectives by wait. */
static void print_step(FILE *f, const struct job_report *r, const struct jr_colls *c, size_t a,
		       size_t b)
{
	size_t shown[COLLS_TEXT_PER_STEP], ns = 0, i, k, best;

	struct rank_comm rc[COLLS_TEXT_RANKS];
	char label[512];
	size_t nr = step_comm(c, c->v[a].step, rc, COLLS_TEXT_RANKS);

	fprintf(f, "  step %zu: %zu collective%s", r->pairs.steps[c->v[a].step].number, b - a,
		b - a == 1 ? "" : "s");
	for (i = 0; i < nr; i++) {
		jr_stream_label(r, rc[i].stream, label, sizeof(label));
		fprintf(f, "%s%s waited %.3f ms, transfer %.3f ms", i ? "; " : ": ", label,
			ms(rc[i].wait_ns), ms(rc[i].transfer_ns));
	}
	fputc('\n', f);
	while (ns < COLLS_TEXT_PER_STEP && ns < b - a) {
		best = SIZE_MAX;
		for (i = a; i < b; i++) {
			for (k = 0; k < ns && shown[k] != i; k++)
				;
			if (k == ns && (best == SIZE_MAX || c->v[i].wait_ns > c->v[best].wait_ns))
				best = i;
		}
		shown[ns++] = best;
		print_coll(f, r, c, &c->v[best]);
	}
}

void jr_colls_print(FILE *f, const struct job_report *r, const struct jr_colls *c)
{
	char label[512];
	size_t i, j, steps = 0;

	if (!c->n && !c->alone)
		return;
	fprintf(f, "Collectives: %zu matched across ranks by process group and sequence number",
		c->n);
	if (c->alone)
		fprintf(f, "; %llu seen by one rank only", (unsigned long long)c->alone);
	if (c->partial)
		fprintf(f, "; %llu missing a rank of their group (not shown)",
			(unsigned long long)c->partial);
	if (c->no_group)
		fprintf(f, "; %llu without a readable process group", (unsigned long long)c->no_group);
	fputc('\n', f);
	for (i = 0; i < c->nstrag && i < COLLS_TEXT_STRAGGLERS; i++) {
		jr_stream_label(r, c->strag[i].stream, label, sizeof(label));
		fprintf(f, "  %s %s: last in %zu of %zu, the others waited %.3f ms for it\n",
			i ? "        " : "waited for:", label, c->strag[i].times_last, c->n,
			ms(c->strag[i].wait_caused_ns));
	}
	for (i = 0; i < c->n && steps < COLLS_TEXT_STEPS; i = j, steps++) {
		for (j = i + 1; j < c->n && c->v[j].step == c->v[i].step; j++)
			;
		print_step(f, r, c, i, j);
	}
	if (i < c->n)
		fprintf(f, "  (%zu more collectives in later steps: --json has them all)\n", c->n - i);
}

static json_object *coll_json(const struct job_report *r, const struct jr_colls *c,
			      const struct jr_coll *k)
{
	json_object *o = json_object_new_object(), *ranks = json_object_new_array();
	char label[512];
	size_t i;

	json_object_object_add(o, "name", json_object_new_string(k->name));
	json_object_object_add(o, "pg", json_object_new_string(k->pg));
	json_object_object_add(o, "seq", json_object_new_uint64(k->seq));
	json_object_object_add(o, "bytes", k->bytes >= 0 ? json_object_new_int64(k->bytes) : NULL);
	json_object_object_add(o, "dtype", k->dtype[0] ? json_object_new_string(k->dtype) : NULL);
	for (i = 0; i < k->n; i++) {
		const struct jr_coll_rank *x = &c->ranks[k->first + i];
		json_object *e = json_object_new_object();

		jr_stream_label(r, x->stream, label, sizeof(label));
		json_object_object_add(e, "rank", json_object_new_string(label));
		json_object_object_add(e, "rank_number",
				       json_object_new_int(jr_stream_rank_number(r, x->stream)));
		json_object_object_add(e, "arrive_unix_us", jr_json_us(x->arrive_ns));
		json_object_object_add(e, "exit_unix_us", jr_json_us(x->end_ns));
		json_object_object_add(e, "waited_us",
				       jr_json_us(c->ranks[k->first + k->last].arrive_ns - x->arrive_ns));
		json_object_array_add(ranks, e);
	}
	json_object_object_add(o, "ranks", ranks);
	jr_stream_label(r, c->ranks[k->first + k->last].stream, label, sizeof(label));
	json_object_object_add(o, "last_rank", json_object_new_string(label));
	json_object_object_add(o, "last_rank_number",
			       json_object_new_int(jr_stream_rank_number(r, c->ranks[k->first + k->last].stream)));
	json_object_object_add(o, "wait_us", jr_json_us(k->wait_ns));
	json_object_object_add(o, "transfer_us", jr_json_us(k->transfer_ns));
	return o;
}

json_object *jr_colls_step_json(const struct job_report *r, const struct jr_colls *c, size_t step)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].step == step)
			json_object_array_add(a, coll_json(r, c, &c->v[i]));
	return a;
}

#define STEP_RANKS_MAX 4096

json_object *jr_colls_step_ranks_json(const struct job_report *r, const struct jr_colls *c,
				      size_t step)
{
	json_object *a = json_object_new_array(), *o;
	struct rank_comm *v = calloc(STEP_RANKS_MAX, sizeof(*v));
	char label[512];
	size_t i, n;

	if (!v)
		return a;
	n = step_comm(c, step, v, STEP_RANKS_MAX);
	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		jr_stream_label(r, v[i].stream, label, sizeof(label));
		json_object_object_add(o, "rank", json_object_new_string(label));
		json_object_object_add(o, "rank_number",
				       json_object_new_int(jr_stream_rank_number(r, v[i].stream)));
		json_object_object_add(o, "collectives", json_object_new_uint64(v[i].n));
		json_object_object_add(o, "waiting_us", jr_json_us(v[i].wait_ns));
		json_object_object_add(o, "transfer_us", jr_json_us(v[i].transfer_ns));
		json_object_array_add(a, o);
	}
	free(v);
	return a;
}

json_object *jr_colls_stragglers_json(const struct job_report *r, const struct jr_colls *c)
{
	json_object *a = json_object_new_array(), *o;
	char label[512];
	size_t i;

	for (i = 0; i < c->nstrag; i++) {
		o = json_object_new_object();
		jr_stream_label(r, c->strag[i].stream, label, sizeof(label));
		json_object_object_add(o, "rank", json_object_new_string(label));
		json_object_object_add(o, "rank_number",
				       json_object_new_int(jr_stream_rank_number(r, c->strag[i].stream)));
		json_object_object_add(o, "times_last", json_object_new_uint64(c->strag[i].times_last));
		json_object_object_add(o, "wait_caused_us", jr_json_us(c->strag[i].wait_caused_ns));
		json_object_array_add(a, o);
	}
	return a;
}
