# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The installed libibverbs as the provider (and the selftests that reach
# into the provider's objects) build against it: where it lives, its
# private ABI generation (PABI) and rdma-core release, and the flags
# verbs_private.h needs for them (IBVERBS_ABI_CPPFLAGS).

PKG_CONFIG	?= pkg-config
READELF		?= readelf

# libibverbs dlopens "driver <name>" from <libdir>/libibverbs/.
LIBDIR		:= $(shell $(PKG_CONFIG) --variable=libdir libibverbs)
ifeq ($(LIBDIR),)
LIBDIR		:= /usr/lib/$(shell $(CC) -print-multiarch)
endif
PROVIDER_DIR	?= $(LIBDIR)/libibverbs
DRIVER_CONF_DIR	?= /etc/libibverbs.d
IBVERBS_LIBS	:= $(shell $(PKG_CONFIG) --libs libibverbs)
ifeq ($(IBVERBS_LIBS),)
IBVERBS_LIBS	:= -libverbs
endif
# 1.<soname minor>.<rdma-core release>.<patch>: verbs_private.h wants the
# release too, as a generation's layout changed from one release to another.
IBVERBS_VERSION	:= $(shell $(PKG_CONFIG) --modversion libibverbs)
IBVERBS_RELEASE	?= $(word 3,$(subst ., ,$(IBVERBS_VERSION)))

# libibverbs exports the provider interface under the symbol version
# IBVERBS_PRIVATE_<PABI>; the same number names the provider file it
# dlopens and the register function. Only clean needs none.
ifeq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
PABI		?= none
endif
PABI		?= $(shell $(READELF) --dyn-syms -W $(LIBDIR)/libibverbs.so \
		     2>/dev/null | \
		     sed -n 's/.*@IBVERBS_PRIVATE_\([0-9][0-9]*\).*/\1/p' | \
		     sort -u)
ifneq ($(words $(PABI)),1)
$(error no single IBVERBS_PRIVATE_<n> in $(LIBDIR)/libibverbs.so \
	(found "$(PABI)"; is libibverbs-dev installed?); set PABI=<n>)
endif
IBVERBS_ABI_CPPFLAGS := -DIBVERBS_PABI=$(PABI) \
			-DIBVERBS_RELEASE=$(IBVERBS_RELEASE)
