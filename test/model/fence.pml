/*
 * test/model/fence.pml: a Promela model of shardid's fence protocol,
 * checked by SPIN (test/model/run.sh).  Issue 30 parts 1-3.
 *
 * WHAT IS MODELLED
 *   NB backends and NS sequences of one database; the database's fence
 *   (its cover, the sequence shardid_fence) and the lock that serializes
 *   its writers; one streaming standby (asynchronous, or synchronous with
 *   -DSYNC); a clock that steps forward and back, never more than REG
 *   below the highest reading (max_clock_regression); WAL as an ordered
 *   log of setval records with a flush pointer, the standby receiving it
 *   in order.  The protocol as src/ has it, with the six fixes of issue
 *   29 made in the same release (F1-F6 below).
 *
 *   Events, in any order: nextval; the guard's decision on the value
 *   (issue, wait, refuse, or write a fence first); each step of a fence
 *   write (setval and database cover, flush, standby wait, publish); the
 *   abort of the statement that holds a value; crash (the log cut at the
 *   flush pointer, shared memory gone) and restart with the clock behind;
 *   the postmaster's death; promotion of the standby; pg_dump of one
 *   sequence restored elsewhere; DROP EXTENSION and CREATE EXTENSION, in
 *   one transaction or two, committed or rolled back; the owner's setval
 *   back (or RESTART); ALTER SEQUENCE ... SET UNLOGGED; a slot's eviction
 *   (with its ghost and the database's floor); shardid_sequence_lower;
 *   ALTER SEQUENCE that gives the sequence a new file in a backend's
 *   open transaction, then that transaction's commit or rollback (the
 *   rollback goes back to the old file, and what was written into the
 *   new one is lost with it; a dump meanwhile reads the old file).
 *
 * THE INVARIANT
 *   No (time field, low bits) pair of one sequence lineage is handed out
 *   twice, whatever became of the transaction: an observer watches one
 *   ID handed out (any one: every choice is searched), and the issue step
 *   asserts it is not handed out again (duplicate == 0).  A second
 *   assertion, the design's promise that a correct clock is never refused
 *   ("a clock set back by less than max_clock_regression always waited
 *   out"), is checked in its strongest abstract form: no refusal while the
 *   clock reads its highest value so far.
 *
 * WHAT IS ABSTRACTED
 *   - Time in abstract units: LEAD 2, REFRESH 1, REACH 3, REG 2; the
 *     clock runs 0..TMAX.  The lead is not reloaded (the stored reach is
 *     always REACH, so shardid_fence_lead's record is not modelled).
 *   - The low ten bits: K = 2 values per block; a sequence value v is
 *     block v / K, low bits v % K.  A fence f is written as the value
 *     (f + 1) * K; the fence of a value is its block - 1.  CACHE 1, and
 *     a value more than HC blocks past what the slot knows is a move.
 *   - Only required fence writes (no early writes: they are the same
 *     steps, taken sooner).  A write's first step is atomic
 *     (seq_fence_begin, seq_fence_write and db_fence_cover under the
 *     sequence's lock); a write that finds the database fence's lock
 *     taken waits (the DB_BUSY loop, without its livelock).
 *   - nextval's own WAL is not modelled: after a crash a sequence's value
 *     is its last flushed setval (the worst case; PostgreSQL may keep
 *     up to 32 values more), except that DROP EXTENSION's commit flushes
 *     the value each sequence had then.
 *   - The database fence's load (shardid_fence_load) is one step that
 *     writes, flushes and waits for the standby at once; CREATE
 *     EXTENSION's first load is folded into its commit.  No ID is issued
 *     inside the transaction that drops or creates the extension.
 *   - One slot per sequence; eviction is an event, not a capacity.
 *   - The WAL log holds at most LMAX records not yet at the standby.
 *   - Restore elsewhere is a migration: the original database issues no
 *     more (two live issuers of one sequence are user error); the other
 *     sequence starts a new lineage there.
 *
 * SWITCHES, off by default (docs/design.md, "What cannot be covered"):
 *   EXP_NOSEQ      a table restored without its sequence
 *   EXP_STANDBY    a standby not connected, or timed out past
 *                  shardid.standby_wait, when a fence was written (F4:
 *                  then not waited for again until it has caught up)
 *   EXP_FASTCLOCK  the clock ran fast and the fences were lowered after a
 *                  restart (IDs issued ahead)
 *   EXP_SETBACK_DUMP  the owner's setval back, then a dump before the
 *                  guard's next fence write; or a setval back where the
 *                  database's cover knows none of the IDs
 *
 * COVER (-DCOVER): issue 29's protocol.  The cover's steps keep the
 *   database's fence D ahead of the clock off the issue path: when the
 *   published cover C is less than REFRESH ahead of the clock, D := clock
 *   + LEAD is appended under the database fence's lock, which is let go
 *   of at once (in C any backend does it, cover_append, without a flush);
 *   once the log is flushed past that record (a commit's flush carried
 *   it, or a backend that needs it flushed it) and the standby has it,
 *   C := D is published (cover_publish); a DROP EXTENSION's commit forgets
 *   a cover not yet published.  A backend issues a field t only if t <= C
 *   and t <= S (its sequence's published fence); when t
 *   passes S it appends setval(seq, max(t, clock) + LEAD) to the log and
 *   publishes S in the same step, before the ID, with no flush and no
 *   standby wait.  A commit flushes the log to its end; an ID may be
 *   handed out and never committed.  Assertions added: the cover is never
 *   more than REACH past the highest clock reading; a backend that waits
 *   for the cover with a correct clock waits for the cover pending or
 *   due, whose target covers its field.  Switches: COMMITTED_ONLY
 *   (the duplicate assertion only for a watched ID whose transaction
 *   committed first), EXP_UNCOMMITTED_DUMP (a dump after a crash cut a
 *   sequence's setval, before its next call: an exposure).
 * MUTATIONS (each must be caught): see the MUT_ names below and run.sh.
 * Bounds: NB, NS, TMAX, DISASTERS, CHAOS, and -DSCENARIO with E_... to
 * choose the events (run.sh).  -DSYNC: a synchronous standby.
 *
 * The C function that does each step is named in its comment; the table
 * in docs/design.md ("The model") lists them, and run.sh checks that they
 * exist in src/.
 */

#ifndef NB
#define NB 2			/* backends */
#endif
#ifndef NS
#define NS 2			/* sequences */
#endif
#ifndef TMAX
#define TMAX 4			/* the clock's highest reading */
#endif
#define LEAD 2			/* shardid.fence_lead */
#define REFRESH 1		/* a quarter of the lead */
#define REACH 3			/* lead + refresh */
#define REG 2			/* shardid.max_clock_regression */
#define FMAX (TMAX + 1)	/* the last field an ID may take: the horizon */
#define K 2				/* values per block (the low ten bits) */
#define HC 1			/* blocks a value may run ahead of the slot */
#define LMAX 4			/* WAL records not yet received by the standby */
#define VMAX ((FMAX + LEAD + REFRESH + 3) * K)
#define SEQHI_NONE (-100)
#define DB NS			/* the WAL object of the database's fence */
#ifndef CHAOS
#define CHAOS 2			/* other events (setval back, SET UNLOGGED, eviction,
						 * lowering, the postmaster's death, DROP and
						 * CREATE EXTENSION): at most */
#endif
#ifndef DISASTERS
#define DISASTERS 2		/* crashes, promotions, restores: at most */
#endif


/*
 * Which events a run explores: all of them, unless -DSCENARIO names
 * some (-DE_CRASH=1 ...): run.sh checks the CI bounds as a set of
 * scenarios, each small enough to search exhaustively.
 */
