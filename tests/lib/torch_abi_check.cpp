// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
// The RecordFunctionCallback fvbpf's library builds in C (include/
// fvbpf_fast.h, layout 1) against the one PyTorch's own headers build:
// compiled against a wheel's torch/include by tests/bats/torch_fast.bats,
// it prints "layout 1 ok" or what differs, and exits 1 on a difference.
// The three at::RecordFunction fields the library reads at fixed offsets
// are checked twice: against the header's layout (the private members
// named through an explicit instantiation, which may name them), and
// against what libtorch_cpu's own code writes there, in callbacks of a
// real forward and backward.  --wrong-offset moves one offset by 8 bytes:
// the check must then fail (a flag, not a second build: torch's headers
// take a compile of many seconds).
#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

extern "C" {
#define _Bool bool
#include "fvbpf_fast.h"
#undef _Bool
}

// The library's offset of RecordFunction::sequence_nr_, or 8 bytes off.
static size_t off_seq_nr = FVBPF_RF_OFF_SEQ_NR;

// A pointer to a private member, through an explicit instantiation.
template <typename Tag, typename Tag::type M> struct Expose {
	friend typename Tag::type member(Tag) { return M; }
};
struct SeqNr { typedef int64_t at::RecordFunction::*type; friend type member(SeqNr); };
struct FwdTid { typedef uint64_t at::RecordFunction::*type; friend type member(FwdTid); };
struct Steps { typedef at::StepCallbacks at::RecordFunction::*type; friend type member(Steps); };
template struct Expose<SeqNr, &at::RecordFunction::sequence_nr_>;
template struct Expose<FwdTid, &at::RecordFunction::fwd_thread_id_>;
template struct Expose<Steps, &at::RecordFunction::step_callbacks_>;

static std::unique_ptr<at::ObserverContext> start(const at::RecordFunction &)
{
	return nullptr;
}

static void end(const at::RecordFunction &, at::ObserverContext *)
{
}

static int bad;

static void check(bool ok, const char *what)
{
	if (!ok) {
		std::printf("differs: %s\n", what);
		bad = 1;
	}
}

// One callback of ours (@scope only) built both ways, compared byte by byte
// up to the last field (the tail padding is not written by C++).
static void compare(at::RecordScope scope, int ours)
{
	at::RecordFunctionCallback cb(start, end);
	struct fvbpf_rf_callback c;

	cb.scopes({scope});
	std::memset(&c, 0, sizeof(c));
	c.start = (void *)start;
	c.end = (void *)end;
	c.sampling_prob = 1.0;
	c.scopes[ours] = true;
	check(std::memcmp(&cb, &c, offsetof(struct fvbpf_rf_callback, needs_ids) + 1) == 0,
	      "the bytes of a callback for one scope");
}

static size_t header_offset(const void *field, const at::RecordFunction *rf)
{
	return (size_t)((const char *)field - (const char *)rf);
}

static void check_header_offsets()
{
	alignas(at::RecordFunction) static char buf[sizeof(at::RecordFunction)];
	const auto *rf = reinterpret_cast<const at::RecordFunction *>(buf);

	check(header_offset(&(rf->*member(SeqNr())), rf) == off_seq_nr,
	      "offset of RecordFunction::sequence_nr_ (seqNr())");
	check(header_offset(&(rf->*member(FwdTid())), rf) == FVBPF_RF_OFF_FWD_THREAD_ID,
	      "offset of RecordFunction::fwd_thread_id_ (forwardThreadId())");
	check(header_offset(&(rf->*member(Steps())).thread_id_, rf) == FVBPF_RF_OFF_THREAD_ID,
	      "offset of RecordFunction::step_callbacks_.thread_id_ (threadId())");
	check(sizeof(int64_t) == sizeof(((at::RecordFunction *)nullptr)->seqNr()) &&
		      std::is_same<decltype(rf->threadId()), uint64_t>::value &&
		      std::is_same<decltype(rf->forwardThreadId()), uint64_t>::value,
	      "the three fields are 8 bytes");
}

// What the library reads, as it reads it (user/lib/torch_fast.c).
struct seen {
	int scope;
	int64_t seq;
	uint64_t tid, fwd;
	bool agree; // the header's accessors say the same
};
static std::vector<seen> seen_rfs;

static uint64_t at_offset(const at::RecordFunction &rf, unsigned int off)
{
	uint64_t v;

	std::memcpy(&v, (const char *)&rf + off, sizeof(v));
	return v;
}

