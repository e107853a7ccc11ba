# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# fvbpf: `make` builds, `make demo` shows it, `make test` proves it.

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PYTHON   ?= python3
PREFIX   ?= /usr/local
DESTDIR  ?=
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

# Privileged steps go through sudo unless we are root already.
SUDO     := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN     := -Wall -Wextra -Werror
CPPFLAGS := -Iinclude -Iuser -I$(BUILD)
CFLAGS   ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -MMD -MP $(CPPFLAGS)
LDLIBS   := -lbpf -lelf -lz -ljson-c -lpthread -lstdc++
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Stage folders and their sub-folders (user/proc/elf/, user/output/json/, ...).
CORE_SRCS := $(filter-out user/cli/fvbpf.c user/lib/%,$(wildcard user/*/*.c user/*/*/*.c))
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o)
SAN_OBJS  := $(CORE_SRCS:%.c=$(BUILD)/asan/%.o)
LIB_SRCS  := $(wildcard user/lib/*.c)
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.pic.o)
# Unit tests in a folder per stage of the code they test (tests/unit/proc/,
# ...), built and run by name: build/tests/test_NAME, build/tests/asan/.
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_NAMES := $(basename $(notdir $(UNIT_SRCS)))
UNIT_BINS := $(UNIT_NAMES:%=$(BUILD)/tests/%) $(UNIT_NAMES:%=$(BUILD)/tests/asan/%)
vpath test_%.c $(sort $(dir $(UNIT_SRCS)))
WORKLOADS := $(patsubst tests/workloads/c/%.c,$(BUILD)/tests/%,$(wildcard tests/workloads/c/*.c))

# CUDA workloads: need the toolkit (headers, libcudart, nvcc), not a GPU.
CUDA      ?= /usr/local/cuda
NVCC      ?= $(CUDA)/bin/nvcc
ifneq ($(wildcard $(CUDA)/include/cuda_runtime_api.h),)
CUDA_C_SRCS := $(wildcard tests/workloads/c/cuda_*.c)
else
CUDA_C_SRCS :=
endif
WORKLOADS := $(filter-out $(patsubst tests/workloads/c/%.c,$(BUILD)/tests/%,$(wildcard tests/workloads/c/cuda_*.c)),$(WORKLOADS)) \
             $(CUDA_C_SRCS:tests/workloads/c/%.c=$(BUILD)/tests/%)
# The simulated-GPU workload builds CUPTI activity records from the real
# cupti_activity.h: it needs the headers, not libcudart.
WORKLOADS := $(filter-out $(BUILD)/tests/gpu_sim,$(WORKLOADS)) \
             $(if $(CUDA_C_SRCS),$(BUILD)/tests/gpu_sim $(BUILD)/tests/gpu_sim_lazy)
ifneq ($(wildcard $(NVCC)),)
CU_SRCS   := $(wildcard tests/workloads/c/*.cu)
WORKLOADS += $(CU_SRCS:tests/workloads/c/%.cu=$(BUILD)/tests/%_shared) \
             $(CU_SRCS:tests/workloads/c/%.cu=$(BUILD)/tests/%_static)
endif
# One BPF object: fvbpf.bpf.c includes the probe families (bpf/*.bpf.c).
BPF_SRCS  := bpf/fvbpf.bpf.c
BPF_OBJS  := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.bpf.o)
SKELS     := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.skel.h)

.DELETE_ON_ERROR:
# Keep intermediate objects (ASan builds, skeleton): no "rm" after the test summary.
.SECONDARY:
.PHONY: all deps venv demo test unit bench install clean regen-cuda-errors static fuzz

all: $(BUILD)/fvbpf $(BUILD)/libfvbpf.so $(WORKLOADS) $(BUILD)/fvbpf-test $(BUILD)/old-lib/libfvbpf.so

# Debian packages needed to build, test, demo and benchmark.
DEB_PKGS := make gcc g++ clang libclang-rt-dev llvm libbpf-dev bpftool libelf-dev zlib1g-dev \
            libjson-c-dev pkg-config binutils python3 bats bats-assert \
            bats-support bats-file bpftrace procps util-linux python3-venv time chromium \
            slurm-wlm munge parallel
deps:
	$(Q)missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:" $$missing; \
		$(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

# Real PyTorch for the tests, in venvs so the system's Python stays as it
# is: the CUDA build (its nvidia-* cu13 wheels give the pip layout of
# libcudart, libcupti and libnccl; no GPU needed) and the CPU build of the
# release before, to catch symbol drift.  On this kind of machine both
# wheels lie on the local disk.
TORCH_VERSIONS ?= 2.14.1 2.13.0
venv_dir = $(BUILD)/venv-torch$(subst .,,$(basename $(1)))
TORCH_STAMPS := $(foreach v,$(TORCH_VERSIONS),$(call venv_dir,$(v))/.torch-$(v))
define torch_venv
$(call venv_dir,$(1))/.torch-$(1):
	$$(call msg,VENV,$(call venv_dir,$(1)) torch==$(1))
	$$(Q)rm -rf $(call venv_dir,$(1))
	$$(Q)$$(PYTHON) -m venv $(call venv_dir,$(1))
	$$(Q)$(call venv_dir,$(1))/bin/pip install -q --disable-pip-version-check torch==$(1)
	$$(Q)touch $$@
endef
$(foreach v,$(TORCH_VERSIONS),$(eval $(call torch_venv,$(v))))
# The protobuf package, for the independent reader of --format pftrace
# (tests/lib/pftrace_check.py).
PB_VENV := $(BUILD)/venv-pb
$(PB_VENV)/.protobuf:
	$(call msg,VENV,$(PB_VENV) protobuf)
	$(Q)rm -rf $(PB_VENV)
	$(Q)$(PYTHON) -m venv $(PB_VENV)
	$(Q)$(PB_VENV)/bin/pip install -q --disable-pip-version-check protobuf
	$(Q)touch $@
# The released FastVideo's region profiler (fastvideo/profiler.py and the
# three small modules it imports), without the package's __init__, which
# pulls in diffusers and friends: the FastVideo job of tests/bats/fastvideo.bats.
FASTVIDEO_VERSION ?= 0.2.1
FASTVIDEO_DIR := $(BUILD)/fastvideo-$(FASTVIDEO_VERSION)
$(FASTVIDEO_DIR)/.stamp:
	$(call msg,FETCH,fastvideo==$(FASTVIDEO_VERSION) (profiler.py))
	$(Q)rm -rf $(FASTVIDEO_DIR) && mkdir -p $(FASTVIDEO_DIR)/wheel
	$(Q)$(PYTHON) -m pip download -q --disable-pip-version-check --no-deps \
		-d $(FASTVIDEO_DIR)/wheel fastvideo==$(FASTVIDEO_VERSION)
	$(Q)$(PYTHON) tests/lib/fastvideo_extract.py $(FASTVIDEO_DIR)/wheel/*.whl $(FASTVIDEO_DIR)/pkg
	$(Q)touch $@
# HolisticTraceAnalysis, the independent reader of fvbpf's JSON traces as
# Kineto's (tests/bats/hta.bats); with pandas 3 some of its analyses fail on
# Kineto's own traces, so pandas stays at 2.x.
HTA_VENV := $(BUILD)/venv-hta
$(HTA_VENV)/.hta:
	$(call msg,VENV,$(HTA_VENV) HolisticTraceAnalysis)
	$(Q)rm -rf $(HTA_VENV)
	$(Q)$(PYTHON) -m venv $(HTA_VENV)
	$(Q)$(HTA_VENV)/bin/pip install -q --disable-pip-version-check \
		HolisticTraceAnalysis==0.5.0 'pandas<3'
	$(Q)touch $@
# The Kubernetes API's JSON schemas (carried by the package: no network at
# test time), for the manifest in docs/k8s (tests/k8s/test_manifest.py).
K8S_VENV := $(BUILD)/venv-k8s
$(K8S_VENV)/.k8s:
	$(call msg,VENV,$(K8S_VENV) kubernetes-validate)
	$(Q)rm -rf $(K8S_VENV)
	$(Q)$(PYTHON) -m venv $(K8S_VENV)
	$(Q)$(K8S_VENV)/bin/pip install -q --disable-pip-version-check kubernetes-validate==1.37.0
	$(Q)touch $@
venv: $(TORCH_STAMPS) $(PB_VENV)/.protobuf $(FASTVIDEO_DIR)/.stamp $(HTA_VENV)/.hta $(K8S_VENV)/.k8s

$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)test -r /sys/kernel/btf/vmlinux || { echo "fvbpf: kernel BTF missing (/sys/kernel/btf/vmlinux): use a kernel built with CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-MMD -MP -Iinclude -I$(BUILD) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(BUILD)/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/asan/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) -c $< -o $@

$(BUILD)/fvbpf: $(BUILD)/user/cli/fvbpf.o $(CORE_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# fvbpf with test hooks (FVBPF_TEST_HOOKS) in these files only: the
# --inject tests' stall knob, the --max-memory tests' slow writer, a torch
# version and a frame layout for the fast path's refusals, an fvbpf from
# before the _ts region probes, a short deadline for the torch layout
# measurement, a pause inside fvbpf dump.  The production binary has none.
HOOK_SRCS := user/proc/inject/inject.c user/output/writer_delay.c user/proc/torch/torch_version.c \
	user/attach/pystack_attach.c user/attach/marker_attach.c user/proc/torch/torch_layout.c \
	user/util/serial_arm.c user/dump/dump.c user/pipeline/ring_consume.c
HOOK_OBJS := $(HOOK_SRCS:%.c=$(BUILD)/test-cli/%.o)
SAN_HOOK_OBJS := $(HOOK_SRCS:%.c=$(BUILD)/asan/test-cli/%.o)
$(BUILD)/test-cli/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DFVBPF_TEST_HOOKS -c $< -o $@

$(BUILD)/fvbpf-test: $(BUILD)/user/cli/fvbpf.o $(filter-out $(HOOK_SRCS:%.c=$(BUILD)/%.o),$(CORE_OBJS)) $(HOOK_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/asan/test-cli/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) -DFVBPF_TEST_HOOKS -c $< -o $@

$(BUILD)/asan/fvbpf-test: $(BUILD)/asan/user/cli/fvbpf.o $(filter-out $(HOOK_SRCS:%.c=$(BUILD)/asan/%.o),$(SAN_OBJS)) $(SAN_HOOK_OBJS)
	$(call msg,LINK-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

# The end-to-end suite runs a second time against this one (tests/run.sh).
$(BUILD)/asan/fvbpf: $(BUILD)/asan/user/cli/fvbpf.o $(SAN_OBJS)
	$(call msg,LINK-SAN,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

# The in-process library depends on libc only: CUPTI's headers are used at
# build time when the toolkit is there, the library itself is dlopen()ed.
CUPTI_INC := $(firstword $(wildcard $(CUDA)/include/cupti.h $(CUDA)/extras/CUPTI/include/cupti.h))
LIB_CFLAGS := $(if $(CUPTI_INC),-DFVBPF_HAVE_CUPTI -I$(dir $(CUPTI_INC)) -I$(CUDA)/include)
$(BUILD)/user/lib/%.pic.o: user/lib/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) -Iuser/lib -fPIC -fvisibility=hidden \
		-fno-semantic-interposition -mtls-dialect=gnu2 -c $< -o $@

# The Python shim travels inside the library (python/fvbpf/_shim.py is the
# one source, for --inject and the package's import hook alike).
$(BUILD)/gen/pyshim_source.h: python/fvbpf/_shim.py tools/embed_text.py
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(PYTHON) tools/embed_text.py $< $@ fvbpf_pyshim_source
$(BUILD)/user/lib/pyshim.pic.o $(BUILD)/test-lib/user/lib/pyshim.pic.o: $(BUILD)/gen/pyshim_source.h

$(BUILD)/libfvbpf.so: $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-soname,libfvbpf.so -Wl,-z,defs -Wl,-z,nodelete -o $@ $^

# The same library with the test doubles' hooks (FVBPF_TEST_HOOKS): only
# the simulated-GPU workload links it; the production library has none.
TEST_LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/test-lib/%.pic.o)
$(BUILD)/test-lib/user/lib/%.pic.o: user/lib/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) -DFVBPF_TEST_HOOKS -Iuser/lib -fPIC -fvisibility=hidden \
		-fno-semantic-interposition -mtls-dialect=gnu2 -c $< -o $@

$(BUILD)/test-lib/libfvbpf.so: $(TEST_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-soname,libfvbpf.so -Wl,-z,defs -Wl,-z,nodelete -o $@ $^

# A library as released before the _ts region probes: the same
# sources with FVBPF_TEST_OLD_MARKERS, for the test that fvbpf still takes
# its region times from BPF's clock.
OLD_LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/old-lib/%.pic.o)
$(BUILD)/old-lib/user/lib/%.pic.o: user/lib/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) -DFVBPF_TEST_OLD_MARKERS -Iuser/lib -fPIC \
		-fvisibility=hidden -fno-semantic-interposition -mtls-dialect=gnu2 -c $< -o $@
$(BUILD)/old-lib/user/lib/pyshim.pic.o: $(BUILD)/gen/pyshim_source.h

$(BUILD)/old-lib/libfvbpf.so: $(OLD_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-soname,libfvbpf.so -Wl,-z,defs -Wl,-z,nodelete -o $@ $^

# The headers -MMD listed are prerequisites too: kept off the command line,
# where one since moved or removed would stop the build.
$(BUILD)/tests/test_%: test_%.c $(CORE_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(filter %.o,$^) $(LDLIBS)

$(BUILD)/tests/asan/test_%: test_%.c $(SAN_OBJS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) -Itests/unit -o $@ $< $(filter %.o,$^) $(LDLIBS)

# Workloads link the library by path so they find it without installing.
$(BUILD)/tests/%: tests/workloads/c/%.c $(BUILD)/libfvbpf.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -L$(BUILD) -lfvbpf -Wl,-rpath,'$$ORIGIN/..' -lpthread -lm

# libfvbpf mapped 500 ms before its constructor runs: -lfvbpf first, so
# the loader initialises the slow library first.
$(BUILD)/tests/lib/libslow_init.so: tests/workloads/lib/slow_init.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -o $@ $<

$(BUILD)/tests/slow_start: tests/workloads/c/slow_start.c $(BUILD)/libfvbpf.so $(BUILD)/tests/lib/libslow_init.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -Wl,--no-as-needed -L$(BUILD) -lfvbpf \
		-L$(BUILD)/tests/lib -lslow_init -Wl,-rpath,'$$ORIGIN/..' -Wl,-rpath,'$$ORIGIN/lib'

# Workloads for --inject are started without fvbpf: not linked with it.
$(BUILD)/tests/inject_%: tests/workloads/c/inject_%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -lpthread

# Workloads that call libcudart directly link the toolkit's copy.
$(BUILD)/tests/cuda_%: tests/workloads/c/cuda_%.c $(BUILD)/libfvbpf.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(CUDA)/include -o $@ $< -L$(BUILD) -lfvbpf -Wl,-rpath,'$$ORIGIN/..' \
		-L$(CUDA)/lib64 -lcudart -Wl,-rpath,$(CUDA)/lib64 -ldl -lpthread

# A stand-in libtorch_cpu.so: two ops that launch through gpu_sim's double.
$(BUILD)/tests/faketorch/libtorch_cpu.so: tests/workloads/lib/fake_torch.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $<

# The same with an operator in .rodata, for hostile_elf --nonexec (hostile.bats).
$(BUILD)/tests/faketorch-nonexec/libtorch_cpu.so: tests/workloads/lib/fake_torch.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DFAKE_TORCH_NONEXEC -fPIC -shared -fvisibility=hidden -o $@ $<

$(BUILD)/tests/hostile_elf: $(BUILD)/tests/faketorch-nonexec/libtorch_cpu.so

# A stand-in libpython3.11.so whose "interpreter" py_hostile fills (pystack.bats).
$(BUILD)/tests/fakepy/libpython3.11.so.1.0: tests/workloads/lib/fake_python.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $<

$(BUILD)/tests/py_hostile: $(BUILD)/tests/fakepy/libpython3.11.so.1.0 $(BUILD)/tests/faketorch/libtorch_cpu.so

$(BUILD)/tests/gpu_sim: tests/workloads/c/gpu_sim.c $(BUILD)/test-lib/libfvbpf.so $(BUILD)/tests/faketorch/libtorch_cpu.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(CUDA)/include -o $@ $< -L$(BUILD)/test-lib -lfvbpf \
		-Wl,-rpath,'$$ORIGIN/../test-lib'

# The same, not linked with the library: for --inject (it finds the
# injected test library by name once told to go).
$(BUILD)/tests/gpu_sim_lazy: tests/workloads/c/gpu_sim.c $(BUILD)/test-lib/libfvbpf.so $(BUILD)/tests/faketorch/libtorch_cpu.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DGPU_SIM_LAZY -I$(CUDA)/include -o $@ $< -ldl

# Real <<<>>> launches, with libcudart.so and with cudart linked in.
$(BUILD)/tests/%_shared: tests/workloads/c/%.cu $(BUILD)/libfvbpf.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -cudart shared -Iinclude -o $@ $< -L$(BUILD) -lfvbpf \
		-Xlinker -rpath='$$ORIGIN/..' -Xlinker -rpath=$(CUDA)/lib64

$(BUILD)/tests/%_static: tests/workloads/c/%.cu $(BUILD)/libfvbpf.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -cudart static -Iinclude -o $@ $< -L$(BUILD) -lfvbpf -Xlinker -rpath='$$ORIGIN/..'

# The CUPTI record decoder is library code: its tests build it from source
# with the toolkit's headers and run it against the real libcupti.
UNIT_BINS := $(filter-out %/test_cupti_decode,$(UNIT_BINS)) $(if $(CUPTI_INC),$(BUILD)/tests/test_cupti_decode $(BUILD)/tests/asan/test_cupti_decode)
$(BUILD)/tests/test_cupti_decode: tests/unit/lib/test_cupti_decode.c user/lib/cupti_decode.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LIB_CFLAGS) -Iuser/lib -Itests/unit -o $@ $(filter %.c,$^) -ldl

$(BUILD)/tests/asan/test_cupti_decode: tests/unit/lib/test_cupti_decode.c user/lib/cupti_decode.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN) $(LIB_CFLAGS) -Iuser/lib -Itests/unit -o $@ $(filter %.c,$^) -ldl

# libFuzzer harnesses (tests/fuzz/), built only where clang links a fuzzer:
# `make fuzz` runs each for FUZZ_SECONDS, `make test` for a few seconds.
FUZZ_SECONDS ?= 300
FUZZ_OK   := $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' | \
		$(CLANG) -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null && echo y)
FUZZ_SAN  := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BINS := $(if $(FUZZ_OK),$(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c)))

$(BUILD)/fuzz/user/%.o: user/%.c | $(SKELS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(WARN) -std=gnu11 -MMD -MP $(CPPFLAGS) -c $< -o $@

# An archive: each harness links only the objects it needs.
$(BUILD)/fuzz/libcore.a: $(CORE_SRCS:%.c=$(BUILD)/fuzz/%.o)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(BUILD)/fuzz/libcore.a
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_SAN) -fsanitize=fuzzer $(WARN) -std=gnu11 -MMD -MP $(CPPFLAGS) -o $@ $< \
		$(BUILD)/fuzz/libcore.a $(LDLIBS)

fuzz: $(FUZZ_BINS)
ifeq ($(FUZZ_OK),y)
	$(Q)BUILD=$(BUILD) FUZZ_KEEP=1 tests/fuzz/run.sh $(FUZZ_SECONDS)
else
	@echo "fuzz: $(CLANG) cannot link a libFuzzer harness (-fsanitize=fuzzer): install clang and libclang-rt-dev" >&2; exit 1
endif

unit: venv $(UNIT_BINS)
	$(Q)tests/run-unit.sh $(UNIT_BINS)

demo: deps all
	$(Q)$(SUDO) tests/demo.sh $(BUILD)

test: deps all venv $(UNIT_BINS) $(BUILD)/asan/fvbpf $(BUILD)/asan/fvbpf-test $(FUZZ_BINS)
	$(Q)$(SUDO) env BUILD=$(BUILD) FVBPF_ASAN_ALL=$(FVBPF_ASAN_ALL) tests/run.sh

bench: deps all venv $(BUILD)/tests/replay_bench
	$(Q)$(SUDO) tests/bench/bench.sh $(BUILD)

# The consumer and writer fed recorded-shape ring records, no uprobes.
$(BUILD)/tests/replay_bench: tests/bench/replay_bench.c $(CORE_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(filter-out %.h,$^) $(LDLIBS)

# Self-contained binaries to carry to another machine (the GPU check).
static: $(BUILD)/static/fvbpf $(BUILD)/static/libfvbpf.so

$(BUILD)/static/fvbpf: $(BUILD)/user/cli/fvbpf.o $(CORE_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static -o $@ $^ $(LDLIBS) 2>&1 | { grep -v "statically linked applications requires" || true; }
	$(Q)test -x $@

$(BUILD)/static/libfvbpf.so: $(BUILD)/libfvbpf.so
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

# Where $(PYTHON) looks for packages: its own purelib under the default
# prefix (Debian's python3: /usr/local/lib/python3.X/dist-packages, which
# it reads; site-packages there it does not), PREFIX/lib/pythonX.Y/
# site-packages under another prefix (packaging).
PYTHON_SITE ?= $(shell $(PYTHON) -c 'import sys, sysconfig; \
	print(sysconfig.get_path("purelib") if "$(PREFIX)" == "/usr/local" else \
	      "$(PREFIX)/lib/python%d.%d/site-packages" % sys.version_info[:2])')

install: $(BUILD)/fvbpf $(BUILD)/libfvbpf.so
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/fvbpf
	install -m 0755 $(BUILD)/fvbpf $(DESTDIR)$(PREFIX)/bin/fvbpf
	install -m 0755 $(BUILD)/libfvbpf.so $(DESTDIR)$(PREFIX)/lib/libfvbpf.so
	install -m 0644 include/fvbpf/fvbpf.h $(DESTDIR)$(PREFIX)/include/fvbpf/fvbpf.h
	dest=$(DESTDIR)$(PYTHON_SITE)/fvbpf; \
	install -d $$dest && install -m 0644 python/fvbpf/*.py $$dest/ && \
	install -m 0644 python/fvbpf_hook.py $$dest/../ && \
	install -m 0755 $(BUILD)/libfvbpf.so $$dest/libfvbpf.so

# user/probes/cuda_errors.c is generated from the toolkit's headers and committed,
# so that fvbpf builds without CUDA installed.
regen-cuda-errors:
	@gen() { grep -oE "$$1" "$$2" | awk '{print $$3+0, $$1}' | sort -n -u -k1,1 | \
		awk '{printf "\t{ %d, \"%s\" },\n", $$1, $$2}'; }; \
	{ sed -n '1,/cuda_runtime_errors\[\] = {/p' user/probes/cuda_errors.c; \
	  gen '^\s+cuda(Success|Error[A-Za-z0-9]+)\s+=\s+[0-9]+' $(CUDA)/include/driver_types.h; \
	  printf '\t{ -1, NULL },\n};\n\nconst struct cuda_error_name cuda_driver_errors[] = {\n'; \
	  gen '^\s+CUDA_(SUCCESS|ERROR_[A-Z0-9_]+)\s+=\s+[0-9]+' $(CUDA)/include/cuda.h; \
	  printf '\t{ -1, NULL },\n};\n'; } > $(BUILD)/cuda_errors.c.new && \
	mv $(BUILD)/cuda_errors.c.new user/probes/cuda_errors.c

clean:
	rm -rf $(BUILD)

# Header dependencies of every object and binary compiled here (-MMD -MP),
# the harnesses included: a header change rebuilds all that include it.
# The venvs are pruned: thousands of files, none of them ours.
-include $(shell find $(BUILD) -path '$(BUILD)/venv-*' -prune -o -name '*.d' -type f -print 2>/dev/null)
# Sources since moved into folders (tests/unit/STAGE/, tests/workloads/c/):
# an older build's .d files still name them where they were; nothing to
# make there (the rules above find them where they are now).
$(addprefix tests/unit/,$(notdir $(UNIT_SRCS))) \
$(patsubst tests/workloads/c/%,tests/workloads/%,$(wildcard tests/workloads/c/*.c tests/workloads/c/*.cu)): ;
