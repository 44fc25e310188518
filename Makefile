# Makefile for shardid (PGXS)

MODULE_big = shardid
OBJS = \
	$(WIN32RES) \
	src/citus.o \
	src/clock.o \
	src/codec.o \
	src/fence.o \
	src/fence_admin.o \
	src/guard.o \
	src/owner.o \
	src/public_id.o \
	src/report.o \
	src/seqio.o \
	src/shardid.o \
	src/shmem.o \
	src/slot.o \
	src/speck.o \
	src/standby.o \
	src/state.o \
	src/stats.o
PGFILEDESC = "shardid - Instagram-style 64-bit IDs that never repeat"

EXTENSION = shardid
# The released scripts, frozen in released/, and the current version's
# install and update scripts, made from sql/ (see the rules below).
DATA = released/shardid--1.0.sql released/shardid--1.0--1.1.sql \
	released/shardid--1.1--1.2.sql released/shardid--1.2.sql
DATA_built = shardid--1.3.sql shardid--1.2--1.3.sql

REGRESS = codec errors shortcode markings next properties provision adopt partitions owner_reads public vectors
REGRESS_OPTS = --inputdir=$(srcdir)/test --load-extension=shardid
ISOLATION = concurrent drop provision_race
ISOLATION_OPTS = --inputdir=$(srcdir)/test --load-extension=shardid
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# -Wextra, less the unused-parameter warnings that PostgreSQL's own headers
# and the PG_FUNCTION_ARGS convention raise.  `make WERROR=1` adds -Werror.
PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter
ifdef WERROR
PG_CFLAGS += -Werror
endif

# `make ASSERTS=1` compiles shardid's own Assert()s in, against any server
# build: the assertion checks of a server built with --enable-cassert,
# without one (CI builds one leg so).
ifdef ASSERTS
PG_CPPFLAGS += -DUSE_ASSERT_CHECKING
endif

# `make FAULTS=1` compiles the fence protocol's named fault points in
# (src/fault.h; -DSHARDID_FAULTS, and src/fault.c with their settings),
# for the crash sweep, test/t/082_crash_points.pl.  In every other build a
# point is nothing at all.  Never for a package.
ifdef FAULTS
PG_CPPFLAGS += -DSHARDID_FAULTS
OBJS += src/fault.o
endif
# (its object goes with `make clean` whichever build made it)
EXTRA_CLEAN = src/fault.o

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The extension's source: one object (or one family of overloads) per
# file, by kind.  The install script is sql/probe.sql, then every file of
# these folders in this order, each folder's files in name order (views
# last: they read the functions), then sql/finish.sql (data steps).
SQL_KINDS = schemas sequences tables functions procedures views
SQL_SOURCES = $(foreach k,$(SQL_KINDS),$(sort $(wildcard $(srcdir)/sql/$(k)/*.sql)))
SQL_REPLACEABLE = $(foreach k,functions procedures views,$(sort $(wildcard $(srcdir)/sql/$(k)/*.sql)))
JOIN_SQL = awk 'FNR == 1 && NR > 1 { print "" } { print }'

shardid--1.3.sql: $(srcdir)/sql/probe.sql $(SQL_SOURCES) $(srcdir)/sql/finish.sql
	{ printf '%s\n\n%s\n%s\n\n' '/* $@, made by the Makefile from sql/ */' \
		'-- complain if script is sourced in psql, rather than via CREATE EXTENSION' \
		'\echo Use "CREATE EXTENSION shardid" to load this file. \quit'; \
	  $(JOIN_SQL) $^; } >$@

# The update script of the current version: its hand-written part
# (sql/updates/), where the line "--@ sources" becomes the probe and every
# function, procedure and view as CREATE OR REPLACE, and a line
# "--@ include KIND/FILE.sql" becomes that file of sql/ (a step that a
# fresh install and the update both run, kept once).
INCLUDE_SQL = awk -v dir=$(srcdir)/sql '/^--@ include / { f = dir "/" $$3; \
	if ((getline l < f) <= 0) { print "no file " f > "/dev/stderr"; exit 1 } \
	do print l; while ((getline l < f) > 0); close(f); next } { print }'
shardid--1.2--1.3.sql: $(srcdir)/sql/updates/shardid--1.2--1.3.sql $(srcdir)/sql/probe.sql $(SQL_SOURCES)
	$(INCLUDE_SQL) $< >$@.tmp
	{ sed -n '1,/^--@ sources$$/p' $@.tmp | sed '$$d'; \
	  $(JOIN_SQL) $(srcdir)/sql/probe.sql $(SQL_REPLACEABLE) | \
		sed -E 's/^CREATE (FUNCTION|PROCEDURE|VIEW) /CREATE OR REPLACE \1 /'; \
	  sed -n '/^--@ sources$$/,$$p' $@.tmp | sed '1d'; } >$@
	rm -f $@.tmp

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
