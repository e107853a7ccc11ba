// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A stand-in libtorch_cpu.so for the simulated-GPU test: two dispatcher
 * entries as torch mangles them, each with the local
 * create_<opid>_typed_handle() whose lea loads name and overload the way
 * torch's does (fvbpf names ops from those), and a launch through the
 * workload's cudaLaunchKernel double.  aten::linear launches one kernel and
 * calls aten::addmm, which launches two.
 *
 * Built with -DFAKE_TORCH_NONEXEC (tests/faketorch-nonexec/): a third
 * operator, at::_ops::mul::call, typed a function but placed in .rodata,
 * which the loader maps without PF_X (issue 17: fvbpf wrote an int3 there).
 */
#include <stddef.h>

typedef int (*launch_fn)(void);
static launch_fn launch;

__attribute__((visibility("default"))) void fake_torch_set_launch(launch_fn fn)
{
	launch = fn;
}

/* at::_ops::addmm::call(at::Tensor const&, ...) */
__attribute__((visibility("default"), noipa)) int fake_addmm(void)
	__asm__("_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_");
__attribute__((visibility("default"), noipa)) int fake_addmm(void)
{
	return launch() + launch();
}

/* at::_ops::linear::call(at::Tensor const&, ...) */
__attribute__((visibility("default"), noipa)) int fake_linear(void)
	__asm__("_ZN2at4_ops6linear4callERKNS_6TensorES4_RKSt8optionalIS2_E");
__attribute__((visibility("default"), noipa)) int fake_linear(void)
{
	return launch() + fake_addmm();
}

/* The typed handles: local functions, as in torch (.symtab only). */
__asm__(".section .rodata\n"
	"fake_addmm_name: .asciz \"aten::addmm\"\n"
	"fake_linear_name: .asciz \"aten::linear\"\n"
	"fake_empty: .asciz \"\"\n"
	".text\n"
	".type _ZN2at4_opsL25create_addmm_typed_handleEv,@function\n"
	"_ZN2at4_opsL25create_addmm_typed_handleEv:\n"
	"	push %rbp\n"
	"	lea fake_addmm_name(%rip),%rdx\n"
	"	lea fake_empty(%rip),%rcx\n"
	"	pop %rbp\n"
	"	ret\n"
	".size _ZN2at4_opsL25create_addmm_typed_handleEv,.-_ZN2at4_opsL25create_addmm_typed_handleEv\n"
	".type _ZN2at4_opsL26create_linear_typed_handleEv,@function\n"
	"_ZN2at4_opsL26create_linear_typed_handleEv:\n"
	"	lea fake_linear_name(%rip),%rdx\n"
	"	lea fake_empty(%rip),%rcx\n"
	"	ret\n"
	".size _ZN2at4_opsL26create_linear_typed_handleEv,.-_ZN2at4_opsL26create_linear_typed_handleEv\n");

#ifdef FAKE_TORCH_NONEXEC
/* Exported, typed a function, in a read-only segment; never called. */
__asm__(".section .rodata\n"
	".globl _ZN2at4_ops3mul4callERKNS_6TensorES4_\n"
	".type _ZN2at4_ops3mul4callERKNS_6TensorES4_,@function\n"
	"_ZN2at4_ops3mul4callERKNS_6TensorES4_:\n"
	"	.byte 0x48, 0x89, 0xe5, 0xc3\n"
	".size _ZN2at4_ops3mul4callERKNS_6TensorES4_,4\n"
	".text\n");
#endif
