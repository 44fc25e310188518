# Makefile for shardid (PGXS)

MODULE_big = shardid
OBJS = \
	$(WIN32RES) \
	src/clock.o \
	src/codec.o \
	src/fence.o \
	src/floor.o \
	src/guard.o \
	src/public_id.o \
	src/report.o \
	src/shardid.o \
	src/shmem.o \
	src/speck.o \
	src/state.o \
	src/stats.o
PGFILEDESC = "shardid - Instagram-style 64-bit IDs that never repeat"

EXTENSION = shardid
# The released scripts, frozen, and the current version's install script,
# made from sql/extension/ (see the rule below).
DATA = shardid--1.0.sql shardid--1.0--1.1.sql shardid--1.1--1.2.sql
DATA_built = shardid--1.2.sql

REGRESS = setup codec errors shortcode markings next properties provision adopt partitions public vectors
REGRESS_OPTS = --load-extension=shardid
ISOLATION = concurrent drop
ISOLATION_OPTS = --load-extension=shardid
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# -Wextra, less the unused-parameter warnings that PostgreSQL's own headers
# and the PG_FUNCTION_ARGS convention raise.  `make WERROR=1` adds -Werror.
PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter
ifdef WERROR
PG_CFLAGS += -Werror
endif

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The install script of the current version: sql/extension/*.sql in the
# order of their numbers, a blank line between two files.
$(DATA_built): $(sort $(wildcard $(srcdir)/sql/extension/*.sql))
	awk 'FNR == 1 && NR > 1 { print "" } { print }' $^ >$@

# PGXS does not track headers: rebuild every object when one changes.
$(OBJS): $(wildcard $(srcdir)/src/*.h)

# Out of tree (make -f SRCDIR/Makefile VPATH=SRCDIR, as pg_buildext builds),
# the objects go to src/ of the build directory, which must exist.
ifdef VPATH
$(shell mkdir -p src)
endif

# The TAP tests alone (test/run.sh runs them as the cluster owner).
.PHONY: tapcheck
tapcheck:
	$(prove_installcheck)
