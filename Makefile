# SPDX-License-Identifier: GPL-2.0
#
# softrdma: build the module, the provider and the selftests; run them in
# the test VM.
#
#   make          build everything (module against the installed kernel)
#   make deps     install the Debian packages build and demo need
#   make deps-check  deps + the packages make check needs
#   make demo     deps + build + a VM that creates srdma0 and shows it
#   make check    build + unit tests on the host + selftests in the VM
#   make check-all  make check + the release matrix (check-release.sh on
#                 trixie and sid, check-package.sh on all three)
#   make check-debug  lifetime/error-path selftests, failslab and kmemleak
#                 under a KASAN/lockdep/kmemleak kernel (debug-kernel.sh)
#   make bench    perftest over softrdma and rdma_rxe in one VM, ratios
#   make bench-wire  between two hosts (namespaces, VMs): speed, a shared
#                 bottleneck with CC on and off, loss; against rdma_rxe
#   make bench-profile  perf of the wire path (two namespaces), by symbol
#   make bench-cost  guest instructions per message of softrdma and
#                 rdma_rxe, by symbol (a QEMU plugin, bench/cost/)
#   make pyverbs  rdma-core's pyverbs suite over softrdma and rdma_rxe in
#                 one VM; logs in build/pyverbs/
#   make install  install module and provider on this machine
#                 [DESTDIR=...] [INSTALL_MOD_PATH=...]
#   make uninstall  remove what make install put there
#   make deb      softrdma-dkms and ibverbs-provider-softrdma .debs in
#                 build/deb/
#   make print-ko print the path of the module built for KVER
#   make print-kver  print KVER (the default: see below)
#   make dkms-src the DKMS source tree in build/dkms/softrdma-<version>/
#
# KVER/KDIR select the kernel. KDIR= alone: the kernel release its tree
# was built for. Default: the one Debian's linux-headers-<arch> metapackage
# depends on, else the running kernel if its headers are installed, else
# the newest in $(MODULES_DIR). Found when first used, not when make reads
# this file: "make demo" installs the headers (deps) before it builds. The
# module is built in build/module/$(KVER)/ (a tree of symlinks to the
# sources), so builds for several kernels live side by side; ./softrdma.ko
# links to the last one.
MODULES_DIR ?= /lib/modules

# KVER_FROM: where KVER came from; default_kver prints "KVER FROM".
define default_kver
meta=linux-headers-$$(dpkg --print-architecture 2>/dev/null); \
v=$$(dpkg-query -W -f='$${db:Status-Abbrev} $${Depends}\n' "$$meta" 2>/dev/null | \
	sed -n 's/^ii  *linux-headers-\([^ ,]*\).*/\1/p' | head -n 1); \
if [ -n "$$v" ] && [ -d "$(MODULES_DIR)/$$v/build" ]; then echo "$$v $$meta"; \
elif v=$$(uname -r) && [ -d "$(MODULES_DIR)/$$v/build" ]; then echo "$$v the running kernel"; \
else v=$$(ls -1 $(MODULES_DIR) 2>/dev/null | sort -V | tail -n 1); \
	[ -z "$$v" ] || echo "$$v the newest in $(MODULES_DIR)"; fi
endef

# $(call lazy,VAR,VALUE): VAR is VALUE, computed at its first use only.
lazy = $(eval $(1) = $$(eval $(1) := $$$$(strip $(2)))$$($(1)))

ifneq ($(origin KVER),undefined)
KVER_FROM := $(origin KVER)
else ifneq ($(origin KDIR),undefined)
$(call lazy,KVER,$$(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null))
KVER_FROM := KDIR
else
$(call lazy,KVER_DEFAULT,$$(shell $$(default_kver)))
KVER = $(word 1,$(KVER_DEFAULT))
KVER_FROM = $(wordlist 2,$(words $(KVER_DEFAULT)),$(KVER_DEFAULT))
endif
KDIR ?= $(MODULES_DIR)/$(KVER)/build

# The module's own build tree and the module built there.
MODDIR = $(CURDIR)/build/module/$(KVER)
KO = $(MODDIR)/softrdma.ko
# What kbuild needs to build the module (also what the DKMS package ships);
# *_host.c are for host builds of the protocol code (selftests/unit).
MOD_SRCS = Kbuild $(shell find kernel uapi -type f -name '*.[ch]' ! -name '*_host.c' | sort)

