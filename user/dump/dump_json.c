// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The JSON form of a dump (docs/hangs.md#json): json-c, every string the
 * target wrote through json_string_obj(). */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dump/dump.h"
#include "dump/verdict.h"
#include "util/json_writer.h"

static void add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

/* Nanoseconds as milliseconds with three decimals, written as such. */
static json_object *ms3(int64_t ns)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", (double)ns / 1e6);
	return json_object_new_double_s((double)ns / 1e6, text);
}

static json_object *frame_json(const struct dump_frame *f)
{
	json_object *o = json_object_new_object();

	add(o, "function", json_string_obj(f->function));
	add(o, "file", f->unreadable ? NULL : json_string_obj(f->file));
	add(o, "line", f->line > 0 ? json_object_new_int(f->line) : NULL);
	add(o, "first_line", f->unreadable ? NULL : json_object_new_int(f->first_line));
	return o;
}

static const char *call_kind(enum native_call c)
{
	switch (c) {
	case NATIVE_SYSCALL: return "syscall";
	case NATIVE_NOT_IN_SYSCALL: return "not_in_syscall";
	case NATIVE_RUNNING: return "running";
	default: return "unknown";
	}
}

static json_object *native_json(const struct dump_native *n)
{
	json_object *o = json_object_new_object();
	char call[32], st[2] = { n->state, 0 };

	add(o, "state", json_string_obj(st));
	add(o, "state_name", json_object_new_string(native_state_name(n->state)));
	add(o, "call", json_object_new_string(call_kind(n->call)));
	add(o, "syscall", n->call == NATIVE_SYSCALL ?
				  json_string_obj(native_call_name(n, call, sizeof(call))) : NULL);
	add(o, "syscall_nr", n->call == NATIVE_SYSCALL ? json_object_new_int64(n->nr) : NULL);
	add(o, "wchan", n->wchan[0] ? json_string_obj(n->wchan) : NULL);
	add(o, "off_cpu_ms", n->off_cpu_ns >= 0 ? ms3(n->off_cpu_ns) : NULL);
	add(o, "cpu", n->cpu >= 0 ? json_object_new_int(n->cpu) : NULL);
	return o;
}

static json_object *thread_json(const struct dump_thread *t)
{
	json_object *o = json_object_new_object(), *frames = NULL, *regions;
	unsigned int i;

	add(o, "tid", json_object_new_int(t->tid));
	add(o, "name", json_string_obj(t->name));
	add(o, "native", native_json(&t->nat));
	if (t->python) {
		frames = json_object_new_array();
		for (i = 0; i < t->nframes; i++)
			json_object_array_add(frames, frame_json(&t->frames[i]));
	}
	add(o, "python", frames);
	if (t->python) {
		add(o, "python_cut", json_object_new_boolean(t->py_flags & PYW_CUT));
		add(o, "python_unreadable_past", json_object_new_boolean(t->py_flags & PYW_FAULT));
		add(o, "python_torn", json_object_new_boolean(t->py_flags & PYW_TORN));
	}
	if (t->coll_frame >= 0) {
		json_object *c = json_object_new_object();

		add(c, "name", json_string_obj(t->collective));
		add(c, "group", t->group[0] ? json_string_obj(t->group) : NULL);
		add(c, "frame", json_object_new_int(t->coll_frame));
		add(o, "collective", c);
	}
	regions = json_object_new_array();
	for (i = 0; i < t->nregions; i++)
		json_object_array_add(regions, json_string_obj(t->regions[i]));
	add(o, "regions", regions);
	return o;
}

static const char *py_status(enum dump_py s)
{
	switch (s) {
	case DUMP_PY_OK: return "ok";
	case DUMP_PY_NONE: return "none";
	case DUMP_PY_UNSUPPORTED: return "unsupported";
	case DUMP_PY_MISMATCH: return "layout_mismatch";
	default: return "unreadable";
	}
}

static json_object *python_json(const struct dump_proc *p)
{
	json_object *o = json_object_new_object();
	char ver[32];

	add(o, "status", json_object_new_string(py_status(p->py)));
	if (p->py_version) {
		snprintf(ver, sizeof(ver), "%lu.%lu", (p->py_version >> 24) & 0xff,
			 (p->py_version >> 16) & 0xff);
		if (p->py_version & 0xff)
			snprintf(ver + strlen(ver), sizeof(ver) - strlen(ver), ".%lu",
				 (p->py_version >> 8) & 0xff);
		add(o, "version", json_object_new_string(ver));
	}
	if (p->py_path[0])
		add(o, "library", json_string_obj(p->py_path));
	add(o, "thread_states", json_object_new_int((int)p->pylist.states));
	add(o, "thread_states_unmatched", json_object_new_int((int)p->py_states_unmatched));
	add(o, "thread_list_cut", json_object_new_boolean(p->pylist.cut));
	add(o, "thread_list_unreadable_past", json_object_new_boolean(p->pylist.bad));
	return o;
}

