# hlo — one GNU Makefile. Outputs under build/ (build/hlo is the program).
#   make            build the library, the program and the example
#   make run        build, then run the bundled model (the README's first command)
#   make test       build and run every test that needs no GPU: -O2, then again under
#                   ASan+UBSan, then the threaded tests under TSan (ends "N passed, N failed")
#   make test-asan  only the ASan+UBSan part
#   make deps       install the Debian packages the build needs (when missing)
#   make fuzz       build and run the parser fuzzer for FUZZ_SECONDS (default 60)
#   make install    install build/hlo, libhlo.a, libhlo.so.MAJOR, the headers and
#                   hlo.pc (pkg-config) under PREFIX (default /usr/local; DESTDIR
#                   stages); `make uninstall` removes them (see the install section)
#   make bench      front-end benchmark table (parse/verify/print vs MLIR's parser), then
#                   the CPU backend vs XLA:CPU on the f32 programs, each GEMM against the
#                   library alone (bench/run_vs_xla.py; updates bench/RESULTS.md)

CC ?= cc
BUILD ?= build
V ?= 0
Q = $(if $(filter 1,$(V)),,@)
OPT ?= -O2 -g
WARN = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wpointer-arith -Wno-unused-parameter -Wvla -Wformat=2
CFLAGS += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -Iinclude -Isrc -MMD -MP $(SAN)
# BLAS and LAPACK, chosen by measurement (bench/BLAS.md): oneDNN for f32 and
# bf16 GEMMs, OpenBLAS (its OpenMP build: one OpenMP runtime with oneDNN's)
# for f64, tiny f32 GEMMs and LAPACK; both run single-threaded under hlo's
# own pool (src/backend/cpu/gemm.h). Linked by path with a run path, so that
# Debian's libblas.so.3 / liblapack.so.3 alternatives do not decide what runs.
# `make ldlibs` prints the link flags (tests/fuzz/run.sh uses them).
MULTIARCH ?= $(shell gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
OPENBLAS_DIR ?= /usr/lib/$(MULTIARCH)/openblas-openmp
BLAS_LIBS ?= -Wl,-rpath,$(OPENBLAS_DIR) $(OPENBLAS_DIR)/libopenblas.so.0 -ldnnl
LDLIBS += $(BLAS_LIBS) -lm -lpthread

SRCS := $(sort $(shell find src -name '*.c'))
OBJS := $(SRCS:%.c=$(BUILD)/%.o)
LIB := $(BUILD)/libhlo.a
TOOL_SRCS := $(wildcard tools/*.c tools/builtin/*.c)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_DEPS := $(wildcard tests/unit/testlib.c tests/unit/fake_device.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

all: $(BUILD)/hlo $(EXAMPLES)

# hlo's build id, which the compilation cache keys on (src/runtime/executable_cache.c):
# the version and a hash of every source and header of the library, so that any
# change to the compiler invalidates the entries it made.
HLO_VERSION := 0.1.0
BUILD_ID_INPUTS := $(SRCS) $(sort $(shell find src include -name '*.h' -o -name '*.def'))
$(BUILD)/gen/hlo_build_id.h: $(BUILD_ID_INPUTS) Makefile
	@mkdir -p $(dir $@)
	$(Q)printf '#define HLO_VERSION "%s"\n#define HLO_BUILD_ID "%s+%s"\n' "$(HLO_VERSION)" \
	  "$(HLO_VERSION)" "$$(cat $(BUILD_ID_INPUTS) | cksum | cut -d' ' -f1)" > $@.tmp && mv $@.tmp $@
$(BUILD)/src/runtime/executable_cache.o: $(BUILD)/gen/hlo_build_id.h
$(BUILD)/src/runtime/executable_cache.o: CFLAGS += -I$(BUILD)/gen
$(BUILD)/src/runtime/version.o: $(BUILD)/gen/hlo_build_id.h
$(BUILD)/src/runtime/version.o: CFLAGS += -I$(BUILD)/gen

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(filter 1,$(V)),,echo "  CC $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/hlo: $(TOOL_SRCS:%.c=$(BUILD)/%.o) $(LIB)
	@$(if $(filter 1,$(V)),,echo "  LD $@")
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

TESTLIB := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/unit/testlib.c))

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(TESTLIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(filter 1,$(V)),,echo "  LD $@")
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# the graph tests also link the fake device backend (tests/unit/fake_device.h)
$(BUILD)/tests/test_cuda_graph_%: $(BUILD)/tests/unit/test_cuda_graph_%.o \
    $(BUILD)/tests/unit/fake_device.o $(TESTLIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(filter 1,$(V)),,echo "  LD $@")
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# The mock CUDA driver the CUDA unit tests start the backend on without a GPU
# (tests/unit/mock/libcuda_mock.h): one shared object beside the test binaries,
# which find it through /proc/self/exe and load it at run time (order-only: not
# linked in). No -Wmissing-prototypes: it defines the driver's functions.
CUDA_MOCK := $(BUILD)/tests/libcuda_mock.so
$(CUDA_MOCK): tests/unit/mock/libcuda_mock.c tests/unit/mock/libcuda_mock.h
	@mkdir -p $(dir $@)
	@$(if $(filter 1,$(V)),,echo "  CC $@")
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -Wno-missing-prototypes $(SAN) -shared -fPIC \
	  $< -o $@
$(filter $(BUILD)/tests/test_cuda_%,$(UNIT_BINS)): | $(CUDA_MOCK)
# The mock cuDNN test_cuda_cudnn loads through HLO_CUDNN_LIB (tests/unit/mock/libcudnn_mock.c).
CUDNN_MOCK := $(BUILD)/tests/libcudnn_mock.so
$(CUDNN_MOCK): tests/unit/mock/libcudnn_mock.c
	@mkdir -p $(dir $@)
	@$(if $(filter 1,$(V)),,echo "  CC $@")
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -Wno-missing-prototypes $(SAN) -shared -fPIC \
	  $< -o $@
$(BUILD)/tests/test_cuda_cudnn: | $(CUDNN_MOCK)

$(BUILD)/examples/%: $(BUILD)/examples/%.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(filter 1,$(V)),,echo "  LD $@")
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

deps:
	@sh tools/install-deps.sh

RUN_MODEL = examples/models/mlp_block

run: deps
	@$(MAKE) --no-print-directory all $(BUILD)/tests/tools/npycmp
	$(BUILD)/hlo run $(RUN_MODEL)/mlp_block.mlir \
	  $(addprefix --input ,$(sort $(wildcard $(RUN_MODEL)/inputs/arg*.npy))) \
	  --output-dir $(BUILD)/run
	@printf 'compared with XLA:CPU (%s): ' $(RUN_MODEL)/expected/out0.npy
	@$(BUILD)/tests/tools/npycmp $(BUILD)/run/out0.npy $(RUN_MODEL)/expected/out0.npy --rtol 1e-5

$(BUILD)/tests/tools/%: $(BUILD)/tests/tools/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

TEST_TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(wildcard tests/tools/*.c))

unit: $(UNIT_BINS) $(CUDA_MOCK) $(CUDNN_MOCK) $(TEST_TOOLS) $(BUILD)/hlo $(EXAMPLES)

ASAN_VARS = BUILD=build/asan OPT="-O1 -g -fno-omit-frame-pointer" \
  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"

TSAN_VARS = BUILD=build/tsan OPT="-O1 -g" SAN="-fsanitize=thread"
# The tests that run threads (the C API from several threads, run_parallel, the
# thread pool, kernels and GEMMs over it, the kernel cache from several processes,
# the custom-call registry under concurrent registration and runs, tiered compiles: the
# background compile beside interpreted runs).
TSAN_TESTS = build/tsan/tests/test_api build/tsan/tests/test_interp_collective \
  build/tsan/tests/test_thread_pool build/tsan/tests/test_cpu_backend \
  build/tsan/tests/test_kernel_cache build/tsan/tests/test_gemm build/tsan/tests/test_ffi \
  build/tsan/tests/test_tiered

# Everything that needs no GPU: the -O2 build's unit tests and suites, then the
# unit tests and the conformance, model and CLI suites again under ASan+UBSan,
# then the threaded tests under ThreadSanitizer.
test: deps
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory $(ASAN_VARS) unit
	@$(MAKE) --no-print-directory $(TSAN_VARS) $(TSAN_TESTS)
	@sh tests/run_all.sh $(BUILD) build/asan build/tsan

# Only the sanitizer half of `make test`.
test-asan:
	@$(MAKE) --no-print-directory $(ASAN_VARS) unit
	@sh tests/run_all.sh "" build/asan

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

bench: $(BUILD)/bench/bench_frontend $(BUILD)/hlo $(BUILD)/bench/blas/gemm_rate
	@sh bench/frontend.sh $(BUILD)
	@python3 bench/run_vs_xla.py --build $(BUILD) --results bench/RESULTS.md

clean:
	rm -rf build

ldlibs:
	@echo '$(LDLIBS)'

.PHONY: all deps run unit test test-asan bench clean ldlibs
-include $(OBJS:.o=.d) $(TOOL_SRCS:%.c=$(BUILD)/%.d) $(UNIT_SRCS:%.c=$(BUILD)/%.d) $(UNIT_DEPS:%.c=$(BUILD)/%.d) \
  $(wildcard $(BUILD)/tests/tools/*.d) $(wildcard $(BUILD)/bench/*.d) $(wildcard $(BUILD)/bench/*/*.d)

# ---- shared: $(BUILD)/libhlo.so, the library as one shared object (what the
# Python package python/hlo loads: docs/python.md; what `make install` puts in
# LIBDIR as libhlo.so.$(HLO_VERSION)). Its own objects under
# $(BUILD)/pic (-fPIC: the static library's are position-independent
# executable code, which a shared object cannot hold), linked with a version
# script that exports the hlo_ symbols only (`nm -D --defined-only` shows them)
# and the soname libhlo.so.MAJOR (HLO_SONAME: programs linked with -lhlo ask
# for that name, so a new major version can be installed beside the old one).
SHLIB := $(BUILD)/libhlo.so
HLO_SONAME := libhlo.so.$(firstword $(subst ., ,$(HLO_VERSION)))
PIC_OBJS := $(SRCS:%.c=$(BUILD)/pic/%.o)
$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(filter 1,$(V)),,echo "  CC -fPIC $<")
	$(Q)$(CC) $(CFLAGS) -fPIC -c $< -o $@
