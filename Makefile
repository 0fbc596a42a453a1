# moat: a hardened OCI runtime.  `make`, `make check`, `make demo`, `make install`.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
DESTDIR ?=
CC ?= cc
PKG_CONFIG ?= pkg-config
VERSION := 0.1.0
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

LIBS_PC := libseccomp libcap yajl
# Loaded with dlopen by the code that needs them (lib/dynlib.h): their
# headers only at build time, never linked, so other verbs do not map them
# (but nettle, linked from its archive under STATIC_LIBS=1: below).
DLOPEN_PC := libarchive libsystemd libselinux nettle
# Evaluated lazily: `make deps` may have to install the -dev packages first.
PC_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(LIBS_PC) $(DLOPEN_PC) 2>/dev/null)
PC_LIBS = $(shell $(PKG_CONFIG) --libs $(LIBS_PC) 2>/dev/null)
# Each -lNAME of those is linked from its static archive where the
# toolchain has one (Debian's -dev packages ship libseccomp.a, libcap.a
# and libyajl_s.a): the dynamic loader then maps libc alone, which every
# verb pays for at start (three fewer objects to open, map and relocate).
# STATIC_LIBS=0 links the shared libraries instead.
STATIC_LIBS ?= 1
archive_of = $(firstword $(foreach a,lib$(1).a lib$(1)_s.a,$(realpath $(shell $(CC) -print-file-name=$(a)))))
ifeq ($(STATIC_LIBS),1)
LINK_LIBS = $(foreach f,$(PC_LIBS),$(if $(filter -l%,$(f)),$(or $(call archive_of,$(f:-l%=%)),$(f)),$(f))) $(NETTLE_ARCHIVE)
# nettle's SHA-256 too (the audit digest of create, run and delete): a few
# KB linked in rather than a dlopen at every such verb. Without the
# archive, runtime/sha256.c loads the shared library on first use.
NETTLE_ARCHIVE := $(call archive_of,nettle)
else
LINK_LIBS = $(PC_LIBS)
NETTLE_ARCHIVE :=
endif

# moat itself is linked statically as well (STATIC=1, glibc's static-pie:
# still position independent, so ASLR holds): no dynamic loader runs at
# every verb's start (0.1-0.2 ms of CPU per verb here, about 6 % of a
# `run`; bench/ROUNDS.md round eleven). A static glibc cannot load shared
# libraries safely, so moat-dl, the same objects linked dynamically and
# installed in LIBEXECDIR/moat, does what needs libselinux, libarchive or
# libsystemd (lib/dynlib.h). STATIC=0 (implied by SAN= and STATIC_LIBS=0)
# links moat dynamically and builds no moat-dl.
STATIC ?= 1
ifneq ($(SAN),)
override STATIC := 0
endif
ifeq ($(STATIC_LIBS),0)
override STATIC := 0
endif

# DEBUG=1 compiles in the test-only fault points (MOAT_DEBUG_PAUSE); never in releases.
DEBUG ?= 0
SAN ?=
# A DEBUG=1 build must not reuse release objects (make doesn't see -D change).
ifeq ($(DEBUG),1)
BUILD ?= build-debug
else
BUILD ?= build
endif
WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2
CFLAGS ?= -O2 -g
override CFLAGS += -std=gnu11 $(WARN) -D_GNU_SOURCE -DMOAT_VERSION='"$(VERSION)"' \
	-DMOAT_COMMIT='"$(COMMIT)"' -DMOAT_DEBUG=$(DEBUG) $(PC_CFLAGS) -fstack-protector-strong \
	-D_FORTIFY_SOURCE=2 -fPIE -ffunction-sections -fdata-sections \
	-DMOAT_NETTLE_LINKED=$(if $(NETTLE_ARCHIVE),1,0)
ifneq ($(SAN),)
# A report ends the program (UBSan's would only print and go on), so a test
# that meets one fails.
override CFLAGS += -fsanitize=$(SAN) -fno-sanitize-recover=all -fno-omit-frame-pointer -O1
override LDFLAGS += -fsanitize=$(SAN)
endif
# One section per function: the linker drops what no verb uses, and
# tests/layers.sh follows calls function by function.
override LDFLAGS += -pie -Wl,-z,relro,-z,now -Wl,--gc-sections

