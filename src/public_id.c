/*-------------------------------------------------------------------------
 *
 * public_id.c
 *	  SQL entry points of opaque public IDs, and the setting that holds
 *	  their keys.
 *
 * shardid_public(id) gives a 12-character string that hides the ID's
 * time, shard and volume: the key version, then the ID permuted by
 * Speck64/128 under that version's key (speck.c).  shardid_private is the
 * inverse.  The keys come from shardid.public_id_keys, a list
 * "VERSION:HEX32, ..." in the server's configuration files only
 * (PGC_SIGHUP), readable by superusers only, hidden from SHOW ALL and
 * pg_settings.
 *
 * Keys stay out of the log.  The setting has no check hook: PostgreSQL
 * prints a rejected value in its "invalid value for parameter" message,
 * so every string is accepted, and a bad list is reported when a function
 * uses it, naming the entry but not its text.  ALTER SYSTEM is refused for
 * the setting (GUC_DISALLOW_IN_AUTO_FILE), so no key is written to
 * postgresql.auto.conf, which base backups copy.  The emit_log_hook below
 * rewrites what would carry a key: the postmaster's report of a reloaded
 * value ("parameter ... changed to ..."), a superuser's statement that
 * names the setting, a configuration file's syntax error (whose hex
 * digits it hides), and any message with a key in it (a mistyped ALTER
 * SYSTEM, a RAISE), whose key it hides, and nothing more.
 *
 * Each backend parses the list, and expands the keys, once for each value
 * the setting takes: the assign hook marks the parse stale, and the next
 * use parses the text again if it differs from the one parsed.
 *
 * src/public_id.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/elog.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "public_id.h"
#include "speck.h"

#define PUBLIC_ID_KEYS_NAME "shardid.public_id_keys"
/* what a statement that names the setting contains, in any case */
#define PUBLIC_ID_KEYS_TAIL "public_id_keys"
/* what the log says instead of such a statement */
#define HIDDEN_STATEMENT "(text hidden: it names " PUBLIC_ID_KEYS_NAME ")"

PG_FUNCTION_INFO_V1(shardid_public);
PG_FUNCTION_INFO_V1(shardid_private);
PG_FUNCTION_INFO_V1(shardid_public_bigint);
PG_FUNCTION_INFO_V1(shardid_private_bigint);
PG_FUNCTION_INFO_V1(shardid_public_keys);

/* The setting's value, as the GUC machinery keeps it. */
char	   *shardid_public_id_keys = NULL;

/*
 * This backend's parse of it, of the text keys_parsed_text; checked
 * again when keys_stale.
 */
static bool keys_stale = true;
static char *keys_parsed_text = NULL;
static ShardidPubidKeys *keys_parsed = NULL;
static ShardidKeysStatus keys_status = SHARDID_KEYS_OK;
static int	keys_bad_entry = 0;

emit_log_hook_type shardid_prev_emit_log_hook = NULL;

/* A new value: parse it at the next use. */
void
shardid_public_id_keys_assign(const char *newval, void *extra)
{
	keys_stale = true;
}

/*
 * Keys in a text, as the log hook looks for them: what it hides is a key's
 * 32 hex digits, and nothing else, so that no role can make it hide more
 * of its own statements than a key (issue 31: a comment "1:00000000" once
 * made every run of 8 hex digits vanish from a role's log lines, and its
 * errors' STATEMENT line).  A key is
 *
 * - one of the configured keys (in any case), wherever it stands, even
 *   inside a longer run of hex digits; or
 * - a run of exactly KEY_HEXLEN hex digits after "VERSION:" (blanks
 *   allowed), the form of an entry of the list: a retired key, or one
 *   about to be configured.
 *
 * Apart from these, the hook hides the statement of a superuser that names
 * the setting (hide_statement_text), and every run of HIDDEN_RUN hex
 * digits or more in a configuration file's syntax error (a message of the
 * server's about a file only a superuser writes, where a mistyped key may
 * have any length).  Finding keys takes one pass and no allocation: the
 * hook runs for every message logged.
 */