$(BUILD)/pic/src/runtime/executable_cache.o: $(BUILD)/gen/hlo_build_id.h
$(BUILD)/pic/src/runtime/executable_cache.o: CFLAGS += -I$(BUILD)/gen
$(BUILD)/pic/src/runtime/version.o: $(BUILD)/gen/hlo_build_id.h
$(BUILD)/pic/src/runtime/version.o: CFLAGS += -I$(BUILD)/gen
$(BUILD)/libhlo.map: Makefile
	@mkdir -p $(dir $@)
	$(Q)printf '{\n  global: hlo_*;\n  local: *;\n};\n' > $@
$(SHLIB): $(PIC_OBJS) $(BUILD)/libhlo.map
	@$(if $(filter 1,$(V)),,echo "  LD $@")
	$(Q)$(CC) $(CFLAGS) -shared -Wl,--version-script=$(BUILD)/libhlo.map -Wl,-soname,$(HLO_SONAME) \
	  $(PIC_OBJS) -o $@ $(LDLIBS)
	@ln -sf libhlo.so $(BUILD)/$(HLO_SONAME)
# (the soname link beside it: a program linked against the build folder finds
# libhlo.so.MAJOR there, as it would in an installed LIBDIR)
shared: $(SHLIB)
.PHONY: shared
-include $(PIC_OBJS:.o=.d)

