# cairn - top-level build.
#
#   make            library (static + shared), CLI, tests, examples, benchmarks
#   make test       quick suite: unit, fuzz-corpus replay, MPI, CLI (installs deps first)
#   make check      `test`, then the suite under ASan/UBSan and built with MPICH
#   make test-cluster  4 nodes as Linux namespaces, MPI across them (root; part of `test`)
#   make crash      every crash state of a level-1 checkpoint and a level-4 flush (root; `test` samples them)
#   make demo       the main job: heat stencil on 8 ranks / 4 emulated nodes with daemons, crash, restart
#   make bench      benchmarks; every figure is a `bench:` line with a ratio
#   make bench-quick  every headline figure of make bench from smaller runs
#   make asan       the test suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make fuzz       libFuzzer targets (clang), run briefly over the corpus
#   make install    PREFIX=/usr/local (DESTDIR honoured); make uninstall the same
#
# Only code that calls MPI (src/api, src/core, the collective half of src/levels/*, src/remap,
# src/erasure/ring*, tests/mpi, examples, bench) is built with
# mpicc; everything else is plain C11 built with -DCAIRN_NO_MPI.

PREFIX ?= /usr/local
CC ?= cc
MPICC ?= mpicc
BUILD ?= build
OPT ?= -O2 -g
SAN ?=

# Dependencies: pkg-config first, plain -l as fallback (Jerasure/GF-Complete ship no .pc).
pc = $(shell pkg-config --cflags --libs $(1) 2>/dev/null || echo $(2))
DEP_LIBS := $(call pc,libxxhash,-lxxhash) $(call pc,inih,-linih) $(call pc,libpmem,-lpmem) \
            -lJerasure -lgf_complete $(call pc,libisal,-lisal) \
            $(call pc,zlib,-lz) $(call pc,libzstd,-lzstd) $(call pc,liblz4,-llz4) -lfpzip -lpthread -lm
CMOCKA := $(call pc,cmocka,-lcmocka)
# The CLI's --json documents (src/tools/cli_json.c).
JSON_LIBS := $(call pc,jansson,-ljansson)
# HDF5 (serial is enough): routed HDF5 files are split by dataset at level 4
# (src/levels/pfs/h5split.c). USE_HDF5=auto|yes|no; without it such files are stored whole.
USE_HDF5 ?= auto
HDF5_FLAGS :=
HDF5_LIBS :=
ifneq ($(USE_HDF5),no)
  ifeq ($(shell pkg-config --exists hdf5 2>/dev/null && echo y),y)
    HDF5_FLAGS := -DCAIRN_HAVE_HDF5 $(shell pkg-config --cflags hdf5)
    HDF5_LIBS := $(shell pkg-config --libs hdf5)
  else ifneq ($(wildcard /usr/include/hdf5/serial/hdf5.h),)
    HDF5_FLAGS := -DCAIRN_HAVE_HDF5 -I/usr/include/hdf5/serial
    HDF5_LIBS := -lhdf5_serial
  else ifeq ($(USE_HDF5),yes)
    $(error USE_HDF5=yes, but no libhdf5 was found (Debian: libhdf5-dev))
  endif
endif
# libhdf5 is not linked: h5split.c opens it by its soname (dlopen) the first time a
# routed HDF5 file is scanned, so that the 40 libraries it needs stay out of every
# rank's start. Only the programs that write HDF5 files themselves link it (below).
ifneq ($(HDF5_LIBS),)
  HDF5_SONAME := $(shell t=$$(mktemp) && printf 'int main(void){return 0;}' | \
      $(CC) -x c - -o $$t -Wl,--no-as-needed $(HDF5_LIBS) 2>/dev/null && \
      readelf -d $$t | sed -n 's/.*(NEEDED).*\[\(libhdf5[^]]*\)\].*/\1/p' | head -n 1; rm -f $$t)
  ifeq ($(HDF5_SONAME),)
    $(error libhdf5 was found ($(HDF5_LIBS)) but no program links with it)
  endif
  HDF5_FLAGS += -DCAIRN_HDF5_SONAME='"$(HDF5_SONAME)"'
  DEP_LIBS += -ldl
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) $(SAN) $(WARN) -Iinclude -I/usr/include/jerasure $(HDF5_FLAGS) -MMD -MP
LIB_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden
LDFLAGS_ALL := $(SAN)

