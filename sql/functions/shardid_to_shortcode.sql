--
-- Shortcodes
--

CREATE FUNCTION shardid_to_shortcode(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_to_shortcode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_to_shortcode(pg_catalog.int8) IS
'ID in Instagram''s URL form: base 64, alphabet A-Z a-z 0-9 - _';
