# SPDX-License-Identifier: GPL-2.0-only
# For the Makefiles of programs that link the dm-fr core: the flags every
# file that includes a core header compiles with, and the libraries.
#
#   include path/to/userspace/libfrcore/core.mk
#   prog: prog.o $(FRCORE_LIB)
#
# A library is remade (by userspace/libfrcore/Makefile) when a core file changed.

FRCORE_DIR	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
FRCORE_SRC	:= $(abspath $(FRCORE_DIR)/../../dm-fr/core)
# dm-fr/ for the platform headers the core includes (fr-types.h, fr-pm.h):
# fr-user.h stands in for them (their guards defined), but the files must be
# found.
FRCORE_CFLAGS	:= -include $(FRCORE_DIR)/fr-user.h -I$(FRCORE_DIR) -I$(FRCORE_SRC) \
		   -I$(abspath $(FRCORE_SRC)/..)
FRCORE_HDRS	:= $(FRCORE_DIR)/fr-user.h $(wildcard $(FRCORE_SRC)/fr-*.h)
FRCORE_DEPS	:= $(FRCORE_HDRS) $(wildcard $(FRCORE_SRC)/*.c) \
		   $(FRCORE_DIR)/crc32c.c
FRCORE_LIB	:= $(FRCORE_DIR)/build/libfrcore.a
FRCORE_LIB_SAN	:= $(FRCORE_DIR)/build/libfrcore-san.a
FRCORE_LIB_FUZZ	:= $(FRCORE_DIR)/build/libfrcore-fuzz.a

# (Named, not a pattern: a pattern's stem cannot be empty, so
# libfrcore%.a would not match libfrcore.a itself.)
# The includer's first target stays its default goal.
ifneq ($(abspath $(CURDIR)),$(FRCORE_DIR))
frcore_saved_goal := $(.DEFAULT_GOAL)
$(FRCORE_LIB) $(FRCORE_LIB_SAN) $(FRCORE_LIB_FUZZ): $(FRCORE_DEPS)
	$(MAKE) -C $(FRCORE_DIR) $@
.DEFAULT_GOAL := $(frcore_saved_goal)
endif