#define KEY_HEXLEN			SHARDID_SPECK_KEY_HEXLEN
/* in a configuration file's syntax error, runs this long are hidden */
#define HIDDEN_RUN			8
#define HIDDEN_KEY			"<32 hex digits hidden>"

static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * Are the KEY_HEXLEN hex digits at start a configured key (in any case)?
 * Each run of KEY_HEXLEN hex digits or more in the setting's text is
 * compared by its first KEY_HEXLEN.
 */
static bool
configured_key(const char *start)
{
	const char *v = shardid_public_id_keys;
	const char *run;

	if (v == NULL)
		return false;
	while (*v != '\0')
	{
		if (!is_hex(*v))
		{
			v++;
			continue;
		}
		run = v;
		while (is_hex(*v))
			v++;
		if (v - run >= KEY_HEXLEN && pg_strncasecmp(run, start, KEY_HEXLEN) == 0)
			return true;
	}
	return false;
}

/* Does the run of hex digits at start follow "VERSION:" (blanks allowed)? */
static bool
after_version(const char *text, const char *start)
{
	const char *q = start;

	while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
		q--;
	if (q == text || q[-1] != ':')
		return false;
	q--;
	while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
		q--;
	return q > text && q[-1] >= '0' && q[-1] <= '9';
}

/*
 * The first key (KEY_HEXLEN hex digits) in text at or after p, or NULL.
 * p is at the start of text or just after a key found before.
 */
static const char *
next_key(const char *text, const char *p)
{
	while (*p != '\0')
	{
		const char *start;
		const char *w;

		if (!is_hex(*p))
		{
			p++;
			continue;
		}
		start = p;
		while (is_hex(*p))
			p++;
		if (p - start == KEY_HEXLEN && after_version(text, start))
			return start;
		for (w = start; p - w >= KEY_HEXLEN; w++)
			if (configured_key(w))
				return w;
	}
	return NULL;
}

/* Does text name the setting ("public_id_keys", in any case)? */
static bool
names_setting(const char *text)
{
	const char *p;

	if (text == NULL)
		return false;
	for (p = text; *p != '\0'; p++)
		if ((*p == 'p' || *p == 'P') &&
			pg_strncasecmp(p, PUBLIC_ID_KEYS_TAIL, strlen(PUBLIC_ID_KEYS_TAIL)) == 0)
			return true;
	return false;
}

/* text with each key replaced by HIDDEN_KEY; text itself if it has none. */
static char *
hide_keys(char *text)
{
	StringInfoData buf;
	const char *copied;
	const char *key;

	if (text == NULL || (key = next_key(text, text)) == NULL)
		return text;
	initStringInfo(&buf);
	copied = text;
	do
	{
		appendBinaryStringInfo(&buf, copied, key - copied);
		appendStringInfoString(&buf, HIDDEN_KEY);
		copied = key + KEY_HEXLEN;
	} while ((key = next_key(text, copied)) != NULL);
	appendStringInfoString(&buf, copied);
	return buf.data;
}

/*
 * text with every run of HIDDEN_RUN hex digits or more replaced by
 * "<N hex digits hidden>"; text itself if it has none.  Only for a
 * configuration file's syntax error.
 */
static char *
hide_hex_runs(char *text)
{
	StringInfoData buf;
	const char *p;
	const char *copied;

	if (text == NULL)
		return NULL;
	initStringInfo(&buf);
	copied = text;
	for (p = text; *p != '\0';)
	{
		const char *start = p;

		while (is_hex(*p))
			p++;
		if (p - start >= HIDDEN_RUN)
		{
			appendBinaryStringInfo(&buf, copied, start - copied);
			appendStringInfo(&buf, "<%d hex digits hidden>", (int) (p - start));
			copied = p;
		}
		if (p == start)
			p++;
	}
	if (copied == text)
	{
		pfree(buf.data);
		return text;
	}
	appendStringInfoString(&buf, copied);
	return buf.data;
}

/* Is the role running this session's statements a superuser? */
static bool
is_superuser_session(void)
{
	const char *v = GetConfigOption("is_superuser", true, false);

	return v != NULL && strcmp(v, "on") == 0;
}