# ---- sources, by layer (each folder depends only on those below it) ----
COMMON_SRC := $(wildcard src/common/*.c)
COMPRESS_SRC := $(wildcard src/compress/*.c)
INCR_SRC := $(wildcard src/incr/*.c)
# src/levels/<level>/: one folder a level. What calls MPI there (the collective
# half of each level) is built with mpicc like src/api; the rest without MPI, and
# level 4's and level 3's NOMPI part is linked into the CLI and the fuzz replays.
LEVELS_MPI_SRC := src/levels/partner/level2.c \
    $(addprefix src/levels/local/,compress.c codec_vote.c incr.c chain.c prune.c trash.c) \
    $(addprefix src/levels/parity/,level3.c examine.c rebuild.c recover.c) \
    $(addprefix src/levels/pfs/,direct.c flush.c flush_incr.c flushnode.c fetch.c materialize.c pfsread.c pfsrestore.c \
                                pfsapply.c share.c stagein.c)
LEVELS_SRC := $(filter-out $(LEVELS_MPI_SRC),$(wildcard src/levels/*/*.c))
PFS_SRC := $(filter src/levels/pfs/% src/levels/parity/%,$(LEVELS_SRC))
REMAP_SRC := $(wildcard src/remap/*.c)
# src/core/: the context every level works in (core/core.h), below the levels; MPI.
CORE_SRC := $(wildcard src/core/*.c)
RING_SRC := $(wildcard src/erasure/ring*.c)
ERASURE_SRC := $(filter-out $(RING_SRC),$(wildcard src/erasure/*.c))
API_SRC := $(wildcard src/api/*.c) $(CORE_SRC) $(LEVELS_MPI_SRC) $(REMAP_SRC) $(RING_SRC)
NOMPI_SRC := $(COMMON_SRC) $(COMPRESS_SRC) $(INCR_SRC) $(ERASURE_SRC) $(LEVELS_SRC)

NOMPI_OBJ := $(NOMPI_SRC:%.c=$(BUILD)/%.o)
API_OBJ := $(API_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ := $(NOMPI_OBJ) $(API_OBJ)

LIBA := $(BUILD)/libcairn.a
LIBSO := $(BUILD)/libcairn.so
# The version, from the public header: installed as libcairn.so.$(VERSION), SONAME libcairn.so.$(SOMAJOR).
VERSION := $(shell sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)
SOMAJOR := $(shell sed -n 's/^#define CAIRN_VERSION_MAJOR \([0-9]*\)/\1/p' include/cairn.h)
CLI := $(BUILD)/cairn
DAEMON := $(BUILD)/cairnd
DAEMON_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/daemon/*.c))

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
MPI_TEST_SRC := $(wildcard tests/mpi/*.c)
MPI_TEST_BIN := $(MPI_TEST_SRC:tests/mpi/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
REPLAY_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/tests/replay_%)
EXAMPLE_SRC := $(wildcard examples/*.c)
EXAMPLE_BIN := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)
BENCH_SRC := $(filter-out bench/bench.c,$(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all lib test crash check check-mpich test-cluster test-cluster-mpich demo bench bench-quick asan fuzz install clean deps
all: lib $(CLI) $(DAEMON) $(BUILD)/cairn-rebuild $(BUILD)/tests/mktree $(BUILD)/tests/mkcorpus $(BUILD)/tests/fielddiff $(UNIT_BIN) $(MPI_TEST_BIN) $(REPLAY_BIN) $(EXAMPLE_BIN) $(BENCH_BIN)
lib: $(LIBA) $(LIBSO)

deps:
	@bash scripts/setup.sh

$(BUILD)/src/api/%.o: src/api/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(LIB_CFLAGS) -Isrc -c $< -o $@

$(RING_SRC:%.c=$(BUILD)/%.o) $(CORE_SRC:%.c=$(BUILD)/%.o) $(LEVELS_MPI_SRC:%.c=$(BUILD)/%.o) \
$(REMAP_SRC:%.c=$(BUILD)/%.o): $(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(MPICC) $(LIB_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -DCAIRN_NO_MPI -Isrc -c $< -o $@

$(LIBA): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $(filter-out %.h,$^)

$(LIBSO): $(LIB_OBJ)
	$(MPICC) -shared -Wl,-soname,libcairn.so.$(SOMAJOR) \
	    $(LDFLAGS_ALL) -o $@ $(filter-out %.h,$^) $(DEP_LIBS)

# The CLI uses the public header, src/common, src/compress and the NOMPI part of
# levels 3 and 4 (src/levels/parity, src/levels/pfs: the formats, the PFS reader,
# pfs_stage.c which its prune calls, the aggregation), linked statically.
$(BUILD)/src/tools/%.o: src/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -DCAIRN_NO_MPI -Isrc -c $< -o $@
CLI_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/tools/*.c))
# The compatibility layers' configuration readers, without MPI (cairn ls --fti, --veloc;
# src/tools/cli_compat.c): built apart from the layers' own objects, plain C.
CLI_COMPAT_OBJ := $(BUILD)/cli-compat/fti_conf.o $(BUILD)/cli-compat/veloc_config.o \
                  $(addprefix $(BUILD)/cli-compat/,scr_where.o scr_jobid.o scr_conffile.o)
$(BUILD)/cli-compat/fti_conf.o: src/compat/fti/fti_conf.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -DCAIRN_NO_MPI -Isrc -c $< -o $@
$(BUILD)/cli-compat/veloc_config.o: src/compat/veloc/veloc_config.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -DCAIRN_NO_MPI -Isrc -c $< -o $@
# SCR's: scr_impl.h declares MPI types, so mpi.h's include path; they call no MPI.
$(BUILD)/cli-compat/scr_%.o: src/compat/scr/scr_%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(MPI_INC) -Isrc -c $< -o $@
$(CLI): $(CLI_OBJ) $(CLI_COMPAT_OBJ) $(COMMON_SRC:%.c=$(BUILD)/%.o) $(COMPRESS_SRC:%.c=$(BUILD)/%.o) \
        $(PFS_SRC:%.c=$(BUILD)/%.o)
	$(CC) $(LDFLAGS_ALL) -o $@ $(filter-out %.h,$^) $(DEP_LIBS) $(JSON_LIBS)

$(BUILD)/tests/test_%: tests/unit/test_%.c $(NOMPI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -DCAIRN_NO_MPI -Isrc -o $@ $(filter-out %.h,$^) $(CMOCKA) $(DEP_LIBS) $(LDFLAGS_ALL)
# A unit test split over files: tests/unit/test_NAME.c (its main) and tests/unit/NAME/*.c.
$(BUILD)/tests/test_agg: $(wildcard tests/unit/agg/*.c)

# The compatibility layers' configuration readers are fuzzed too: fuzz_fti_conf.c (and
# fuzz_fti_index.c, the FTI layer's checkpoint index), fuzz_scr_conf.c and
# fuzz_veloc_config.c include their layer's reader, and fuzz_scr_record.c cairn-scr's
# bypass record (FUZZ_INCLUDED, prerequisites only). They call no MPI, but their
# headers include mpi.h.
MPI_INC = $(shell $(MPICC) --showme:compile 2>/dev/null || $(MPICC) -compile_info 2>/dev/null | tr ' ' '\n' | grep '^-I')
FUZZ_INCLUDED := $(wildcard src/compat/*/*.c src/compat/*/*.h)
$(BUILD)/tests/replay_fuzz_fti_conf: $(wildcard src/compat/fti/*.c src/compat/fti/*.h)
$(BUILD)/tests/replay_fuzz_fti_index: $(wildcard src/compat/fti/*.c src/compat/fti/*.h)
$(BUILD)/tests/replay_fuzz_scr_conf: $(wildcard src/compat/scr/*)
$(BUILD)/tests/replay_fuzz_scr_record: $(wildcard src/compat/scr/*)
$(BUILD)/tests/replay_fuzz_veloc_config: $(wildcard src/compat/veloc/*.[ch] src/compat/veloc/include/*.h)
$(BUILD)/tests/replay_%: tests/fuzz/%.c tests/fuzz/replay.c $(COMMON_SRC:%.c=$(BUILD)/%.o) $(COMPRESS_SRC:%.c=$(BUILD)/%.o) \
                        $(PFS_SRC:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -DCAIRN_NO_MPI -Isrc $(MPI_INC) -o $@ $(filter-out %.h $(FUZZ_INCLUDED),$^) $(DEP_LIBS) $(LDFLAGS_ALL)

# cairnd, the node daemon: an MPI program over the library's internals.
$(BUILD)/src/daemon/%.o: src/daemon/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(BASE_CFLAGS) -Isrc -c $< -o $@

$(DAEMON): $(DAEMON_OBJ) $(LIBA)
	$(MPICC) $(LDFLAGS_ALL) -o $@ $(filter-out %.h,$^) $(DEP_LIBS)

# The MPI half of `cairn rebuild`: public API only.
$(BUILD)/cairn-rebuild: src/tools/rebuild/cairn_rebuild.c $(LIBA)
	$(MPICC) $(BASE_CFLAGS) -o $@ $< $(LIBA) $(DEP_LIBS) $(LDFLAGS_ALL)

# The fuzz seed generator (tests/fuzz/mkcorpus.c): $(BUILD)/tests/mkcorpus tests/fuzz/corpus
$(BUILD)/tests/mkcorpus: tests/fuzz/mkcorpus.c $(wildcard tests/fuzz/mkcorpus/*.[ch]) $(NOMPI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -DCAIRN_NO_MPI -Isrc -o $@ $(filter-out %.h,$^) $(DEP_LIBS) -lm $(LDFLAGS_ALL)

$(BUILD)/tests/mktree: tests/cli/mktree.c $(COMMON_SRC:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -DCAIRN_NO_MPI -Isrc -o $@ $(filter-out %.h,$^) $(DEP_LIBS) $(LDFLAGS_ALL)

# The crash-state test's recorder (tests/crash/README.md): an LD_PRELOAD library,
# never built with the sanitizers (it is preloaded into programs that are not).
CRASH_TRACER := $(BUILD)/tests/crash/libtrace.so
all: $(CRASH_TRACER)
$(CRASH_TRACER): tests/crash/trace.c tests/crash/trace_pmem.c tests/crash/trace.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -MMD -MP -fPIC -shared -o $@ $(filter %.c,$^) -ldl -lpthread

$(BUILD)/tests/fielddiff: tests/cli/fielddiff.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -o $@ $< -lm $(LDFLAGS_ALL)

$(BUILD)/tests/%: tests/mpi/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(MPICC) $(BASE_CFLAGS) -Isrc -o $@ $< $(LIBA) $(DEP_LIBS) $(LDFLAGS_ALL)

$(BUILD)/examples/%: examples/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(MPICC) $(BASE_CFLAGS) -o $@ $< $(LIBA) $(DEP_LIBS) -lm $(LDFLAGS_ALL)

# A benchmark is bench/NAME.c (its main), bench/bench.c (what bench.h declares) and, for the
# larger ones, the files of a folder of its own (listed below); each file its own object, so
# each has its own dependency file.
# The programs that write HDF5 files themselves link libhdf5.
$(BUILD)/tests/test_h5 $(BUILD)/tests/t_h5 $(BUILD)/bench/h5_bench: DEP_LIBS += $(HDF5_LIBS)

$(BUILD)/bench/%.o: bench/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(BASE_CFLAGS) -Isrc -c $< -o $@
$(BENCH_BIN): $(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/bench/bench.o $(LIBA)
	$(MPICC) -o $@ $(filter %.o,$^) $(LIBA) $(DEP_LIBS) $(call pc,zfp,-lzfp) -lm $(LDFLAGS_ALL)
bench_objs = $(patsubst bench/%.c,$(BUILD)/bench/%.o,$(wildcard bench/$(1)/*.c))
$(BUILD)/bench/incr_bench: $(call bench_objs,incr)
$(BUILD)/bench/lossy_bench: $(call bench_objs,lossy)
$(BUILD)/bench/z_bench: $(call bench_objs,z)

# ---- SCR's API over cairn (src/compat/scr): libcairn-scr, header scr.h, pkg-config cairn-scr ----
SCR_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/compat/scr/*.c) src/compat/compat_dir.c)
SCR_LIBA := $(BUILD)/libcairn-scr.a
SCR_LIBSO := $(BUILD)/libcairn-scr.so
SCR_TEST_BIN := $(patsubst tests/compat/scr/%.c,$(BUILD)/tests/compat/scr/%,$(wildcard tests/compat/scr/*.c)) \
                $(patsubst tests/compat/scr/%.F90,$(BUILD)/tests/compat/scr/%,$(wildcard tests/compat/scr/*.F90))
all: $(SCR_LIBA) $(SCR_LIBSO) $(SCR_TEST_BIN)
$(SCR_OBJ): $(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(MPICC) $(LIB_CFLAGS) -c $< -o $@
$(SCR_LIBA): $(SCR_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(SCR_LIBSO): $(SCR_OBJ) $(LIBSO)
	$(MPICC) -shared -Wl,-soname,libcairn-scr.so.$(SOMAJOR) $(LDFLAGS_ALL) -o $@ $(SCR_OBJ) -L$(BUILD) -lcairn \
	    $(call pc,libxxhash,-lxxhash)
# SCR programs: scr.h and MPI only, as against SCR itself.
$(BUILD)/tests/compat/scr/%: tests/compat/scr/%.c $(SCR_LIBA) $(LIBA)
	@mkdir -p $(dir $@)
	$(MPICC) $(BASE_CFLAGS) -Isrc/compat/scr -o $@ $< $(SCR_LIBA) $(LIBA) $(DEP_LIBS) $(LDFLAGS_ALL)
# SCR Fortran programs: mpif.h and scrf.h (INCLUDE), SCR's calls in libcairn-scr.
$(BUILD)/tests/compat/scr/%: tests/compat/scr/%.F90 src/compat/scr/scrf.h $(SCR_LIBA) $(LIBA)
	@mkdir -p $(dir $@)
	$(MPIFC) $(OPT) $(SAN) -Wall -Isrc/compat/scr -J$(dir $@) -o $@ $< $(SCR_LIBA) $(LIBA) $(DEP_LIBS) $(LDFLAGS_ALL)
install: install-scr
uninstall: uninstall-scr
.PHONY: install-scr uninstall-scr
install-scr: install-check $(SCR_LIBA) $(SCR_LIBSO)
	install -d $(DESTDIR)$(PREFIX)/include/cairn/scr $(DESTDIR)$(PREFIX)/lib
	install -m 644 src/compat/scr/scr.h src/compat/scr/scrf.h $(DESTDIR)$(PREFIX)/include/cairn/scr/
	install -m 644 $(SCR_LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SCR_LIBSO) $(DESTDIR)$(PREFIX)/lib/libcairn-scr.so.$(VERSION)
	ln -sfn libcairn-scr.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libcairn-scr.so.$(SOMAJOR)
	ln -sfn libcairn-scr.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libcairn-scr.so
uninstall-scr: install-check
	rm -f $(DESTDIR)$(PREFIX)/include/cairn/scr/scr.h $(DESTDIR)$(PREFIX)/include/cairn/scr/scrf.h \
	    $(addprefix $(DESTDIR)$(PREFIX)/lib/,libcairn-scr.a libcairn-scr.so libcairn-scr.so.$(SOMAJOR) libcairn-scr.so.$(VERSION))
	rmdir $(DESTDIR)$(PREFIX)/include/cairn/scr $(DESTDIR)$(PREFIX)/include/cairn 2>/dev/null || true

# ---- entry points ----
test: deps
	$(MAKE) all
	BUILD=$(BUILD) bash tests/run.sh

# Every crash state (tests/crash/README.md), not the sample `make test` runs.
crash: deps
	$(MAKE) all
	CAIRN_TEST_ONLY=crash CAIRN_CRASH_ALL=1 BUILD=$(BUILD) bash tests/run.sh

asan: deps
	$(MAKE) BUILD=build-asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" OPT="-O1 -g" all
	BUILD=build-asan CAIRN_SANITIZE=1 bash tests/run.sh

# The same suite built and launched with MPICH (installed beside Open MPI).
check-mpich:
	@bash scripts/setup.sh mpich
	$(MAKE) BUILD=build-mpich MPICC=mpicc.mpich MPIFC=mpif90.mpich all
	BUILD=build-mpich CAIRN_LAUNCHER=mpirun.mpich bash tests/run.sh

# Real separate nodes: a head and 4 nodes as Linux namespaces (own network, hostname and
# node-local tmpfs each), MPI across them over TCP (tests/cluster/README.md). Root only.
test-cluster: deps
	@if [ "$$(id -u)" -ne 0 ]; then echo "test-cluster: skipped (needs root: network, UTS and mount namespaces)"; exit 0; fi; \
	$(MAKE) all && BUILD=$(BUILD) CAIRN_LAB_MPI=openmpi bash tests/cluster/run_cluster.sh

test-cluster-mpich:
	@if [ "$$(id -u)" -ne 0 ]; then echo "test-cluster-mpich: skipped (needs root: network, UTS and mount namespaces)"; exit 0; fi; \
	bash scripts/setup.sh mpich && $(MAKE) BUILD=build-mpich MPICC=mpicc.mpich all && \
	BUILD=build-mpich CAIRN_LAB_MPI=mpich bash tests/cluster/run_cluster.sh

check: test asan check-mpich

demo: deps
	$(MAKE) all
	BUILD=$(BUILD) bash scripts/demo.sh

bench: deps
	$(MAKE) all
	BUILD=$(BUILD) bash bench/run.sh

# Every headline figure of make bench, from smaller runs (bench/run.sh QUICK=1).
bench-quick: deps
	$(MAKE) all
	BUILD=$(BUILD) QUICK=1 bash bench/run.sh

FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -DCAIRN_NO_MPI -O1 -g -Iinclude -Isrc $(MPI_INC) $(HDF5_FLAGS) -fsanitize=fuzzer,address,undefined
fuzz: deps
	@mkdir -p $(BUILD)/fuzz
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
	  clang $(FUZZ_FLAGS) -o $(BUILD)/fuzz/$$n $$f $(COMMON_SRC) $(COMPRESS_SRC) $(PFS_SRC) $(DEP_LIBS) || exit 1; \
	  mkdir -p $(BUILD)/fuzz/$$n.corpus; \
	  $(BUILD)/fuzz/$$n -max_total_time=$${FUZZ_SECONDS:-60} $(BUILD)/fuzz/$$n.corpus tests/fuzz/corpus/$$n || exit 1; \
	done

# pkg-config modules: one template NAME.pc.in each, written at install time (not at build
# time) as $(PREFIX)/lib/pkgconfig/NAME.pc with @PREFIX@ (this install's PREFIX, never
# DESTDIR) and @VERSION@ filled in. A module of its own (cairn-fti, cairn-scr, cairn-veloc,
# cairn-fortran) adds its template's path to this list; install and uninstall follow.
PC_IN := cairn.pc.in cairn-fortran.pc.in cairn-scr.pc.in
# The CMake package: cmake/NAME.cmake.in written at install time as
# $(PREFIX)/lib/cmake/cairn/NAME.cmake, like the .pc files (no CMake at build time):
# @PREFIX@, @VERSION@, @SOMAJOR@, @SIZEOF_VOID_P@ and @STATIC_LIBS@, what libcairn.a
# needs (DEP_LIBS' -L directories, then its libraries by name, in link order).
CMAKE_IN := cmake/cairnConfig.cmake.in cmake/cairnConfigVersion.cmake.in
CMAKE_STATIC_LIBS = $(subst $(eval) ,;,$(strip $(filter -L%,$(DEP_LIBS)) $(patsubst -l%,%,$(filter -l%,$(DEP_LIBS)))))
SIZEOF_VOID_P = $(shell echo __SIZEOF_POINTER__ | $(CC) -E -P - 2>/dev/null | tail -n 1)
# The layers' shared libraries find libcairn.so.$(SOMAJOR) beside themselves (RUNPATH
# $$ORIGIN): a program's own RUNPATH (CMake's build tree, -Wl,-rpath) covers only the
# libraries it names itself, not what they need in turn.
$(addprefix $(BUILD)/libcairn-,scr.so fti.so veloc.so fortran.so): LDFLAGS_ALL += -Wl,-rpath,'$$ORIGIN'
.PHONY: install-cmake uninstall-cmake
install: install-cmake
uninstall: uninstall-cmake
install-cmake: install-check
	install -d $(DESTDIR)$(PREFIX)/lib/cmake/cairn
	for t in $(CMAKE_IN); do m=$$(basename $$t .in) && \
	  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@SOMAJOR@|$(SOMAJOR)|g' \
	      -e 's|@SIZEOF_VOID_P@|$(SIZEOF_VOID_P)|g' -e 's|@STATIC_LIBS@|$(CMAKE_STATIC_LIBS)|g' \
	      $$t > $(DESTDIR)$(PREFIX)/lib/cmake/cairn/$$m && \
	  chmod 644 $(DESTDIR)$(PREFIX)/lib/cmake/cairn/$$m || exit 1; done
uninstall-cmake: install-check
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/lib/cmake/cairn/,$(notdir $(CMAKE_IN:.in=)))
	rmdir $(DESTDIR)$(PREFIX)/lib/cmake/cairn $(DESTDIR)$(PREFIX)/lib/cmake 2>/dev/null || true
SHARE_CAIRN := scripts/slurm/cairn-prolog scripts/slurm/cairn-epilog scripts/drill.sh scripts/soak.sh \
               scripts/mpirun.sh $(BUILD)/examples/heat
.PHONY: install-check uninstall
# PREFIX goes into cairn.pc and sed: absolute, and no character a shell or sed would read.
install-check:
	@case '$(PREFIX)' in /*) ;; *) false ;; esac && case '$(PREFIX)' in *[!A-Za-z0-9/._+-]*) false ;; esac || \
	{ echo "make install: PREFIX must be an absolute path of letters, digits and / . _ + - (got '$(PREFIX)')" >&2; exit 1; }

install: install-check lib $(CLI) $(DAEMON) $(BUILD)/cairn-rebuild $(BUILD)/examples/heat
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 include/cairn.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/libcairn.so.$(VERSION)
	ln -sfn libcairn.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libcairn.so.$(SOMAJOR)
	ln -sfn libcairn.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libcairn.so
	install -m 755 $(CLI) $(DAEMON) $(BUILD)/cairn-rebuild $(DESTDIR)$(PREFIX)/bin/
	for t in $(PC_IN); do m=$$(basename $$t .in); \
	  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@HDF5_LIBS@|$(if $(HDF5_LIBS),-ldl)|g' $$t > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$m && \
	  chmod 644 $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$m || exit 1; done
	install -m 644 man/cairn.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/cairn
	install -m 644 scripts/slurm/cairn-hook-lib.sh $(DESTDIR)$(PREFIX)/share/cairn/
	install -m 755 $(SHARE_CAIRN) $(DESTDIR)$(PREFIX)/share/cairn/

uninstall: install-check
	rm -f $(DESTDIR)$(PREFIX)/include/cairn.h $(DESTDIR)$(PREFIX)/share/man/man1/cairn.1 \
	    $(addprefix $(DESTDIR)$(PREFIX)/lib/,libcairn.a libcairn.so libcairn.so.$(SOMAJOR) libcairn.so.$(VERSION)) \
	    $(addprefix $(DESTDIR)$(PREFIX)/lib/pkgconfig/,$(notdir $(PC_IN:.in=))) \
	    $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(notdir $(CLI) $(DAEMON)) cairn-rebuild) \
	    $(addprefix $(DESTDIR)$(PREFIX)/share/cairn/,cairn-hook-lib.sh $(notdir $(SHARE_CAIRN)))
	rmdir $(DESTDIR)$(PREFIX)/share/cairn 2>/dev/null || true

# ---- compatibility layer: FTI (src/compat/fti, over the public API only) ----
# libcairn-fti (.a, .so with SONAME libcairn-fti.so.$(SOMAJOR)) implements FTI's fti.h,
# installed as $(PREFIX)/include/cairn/fti/fti.h; its tests compile FTI-style programs
# against fti.h alone (no cairn.h).
FTI_SRC := $(wildcard src/compat/fti/*.c)
FTI_OBJ := $(FTI_SRC:%.c=$(BUILD)/%.o)
FTI_TEST_BIN := $(patsubst tests/compat/fti/%.c,$(BUILD)/tests/compat/fti/%,$(wildcard tests/compat/fti/*.c))
PC_IN += cairn-fti.pc.in
.PHONY: compat-fti install-fti uninstall-fti
all: compat-fti
install: install-fti
uninstall: uninstall-fti
compat-fti: $(BUILD)/libcairn-fti.a $(BUILD)/libcairn-fti.so $(FTI_TEST_BIN)
$(BUILD)/src/compat/fti/%.o: src/compat/fti/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(LIB_CFLAGS) -Isrc/compat/fti -c $< -o $@
$(BUILD)/libcairn-fti.a: $(FTI_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libcairn-fti.so: $(FTI_OBJ) $(LIBSO)
	$(MPICC) -shared -Wl,-soname,libcairn-fti.so.$(SOMAJOR) $(LDFLAGS_ALL) -o $@ $(FTI_OBJ) -L$(BUILD) -lcairn
$(BUILD)/tests/compat/fti/%: tests/compat/fti/%.c $(BUILD)/libcairn-fti.a $(LIBA)
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 $(OPT) $(SAN) -Wall -Wno-unused-variable -MMD -MP -Isrc/compat/fti -o $@ $< \
	    $(BUILD)/libcairn-fti.a $(LIBA) $(DEP_LIBS) -lm $(LDFLAGS_ALL)
# FTI's Fortran interface: module fti (src/compat/fti/fti_mod.f90; fti.mod is gfortran's)
# in libcairn-fti-fortran (.a, .so over libcairn-fti), pkg-config cairn-fti-fortran; its
# test program is built like an FTI Fortran program, against fti.mod alone.
FTIF_BUILD := $(BUILD)/compat/fti/fortran
FTIF_LIBA := $(BUILD)/libcairn-fti-fortran.a
FTIF_LIBSO := $(BUILD)/libcairn-fti-fortran.so
PC_IN += cairn-fti-fortran.pc.in
compat-fti: $(FTIF_LIBA) $(FTIF_LIBSO) $(BUILD)/tests/compat/fti/heatdis_f
$(FTIF_BUILD)/fti_mod.o: src/compat/fti/fti_mod.f90
	@mkdir -p $(dir $@)
	$(FORTRAN) $(F_FLAGS) -fPIC -J$(FTIF_BUILD) -c $< -o $@
$(FTIF_LIBA): $(FTIF_BUILD)/fti_mod.o
	@rm -f $@
	ar rcs $@ $^
$(FTIF_LIBSO): $(FTIF_BUILD)/fti_mod.o $(BUILD)/libcairn-fti.so
	$(FORTRAN) -shared -Wl,-soname,libcairn-fti-fortran.so.$(SOMAJOR) $(LDFLAGS_ALL) -o $@ $< \
	    -L$(BUILD) -lcairn-fti -lcairn
$(BUILD)/tests/compat/fti/heatdis_f: tests/compat/fti/heatdis_f.f90 $(FTIF_LIBA) $(BUILD)/libcairn-fti.a $(LIBA)
	@mkdir -p $(dir $@)
	$(MPIFC) $(F_FLAGS) -I$(FTIF_BUILD) -o $@ $< $(FTIF_LIBA) $(BUILD)/libcairn-fti.a $(LIBA) \
	    $(DEP_LIBS) $(LDFLAGS_ALL)
install-fti: install-check $(BUILD)/libcairn-fti.a $(BUILD)/libcairn-fti.so $(FTIF_LIBA) $(FTIF_LIBSO)
	install -d $(DESTDIR)$(PREFIX)/include/cairn/fti/fortran $(DESTDIR)$(PREFIX)/lib
	install -m 644 src/compat/fti/fti.h $(DESTDIR)$(PREFIX)/include/cairn/fti/
	install -m 644 $(FTIF_BUILD)/fti.mod $(DESTDIR)$(PREFIX)/include/cairn/fti/fortran/
	install -m 644 $(BUILD)/libcairn-fti.a $(FTIF_LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libcairn-fti.so $(DESTDIR)$(PREFIX)/lib/libcairn-fti.so.$(VERSION)
	ln -sfn libcairn-fti.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libcairn-fti.so.$(SOMAJOR)
	ln -sfn libcairn-fti.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libcairn-fti.so
	install -m 755 $(FTIF_LIBSO) $(DESTDIR)$(PREFIX)/lib/libcairn-fti-fortran.so.$(VERSION)
	ln -sfn libcairn-fti-fortran.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libcairn-fti-fortran.so.$(SOMAJOR)
	ln -sfn libcairn-fti-fortran.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libcairn-fti-fortran.so
uninstall-fti: install-check
	rm -f $(DESTDIR)$(PREFIX)/include/cairn/fti/fti.h $(DESTDIR)$(PREFIX)/include/cairn/fti/fortran/fti.mod \
	    $(addprefix $(DESTDIR)$(PREFIX)/lib/,libcairn-fti.a libcairn-fti.so libcairn-fti.so.$(SOMAJOR) libcairn-fti.so.$(VERSION)) \
	    $(addprefix $(DESTDIR)$(PREFIX)/lib/libcairn-fti-fortran,.a .so .so.$(SOMAJOR) .so.$(VERSION))
	rmdir $(DESTDIR)$(PREFIX)/include/cairn/fti/fortran $(DESTDIR)$(PREFIX)/include/cairn/fti \
	    $(DESTDIR)$(PREFIX)/include/cairn 2>/dev/null || true

# ---- language bindings (bindings/, docs/bindings.md) ----
# Fortran: module cairn (cairn.mod, gfortran-specific) and libcairn-fortran,
# built with plain gfortran (the module needs no MPI module; programs that use
# it are built with mpif90). Python: the package cairn over libcairn.so
# (ctypes), installed under the site directory bindings/python/sitedir.py
# gives for PREFIX. Constants of both come from cairn.h (bindings/gen_consts.c).
FORTRAN ?= gfortran
MPIFC ?= mpif90
PYTHON ?= /usr/bin/python3
F_BUILD := $(BUILD)/bindings/fortran
FLIBA := $(BUILD)/libcairn-fortran.a
FLIBSO := $(BUILD)/libcairn-fortran.so
F_VER := $(shell sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)
F_SOMAJOR := $(shell sed -n 's/^#define CAIRN_VERSION_MAJOR \([0-9]*\)/\1/p' include/cairn.h)
F_FLAGS := -std=f2018 -Wall -Wextra $(OPT) $(SAN)
F_PROGS := $(BUILD)/examples/fortran/heat $(addprefix $(BUILD)/tests/fortran/,t_api t_layout t_f08 t_remap)
.PHONY: bindings install-bindings
all: bindings $(F_PROGS)
bindings: $(FLIBA) $(FLIBSO) $(BUILD)/bindings/python/cairn/_consts.py

$(BUILD)/gen_consts: bindings/gen_consts.c include/cairn.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -o $@ $< $(LDFLAGS_ALL)

$(F_BUILD)/cairn_consts.inc: $(BUILD)/gen_consts
	@mkdir -p $(dir $@)
	$< fortran > $@.tmp && mv $@.tmp $@

$(F_BUILD)/cairn.o: bindings/fortran/cairn.f90 bindings/fortran/cairn_iface.inc \
                    bindings/fortran/cairn_protect.inc $(F_BUILD)/cairn_consts.inc
	$(FORTRAN) $(F_FLAGS) -fPIC -J$(F_BUILD) -I$(F_BUILD) -Ibindings/fortran -c $< -o $@

$(FLIBA): $(F_BUILD)/cairn.o
	@rm -f $@
	ar rcs $@ $^

$(FLIBSO): $(F_BUILD)/cairn.o $(LIBSO)
	$(FORTRAN) -shared -Wl,-soname,libcairn-fortran.so.$(F_SOMAJOR) $(LDFLAGS_ALL) -o $@ $< -L$(BUILD) -lcairn

$(BUILD)/examples/fortran/%: examples/fortran/%.f90 $(FLIBA) $(LIBA)
	@mkdir -p $(dir $@)
	$(MPIFC) $(F_FLAGS) -I$(F_BUILD) -o $@ $< $(FLIBA) $(LIBA) $(DEP_LIBS) $(LDFLAGS_ALL)

$(BUILD)/tests/fortran/%: tests/fortran/%.f90 $(FLIBA) $(LIBA)
	@mkdir -p $(dir $@)
	$(MPIFC) $(F_FLAGS) -I$(F_BUILD) -o $@ $< $(FLIBA) $(LIBA) $(DEP_LIBS) $(LDFLAGS_ALL)

$(BUILD)/bindings/python/cairn/_consts.py: $(BUILD)/gen_consts
	@mkdir -p $(dir $@)
	$< python > $@.tmp && mv $@.tmp $@

# The module under include/cairn/fortran (.mod files are compiler-specific:
# gfortran's); libcairn-fortran.so.VERSION with its SONAME and dev links;
# cairn-fortran.pc (in PC_IN, written at install time for this PREFIX); the Python package
# with the lib directory recorded in it (cairn/_install.py).
PY_SITE = $$($(PYTHON) bindings/python/sitedir.py '$(PREFIX)')
.PHONY: uninstall-bindings
install: install-bindings
install-bindings: bindings
	install -d $(DESTDIR)$(PREFIX)/include/cairn/fortran $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(F_BUILD)/cairn.mod $(DESTDIR)$(PREFIX)/include/cairn/fortran/
	install -m 644 $(FLIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(FLIBSO) $(DESTDIR)$(PREFIX)/lib/libcairn-fortran.so.$(F_VER)
	ln -sfn libcairn-fortran.so.$(F_VER) $(DESTDIR)$(PREFIX)/lib/libcairn-fortran.so.$(F_SOMAJOR)
	ln -sfn libcairn-fortran.so.$(F_SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libcairn-fortran.so
	site=$(PY_SITE) && install -d "$(DESTDIR)$$site/cairn" && \
	install -m 644 bindings/python/cairn/*.py $(BUILD)/bindings/python/cairn/_consts.py "$(DESTDIR)$$site/cairn/" && \
	printf '"""Written by make install: where libcairn was installed."""\nLIBDIR = "%s"\n' '$(PREFIX)/lib' > "$(DESTDIR)$$site/cairn/_install.py" && \
	echo "install: Python package cairn in $$site"

uninstall: uninstall-bindings
uninstall-bindings:
	rm -f $(DESTDIR)$(PREFIX)/include/cairn/fortran/cairn.mod \
	    $(addprefix $(DESTDIR)$(PREFIX)/lib/,libcairn-fortran.a libcairn-fortran.so \
	      libcairn-fortran.so.$(F_SOMAJOR) libcairn-fortran.so.$(F_VER))
	rmdir $(DESTDIR)$(PREFIX)/include/cairn/fortran $(DESTDIR)$(PREFIX)/include/cairn 2>/dev/null || true
	site=$(PY_SITE) && rm -rf "$(DESTDIR)$$site/cairn"

# ---- compatibility layer: VeloC's API (src/compat/veloc), libcairn-veloc over libcairn ----
VELOC_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/compat/veloc/*.c)) $(BUILD)/src/compat/compat_dir.o
VELOC_TEST_BIN := $(patsubst tests/compat/veloc/%.c,$(BUILD)/tests/compat/veloc/%,$(filter-out %/heatdis_common.c,$(wildcard tests/compat/veloc/*.c)))
all: $(BUILD)/libcairn-veloc.a $(BUILD)/libcairn-veloc.so $(VELOC_TEST_BIN)
$(BUILD)/src/compat/veloc/%.o: src/compat/veloc/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(LIB_CFLAGS) -c $< -o $@
$(BUILD)/libcairn-veloc.a: $(VELOC_OBJ)
	@rm -f $@
	ar rcs $@ $(filter-out %.h,$^)
$(BUILD)/libcairn-veloc.so: $(VELOC_OBJ) $(LIBSO)
	$(MPICC) -shared -Wl,-soname,libcairn-veloc.so.$(SOMAJOR) $(LDFLAGS_ALL) -o $@ $(VELOC_OBJ) -L$(BUILD) -lcairn
# The tests are VeloC programs: veloc.h and MPI only (-I src/compat/veloc, as pkg-config gives).
$(BUILD)/tests/compat/veloc/%: tests/compat/veloc/%.c tests/compat/veloc/heatdis_common.c $(BUILD)/libcairn-veloc.a $(LIBA)
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(OPT) $(SAN) -Wall -Isrc/compat/veloc -MMD -MP -o $@ $(filter %.c,$^) \
	    $(BUILD)/libcairn-veloc.a $(LIBA) $(DEP_LIBS) -lm $(LDFLAGS_ALL)
# Installed: include/cairn/veloc/veloc.h (and include/cairn/veloc/include/veloc.h for
# VeloC's `#include "include/veloc.h"`), libcairn-veloc.a, libcairn-veloc.so.VERSION with its
# SONAME and dev links, cairn-veloc.pc (PC_IN: written at install time for this PREFIX).
PC_IN += cairn-veloc.pc.in
.PHONY: install-veloc uninstall-veloc
install: install-veloc
install-veloc: install-check $(BUILD)/libcairn-veloc.a $(BUILD)/libcairn-veloc.so
	install -d $(DESTDIR)$(PREFIX)/include/cairn/veloc $(DESTDIR)$(PREFIX)/lib
	install -m 644 src/compat/veloc/veloc.h $(DESTDIR)$(PREFIX)/include/cairn/veloc/
	install -d $(DESTDIR)$(PREFIX)/include/cairn/veloc/include
	install -m 644 src/compat/veloc/include/veloc.h $(DESTDIR)$(PREFIX)/include/cairn/veloc/include/
	install -m 644 $(BUILD)/libcairn-veloc.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libcairn-veloc.so $(DESTDIR)$(PREFIX)/lib/libcairn-veloc.so.$(VERSION)
	ln -sfn libcairn-veloc.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libcairn-veloc.so.$(SOMAJOR)
	ln -sfn libcairn-veloc.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libcairn-veloc.so
uninstall: uninstall-veloc
uninstall-veloc: install-check
	rm -f $(DESTDIR)$(PREFIX)/include/cairn/veloc/veloc.h $(DESTDIR)$(PREFIX)/include/cairn/veloc/include/veloc.h \
	    $(addprefix $(DESTDIR)$(PREFIX)/lib/,libcairn-veloc.a libcairn-veloc.so \
	      libcairn-veloc.so.$(SOMAJOR) libcairn-veloc.so.$(VERSION))
	rmdir $(DESTDIR)$(PREFIX)/include/cairn/veloc/include $(DESTDIR)$(PREFIX)/include/cairn/veloc \
	    $(DESTDIR)$(PREFIX)/include/cairn 2>/dev/null || true

clean:
	rm -rf build build-asan build-mpich

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
