--
-- Shortcodes
--

CREATE FUNCTION shardid_to_shortcode(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_to_shortcode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_to_shortcode(pg_catalog.int8) IS
'ID in Instagram''s URL form: base 64, alphabet A-Z a-z 0-9 - _';

CREATE FUNCTION shardid_from_shortcode(code pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_from_shortcode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_from_shortcode(pg_catalog.text) IS
'ID from Instagram''s URL form';