/* A superuser's statement that names the setting: leave its text out. */
static void
hide_statement_text(ErrorData *edata)
{
	edata->hide_stmt = true;
	if (edata->message_id != NULL && edata->message != NULL &&
		names_setting(edata->message) &&
		(strncmp(edata->message_id, "statement: ", 11) == 0 ||
		 strncmp(edata->message_id, "duration: ", 10) == 0 ||
		 strcmp(edata->message_id, "%s %s%s%s: %s") == 0))
	{
		const char *gap = strstr(edata->message, " ms  ");

		edata->message =
			strncmp(edata->message_id, "duration: ", 10) == 0 && gap != NULL ?
			psprintf("%.*s ms  statement: " HIDDEN_STATEMENT,
					 (int) (gap - edata->message), edata->message) :
			pstrdup("statement: " HIDDEN_STATEMENT);
		edata->detail = NULL;
	}
}

/*
 * Keep the keys out of the server log (and its csvlog and jsonlog forms,
 * written from the same ErrorData).  Formats are matched untranslated
 * (message_id), so in every language.
 *
 * - The postmaster's report of a reloaded setting, "parameter \"%s\"
 *   changed to \"%s\"": keep the name, drop the value.
 * - A superuser's statement that names the setting (an ALTER SYSTEM or
 *   SET refused, say): no STATEMENT line, and log_statement's and
 *   log_min_duration_statement's lines leave the text out, keeping the
 *   duration; their DETAIL (bind parameters) too.  A plain role's
 *   statement that names the setting is logged as any other, so naming it
 *   in a comment hides nothing from an auditor.
 * - A configuration file's syntax error, which quotes the token it
 *   stopped at ("near token \"'2:...'\"", a key list that lacks a comma):
 *   every run of HIDDEN_RUN hex digits or more is hidden.
 * - Keys (next_key) anywhere else: in the message, its detail, hint,
 *   context or internal query, each key's 32 digits are replaced by
 *   HIDDEN_KEY and the rest is kept.  The STATEMENT line, which elog.c
 *   prints from the statement itself, cannot be rewritten: when the
 *   statement holds a key, the line is left out and the statement, its
 *   keys hidden, is logged in its place as the QUERY line (unless the
 *   error has one of its own), so that a role's errors stay in the log.
 *
 * The configuration files are read before shared_preload_libraries are
 * loaded when the server starts: a syntax error then is logged before
 * this hook exists (docs/public-ids.md).  is_superuser is read as a
 * setting, which needs no catalog access while an error is reported.
 */
void
shardid_public_id_emit_log(ErrorData *edata)
{
	if (edata->message_id != NULL && edata->message != NULL &&
		strcmp(edata->message_id, "parameter \"%s\" changed to \"%s\"") == 0 &&
		strstr(edata->message, PUBLIC_ID_KEYS_NAME) != NULL)
		edata->message = pstrdup("parameter \"" PUBLIC_ID_KEYS_NAME "\" changed");
	else if (edata->message_id != NULL &&
			 strncmp(edata->message_id, "syntax error in file ", 21) == 0)
		edata->message = hide_hex_runs(edata->message);

	if (debug_query_string != NULL)
	{
		if (names_setting(debug_query_string) && is_superuser_session())
			hide_statement_text(edata);
		if (!edata->hide_stmt && next_key(debug_query_string, debug_query_string) != NULL)
		{
			edata->hide_stmt = true;
			if (edata->internalquery == NULL)
			{
				edata->internalquery = hide_keys(pstrdup(debug_query_string));
				edata->internalpos = 0;
			}
		}
	}

	edata->message = hide_keys(edata->message);
	edata->detail = hide_keys(edata->detail);
	edata->detail_log = hide_keys(edata->detail_log);
	edata->hint = hide_keys(edata->hint);
	edata->context = hide_keys(edata->context);
	edata->internalquery = hide_keys(edata->internalquery);

	if (shardid_prev_emit_log_hook)
		shardid_prev_emit_log_hook(edata);
}