# ---- install / uninstall: hlo as an installed C library (tests/suite_install.sh).
#   make install [PREFIX=/usr/local] [DESTDIR=staging-root]
#   make uninstall [PREFIX=...] [DESTDIR=...]   removes exactly what install wrote
# Installs, from $(BUILD) (built first when missing; nothing is rebuilt when it
# is up to date): BINDIR/hlo; INCLUDEDIR/hlo/ the public headers; LIBDIR/libhlo.a;
# LIBDIR/libhlo.so.$(HLO_VERSION) (the real file, soname $(HLO_SONAME)) with
# the links $(HLO_SONAME) and libhlo.so (for -lhlo); PKGCONFIGDIR/hlo.pc, made
# from hlo.pc.in: Libs is -lhlo, Libs.private the link flags the static library
# needs ($(LDLIBS), as `make ldlibs` prints), for `pkg-config --static --libs hlo`.
# DESTDIR stages the install (packaging): files go under $(DESTDIR)$(PREFIX), while
# hlo.pc names $(PREFIX). Installing as root (no DESTDIR) into a LIBDIR that the
# dynamic loader's configuration lists (/etc/ld.so.conf{,.d}: /usr/local/lib on
# Debian) runs ldconfig, so that programs find the new $(HLO_SONAME) there; for
# any other LIBDIR, LD_LIBRARY_PATH or a run path (-Wl,-rpath) does.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL ?= install
HLO_REALNAME := libhlo.so.$(HLO_VERSION)
INSTALL_HEADERS := $(sort $(wildcard include/hlo/*.h include/hlo/*.def))
# hlo.pc's directories, written relative to ${prefix} when they lie under PREFIX.
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
HLO_LDCONFIG = if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null && \
  grep -qsx '$(LIBDIR)/*' /etc/ld.so.conf /etc/ld.so.conf.d/*.conf; then ldconfig; fi

install: $(BUILD)/hlo $(LIB) $(SHLIB) hlo.pc.in
	$(INSTALL) -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(INCLUDEDIR)/hlo' '$(DESTDIR)$(LIBDIR)' \
	  '$(DESTDIR)$(PKGCONFIGDIR)'
	$(INSTALL) -m 755 $(BUILD)/hlo '$(DESTDIR)$(BINDIR)/hlo'
	$(INSTALL) -m 644 $(INSTALL_HEADERS) '$(DESTDIR)$(INCLUDEDIR)/hlo/'
	$(INSTALL) -m 644 $(LIB) '$(DESTDIR)$(LIBDIR)/libhlo.a'
	$(INSTALL) -m 755 $(SHLIB) '$(DESTDIR)$(LIBDIR)/$(HLO_REALNAME)'
	ln -sf $(HLO_REALNAME) '$(DESTDIR)$(LIBDIR)/$(HLO_SONAME)'
	ln -sf $(HLO_SONAME) '$(DESTDIR)$(LIBDIR)/libhlo.so'
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
	  -e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(HLO_VERSION)|' \
	  -e 's|@LIBS_PRIVATE@|$(strip $(LDLIBS))|' hlo.pc.in > '$(DESTDIR)$(PKGCONFIGDIR)/hlo.pc'
	chmod 644 '$(DESTDIR)$(PKGCONFIGDIR)/hlo.pc'
	@$(HLO_LDCONFIG)

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/hlo' $(INSTALL_HEADERS:include/hlo/%='$(DESTDIR)$(INCLUDEDIR)/hlo/%') \
	  '$(DESTDIR)$(LIBDIR)/libhlo.a' '$(DESTDIR)$(LIBDIR)/$(HLO_REALNAME)' \
	  '$(DESTDIR)$(LIBDIR)/$(HLO_SONAME)' '$(DESTDIR)$(LIBDIR)/libhlo.so' '$(DESTDIR)$(PKGCONFIGDIR)/hlo.pc'
	@if [ -d '$(DESTDIR)$(INCLUDEDIR)/hlo' ]; then rmdir '$(DESTDIR)$(INCLUDEDIR)/hlo' 2>/dev/null || \
	  echo "uninstall: $(DESTDIR)$(INCLUDEDIR)/hlo holds files hlo did not install; left in place"; fi
	@$(HLO_LDCONFIG)
.PHONY: install uninstall

# ---- fuzz: the parser/printer/interpreter fuzzer (tests/fuzz/run.sh builds
# build/fuzz/fuzz_parse with clang + libFuzzer and runs it; non-zero on a crash)
FUZZ_SECONDS ?= 60
fuzz:
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS)
.PHONY: fuzz
.SECONDARY:
