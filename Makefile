# SPDX-License-Identifier: GPL-2.0
#
# softrdma: build the module, the provider and the selftests; run them in
# the test VM.
#
#   make          build everything (module against the installed kernel)
#   make deps     install the Debian packages build, demo and tests need
#   make demo     deps + build + a VM that creates srdma0 and shows it
#   make check    build + unit tests on the host + selftests in the VM
#   make check-debug  lifetime/error-path selftests, failslab and kmemleak
#                 under a KASAN/lockdep/kmemleak kernel (debug-kernel.sh)
#   make bench    perftest over softrdma and rdma_rxe in one VM, ratios
#   make pyverbs  rdma-core's pyverbs suite over softrdma and rdma_rxe in
#                 one VM; logs in build/pyverbs/
#   make install  install module and provider on this machine
#
# KVER/KDIR select the kernel: the newest in /lib/modules by default.

KVER ?= $(shell ls -1 /lib/modules 2>/dev/null | sort -V | tail -n 1)
KDIR ?= /lib/modules/$(KVER)/build
export KVER

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
DEB_PACKAGES := linux-image-amd64 linux-headers-amd64 qemu-system-x86 \
	busybox-static kmod iproute2 binutils gcc make clang pkg-config \
	rdma-core ibverbs-utils libibverbs-dev librdmacm-dev rdmacm-utils \
	nvme-cli fio qperf ucx-utils \
	perftest python3-pyverbs gnuplot-nox tshark

.PHONY: all module provider selftests deps demo check check-debug bench pyverbs unit install clean

all: module provider selftests

module:
	@test -d "$(KDIR)" || { echo "no kernel build tree at '$(KDIR)': run 'make deps'"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

provider:
	$(MAKE) -C provider

selftests:
	$(MAKE) -C selftests
	$(MAKE) -C selftests/unit

deps:
	$(SUDO) apt-get update
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y $(DEB_PACKAGES)

demo: deps
	$(MAKE) all
	qemu-scripts/stage-modules.sh $(KVER) build/modroot
	SRDMA_MODROOT=$(CURDIR)/build/modroot VM_ENV=SRDMA_MODROOT \
		qemu-scripts/vm-run.sh -t 600 -- qemu-scripts/demo.sh

bench: all
	qemu-scripts/stage-modules.sh $(KVER) build/modroot
	mkdir -p build/bench
	SRDMA_MODROOT=$(CURDIR)/build/modroot VM_ENV=SRDMA_MODROOT \
		qemu-scripts/vm-run.sh -t 1800 -o build/bench/vm -- bench/guest.sh
	bench/report.sh build/bench/vm/bench.csv build/bench

# Not in make check yet: softrdma still fails part of the suite.
pyverbs: all
	qemu-scripts/stage-modules.sh $(KVER) build/modroot
	SRDMA_MODROOT=$(CURDIR)/build/modroot TEST_TIMEOUT=1500 \
		VM_ENV="SRDMA_MODROOT TEST_TIMEOUT" \
		qemu-scripts/vm-run.sh -t 1800 -o build/pyverbs -- \
		selftests/run.sh pyverbs.sh

unit: selftests
	$(MAKE) -C selftests/unit run

check: all
	selftests/check.sh

# The debug kernel: qemu-scripts/debug-kernel.sh (prebuilt or built once).
check-debug: all
	selftests/check-debug.sh

# For a real machine: the module under /lib/modules/$(KVER)/updates and
# the provider where libibverbs looks for it.
install: module provider
	$(SUDO) $(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	$(SUDO) depmod -a $(KVER)
	$(SUDO) $(MAKE) -C provider install

clean:
	$(if $(wildcard $(KDIR)),$(MAKE) -C $(KDIR) M=$(CURDIR) clean)
	$(MAKE) -C provider clean
	$(MAKE) -C selftests clean
	$(MAKE) -C selftests/unit clean
	rm -rf build