/*
 * The configured keys, parsed once per value of the setting.  A bad list
 * is refused here, with SQLSTATE 55000, naming the entry but never its
 * text.
 */
static const ShardidPubidKeys *
configured_keys(void)
{
	if (keys_parsed == NULL)
	{
		keys_parsed = MemoryContextAlloc(TopMemoryContext, sizeof(ShardidPubidKeys));
		keys_stale = true;
	}
	if (keys_stale)
	{
		const char *text = shardid_public_id_keys ? shardid_public_id_keys : "";

		/* a reload assigns every setting again: parse only a new text */
		if (keys_parsed_text == NULL || strcmp(keys_parsed_text, text) != 0)
		{
			if (keys_parsed_text != NULL)
			{
				explicit_bzero(keys_parsed_text, strlen(keys_parsed_text));
				pfree(keys_parsed_text);
				keys_parsed_text = NULL;
			}
			keys_status = shardid_pubid_keys_parse(text, keys_parsed, &keys_bad_entry);
			keys_parsed_text = MemoryContextStrdup(TopMemoryContext, text);
		}
		keys_stale = false;
	}

	if (keys_status != SHARDID_KEYS_OK)
	{
		const char *what;

		switch (keys_status)
		{
			case SHARDID_KEYS_NO_COLON:
				what = "is not of the form VERSION:HEX32";
				break;
			case SHARDID_KEYS_BAD_VERSION:
				what = "has a version that is not an integer from 0 to 63";
				break;
			case SHARDID_KEYS_BAD_KEY:
				what = "has a key that is not 32 hexadecimal digits";
				break;
			case SHARDID_KEYS_DUPLICATE:
				what = "repeats a version of an earlier entry";
				break;
			default:
				what = "is invalid";
				break;
		}
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("setting \"%s\" is invalid", PUBLIC_ID_KEYS_NAME),
				 errdetail("Entry %d %s.", keys_bad_entry, what),
				 errhint("Correct the list in the server's configuration file and reload it.")));
	}
	return keys_parsed;
}

/* The configured keys, refusing with SQLSTATE 55000 when there are none. */
static const ShardidPubidKeys *
required_keys(void)
{
	const ShardidPubidKeys *keys = configured_keys();

	if (keys->nkeys == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no public ID keys are configured"),
				 errhint("Set \"%s\" in the server's configuration file and reload it.",
						 PUBLIC_ID_KEYS_NAME)));
	return keys;
}

/* An ID or permuted ID argument, refusing negative values (22023). */
static int64
nonnegative_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	int64		v = PG_GETARG_INT64(argno);

	if (v < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %lld is negative", what, (long long) v),
				 errdetail("Public IDs stand for IDs from 0 to 9223372036854775807.")));
	return v;
}

/* The key of the version argument at argno, which must be configured. */
static const ShardidSpeckKey *
version_key(FunctionCallInfo fcinfo, const ShardidPubidKeys *keys, int argno,
			int *version)
{
	int32		v = PG_GETARG_INT32(argno);

	if (v < 0 || v > SHARDID_PUBID_MAX_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key version %d is out of range", v),
				 errdetail("Key versions are 0 to %d.", SHARDID_PUBID_MAX_VERSION)));
	if (!(keys->present & (UINT64CONST(1) << v)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key version %d is not configured", v),
				 errhint("The versions in \"%s\" are listed by shardid_public_keys().",
						 PUBLIC_ID_KEYS_NAME)));
	*version = v;
	return &keys->ks[v];
}

/*
 * shardid_public(id bigint [, key_version integer]) -> text: the public ID
 * under the newest key, or under the given version.
 */
Datum
shardid_public(PG_FUNCTION_ARGS)
{
	int64		id = nonnegative_arg(fcinfo, 0, "ID");
	const ShardidPubidKeys *keys = required_keys();
	const ShardidSpeckKey *ks;
	int			version = keys->newest;
	char		buf[SHARDID_PUBID_LEN + 1];

	if (PG_NARGS() > 1)
		ks = version_key(fcinfo, keys, 1, &version);
	else
		ks = &keys->ks[version];
	shardid_pubid_encode(ks, version, id, buf);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(buf, SHARDID_PUBID_LEN));
}