#ifndef E_SETBACK
#ifdef SCENARIO
#define E_SETBACK 0
#else
#define E_SETBACK 1
#endif
#endif
#ifndef E_UNLOGGED
#ifdef SCENARIO
#define E_UNLOGGED 0
#else
#define E_UNLOGGED 1
#endif
#endif
#ifndef E_EVICT
#ifdef SCENARIO
#define E_EVICT 0
#else
#define E_EVICT 1
#endif
#endif
#ifndef E_RESTORE
#ifdef SCENARIO
#define E_RESTORE 0
#else
#define E_RESTORE 1
#endif
#endif
#ifndef E_LOWER
#ifdef SCENARIO
#define E_LOWER 0
#else
#define E_LOWER 1
#endif
#endif
#ifndef E_CRASH
#ifdef SCENARIO
#define E_CRASH 0
#else
#define E_CRASH 1
#endif
#endif
#ifndef E_PMDIE
#ifdef SCENARIO
#define E_PMDIE 0
#else
#define E_PMDIE 1
#endif
#endif
#ifndef E_PROMOTE
#ifdef SCENARIO
#define E_PROMOTE 0
#else
#define E_PROMOTE 1
#endif
#endif
#ifndef E_EXT
#ifdef SCENARIO
#define E_EXT 0
#else
#define E_EXT 1
#endif
#endif
#ifndef E_REWRITE
#ifdef SCENARIO
#define E_REWRITE 0
#else
#define E_REWRITE 1
#endif
#endif

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))
#define fence_of(v) ((v) / K - 1)

/* ---- the clock ---- */
short now;				/* what the clock reads, as a field */
short tt;				/* its highest reading: the true time */

/* ---- what is durable: WAL ---- */
short bval[NS + 1];		/* each object's value at the standby (received) */
byte lobj[LMAX];		/* the log not yet at the standby, in order */
short lval[LMAX];
byte nlog;				/* records in it */
byte nflush;			/* of which flushed */

/* ---- the database ---- */
short val[NS];			/* each sequence's value: the next nextval */
bool unl[NS];			/* SET UNLOGGED */
bool sb[NS];			/* set back by its owner, no fence published since */
short dbval = -1;		/* shardid_fence's value (-1: none yet) */
bool dbex = 1;			/* the extension exists */
bool pm = 1;			/* the postmaster is alive */
byte dis;				/* disasters so far */
byte ch;				/* other events so far */
bool restarted;			/* the server lost its memory at least once */
bool elsewhere;			/* the cover is new: a restore elsewhere, DROP EXTENSION */

/* ---- shared memory (src/shmem.c) ---- */
bool dbld;				/* the database entry has loaded its fence */
short dbpub = -1;		/* the published database fence */
short dbstart = -1;		/* where its slots start */
short dbfloor = -1;		/* raised by evicted slots */
byte dlock;				/* the database fence's lock: backend + 1 */
byte slock[NS];			/* each sequence's lock: backend + 1 */
bool sin[NS];			/* the slot is in use */
short slast[NS];		/* last field issued, or a start */
short sblk[NS];			/* the block of last (-1: none) */
byte stak[NS];			/* low bits taken in last */
bool sst[NS];			/* GUARD_SLOT_START */
byte sreach[NS];		/* the start's reach */
short siss[NS];			/* with sst: the last field issued */
short sfence[NS];		/* the published fence */
short swr[NS];			/* written: the fence this server wrote */
short swing[NS];		/* writing */
short shi[NS];			/* seq_hi */
short sgw[NS];			/* the ghost given to the slot: written */
short sgf[NS];			/* fence */
short sgi[NS];			/* issued */
short sgh[NS];			/* seq_hi */
bool gin[NS];			/* a ghost is kept for the sequence */
short gw[NS];
short gf[NS];
short gi[NS];
short gh[NS];
#ifdef EXP_STANDBY
bool stalled;			/* F4: the standby timed out, not waited for */
#endif
#ifdef COVER
/* the cover's steps (in C any backend's): they die with shared memory */
byte cpc;				/* 0 none pending, 1 its record written, 2 flushed */
short cd;				/* the cover it writes */
byte clsn;				/* the end of its record in the log */
#ifdef MUT_COVER_LAG
short cst;				/* the clock when its write began */
short cdur;				/* the last write's duration */
#endif
#ifndef EXP_UNCOMMITTED_DUMP
bool lost[NS];			/* a crash or a promotion cut a setval of the
						 * sequence, and no setval of it since */
#endif
#endif

/* ---- the backends ---- */
short hv[NB];			/* the value nextval gave it, or -1 */
byte hs[NB];			/* of which sequence */
byte pc[NB];			/* its fence write: 0 none, 1 written, 2 flushed,
						 * 3 the standbys have it */
short wf[NB];			/* the fence written */
short wpub[NB];			/* the database fence to publish, or -1 */
short wlim[NB];			/* the database fence the slot may go up to */
bool wmov[NB];			/* the value carried a fence not this server's */
short wmf[NB];
short wmb[NB];
byte wlsn[NB];			/* the end of its records in the log */
byte rw[NB];			/* 1 + the sequence its open transaction gave a new
						 * file (ALTER SEQUENCE), or 0 */
short rwv[NB];			/* that sequence's value in its old file, the
						 * one a rollback goes back to and a dump reads */
#ifdef MUT_ROLLBACK_UNDO
short txs[NB];			/* the sequence whose fence its transaction wrote */
short txv[NB];			/* that sequence's value before */
short txd[NB];			/* the database fence's value before */
#endif

/*
 * ---- the handed-out IDs, per sequence lineage ----
 * An observer picks one ID handed out (of sequence 0: the sequences are
 * symmetric) when it is handed out, and watches for it: a second time is
 * the violation.  Every choice is searched, so this finds what a set of
 * every ID handed out would, in far fewer states.
 */
bool seen;				/* the observer watches an ID handed out */
byte wfield;			/* its field */
byte wlow;				/* its low bits */
hidden byte watch;		/* this step may pick the ID it hands out */
hidden byte duplicate;	/* the watched ID, handed out again */
hidden byte refused_correct_clock;
#ifdef COVER
hidden byte over_reach;	/* the cover more than REACH past the true time */
hidden byte cover_wait_long;	/* a wait for the cover the worker does not end */
#ifdef COMMITTED_ONLY
byte wb;				/* the backend whose open transaction holds the
						 * watched ID (NB: none) */
bool wcom;				/* that transaction committed */
#endif
#endif

/* scratch, not part of the state */
hidden short t1, t2, t3, t4, t5;
hidden byte i1;
hidden byte ok;

/* ---------------------------------------------------------------- WAL */

/* XLogInsert of a setval record (seq_write, seq_write_fence) */
inline wal_insert(obj, v)
{
	lobj[nlog] = obj;
	lval[nlog] = v;
	nlog++
}

/* the standby receives the oldest record (walsender, walreceiver) */
inline wal_receive()
{
	bval[lobj[0]] = lval[0];
	i1 = 0;
	do
	:: i1 + 1 < nlog -> lobj[i1] = lobj[i1 + 1]; lval[i1] = lval[i1 + 1]; i1++
	:: else -> break
	od;
	lobj[nlog - 1] = 0;
	lval[nlog - 1] = 0;
	nlog--;
	nflush--;
	i1 = 0;
	do
	:: i1 < NB -> if :: wlsn[i1] > 0 -> wlsn[i1]-- :: else fi; i1++
	:: else -> break
	od;
#ifdef COVER
	if :: clsn > 0 -> clsn-- :: else fi;
#endif
	i1 = 0
}

/* the value each object has after replaying the standby's WAL and the
 * log up to n records: crash recovery (n = nflush) or promotion (n = 0) */
inline wal_replay(n)
{
	i1 = 0;
	do
	:: i1 < NS -> val[i1] = bval[i1]; i1++
	:: else -> break
	od;
	dbval = bval[DB];
	i1 = 0;
	do
	:: i1 < n ->
		if
		:: lobj[i1] == DB -> dbval = lval[i1]
		:: else -> val[lobj[i1]] = lval[i1]
		fi;
		i1++
	:: else -> break
	od;
	i1 = 0;
	do
	:: i1 < NS ->
		/* an unlogged sequence is reset to its start (F2 refuses it) */
		if :: unl[i1] -> val[i1] = 0 :: else fi;
		i1++
	:: else -> break
	od;
	i1 = 0
}