static std::unique_ptr<at::ObserverContext> observe(const at::RecordFunction &rf)
{
	struct seen s = { (int)rf.scope(), (int64_t)at_offset(rf, off_seq_nr),
			  at_offset(rf, FVBPF_RF_OFF_THREAD_ID),
			  at_offset(rf, FVBPF_RF_OFF_FWD_THREAD_ID), false };

	s.agree = s.seq == rf.seqNr() && s.tid == rf.threadId() && s.fwd == rf.forwardThreadId();
	seen_rfs.push_back(s);
	return nullptr;
}

// A forward and backward under our callbacks: libtorch_cpu's own code
// sets the sequence numbers, thread ids and forward thread ids.
static void check_live_values()
{
	uint64_t me = at::RecordFunction::currentThreadId();
	auto h = at::addThreadLocalCallback(
		at::RecordFunctionCallback(observe).scopes({at::RecordScope::FUNCTION,
							    at::RecordScope::BACKWARD_FUNCTION}));
	{
		auto w = at::ones({4, 4}).requires_grad_(true);
		auto y = (at::relu(at::mm(w, w)) * 2).sum();
		y.backward();
	}
	at::removeCallback(h);
	size_t fwd = 0, nodes = 0, bad = 0;
	for (const auto &s : seen_rfs) {
		bad += !s.agree;
		if (s.scope == (int)at::RecordScope::BACKWARD_FUNCTION && s.seq >= 0) {
			bool paired = false;

			nodes++;
			for (const auto &f : seen_rfs)
				paired |= f.scope == (int)at::RecordScope::FUNCTION && f.fwd == 0 &&
					  f.seq == s.seq && f.tid == s.fwd;
			bad += !paired || s.fwd != me;
		} else if (s.seq >= 0 && s.fwd == 0) {
			fwd++;
			bad += s.tid != me;
		}
	}
	std::printf("live: %zu calls, %zu forward ops and %zu backward nodes with a sequence "
		    "number, %zu wrong\n", seen_rfs.size(), fwd, nodes, bad);
	check(fwd >= 4 && nodes >= 4 && bad == 0,
	      "libtorch's sequence numbers and thread ids at the library's offsets (each node "
	      "paired with a forward op of its number on its forward thread)");
}

int main(int argc, char **argv)
{
	if (argc == 2 && std::strcmp(argv[1], "--wrong-offset") == 0)
		off_seq_nr += 8;
	check(sizeof(at::RecordFunctionCallback) == sizeof(struct fvbpf_rf_callback),
	      "sizeof(RecordFunctionCallback)");
	check(std::is_trivially_copyable<at::RecordFunctionCallback>::value &&
		      std::is_trivially_destructible<at::RecordFunctionCallback>::value,
	      "passed in memory by value (trivially copyable and destructible)");
	check(std::is_same<at::RecordFunctionCallback::StartCallback,
			   std::unique_ptr<at::ObserverContext> (*)(const at::RecordFunction &)>::value,
	      "StartCallback returns std::unique_ptr<ObserverContext>");
	check(std::is_same<at::RecordFunctionCallback::EndCallback,
			   void (*)(const at::RecordFunction &, at::ObserverContext *)>::value,
	      "EndCallback's signature");
	check(std::is_same<at::CallbackHandle, uint64_t>::value, "CallbackHandle is uint64_t");
	check((int)at::RecordScope::NUM_SCOPES == FVBPF_RF_NUM_SCOPES, "NUM_SCOPES");
	check((int)at::RecordScope::FUNCTION == FVBPF_RF_FUNCTION, "FUNCTION");
	check((int)at::RecordScope::BACKWARD_FUNCTION == FVBPF_RF_BACKWARD_FUNCTION,
	      "BACKWARD_FUNCTION");
	check((int)at::RecordScope::USER_SCOPE == FVBPF_RF_USER_SCOPE, "USER_SCOPE");
	check(std::has_virtual_destructor<at::ObserverContext>::value,
	      "ObserverContext's destructor is virtual (our context's vtable)");
	compare(at::RecordScope::FUNCTION, FVBPF_RF_FUNCTION);
	compare(at::RecordScope::BACKWARD_FUNCTION, FVBPF_RF_BACKWARD_FUNCTION);
	compare(at::RecordScope::USER_SCOPE, FVBPF_RF_USER_SCOPE);
	check_header_offsets();
	check_live_values();
	if (!bad)
		std::printf("layout %u ok\n", FVBPF_FAST_LAYOUT_TORCH2);
	return bad;
}
