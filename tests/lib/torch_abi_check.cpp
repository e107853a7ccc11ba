// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
// The RecordFunctionCallback fvbpf's library builds in C (include/
// fvbpf_fast.h, layout 1) against the one PyTorch's own headers build:
// compiled against a wheel's torch/include by tests/bats/torch_fast.bats,
// it prints "layout 1 ok" or what differs, and exits 1 on a difference.
#include <ATen/record_function.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>

extern "C" {
#define _Bool bool
#include "fvbpf_fast.h"
#undef _Bool
}

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

int main()
{
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
	if (!bad)
		std::printf("layout %u ok\n", FVBPF_FAST_LAYOUT_TORCH2);
	return bad;
}