/* ---------------------------------------------------------------- shared memory */

/* everything in shared memory is gone: a crash, or another server */
inline shmem_reset()
{
	dbld = 0; dbpub = -1; dbstart = -1; dbfloor = -1; dlock = 0;
	i1 = 0;
	do
	:: i1 < NS ->
		slock[i1] = 0; sin[i1] = 0; slast[i1] = 0; sblk[i1] = 0;
		stak[i1] = 0; sst[i1] = 0; sreach[i1] = 0; siss[i1] = 0;
		sfence[i1] = 0; swr[i1] = 0; swing[i1] = 0; shi[i1] = 0;
		sgw[i1] = 0; sgf[i1] = 0; sgi[i1] = 0; sgh[i1] = 0;
		gin[i1] = 0; gw[i1] = 0; gf[i1] = 0; gi[i1] = 0; gh[i1] = 0;
		i1++
	:: else -> break
	od;
	i1 = 0;
	do
	:: i1 < NB ->
		hv[i1] = -1; hs[i1] = 0; pc[i1] = 0; wf[i1] = 0; wpub[i1] = 0;
		wlim[i1] = 0; wmov[i1] = 0; wmf[i1] = 0; wmb[i1] = 0; wlsn[i1] = 0;
		rw[i1] = 0; rwv[i1] = 0;
#ifdef MUT_ROLLBACK_UNDO
		txs[i1] = -1; txv[i1] = 0; txd[i1] = 0;
#endif
		i1++
	:: else -> break
	od;
#ifdef EXP_STANDBY
	stalled = 0;
#endif
#ifdef COVER
	cpc = 0; cd = 0; clsn = 0;
#ifdef MUT_COVER_LAG
	cst = 0; cdur = 0;
#endif
#ifdef COMMITTED_ONLY
	wb = NB;
#endif
#endif
	i1 = 0
}

/* start_at (src/slot.c) */
inline start_at(s, start, reach)
{
	if
	:: start > slast[s] ->
		if :: !sst[s] -> siss[s] = slast[s] :: else fi;
		slast[s] = start;
		sblk[s] = -1;
		stak[s] = 0;
		sreach[s] = reach;
		sst[s] = 1
	:: else
	fi
}

/* guard_slot_issued (src/shmem.h) */
#define issued(s) (sst[s] -> siss[s] : slast[s])

/* guard_slot_begin (src/slot.c), after slot_take */
inline slot_init(s)
{
	sin[s] = 1;
	sst[s] = 1;
	siss[s] = -1;
	slast[s] = -1;
	sblk[s] = -1;
	stak[s] = 0;
	sreach[s] = REACH;
#ifdef MUT_START_BELOW_COVER
	t5 = dbfloor;
#else
	t5 = max(dbstart, dbfloor);
#endif
	start_at(s, t5, REACH);
	sfence[s] = -1;
	swr[s] = -1;
	swing[s] = -1;
	shi[s] = SEQHI_NONE;
	sgw[s] = -1; sgf[s] = -1; sgi[s] = -1; sgh[s] = SEQHI_NONE;
	if
	:: gin[s] ->
		sgw[s] = gw[s]; sgf[s] = gf[s]; sgi[s] = gi[s]; sgh[s] = gh[s];
		gin[s] = 0; gw[s] = 0; gf[s] = 0; gi[s] = 0; gh[s] = 0
	:: else
	fi
}

/*
 * slot_take (src/shmem.c) evicting the slot, with guard_slot_end (src/slot.c).
 *
 * MUT_GHOST_NO_START: the ghost kept as src/shmem.c had it until the model found
 * this, keeping the last field the slot issued, not its start.  A slot that started at its sequence's
 * value (after a restore elsewhere, or DROP and CREATE EXTENSION and a
 * restart, where the database's cover is new), wrote a fence and was
 * evicted before its first ID comes back through its ghost at no start
 * at all, and issues below the fence its value carried when the clock is
 * behind it.  Without the switch the ghost keeps last (the start, or the
 * last field issued, whichever is later).
 */
inline slot_evict(s)
{
#ifndef MUT_EVICT_NO_GHOST
	if
	:: swr[s] >= 0 ->
		gin[s] = 1; gw[s] = swr[s]; gf[s] = sfence[s]; gh[s] = shi[s];
#ifdef MUT_GHOST_NO_START
		gi[s] = issued(s)	/* the ghost as src/shmem.c kept it */
#else
		gi[s] = slast[s]	/* the start too: see MUT_GHOST_NO_START */
#endif
	:: else -> if
		:: sgw[s] >= 0 ->
			gin[s] = 1; gw[s] = sgw[s]; gf[s] = sgf[s]; gi[s] = sgi[s]; gh[s] = sgh[s]
		:: else
		fi
	fi;
	dbfloor = max(dbfloor, issued(s));
#endif
	sin[s] = 0; slast[s] = 0; sblk[s] = 0; stak[s] = 0; sst[s] = 0;
	sreach[s] = 0; siss[s] = 0; sfence[s] = 0; swr[s] = 0; swing[s] = 0;
	shi[s] = 0; sgw[s] = 0; sgf[s] = 0; sgi[s] = 0; sgh[s] = 0
}

/* guard_slot_moved (src/slot.c) */
inline slot_moved(s, block)
{
	t4 = max(max(swr[s], swing[s]), sgw[s]);
	t5 = max(t4 + 1, sgh[s]);
	if
	:: t4 >= 0 && block <= t5 + HC ->
		t5 = sgi[s];
		start_at(s, t5, 1);
		if
		/* S from the ghost; the model asks COVERED at each ID apart.  In C
		 * the slot's fence is the lower of S and the published cover, so
		 * the ghost's is taken only as far as the cover is now (one that
		 * shardid_db_lower lowered since the ghost was kept) */
		:: swr[s] < sgw[s] -> swr[s] = sgw[s]; sfence[s] = max(sfence[s], sgf[s])
		:: else
		fi;
		if :: block - 1 < t4 -> sfence[s] = -1 :: else fi
	:: else ->
		t5 = block - 1;
		start_at(s, t5, REACH)
	fi;
	sgw[s] = -1;
	shi[s] = block
}

/* ---------------------------------------------------------------- the issue path */

/* COVER: the cover holds field t (MUT_ISSUE_PAST_COVER: not asked) */
#ifdef MUT_ISSUE_PAST_COVER
#define COVERED(t) (1)
#else
#define COVERED(t) ((t) <= dbpub)
#endif

#if defined(COVER) && defined(COMMITTED_ONLY)
#define WATCHED_COUNTS (wcom)
#define WATCH_HOLDER(b) wb = b; wcom = 0
#else
#define WATCHED_COUNTS (1)
#define WATCH_HOLDER(b) skip
#endif


/*
 * shardid_guard_next / guard_next_slow and decide (src/guard.c), with
 * shardid_rule_field and shardid_rule_wait (src/rule.h).  t1: the block,
 * t2: the low bits, t3: the field.
 */
/*
 * A sequence given a new file in this backend's open transaction (ALTER
 * SEQUENCE, TRUNCATE ... RESTART IDENTITY) takes no fence write of it:
 * a rollback would take the write back with the file, and a dump reads
 * the old file meanwhile, while the IDs it held are out.  The guard
 * refuses (55000) an ID its fence does not hold (shardid_seq_fence_advance,
 * seq_rewritten_in_xact); other backends wait for the ALTER's lock, as
 * nextval does.  MUT_REWRITE_WRITES: the write goes into the new file.
 */