# The version, for DKMS and the packages: debian/changelog's.
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
# What "make deps" installs: building the module and the provider, and the
# demo (a guest that runs ibv_devinfo, pingpong, perftest and rping).
# Without recommends: gcc's libc6-dev is named instead.
DEPS_BUILD := linux-image-amd64 linux-headers-amd64 qemu-system-x86 \
	busybox-static kmod iproute2 gcc libc6-dev make pkg-config \
	libibverbs-dev rdma-core ibverbs-utils rdmacm-utils perftest
# What "make deps-check" adds: the selftests' programs and the tools,
# ULPs and packaging the tests drive (with their recommends).
DEPS_CHECK := ethtool binutils clang librdmacm-dev libfabric-bin libfabric-dev \
	nvme-cli fio qperf ucx-utils nfs-kernel-server open-iscsi diod \
	openmpi-bin libopenmpi-dev mpich libmpich-dev hpcc dropbear-bin python3-pyverbs \
	gnuplot-nox tshark linux-perf \
	dpkg-dev debhelper dh-dkms lintian mmdebstrap git

.PHONY: all module print-ko print-kver dkms-src provider selftests deps deps-check demo check check-all check-debug bench bench-wire bench-profile bench-cost bench-tools pyverbs unit install \
	uninstall deb clean

all: module provider selftests bench-tools

# Every core for each build (kbuild, the provider, the test programs);
# not in MAKEFLAGS, which the make calls of make check's scripts inherit.
JOBS := -j$(shell nproc)

# The symlink tree: kbuild writes its objects next to the sources it is
# given, so it gets links, per file, in build/module/$(KVER)/; links to
# files that are gone are removed.
module:
	@test -n "$(KVER)" || { echo "no kernel headers in $(MODULES_DIR): run 'make deps'"; exit 1; }
	@echo "softrdma: kernel $(KVER) ($(KVER_FROM)), module $(KO)"
	@test -d "$(KDIR)" || { echo "no kernel build tree at '$(KDIR)': run 'make deps'"; exit 1; }
	@mkdir -p $(MODDIR)
	@for f in $(MOD_SRCS); do \
		[ -L $(MODDIR)/$$f ] && continue; \
		mkdir -p $(MODDIR)/$$(dirname $$f) && \
		ln -sfr $$f $(MODDIR)/$$f || exit; \
	done; \
	find $(MODDIR) -xtype l -delete
	$(MAKE) $(JOBS) -C $(KDIR) M=$(MODDIR) W=1 modules
	ln -sfn build/module/$(KVER)/softrdma.ko softrdma.ko

print-ko:
	@echo $(KO)

print-kver:
	@echo $(KVER)

# The source tree DKMS builds the module from (/usr/src/softrdma-<version>/
# when installed): only what kbuild needs, and dkms.conf with the version.
DKMS_SRC ?= build/dkms/softrdma-$(VERSION)
dkms-src:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)
	cp --parents $(MOD_SRCS) $(DKMS_SRC)/
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf

provider:
	$(MAKE) $(JOBS) -C provider

selftests:
	$(MAKE) $(JOBS) -C selftests
	$(MAKE) $(JOBS) -C selftests/unit

# The cost meter's QEMU plugin (host) and its guest program; the latter
# links the selftests' library.
bench-tools: selftests
	$(MAKE) $(JOBS) -C bench/cost

APT_GET := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get
deps:
	$(APT_GET) update
	$(APT_GET) install -y --no-install-recommends $(DEPS_BUILD)

deps-check: deps
	$(APT_GET) install -y $(DEPS_CHECK)

# KVER is found only now, after deps: on a fresh machine the headers
# appear there.
demo: deps
	$(MAKE) module provider
	qemu-scripts/stage-modules.sh $(KVER) build/modroot
	KVER=$(KVER) SRDMA_MODROOT=$(CURDIR)/build/modroot VM_ENV=SRDMA_MODROOT \
		qemu-scripts/vm-run.sh -t 600 -- qemu-scripts/demo.sh

bench: all
	qemu-scripts/stage-modules.sh $(KVER) build/modroot
	mkdir -p build/bench
	KVER=$(KVER) SRDMA_MODROOT=$(CURDIR)/build/modroot VM_ENV=SRDMA_MODROOT \
		qemu-scripts/vm-run.sh -t 2700 -o build/bench/vm -- bench/guest.sh
	bench/report.sh build/bench/vm/bench.csv build/bench

bench-wire: all
	bench/wire-run.sh build/bench/wire

bench-profile: all
	qemu-scripts/stage-modules.sh $(KVER) build/modroot
	KVER=$(KVER) SRDMA_MODROOT=$(CURDIR)/build/modroot VM_ENV=SRDMA_MODROOT \
		qemu-scripts/vm-run.sh -t 900 -o build/bench/profile -- bench/profile.sh