# lib/dynlib_static.c stands in for lib/dynlib.c in the static moat only.
LIB_SRCS := $(sort $(filter-out lib/dynlib_static.c,$(wildcard lib/*.c oci/*.c policy/*.c runtime/*.c runtime/*/*.c hooks/*.c app/*.c)))
CMD_SRCS := $(sort $(wildcard cmd/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS := $(CMD_SRCS:%.c=$(BUILD)/%.o)
# What each object includes comes from the compiler (-MMD -MP: one .d file
# per object, read back below), so a header change rebuilds its users only.
DEPFLAGS = -MMD -MP
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
# What the unit tests share (fake trees, helpers): every other
# tests/unit/*.c, linked into each test binary and nowhere else.
UNIT_LIB_SRCS := $(filter-out $(UNIT_SRCS),$(sort $(wildcard tests/unit/*.c)))
UNIT_LIB_OBJS := $(UNIT_LIB_SRCS:%.c=$(BUILD)/%.o)
TESTCMD_SRCS := $(sort $(wildcard tests/cmd/*.c))
TESTCMD_BINS := $(TESTCMD_SRCS:tests/cmd/%.c=$(BUILD)/tests/cmd/%)

.PHONY: all deps check check-unit check-bats check-python check-asan check-engines check-fuzz check-faults check-host \
	demo install uninstall man clean format format-check bench fuzz soak test-bins

all: $(BUILD)/moat

deps:
	@contrib/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"; $(CC) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/libmoat.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/lib/dynlib_helper.o: override CFLAGS += -DMOAT_LIBEXECDIR='"$(LIBEXECDIR)"'

ifeq ($(STATIC),1)
# dynlib_static.o comes first: the archive's dynlib.o (dlopen) is not taken.
$(BUILD)/moat: $(CMD_OBJS) $(BUILD)/libmoat.a $(BUILD)/lib/dynlib_static.o | $(BUILD)/moat-dl
	$(CC) $(LDFLAGS) -static-pie -o $@ $(CMD_OBJS) $(BUILD)/lib/dynlib_static.o \
	  $(BUILD)/libmoat.a $(LINK_LIBS)
else
$(BUILD)/moat: $(CMD_OBJS) $(BUILD)/libmoat.a
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJS) $(BUILD)/libmoat.a $(LINK_LIBS)
endif

$(BUILD)/moat-dl: $(CMD_OBJS) $(BUILD)/libmoat.a
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJS) $(BUILD)/libmoat.a $(LINK_LIBS)

$(BUILD)/tests/unit/libunit.a: $(UNIT_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/tests/unit/libunit.a $(BUILD)/libmoat.a
	@mkdir -p $(dir $@)
	@echo "  CCLD $@"; $(CC) $(CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ $(LDFLAGS) -o $@ $< \
	  $(BUILD)/tests/unit/libunit.a $(BUILD)/libmoat.a $(LINK_LIBS) $(UNIT_LIBS) -lcmocka
# A fake systemd on a socketpair serves the systemd driver's wait.
$(BUILD)/tests/unit/test_cgroup_systemd: UNIT_LIBS = $(shell $(PKG_CONFIG) --libs libsystemd)

# Small static helpers run inside containers (no libc of the rootfs needed).
$(BUILD)/tests/cmd/%: tests/cmd/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<

test-bins: $(TESTCMD_BINS)

check-unit: deps $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

check-bats: deps $(BUILD)/moat test-bins
	MOAT=$(CURDIR)/$(BUILD)/moat MOAT_TESTBIN=$(CURDIR)/$(BUILD)/tests/cmd \
	  bats $(BATS_FLAGS) tests/bats/*.bats $(wildcard tests/bats/profile/*.bats)

# contrib/python (the moat_sandbox package) against this build. The system python3
# (Debian's python3-pytest); a pyenv python3 first in PATH may lack pytest.
PYTHON ?= $(shell [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
# The package installs offline (pip, setuptools from Debian) into a
# throw-away venv, its types hold (mypy --strict), and its tests run
# against this build.
check-python: deps $(BUILD)/moat
	cd contrib/python && PYTHONDONTWRITEBYTECODE=1 MOAT=$(CURDIR)/$(BUILD)/moat $(PYTHON) -m pytest -q -p no:cacheprovider \
	  test_moat_sandbox.py test_session.py test_async.py test_run_code.py
	$(PYTHON) -m mypy --strict --cache-dir=/dev/null contrib/python/moat_sandbox
	venv="$$(mktemp -d /tmp/moat-pyvenv.XXXXXX)" && trap 'rm -rf "$$venv" $(CURDIR)/contrib/python/build $(CURDIR)/contrib/python/*.egg-info' EXIT && \
	  $(PYTHON) -m venv --system-site-packages "$$venv" && \
	  "$$venv/bin/pip" install -q --no-index --no-build-isolation ./contrib/python && \
	  cd / && "$$venv/bin/python" -c 'import moat_sandbox, os; assert os.path.exists(os.path.join(os.path.dirname(moat_sandbox.__file__), "py.typed")); moat_sandbox.Session, moat_sandbox.AsyncSession, moat_sandbox.arun' 

# Once more under AddressSanitizer and UndefinedBehaviorSanitizer: every unit
# test, and the integration tests that drive every verb and guarantee (the
# lifecycle, exec, hooks and G1-G14 suites, and the host side's paths, G15);
# the rest would double CI's time.
ASAN_BATS ?= tests/bats/lifecycle.bats $(wildcard tests/bats/exec.bats tests/bats/hooks.bats tests/bats/sandbox.bats) \
	$(wildcard tests/bats/profile/*.bats) tests/bats/hostside_paths.bats
check-asan: deps
	$(MAKE) BUILD=build-asan SAN=address,undefined check-unit build-asan/moat test-bins
	MOAT=$(CURDIR)/build-asan/moat MOAT_TESTBIN=$(CURDIR)/build-asan/tests/cmd \
	  bats $(BATS_FLAGS) $(ASAN_BATS)

check: deps
	$(MAKE) all
	$(MAKE) check-unit
	$(MAKE) check-bats
	$(MAKE) check-python
	$(MAKE) check-faults
	$(MAKE) check-asan
	$(MAKE) check-fuzz
	$(MAKE) format-check
	tests/layers.sh $(BUILD)

demo: deps $(BUILD)/moat $(BUILD)/tests/cmd/sysprobe
	@tests/demo.sh $(CURDIR)/$(BUILD)/moat

# Docker, Podman and containerd using moat: installs and starts them
# (tests/bats/engines/setup.sh), runs the tests, stops what it started.
check-engines: deps $(BUILD)/moat test-bins
	MOAT=$(CURDIR)/$(BUILD)/moat MOAT_TESTBIN=$(CURDIR)/$(BUILD)/tests/cmd \
	  tests/bats/engines/run.sh

# moat on a standard host: a Debian 12 guest (systemd as PID 1, pure cgroup
# v2, the Debian 6.1 kernel) under qemu with TCG, built once per machine in
# /var/cache/moat-host (tests/host/build-image.sh), booted with this checkout
# shared read-only over 9p, running the unit tests, the guest's systemd and
# containerd tests (tests/host/*.bats) and the subset of the integration
# tests in tests/host/bats.list. moat is built here and copied in (building
# it under TCG takes ~2 min). Time on 2 cores: image 48 s cold (debootstrap
# 43 s; cached: 0 s), boot 20 s, unit tests 46 s, 19-26 s per bats test (49
# in the list): 17 min in all at a load of 1.5, 22 min at 2-12 from other
# work, more under heavy load (80 s a test at 16). Results in build/host/.
check-host: deps $(BUILD)/moat test-bins $(UNIT_BINS)
	tests/host/run.sh

bench: deps $(BUILD)/moat
	MOAT=$(CURDIR)/$(BUILD)/moat BUILD=$(CURDIR)/$(BUILD) bench/bench.sh
	MOAT=$(CURDIR)/$(BUILD)/moat BUILD=$(CURDIR)/$(BUILD) bench/sandbox.sh

# The config.json parsers under libFuzzer with ASan and UBSan. The fuzzer
# links against an archive of the library built for it: the linker takes
# only the objects fuzz_config.c needs (the oci/ parsers and the policy with
# what they call), so no list of sources is kept by hand.
FUZZ_SECONDS ?= 600
FUZZ_CFLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -D_GNU_SOURCE -DMOAT_VERSION='"$(VERSION)"' -DMOAT_COMMIT='"$(COMMIT)"' \
	-DMOAT_DEBUG=0
FUZZ_OBJS := $(LIB_SRCS:%.c=build-fuzz/%.o)
build-fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC (fuzz) $<"; clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(PC_CFLAGS) \
	  $(DEPFLAGS) -c -o $@ $<
build-fuzz/libmoat.a: $(FUZZ_OBJS)
	@rm -f $@
	ar rcs $@ $^
build-fuzz/fuzz_config: tests/fuzz/fuzz_config.c build-fuzz/libmoat.a
	@mkdir -p build-fuzz/corpus
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PC_CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ \
	  $< build-fuzz/libmoat.a $(PC_LIBS) -o $@

fuzz: deps build-fuzz/fuzz_config
	build-fuzz/fuzz_config -max_total_time=$(FUZZ_SECONDS) -max_len=200000 \
	  -dict=tests/fuzz/config.dict build-fuzz/corpus tests/fuzz/corpus

# kill -9 at each stage of create, and the host changed under a paused
# create (fault points exist only in DEBUG=1 builds).
check-faults: deps
	$(MAKE) BUILD=build-debug DEBUG=1 build-debug/moat
	MOAT=$(CURDIR)/build-debug/moat bats $(BATS_FLAGS) --filter 'kill -9 at|fault point' \
	  tests/bats/faults.bats

check-fuzz: deps
	$(MAKE) fuzz FUZZ_SECONDS=30

soak: deps $(BUILD)/moat
	MOAT=$(CURDIR)/$(BUILD)/moat tests/soak.sh 1000

man: $(BUILD)/moat.1
$(BUILD)/moat.1: docs/moat.1.scd
	@mkdir -p $(dir $@)
	scdoc <$< >$@

install: $(BUILD)/moat
	@[ "$(DEBUG)" = 0 ] || { echo "install: refusing a DEBUG=1 build"; exit 1; }
	install -D -m 0755 $(BUILD)/moat $(DESTDIR)$(BINDIR)/moat
	if [ "$(STATIC)" = 1 ]; then \
	  install -D -m 0755 $(BUILD)/moat-dl $(DESTDIR)$(LIBEXECDIR)/moat/moat-dl; fi
	install -D -m 0644 contrib/moat-config.example.json \
	  $(DESTDIR)$(SYSCONFDIR)/moat/config.example.json
	install -D -m 0644 contrib/logrotate.moat $(DESTDIR)$(SYSCONFDIR)/logrotate.d/moat
	if command -v scdoc >/dev/null; then $(MAKE) man && \
	  install -D -m 0644 $(BUILD)/moat.1 $(DESTDIR)$(MANDIR)/man1/moat.1; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/moat $(DESTDIR)$(LIBEXECDIR)/moat/moat-dl \
	  $(DESTDIR)$(MANDIR)/man1/moat.1 \
	  $(DESTDIR)$(SYSCONFDIR)/moat/config.example.json \
	  $(DESTDIR)$(SYSCONFDIR)/logrotate.d/moat
	-rmdir $(DESTDIR)$(SYSCONFDIR)/moat $(DESTDIR)$(LIBEXECDIR)/moat 2>/dev/null

# Every C source and header of moat and its tests, in the style of the
# root's .clang-format.
FORMAT_SRCS := $(sort $(wildcard */*.c */*.h runtime/*/*.c runtime/*/*.h tests/*/*.c tests/*/*.h))
format:
	clang-format -i $(FORMAT_SRCS)

format-check: deps
	clang-format --dry-run --Werror $(FORMAT_SRCS)

clean:
	rm -rf build build-asan build-fuzz build-debug

-include $(wildcard $(BUILD)/*/*.d $(BUILD)/runtime/*/*.d build-fuzz/runtime/*/*.d $(BUILD)/tests/unit/*.d build-fuzz/*/*.d build-fuzz/*.d)