#ifdef MUT_REWRITE_WRITES
#define MAY_WRITE(b, s) (1)
#else
#define MAY_WRITE(b, s) (rw[b] != (s) + 1)
#endif
#define REWRITE_REFUSE(b) printf("b%d refused: s%d has a new file in its transaction\n", b, hs[b]); hv[b] = -1
/* another backend's open transaction gave s a new file: nextval waits */
#define RW_OTHER(b, s) ((b != 0 && rw[0] == (s) + 1) || (NB > 1 && b != 1 && rw[1 % NB] == (s) + 1) || \
	(NB > 2 && b != 2 && rw[2 % NB] == (s) + 1))
/* no other backend holds a value of s or writes its fence */
#define RW_IDLE(b, s) ((b == 0 || hv[0] < 0 || hs[0] != s) && (NB < 2 || b == 1 || hv[1 % NB] < 0 || hs[1 % NB] != s) && \
	(NB < 3 || b == 2 || hv[2 % NB] < 0 || hs[2 % NB] != s))

inline issue(b)
{
	t1 = hv[b] / K;
	t2 = hv[b] % K;
	if :: !sin[hs[b]] -> slot_init(hs[b]) :: else fi;
	/* guard_slot_sync: the database's start, after a (re)load */
#ifndef MUT_START_BELOW_COVER
	start_at(hs[b], dbstart, REACH);
#endif
	if
	:: t1 > shi[hs[b]] ->
		if
		:: t1 > shi[hs[b]] + HC -> slot_moved(hs[b], t1)
		:: else -> shi[hs[b]] = t1
		fi
	:: else
	fi;
	ok = (t1 == sblk[hs[b]] && !(stak[hs[b]] & (1 << t2)));	/* guard_slot_joins */
	/* shardid_rule_field */
	if
	:: now > slast[hs[b]] -> t3 = now
	:: else ->
		t3 = (ok -> slast[hs[b]] : slast[hs[b]] + 1);
		if :: t3 > now + 1 -> t3 = -1 :: else fi
	fi;
	if
	:: t3 < 0 ->
		/* shardid_rule_wait, in decide_wait: how far last may lie ahead */
#ifdef MUT_JUDGE_BY_LEAD
		t4 = (sst[hs[b]] -> LEAD : 1);
#else
		t4 = (sst[hs[b]] -> sreach[hs[b]] : 1);
#endif
		t5 = slast[hs[b]] - now;
		if
		:: t5 > t4 && t5 - (t4 - 1) > REG ->
			/* STEP_REFUSE, 55000: the value is lost */
			printf("b%d refused: last %d, clock %d, ahead %d\n", b, slast[hs[b]], now, t4);
			/* a correct clock is never refused at the database's start */
			refused_correct_clock = (now == tt && sst[hs[b]] && slast[hs[b]] == dbstart);
			assert(refused_correct_clock == 0);
			hv[b] = -1
		:: else	/* STEP_WAIT: until the clock moves */
		fi
	:: t3 > FMAX ->
		skip			/* STEP_HORIZON: the end of the model's time */
#ifdef COVER
	:: t3 >= 0 && t3 <= FMAX && !COVERED(t3) ->
		/* the cover does not hold t3: wait for the cover's steps (in C
		 * this backend runs them: cover_flush).  With a correct clock the
		 * wait is for the cover pending or due, whose target (the clock + LEAD) holds t3: no fence's
		 * distance enters it (the start's wait is bounded by the reach) */
		cover_wait_long = (now == tt && !(t3 <= now + LEAD &&
			(cpc != 0 || (dbpub < now + REFRESH && dlock == 0))));
		assert(cover_wait_long == 0)
	:: t3 >= 0 && t3 <= FMAX && COVERED(t3) && t3 > sfence[hs[b]] && !MAY_WRITE(b, hs[b]) ->
		REWRITE_REFUSE(b)
	:: t3 >= 0 && t3 <= FMAX && COVERED(t3) && t3 > sfence[hs[b]] && MAY_WRITE(b, hs[b]) && nlog < LMAX ->
		cover_seq_write(b, hs[b], t3);	/* setval, S published: no wait */
		hand_out(b)
	:: t3 >= 0 && t3 <= FMAX && COVERED(t3) && t3 > sfence[hs[b]] && MAY_WRITE(b, hs[b]) && nlog >= LMAX ->
		skip			/* the log's bound in the model: wait */
	:: t3 >= 0 && t3 <= FMAX && COVERED(t3) && t3 <= sfence[hs[b]] ->
		hand_out(b)
#else
	:: t3 >= 0 && t3 <= FMAX && t3 > sfence[hs[b]] && !MAY_WRITE(b, hs[b]) ->
		REWRITE_REFUSE(b)
	:: t3 >= 0 && t3 <= FMAX && t3 > sfence[hs[b]] && MAY_WRITE(b, hs[b]) ->
		fence_write(b, hs[b], t3)	/* STEP_ADVANCE */
	:: t3 >= 0 && t3 <= FMAX && t3 <= sfence[hs[b]] ->
		hand_out(b)
#endif
	fi;
	ok = 0
}

/* STEP_ISSUE: the ID (field t3, low bits t2) is handed out (COVER: its
 * transaction's commit is an event of its own) */
inline hand_out(b)
{
		if
		:: t3 != slast[hs[b]] || sst[hs[b]] ->
			slast[hs[b]] = t3; sblk[hs[b]] = t1; stak[hs[b]] = 1 << t2
		:: else -> stak[hs[b]] = stak[hs[b]] | (1 << t2)
		fi;
		sst[hs[b]] = 0;
		siss[hs[b]] = 0;
		sreach[hs[b]] = 0;
		printf("b%d ISSUES s%d (%d, %d)\n", b, hs[b], t3, t2);
		if
		:: hs[b] == 0 && seen && t3 == wfield && t2 == wlow && WATCHED_COUNTS ->
			duplicate = 1;
			assert(duplicate == 0)	/* never twice */
		:: hs[b] == 0 && !seen && watch ->
			printf("observer watches (%d, %d)\n", t3, t2);
			seen = 1; wfield = t3; wlow = t2;
			WATCH_HOLDER(b)
		:: else
		fi;
		hv[b] = -1
}

#ifdef COVER
/*
 * COVER: a sequence's fence written, not waited for.  setval(seq,
 * max(t, clock) + LEAD) appended to the log (never backwards) and S
 * published at once, in the step that hands out the ID: the record comes
 * before the ID in WAL order, and no flush or standby wait comes between.
 * (A value that jumped past what the slot knows was seen by issue's
 * guard_slot_moved in this step: nextval gave it, so no move is left here.)
 * MUT_SETVAL_AFTER_ISSUE: the setval comes after the ID (pc 4: a later
 * step of the backend).
 */
inline cover_seq_write(b, s, field)
{
	t4 = max(field, now) + LEAD;
	t5 = max(t4, max(fence_of(val[s]) + 1, shi[s]));
#ifdef MUT_SETVAL_AFTER_ISSUE
	wf[b] = t5;
	pc[b] = 4;
#else
	val[s] = (t5 + 1) * K;
	wal_insert(s, val[s]);
#ifndef EXP_UNCOMMITTED_DUMP
	lost[s] = 0;
#endif
#endif
	printf("b%d setval s%d fence %d (val %d), not flushed\n", b, s, t5, val[s]);
	sfence[s] = max(sfence[s], t5);
	swr[s] = max(swr[s], t5);
	swing[s] = max(swing[s], t5);
	shi[s] = max(shi[s], t5 + 1);
	sb[s] = 0
}
#endif