bench-cost: all
	bench/cost/run.sh build/bench/cost

# Not in make check yet: softrdma still fails part of the suite.
pyverbs: all
	qemu-scripts/stage-modules.sh $(KVER) build/modroot
	KVER=$(KVER) SRDMA_MODROOT=$(CURDIR)/build/modroot TEST_TIMEOUT=1500 \
		VM_ENV="SRDMA_MODROOT TEST_TIMEOUT" \
		qemu-scripts/vm-run.sh -t 1800 -o build/pyverbs -- \
		selftests/run.sh pyverbs

unit: selftests
	$(MAKE) -C selftests/unit run

check: all
	KVER=$(KVER) selftests/host/check.sh

# make check and the release matrix (README: when it must run).
check-all: all
	CHECK_ALL=1 KVER=$(KVER) selftests/host/check.sh

# The debug kernel: qemu-scripts/debug-kernel.sh (prebuilt or built once).
check-debug: all
	KVER=$(KVER) selftests/host/check-debug.sh

# For a real machine: the module under /lib/modules/$(KVER)/updates
# (stripped) and the provider where libibverbs looks for it. DESTDIR
# prefixes every path, INSTALL_MOD_PATH (default $(DESTDIR)) the module's;
# depmod runs only for an install into the live system.
INSTALL_MOD_PATH ?= $(DESTDIR)
# Both as absolute paths: the installs run in other directories.
override DESTDIR := $(if $(DESTDIR),$(abspath $(DESTDIR)))
override INSTALL_MOD_PATH := $(if $(INSTALL_MOD_PATH),$(abspath $(INSTALL_MOD_PATH)))
MOD_DEST = $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/updates
MSUDO := $(if $(INSTALL_MOD_PATH),,$(SUDO))
PSUDO := $(if $(DESTDIR),,$(SUDO))
LIVE_DEPMOD = $(if $(INSTALL_MOD_PATH),,$(MSUDO) depmod -a $(KVER))
# Kbuild signs with the kernel's own key, which a distribution's headers do
# not have (README.rst: signing for Secure Boot).
NO_SIGN = $(if $(wildcard $(KDIR)/certs/signing_key.x509),,CONFIG_MODULE_SIG_ALL=)

install: module provider
	$(MSUDO) $(MAKE) -C $(KDIR) M=$(MODDIR) INSTALL_MOD_PATH=$(INSTALL_MOD_PATH) \
		INSTALL_MOD_DIR=updates INSTALL_MOD_STRIP=1 DEPMOD=true $(NO_SIGN) \
		modules_install
	$(LIVE_DEPMOD)
	$(PSUDO) $(MAKE) -C provider install DESTDIR=$(DESTDIR)

uninstall:
	$(MSUDO) rm -f $(addprefix $(MOD_DEST)/softrdma.ko,'' .gz .xz .zst)
	$(MSUDO) sh -c '! [ -d $(MOD_DEST) ] || rmdir --ignore-fail-on-non-empty $(MOD_DEST)'
	$(LIVE_DEPMOD)
	$(PSUDO) $(MAKE) -C provider uninstall DESTDIR=$(DESTDIR)

# The .debs (debian/): built in a copy of the files they are made from,
# build/deb/src/softrdma-<version>/, since dpkg-buildpackage writes them
# next to the source tree; they end up in build/deb/.
DEB_SRC := Makefile Kbuild dkms.conf README.rst kernel uapi provider debian
deb:
	rm -rf build/deb
	mkdir -p build/deb/src/softrdma-$(VERSION)
	cp -a $(DEB_SRC) build/deb/src/softrdma-$(VERSION)/
	$(MAKE) -C build/deb/src/softrdma-$(VERSION)/provider clean
	cd build/deb/src/softrdma-$(VERSION) && dpkg-buildpackage -b -us -uc
	find build/deb/src -maxdepth 1 -type f -exec mv -t build/deb/ {} +
	rm -rf build/deb/src
	ls -l build/deb/

# Also what in-tree module builds (before build/module/) left behind.
clean:
	rm -f softrdma.ko softrdma.o softrdma.mod softrdma.mod.c softrdma.mod.o \
		.softrdma.* Module.symvers modules.order
	find kernel \( -name '*.o' -o -name '.*.cmd' \) -delete
	$(MAKE) -C provider clean
	$(MAKE) -C selftests clean
	$(MAKE) -C selftests/unit clean
	$(MAKE) -C bench/cost clean
	rm -rf build