static json_object *proc_json(const struct dump_proc *p)
{
	json_object *o = json_object_new_object(), *threads = json_object_new_array();
	unsigned int i;

	add(o, "pid", json_object_new_int(p->pid));
	add(o, "ppid", json_object_new_int(p->ppid));
	add(o, "rank", p->rank >= 0 ? json_object_new_int(p->rank) : NULL);
	add(o, "rank_from_env", json_object_new_boolean(p->rank_from_env));
	add(o, "world_size", p->world_size >= 0 ? json_object_new_int(p->world_size) : NULL);
	add(o, "name", json_string_obj(p->name));
	add(o, "worker_of", p->worker ? json_object_new_int(p->worker_of) : NULL);
	add(o, "comm", json_string_obj(p->comm));
	add(o, "cmdline", json_string_obj(p->cmdline));
	add(o, "exited", json_object_new_boolean(p->exited));
	add(o, "python", python_json(p));
	for (i = 0; i < p->nthreads; i++)
		json_object_array_add(threads, thread_json(&p->threads[i]));
	add(o, "threads", threads);
	add(o, "threads_not_read", json_object_new_int((int)p->threads_cut));
	return o;
}

static json_object *rank_or_null(const struct dump_proc *p)
{
	return p->rank >= 0 ? json_object_new_int(p->rank) : NULL;
}

static json_object *waiting_json(const struct dump *d, const struct dump_proc *p)
{
	const struct dump_thread *t = verdict_thread(p);
	json_object *o = json_object_new_object();

	add(o, "rank", rank_or_null(p));
	add(o, "pid", json_object_new_int(p->pid));
	add(o, "tid", json_object_new_int(t->tid));
	add(o, "frame", frame_json(&t->frames[t->coll_frame]));
	add(o, "group", t->group[0] ? json_string_obj(t->group) : NULL);
	(void)d;
	return o;
}

static json_object *absent_json(const struct dump *d, const struct dump_absent *a)
{
	json_object *o = json_object_new_object();
	const struct dump_proc *p = a->proc >= 0 ? &d->procs[a->proc] : NULL;
	const struct dump_thread *t = p ? verdict_thread(p) : NULL;
	char doing[512];

	add(o, "rank", a->rank >= 0 ? json_object_new_int(a->rank) : NULL);
	add(o, "pid", p ? json_object_new_int(p->pid) : NULL);
	add(o, "dumped", json_object_new_boolean(p != NULL));
	if (p)
		verdict_doing(p, doing, sizeof(doing));
	else
		snprintf(doing, sizeof(doing), "not dumped");
	add(o, "doing", json_string_obj(doing));
	if (t && !p->exited) {
		add(o, "tid", json_object_new_int(t->tid));
		add(o, "frame", t->nframes ? frame_json(&t->frames[t->coll_frame >= 0 ? t->coll_frame : 0])
					   : NULL);
		add(o, "collective", t->coll_frame >= 0 ? json_string_obj(t->collective) : NULL);
		add(o, "native", native_json(&t->nat));
	}
	return o;
}

static json_object *verdict_json(const struct dump *d)
{
	const struct dump_verdict *v = &d->v;
	json_object *o, *wr, *ar, *w, *a;
	unsigned int i;

	if (!v->waiting)
		return NULL;
	o = json_object_new_object();
	wr = json_object_new_array();
	ar = json_object_new_array();
	w = json_object_new_array();
	a = json_object_new_array();
	add(o, "collective", json_string_obj(v->collective));
	add(o, "group", v->group[0] ? json_string_obj(v->group) : NULL);
	for (i = 0; i < v->nwait; i++) {
		const struct dump_proc *p = &d->procs[v->wait[i]];

		if (p->rank >= 0)
			json_object_array_add(wr, json_object_new_int(p->rank));
		json_object_array_add(w, waiting_json(d, p));
	}
	for (i = 0; i < v->nabsent; i++) {
		if (v->absent[i].rank >= 0)
			json_object_array_add(ar, json_object_new_int(v->absent[i].rank));
		json_object_array_add(a, absent_json(d, &v->absent[i]));
	}
	add(o, "waiting_ranks", wr);
	add(o, "absent_ranks", ar);
	add(o, "waiting", w);
	add(o, "absent", a);
	return o;
}

int dump_write_json(const struct dump *d, FILE *f)
{
	json_object *root = json_object_new_object(), *procs = json_object_new_array();
	char when[64];
	struct tm tm;
	unsigned int i;
	int ret = 0;

	gmtime_r(&d->when.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	add(root, "fvbpf_dump", json_object_new_int(1));
	add(root, "verdict", json_string_obj(d->v.line));
	add(root, "collective_wait", verdict_json(d));
	add(root, "host", json_string_obj(d->host));
	add(root, "time", json_object_new_string(when));
	add(root, "unix_ms", ms3((int64_t)d->when.tv_sec * 1000000000 + d->when.tv_nsec));
	add(root, "took_ms", ms3((int64_t)d->took_ns));
	add(root, "stopped", json_object_new_boolean(false));
	for (i = 0; i < d->nprocs; i++)
		json_object_array_add(procs, proc_json(&d->procs[i]));
	add(root, "processes", procs);
	if (fputs(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE),
		  f) < 0 ||
	    fputc('\n', f) == EOF || fflush(f))
		ret = -EIO;
	json_object_put(root);
	return ret;
}