/*
 * COVER: the call that writes its sequence's fence takes its value from
 * the setval itself, with no nextval (shardid_guard_value,
 * shardid_seq_fence_first: setval(seq, v, true), and the guard then
 * decides on v as on any value): one record per call where a sequence is
 * called less often than its lead, where a nextval after the setval made
 * two.  Taken as the guard would take a required write before any value:
 * the slot in use and not at a start, the clock past its last and its
 * fence, the cover holding the clock; else the call takes nextval's
 * value (EV_NEXTVAL).  A value that jumped past what the slot knows is a
 * move, published with the fence (guard_slot_publish), as a write's is:
 * the value as stored, whatever its is_called (seq_read_stored: with no
 * nextval before, one set with is_called false, as a dump sets it, is
 * seen only so; a review found the C reading none there and writing
 * over the fence it carried, test/t/086 D).  In C, nothing is taken
 * where the value would not go forward or out of the sequence's bounds
 * (the model's values stay within both).
 * (is_called false, the value left to nextval as well, is no mistake the
 * model can find: the guard's bitmap keeps the two calls apart, and a
 * crash or a copy starts after the fence.  A move into a slot in use,
 * the owner's setval forward, is not an event of the model.)
 * MUT_FIRST_SETVAL_AFTER: the value taken, its ID decided and the setval
 * appended after it (a step of its own, as MUT_SETVAL_AFTER_ISSUE's).
 */
inline first_write(b, s)
{
	if
	:: val[s] / K > shi[s] + HC ->
		t5 = fence_of(val[s]); start_at(s, t5, REACH); shi[s] = val[s] / K
	:: else
	fi;
	hs[b] = s;
#ifdef MUT_FIRST_SETVAL_AFTER
	t4 = max(now, now) + LEAD;
	t5 = max(t4, max(fence_of(val[s]) + 1, shi[s]));
	wf[b] = t5;
	sfence[s] = max(sfence[s], t5); swr[s] = max(swr[s], t5);
	swing[s] = max(swing[s], t5); shi[s] = max(shi[s], t5 + 1);
	hv[b] = (t5 + 1) * K;
	printf("b%d takes s%d = %d, its setval later, clock %d\n", b, s, hv[b], now);
	issue(b);
	pc[b] = 4
#else
	cover_seq_write(b, s, now);
	hv[b] = val[s];
	val[s]++;
	printf("b%d takes s%d = %d from the setval, clock %d\n", b, s, hv[b], now)
#endif
}

/* ---------------------------------------------------------------- a fence write */

/*
 * shardid_seq_fence_advance's first step, with the sequence's lock
 * (seq_fence_begin), seq_fence_write and db_fence_cover.  Taken only when
 * the sequence's lock is free, and the database fence's lock when a cover
 * is to be written (else it waits: DB_BUSY).
 */
inline fence_write(b, s, field)
{
	/* seq_fence_write: the part the clock asks for (F5: no lag) */
	t4 = max(field, now) + LEAD;
	/* db_fence_cover: does the published cover hold it? */
	ok = (t4 <= dbpub);
#ifdef MUT_NO_COVER
	ok = 1;
#endif
	if
	:: slock[s] == 0 && (ok || dlock == 0) && nlog + 2 <= LMAX ->
		slock[s] = b + 1;
		wmov[b] = (val[s] / K > shi[s] + HC);
		wmf[b] = fence_of(val[s]);
		wmb[b] = val[s] / K;
		t5 = max(t4, max(fence_of(val[s]) + 1, shi[s]));
		swing[s] = max(swing[s], t5);
#ifdef MUT_ROLLBACK_UNDO
		if :: txs[b] < 0 -> txs[b] = s; txv[b] = val[s]; txd[b] = dbval :: else fi;
#endif
		val[s] = (t5 + 1) * K;		/* seq_write_fence: setval(s, v, false) */
		wal_insert(s, val[s]);
		wf[b] = t5;
		wpub[b] = -1;
		wlim[b] = dbpub;
		if
		:: !ok ->
			/* db_fence_cover with the lock: a stored fence later than
			 * this server knows is a start for its slots */
			dlock = b + 1;
			if
			:: dbval > dbpub ->
				dbstart = max(dbstart, dbval);
				wlim[b] = dbval;
				wpub[b] = dbval
			:: else
			fi;
			if
			:: t4 > dbval ->
				/* db_fence_store: the refresh past it */
				dbval = t4 + REFRESH;
				wal_insert(DB, dbval);
				wpub[b] = dbval;
				wlim[b] = dbval
			:: else
			fi
		:: else
		fi;
#ifdef MUT_NO_COVER
		wlim[b] = 100;
#endif
		wlsn[b] = nlog;
		printf("b%d writes fence s%d = %d (val %d), db %d\n", b, s, t5, val[s], dbval);
		pc[b] = 1
	:: else		/* wait for the locks, or for room in the log */
	fi
}

/* the flush of XactLastRecEnd in fence_flush */
inline fence_flush_step(b)
{
#ifdef MUT_PUBLISH_BEFORE_FLUSH
	pc[b] = 3		/* published first; the WAL writer flushes later */
#else
	nflush = max(nflush, wlsn[b]);
	pc[b] = 2
#endif
}

/*
 * fence_flush's wait: sync_standbys_have, or standbys_received for at most
 * shardid.standby_wait.  A standby whose walsender is gone (the
 * postmaster died) is not waited for by the asynchronous wait; the
 * synchronous one never ends then (the backend exits with its postmaster).
 */
#ifdef SYNC
#define standby_has(b) (wlsn[b] == 0)
#else
#define standby_has(b) (wlsn[b] == 0 || !pm)
#endif

/* seq_fence_publish and db_fence_publish, then the locks let go */
inline fence_publish(b)
{
	t1 = hs[b];
#ifndef MUT_ORPHAN_ISSUES
	if
	:: !pm -> skip	/* F1: no fence published after the postmaster died */
	:: else ->
#endif
		if :: wpub[b] > dbpub -> dbpub = wpub[b] :: else fi;
		if
		:: sin[t1] ->
			if
			:: wmov[b] -> t5 = wmf[b]; start_at(t1, t5, REACH); shi[t1] = max(shi[t1], wmb[b])
			:: else
			fi;
			sfence[t1] = max(sfence[t1], min(wf[b], wlim[b]));
			swr[t1] = max(swr[t1], wf[b]);
			shi[t1] = max(shi[t1], wf[b] + 1)
		:: else ->
			/* shardid_ghost_wrote */
			if
			:: gin[t1] -> gw[t1] = max(gw[t1], wf[b]); gf[t1] = max(gf[t1], min(wf[b], wlim[b])); gh[t1] = max(gh[t1], wf[b] + 1)
			:: else
			fi
		fi;
#ifndef MUT_ORPHAN_ISSUES
	fi;
#endif
	if :: dlock == b + 1 -> dlock = 0 :: else fi;
	sb[t1] = 0;
	slock[t1] = 0;
	wf[b] = 0; wpub[b] = 0; wlim[b] = 0; wmov[b] = 0; wmf[b] = 0; wmb[b] = 0; wlsn[b] = 0;
	pc[b] = 0;
	t1 = 0
}

/* ---------------------------------------------------------------- the events */

/* nextval through shardid_next: F1 (the postmaster is alive), F2 (no
 * unlogged sequence: 55000 at its first use and after SET UNLOGGED) */
#ifdef MUT_ACCEPT_UNLOGGED
#define may_use(s) (1)
#else
#define may_use(s) (!unl[s])
#endif
#ifdef MUT_ORPHAN_ISSUES
#define alive (1)
#else
#define alive (pm)
#endif

/*
 * nextval and the guard's decision on its value, one step: a value that
 * must wait for the clock is taken when the clock lets it go (the same
 * IDs, fewer states); a value that needs a fence write first is held
 * through the write (STEP_ADVANCE), and decided again after it.
 */
#define EV_NEXTVAL(b, s) EV_NEXTVAL_W(b, s, 0) EV_NEXTVAL_W2(b, s) EV_FIRST(b, s) EV_REWRITE(b, s)
#define EV_NEXTVAL_W2(b, s) \
	:: d_step { s == 0 && !seen && hv[b] < 0 && pc[b] == 0 && dbex && dbld && alive && may_use(s) && val[s] < VMAX && !RW_OTHER(b, s) -> watch = 1; \
		printf("b%d nextval s%d = %d, clock %d\n", b, s, val[s], now); hv[b] = val[s]; hs[b] = s; val[s]++; issue(b); \
		if :: hv[b] >= 0 && pc[b] == 0 -> hv[b] = -1; hs[b] = 0; val[s]-- :: else fi; \
		t1 = 0; t2 = 0; t3 = 0; t4 = 0; t5 = 0; watch = 0 }
