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
 * uses it, naming the entry but not its text.  The postmaster logs a
 * reloaded setting's new value ("parameter ... changed to ..."); the
 * emit_log_hook below rewrites that one message to leave the value out.
 * ALTER SYSTEM is refused for the setting (GUC_DISALLOW_IN_AUTO_FILE), so
 * no key is written to postgresql.auto.conf, which base backups copy; and
 * a statement that names the setting (ALTER SYSTEM, SET, anything that
 * fails or is logged) is never written to the log: the hook hides the
 * STATEMENT line of its errors and the text of log_statement and
 * log_min_duration_statement lines.
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
#include "miscadmin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/elog.h"
#include "utils/guc.h"
#include "utils/memutils.h"

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
static char *public_id_keys = NULL;

/*
 * This backend's parse of it, of the text keys_parsed_text; checked
 * again when keys_stale.
 */
static bool keys_stale = true;
static char *keys_parsed_text = NULL;
static ShardidPubidKeys *keys_parsed = NULL;
static ShardidKeysStatus keys_status = SHARDID_KEYS_OK;
static int	keys_bad_entry = 0;

static emit_log_hook_type prev_emit_log_hook = NULL;

static void public_id_keys_assign(const char *newval, void *extra);
static void public_id_emit_log(ErrorData *edata);

void
shardid_public_id_define(void)
{
	DefineCustomStringVariable(PUBLIC_ID_KEYS_NAME,
							   "Sets the keys of public IDs, as a list of VERSION:HEX32 entries.",
							   NULL,
							   &public_id_keys,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE |
							   GUC_DISALLOW_IN_AUTO_FILE,
							   NULL, public_id_keys_assign, NULL);

	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = public_id_emit_log;
}

/* A new value: parse it at the next use. */
static void
public_id_keys_assign(const char *newval, void *extra)
{
	keys_stale = true;
}

/* Does text contain PUBLIC_ID_KEYS_TAIL, in any case? */
static bool
names_keys(const char *text)
{
	size_t		n = strlen(PUBLIC_ID_KEYS_TAIL);

	if (text == NULL)
		return false;
	for (; *text != '\0'; text++)
		if (pg_strncasecmp(text, PUBLIC_ID_KEYS_TAIL, n) == 0)
			return true;
	return false;
}

/* Is the role running this session's statements a superuser? */
static bool
is_superuser_session(void)
{
	const char *v = GetConfigOption("is_superuser", true, false);

	return v != NULL && strcmp(v, "on") == 0;
}

/*
 * Keep the keys out of the server log.  Formats are matched untranslated
 * (message_id), so in every language.
 *
 * - The postmaster's report of a reloaded setting, "parameter \"%s\"
 *   changed to \"%s\"": keep the name, drop the value.
 * - A message logged while a superuser's statement that names the setting
 *   runs (an ALTER SYSTEM or SET refused, say): no STATEMENT line.
 * - log_statement's and log_min_duration_statement's lines of such a
 *   statement: the text is left out, the duration kept; their DETAIL
 *   (bind parameters) too.
 * Only superusers' statements are hidden: only they can set the keys,
 * and they could turn statement logging off anyway; a plain role's
 * statement that names the setting is logged as any other, so naming it
 * in a comment hides nothing from an auditor.  is_superuser is read as a
 * setting, which needs no catalog access while an error is reported.
 */
static void
public_id_emit_log(ErrorData *edata)
{
	if (edata->message_id != NULL && edata->message != NULL &&
		strcmp(edata->message_id, "parameter \"%s\" changed to \"%s\"") == 0 &&
		strstr(edata->message, PUBLIC_ID_KEYS_NAME) != NULL)
		edata->message = pstrdup("parameter \"" PUBLIC_ID_KEYS_NAME "\" changed");
	else if (edata->output_to_server && names_keys(debug_query_string) &&
			 is_superuser_session())
	{
		edata->hide_stmt = true;
		if (edata->message_id != NULL && edata->message != NULL &&
			names_keys(edata->message) &&
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

	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
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
		const char *text = public_id_keys ? public_id_keys : "";

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