/*
 * shardid_private(public_id text) -> bigint: the ID of a public ID, under
 * the version it names.  Anything but the canonical string of a configured
 * version is invalid input (22P02); the message shows the input, which is
 * public, and nothing of the key.
 */
Datum
shardid_private(PG_FUNCTION_ARGS)
{
	text	   *arg = PG_GETARG_TEXT_PP(0);
	const char *s = VARDATA_ANY(arg);
	size_t		len = VARSIZE_ANY_EXHDR(arg);
	const ShardidPubidKeys *keys = required_keys();
	int64_t		id = 0;
	int			version = -1;
	size_t		bad_pos = 0;

	switch (shardid_pubid_decode(keys, s, len, &id, &version, &bad_pos))
	{
		case SHARDID_PUBID_OK:
			PG_RETURN_INT64(id);
		case SHARDID_PUBID_BAD_LENGTH:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid public ID \"%s\"", text_to_cstring(arg)),
					 errdetail("A public ID has %d characters, not %zu.",
							   SHARDID_PUBID_LEN, len)));
			break;
		case SHARDID_PUBID_BAD_CHAR:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid public ID \"%s\"", text_to_cstring(arg)),
					 errdetail("Byte %zu is not one of A-Z, a-z, 0-9, \"-\" and \"_\".",
							   bad_pos + 1)));
			break;
		case SHARDID_PUBID_NOT_CONFIGURED:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid public ID \"%s\"", text_to_cstring(arg)),
					 errdetail("Its key version %d is not configured.", version)));
			break;
		case SHARDID_PUBID_OUT_OF_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid public ID \"%s\"", text_to_cstring(arg)),
					 errdetail("Its second character must be one of A to H.")));
			break;
		case SHARDID_PUBID_NOT_CANONICAL:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid public ID \"%s\"", text_to_cstring(arg)),
					 errdetail("It is not the public ID of any ID.")));
			break;
	}
	elog(ERROR, "unexpected public ID status");
	PG_RETURN_NULL();			/* keep the compiler quiet */
}

/*
 * shardid_public_bigint(id bigint, key_version integer) -> bigint: P, the
 * bare permutation of [0, 2^63) under that version's key.
 */
Datum
shardid_public_bigint(PG_FUNCTION_ARGS)
{
	int64		id = nonnegative_arg(fcinfo, 0, "ID");
	int			version;
	const ShardidSpeckKey *ks = version_key(fcinfo, required_keys(), 1, &version);

	PG_RETURN_INT64(shardid_pubid_permute(ks, id));
}

/*
 * shardid_private_bigint(public_id bigint, key_version integer) -> bigint:
 * Q, the inverse of P.
 */
Datum
shardid_private_bigint(PG_FUNCTION_ARGS)
{
	int64		c = nonnegative_arg(fcinfo, 0, "public ID");
	int			version;
	const ShardidSpeckKey *ks = version_key(fcinfo, required_keys(), 1, &version);

	PG_RETURN_INT64(shardid_pubid_unpermute(ks, c));
}

/*
 * shardid_public_keys() -> (key_version, fingerprint, newest): the
 * configured versions, each with the encryption of "shardid0" under its
 * key, to compare servers without showing keys.  No rows when no keys are
 * configured; an invalid list is refused as everywhere.
 */
Datum
shardid_public_keys(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const ShardidPubidKeys *keys = configured_keys();
	int			v;

	InitMaterializedSRF(fcinfo, 0);
	for (v = 0; v <= SHARDID_PUBID_MAX_VERSION; v++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};
		char		hex[17];

		if (!(keys->present & (UINT64CONST(1) << v)))
			continue;
		snprintf(hex, sizeof(hex), "%016llx",
				 (unsigned long long) shardid_speck_encrypt(&keys->ks[v],
															SHARDID_SPECK_FINGERPRINT_BLOCK));
		values[0] = Int32GetDatum(v);
		values[1] = CStringGetTextDatum(hex);
		values[2] = BoolGetDatum(v == keys->newest);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