#define EV_NEXTVAL_W(b, s, w) \
	:: d_step { hv[b] < 0 && pc[b] == 0 && dbex && dbld && alive && may_use(s) && val[s] < VMAX && !RW_OTHER(b, s) -> \
		printf("b%d nextval s%d = %d, clock %d\n", b, s, val[s], now); hv[b] = val[s]; hs[b] = s; val[s]++; issue(b); \
		if :: hv[b] >= 0 && pc[b] == 0 -> hv[b] = -1; hs[b] = 0; val[s]-- :: else fi; \
		t1 = 0; t2 = 0; t3 = 0; t4 = 0; t5 = 0 }

#ifdef COVER
#define EV_FIRST(b, s) \
	:: d_step { hv[b] < 0 && pc[b] == 0 && dbex && dbld && alive && may_use(s) && sin[s] && !sst[s] && \
		now > slast[s] && now > sfence[s] && now <= FMAX && COVERED(now) && nlog < LMAX && val[s] < VMAX - K && \
		!RW_OTHER(b, s) && MAY_WRITE(b, s) -> \
		first_write(b, s); t4 = 0; t5 = 0 }
#else
#define EV_FIRST(b, s)
#endif

/*
 * ALTER SEQUENCE s in b's transaction, a new file with the same value
 * (CACHE, INCREMENT ...: RESTART is the owner's set back, EV_SEQUENCE),
 * when no other backend holds a value of s (the ALTER's lock waits for
 * them) and the log is at the standby (so that the old file's value is
 * durable: the model's log has one object per sequence, not per file);
 * its commit (the new file is the sequence), or its rollback (the old
 * file again, what was written into the new one lost; the guard's slot
 * forgets the fences written in the transaction, F6).
 */
#ifdef MUT_REWRITE_WRITES
#define REWRITE_FORGET(s) if :: sin[s] -> sfence[s] = min(sfence[s], slast[s]) :: else fi
#else
#define REWRITE_FORGET(s) skip
#endif
#define EV_REWRITE(b, s) \
	:: d_step { E_REWRITE && ch < CHAOS && rw[b] == 0 && hv[b] < 0 && pc[b] == 0 && dbex && pm && nlog == 0 && \
		slock[s] == 0 && RW_IDLE(b, s) && !RW_OTHER(b, s) -> \
		ch++; printf("b%d ALTER SEQUENCE s%d: a new file\n", b, s); rw[b] = s + 1; rwv[b] = val[s] } \
	:: d_step { rw[b] == s + 1 && hv[b] < 0 && pc[b] == 0 -> printf("b%d commits its ALTER SEQUENCE\n", b); rw[b] = 0; rwv[b] = 0 } \
	:: d_step { rw[b] == s + 1 && hv[b] < 0 && pc[b] == 0 && nlog == 0 -> \
		printf("b%d rolls back its ALTER SEQUENCE: s%d = %d again\n", b, s, rwv[b]); \
		val[s] = rwv[b]; bval[s] = rwv[b]; REWRITE_FORGET(s); rw[b] = 0; rwv[b] = 0 }

/* a crash or a promotion ends an open transaction that gave a sequence a
 * new file: the sequence is its old file, whose value was durable */
inline rewrite_crash()
{
	i1 = 0;
	do
	:: i1 < NB -> if :: rw[i1] > 0 -> val[rw[i1] - 1] = rwv[i1] :: else fi; i1++
	:: else -> break
	od;
	i1 = 0
}

#define EV_BACKEND(b) \
	:: d_step { hv[b] >= 0 && pc[b] == 0 && alive && dbex && dbld -> printf("b%d decides again on %d, clock %d\n", b, hv[b], now); issue(b); t1 = 0; t2 = 0; t3 = 0; t4 = 0; t5 = 0 } \
	:: d_step { hs[b] == 0 && !seen && hv[b] >= 0 && pc[b] == 0 && alive && dbex && dbld -> watch = 1; printf("b%d decides again on %d, clock %d\n", b, hv[b], now); issue(b); t1 = 0; t2 = 0; t3 = 0; t4 = 0; t5 = 0; watch = 0 } \
	:: d_step { hv[b] >= 0 && pc[b] == 0 -> printf("b%d cancelled\n", b); hv[b] = -1 } /* the statement ends: cancel, abort */ \
	:: d_step { pc[b] == 1 -> printf("b%d flush\n", b); fence_flush_step(b) } \
	:: d_step { pc[b] == 2 && (standby_has(b) || STANDBY_GONE || MUT_SKIP_WAIT) -> printf("b%d standby wait ends\n", b); pc[b] = 3; STANDBY_STALL } \
	:: d_step { pc[b] == 3 -> printf("b%d publish fence %d db %d\n", b, wf[b], wpub[b]); fence_publish(b) } \
	ROLLBACK_EVENT(b) COVER_BACKEND(b)

/*
 * COVER: the commit of a transaction flushes the log to its end (its
 * commit record is the last one); under COMMITTED_ONLY it marks the watched
 * ID committed if this backend's open transaction holds it, and the
 * transaction may end without a commit (a rollback, a SELECT, a client
 * gone).  MUT_SETVAL_AFTER_ISSUE's late setval.
 */
#ifdef COVER
#ifdef COMMITTED_ONLY
#define COMMIT_MARK(b) if :: wb == b -> wcom = 1; wb = NB :: else fi
#define COMMIT_ENABLED(b) (nflush < nlog || wb == b)
#define ABORT_EVENT(b) :: d_step { wb == b -> printf("b%d rolls back\n", b); wb = NB }
#else
#define COMMIT_MARK(b) skip
#define COMMIT_ENABLED(b) (nflush < nlog)
#define ABORT_EVENT(b)
#endif
#if defined(MUT_SETVAL_AFTER_ISSUE) || defined(MUT_FIRST_SETVAL_AFTER)
#define LATE_SETVAL(b) \
	:: d_step { pc[b] == 4 && nlog < LMAX -> val[hs[b]] = (wf[b] + 1) * K; wal_insert(hs[b], val[hs[b]]); \
		printf("b%d setval s%d late\n", b, hs[b]); wf[b] = 0; pc[b] = 0 }
#else
#define LATE_SETVAL(b)
#endif
#define COVER_BACKEND(b) \
	:: d_step { COMMIT_ENABLED(b) -> printf("b%d commits: flush %d\n", b, nlog); nflush = nlog; COMMIT_MARK(b) } \
	ABORT_EVENT(b) LATE_SETVAL(b)
#else
#define COVER_BACKEND(b)
#endif

#ifdef MUT_NO_STANDBY_WAIT
#define MUT_SKIP_WAIT 1
#else
#define MUT_SKIP_WAIT 0
#endif

/* EXP_STANDBY: the wait may end at shardid.standby_wait; F4: the
 * standby is then not waited for until it has caught up */
#ifdef EXP_STANDBY
#define STANDBY_GONE 1
#define STANDBY_STALL stalled = 1
#else
#define STANDBY_GONE 0
#define STANDBY_STALL skip
#endif

/*
 * MUT_ROLLBACK_UNDO: the abort of the transaction that holds the IDs
 * takes back its fence writes (the sequence's and the database's), as
 * if they were transactional.  The protocol's writes are not: only a
 * sequence created or rewritten in the aborting transaction loses them
 * (F6: and only those forget their fence), which this model leaves out.
 */
#ifdef MUT_ROLLBACK_UNDO
#define ROLLBACK_EVENT(b) \
	:: d_step { hv[b] < 0 && pc[b] == 0 && txs[b] >= 0 -> \
		val[txs[b]] = txv[b]; wal_insert(txs[b], txv[b]); \
		if :: txd[b] != dbval -> dbval = txd[b]; wal_insert(DB, txd[b]) :: else fi; \
		txs[b] = -1; txv[b] = 0; txd[b] = 0 } \
	:: d_step { hv[b] < 0 && pc[b] == 0 && txs[b] >= 0 -> txs[b] = -1; txv[b] = 0; txd[b] = 0 }
#else
#define ROLLBACK_EVENT(b)
#endif

/* the owner's setval back, or ALTER SEQUENCE RESTART, committed */
#define EV_SEQUENCE(s) \
	:: d_step { E_SETBACK && MAY_SETBACK && ch < CHAOS && slock[s] == 0 && val[s] > 0 && nlog < LMAX -> ch++; printf("owner: setval s%d back\n", s); sb[s] = 1; \
		val[s] = 0; wal_insert(s, 0); nflush = nlog } \
	:: d_step { E_UNLOGGED && ch < CHAOS && !unl[s] -> ch++; printf("s%d SET UNLOGGED\n", s); unl[s] = 1 } \
	:: d_step { E_EVICT && ch < CHAOS && sin[s] && slock[s] == 0 -> ch++; printf("evict s%d\n", s); slot_evict(s) } \
	:: d_step { E_RESTORE && dis < DISASTERS && dbex && MAY_DUMP(s) -> printf("pg_dump s%d = %d, restored elsewhere\n", s, val[s]); restore(s); dis++ } \
	EV_LOWER(s)

/*
 * A sequence its owner set back carries no fence for the IDs before until
 * the guard's next fence write: a dump taken meanwhile repeats them; and
 * where the database's cover knows none of its IDs (in a database
 * restored from a dump, or after DROP EXTENSION) a setval back repeats
 * them (EXP_SETBACK_DUMP).
 */
#ifdef EXP_SETBACK_DUMP
#define MAY_DUMP_SB(s) (1)
#define MAY_SETBACK (1)
#else
#define MAY_DUMP_SB(s) (!sb[s])
#define MAY_SETBACK (!elsewhere)
#endif
/*
 * COVER: a crash (or a promotion) that cut a sequence's setval, under
 * which IDs may have been handed out in transactions that never
 * committed, leaves its value below them until its next call's setval;
 * a dump meanwhile, restored elsewhere with the clock behind, repeats
 * them (EXP_UNCOMMITTED_DUMP).
 */
#if defined(COVER) && !defined(EXP_UNCOMMITTED_DUMP)
#define MAY_DUMP(s) (MAY_DUMP_SB(s) && !lost[s])
#else
#define MAY_DUMP(s) MAY_DUMP_SB(s)
#endif

/*
 * pg_dump -t of sequence s (its value, read from shared buffers; under
 * EXP_NOSEQ its table without it), restored into a fresh database
 * elsewhere, whose cover starts empty and whose clock may be behind: the
 * original issues no more.  The other sequence there is a new lineage.
 */
inline restore(s)
{
#ifdef EXP_NOSEQ
	t1 = 0;
#else
	t1 = val[s];
	/* pg_dump's snapshot sees the committed file */
	i1 = 0;
	do
	:: i1 < NB -> if :: rw[i1] == s + 1 -> t1 = rwv[i1] :: else fi; i1++
	:: else -> break
	od;
	i1 = 0;
#endif
#ifdef MUT_ACCEPT_UNLOGGED
	/* --no-unlogged-table-data: an unlogged sequence's value is not dumped */
	if :: unl[s] -> t1 = 0 :: else fi;
#endif
	i1 = 0;
	do
	:: i1 < NS -> val[i1] = 0; unl[i1] = 0; sb[i1] = 0; bval[i1] = 0;
#if defined(COVER) && !defined(EXP_UNCOMMITTED_DUMP)
		lost[i1] = 0;
#endif
		i1++
	:: else -> break
	od;
	/* the other sequence is a new lineage there */
	if :: s != 0 -> seen = 0; wfield = 0; wlow = 0 :: else fi;
	val[s] = t1; bval[s] = t1;
	dbval = -1; bval[DB] = -1; dbex = 1; pm = 1; elsewhere = 1; restarted = 1;
	nlog = 0; nflush = 0;
	shmem_reset();
	t1 = 0
}

/* shardid_sequence_lower (shardid_fence_lower_seq, shardid_slot_lower):
 * never below an ID this server issued from the sequence since it started.
 * Only before any restart (the server knows every ID), unless
 * EXP_FASTCLOCK: then the owner lowers it after a restart too. */
#ifdef EXP_FASTCLOCK
#define MAY_LOWER 1
#else
#define MAY_LOWER (!restarted)
#endif
#define EV_LOWER(s) \
	:: d_step { E_LOWER && ch < CHAOS && MAY_LOWER && pm && slock[s] == 0 && nlog < LMAX && fence_of(val[s]) >= 0 -> ch++; printf("lower s%d to 0\n", s); lower(s, 0) } \
	:: d_step { E_LOWER && ch < CHAOS && MAY_LOWER && pm && slock[s] == 0 && nlog < LMAX && fence_of(val[s]) >= 1 -> ch++; printf("lower s%d to 1\n", s); lower(s, 1) }

inline lower(s, target)
{
	t1 = target;
#ifndef MUT_LOWER_BELOW_ISSUED
	if :: sin[s] -> t1 = max(t1, issued(s)) :: else fi;
#endif
	if
	:: sin[s] ->
		if :: slast[s] > t1 -> slast[s] = t1; sblk[s] = -1; stak[s] = 0 :: else fi;
		sfence[s] = min(sfence[s], t1);
		swr[s] = min(swr[s], t1);
		swing[s] = min(swing[s], t1);
		shi[s] = min(shi[s], t1 + 1)
	:: else
	fi;
	if
	:: t1 < fence_of(val[s]) ->
		val[s] = (t1 + 1) * K; wal_insert(s, val[s]); nflush = nlog
	:: else
	fi;
#ifdef EXP_FASTCLOCK
	/* and the database's, by shardid_fence_lower (shardid_db_lower) */
	if :: dbval > t1 && dbex -> dbval = t1; dbpub = min(dbpub, t1); dbstart = min(dbstart, t1); dbfloor = min(dbfloor, t1); wal_insert(DB, t1); nflush = nlog :: else fi;
#endif
	t1 = 0
}

/*
 * F3: before DROP EXTENSION, each sequence it knows whose value's fence
 * is below the database's stored fence is set to it (WAL-logged before
 * the DROP's commit).
 */
inline drop_cover()
{
	/* the sequences' own nextval records come before the DROP's commit
	 * in WAL, and its flush makes them durable */
	i1 = 0;
	do
	:: i1 < NS -> wal_insert(i1, val[i1]); i1++
	:: else -> break
	od;
#ifndef MUT_DROP_NO_COVER
	i1 = 0;
	do
	:: i1 < NS ->
		if
		:: fence_of(val[i1]) < dbval -> val[i1] = (dbval + 1) * K; wal_insert(i1, val[i1])
#if defined(COVER) && !defined(EXP_UNCOMMITTED_DUMP)
			; lost[i1] = 0
#endif
		:: else
		fi;
		i1++
	:: else -> break
	od;
	i1 = 0
#else
	skip
#endif
}

/*
 * CREATE EXTENSION's fence: shardid_fence_load's db_fence_read_back, at
 * its first load, folded into the commit: what this server issued
 * (shardid_db_known_max) and published, or nothing after a restart.
 */
inline create_fence()
{
	t1 = dbfloor;
	i1 = 0;
	do
	:: i1 < NS -> if :: sin[i1] -> t1 = max(t1, issued(i1)) :: else fi; i1++
	:: else -> break
	od;
	i1 = 0;
	t2 = max(t1 + LEAD, dbpub);
	if
	:: max(t1, dbpub) > -1 -> dbval = t2
	:: else -> dbval = -1
	fi;
	wal_insert(DB, dbval);
	dbex = 1;
	dbld = 0;
#ifdef COVER
	over_reach = (dbval > tt + REACH);
	assert(over_reach == 0);
#endif
	t1 = 0; t2 = 0
}

#ifdef COVER
/*
 * cover_append: D := clock + LEAD when the published cover is less than
 * REFRESH ahead of the clock, under the database fence's lock (as the load
 * and DROP EXTENSION take it), let go of in the same step: the cover is
 * pending.  Then, in steps of their own, its record is flushed (by a
 * commit, or by a backend that needs it), the standby waited for
 * (bounded as a backend's wait is), and C := D published (cover_publish),
 * unless the postmaster died.  No write's duration enters the target
 * (MUT_COVER_LAG: the last one's does).  Due at less than REFRESH ahead,
 * as db_cover's due is the clock + the refresh: one write per LEAD -
 * REFRESH however many backends look.  (The units cannot tell REFRESH
 * from LEAD - REFRESH; C appending at less than the lead less the refresh
 * ahead wrote one per refresh under load, 070 H.  Safety does not depend
 * on when the cover is appended, only that no ID passes C.)
 */
#ifdef MUT_COVER_LAG
#define COVER_LAG cdur
#else
#define COVER_LAG 0
#endif
#ifdef MUT_COVER_NO_STANDBY_WAIT
#define COVER_SKIP_WAIT 1
#else
#define COVER_SKIP_WAIT 0
#endif
inline cover_write()
{
	cd = now + LEAD + COVER_LAG;
	over_reach = (cd > tt + REACH);
	assert(over_reach == 0);	/* never more than the reach past the clock */
	assert(cd > dbval);			/* never backwards */
#ifdef MUT_COVER_LAG
	cst = now;
#endif
	dbval = cd;
	wal_insert(DB, cd);
	clsn = nlog;
#ifdef MUT_COVER_PUBLISH_BEFORE_FLUSH
	dbpub = cd;
#endif
	printf("cover_append D = %d\n", cd);
	cpc = 1
}

inline cover_cut(from)
{
#ifndef EXP_UNCOMMITTED_DUMP
	i1 = from;
	do
	:: i1 < nlog -> if :: lobj[i1] < NS -> lost[lobj[i1]] = 1 :: else fi; i1++
	:: else -> break
	od;
	i1 = 0
#else
	skip
#endif
}
#define COVER_CUT(from) cover_cut(from)
/* the reload after a DROP EXTENSION's commit forgets a pending cover */
#define COVER_FORGET cpc = 0; cd = 0; clsn = 0
#else
#define COVER_CUT(from) skip
#define COVER_FORGET skip
#endif

#if NS > 1
#define quiet (dlock == 0 && slock[0] == 0 && slock[1] == 0)
#else
#define quiet (dlock == 0 && slock[0] == 0)
#endif

init
{
	d_step { shmem_reset() };
	do
	/* the clock: forward, or back within max_clock_regression */
	:: d_step { now < TMAX -> now++; tt = max(tt, now); printf("clock %d\n", now) }
	:: d_step { now > 0 && now > tt - REG -> now--; printf("clock back %d\n", now) }

	EV_NEXTVAL(0, 0)
	EV_BACKEND(0)
#if NB > 1
	EV_NEXTVAL(1, 0)
	EV_BACKEND(1)
#endif
#if NB > 2
	EV_NEXTVAL(2, 0)
	EV_BACKEND(2)
#endif
	EV_SEQUENCE(0)
#if NS > 1
	EV_NEXTVAL(0, 1)
#if NB > 1
	EV_NEXTVAL(1, 1)
#endif
#if NB > 2
	EV_NEXTVAL(2, 1)
#endif
	EV_SEQUENCE(1)
#endif

	/* the database fence's load: shardid_fence_load (the lock, the
	 * read back, written again, flushed, the standby waited for) */
	:: d_step { !dbld && dbex && pm && dlock == 0 && nlog == 0 ->
		if :: dbval >= 0 -> bval[DB] = dbval :: else fi;
		dbstart = max(dbstart, dbval); dbpub = dbval; dbld = 1; printf("load db fence %d\n", dbval) }

	/* the standby receives a flushed record (its walsender needs the
	 * postmaster; F4 ends a stall once it has caught up) */
	:: d_step { nflush > 0 && pm -> printf("standby receives obj %d = %d\n", lobj[0], lval[0]); wal_receive()
#ifdef EXP_STANDBY
		; if :: nlog == 0 -> stalled = 0 :: else fi
#endif
		}

#ifdef COVER
	/* the cover's steps: cover_append, the flush (a commit's, or
	 * cover_flush's), cover_publish after the standby has the record */
	:: d_step { cpc == 0 && dbex && dbld && pm && dlock == 0 && dbpub < now + REFRESH && nlog < LMAX -> cover_write() }
	:: d_step { cpc == 1 -> printf("cover flushed\n"); nflush = max(nflush, clsn); cpc = 2 }
	:: d_step { cpc == 2 && pm && (clsn == 0 || STANDBY_GONE || COVER_SKIP_WAIT) ->
		printf("cover_publish C = %d\n", cd); dbpub = max(dbpub, cd); STANDBY_STALL;
#ifdef MUT_COVER_LAG
		cdur = now - cst; if :: cdur < 0 -> cdur = 0 :: else fi; cst = 0;
#endif
		cpc = 0; cd = 0; clsn = 0 }
#endif

#ifdef MUT_PUBLISH_BEFORE_FLUSH
	/* the WAL writer flushes what was inserted */
	:: d_step { nflush < nlog -> nflush = nlog }
#endif

	/* crash: the log cut at the flush pointer, shared memory gone; the
	 * restart's clock is the clock's (it may then step back) */
	:: d_step { E_CRASH && dis < DISASTERS -> printf("CRASH (flushed %d of %d)\n", nflush, nlog); COVER_CUT(nflush); nlog = nflush; wal_replay(nflush); rewrite_crash(); i1 = nflush;
		do :: i1 < LMAX -> lobj[i1] = 0; lval[i1] = 0; i1++ :: else -> break od;
		shmem_reset(); pm = 1; restarted = 1; dis++ }

	/* the postmaster dies; its backends may still run (F1 stops them) */
	:: d_step { E_PMDIE && ch < CHAOS && pm -> ch++; printf("postmaster dies\n"); pm = 0 }

	/* promotion of the standby: what it received, a new server */
	:: d_step { E_PROMOTE && dis < DISASTERS -> printf("PROMOTE the standby\n"); COVER_CUT(0); wal_replay(0); rewrite_crash(); nlog = 0; nflush = 0;
		i1 = 0; do :: i1 < LMAX -> lobj[i1] = 0; lval[i1] = 0; i1++ :: else -> break od;
		shmem_reset(); pm = 1; restarted = 1; dis++ }

	/* DROP EXTENSION, committed: F3's setvals, then the fence is gone */
	:: d_step { E_EXT && ch < CHAOS && dbex && pm && quiet && nlog + 2 * NS + 1 <= LMAX -> ch++; printf("DROP EXTENSION\n"); elsewhere = 1;
		drop_cover(); dbval = -1; wal_insert(DB, -1); nflush = nlog; dbex = 0; dbld = 0; COVER_FORGET }
	/* DROP EXTENSION rolled back: its setvals stay, not flushed */
	:: d_step { E_EXT && ch < CHAOS && dbex && pm && quiet && nlog + 2 * NS <= LMAX -> ch++; printf("DROP EXTENSION rolled back\n"); drop_cover() }
	/* CREATE EXTENSION, committed (rolled back: nothing) */
	:: d_step { !dbex && pm && quiet && nlog < LMAX -> printf("CREATE EXTENSION\n"); create_fence(); nflush = nlog }
	/* DROP and CREATE in one transaction, committed */
	:: d_step { E_EXT && ch < CHAOS && dbex && pm && quiet && nlog + 2 * NS + 1 <= LMAX -> ch++; printf("DROP and CREATE EXTENSION\n"); elsewhere = 1;
		drop_cover(); create_fence(); nflush = nlog ; COVER_FORGET }
	od
}
