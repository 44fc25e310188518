CREATE FUNCTION shardid_from_shortcode(code pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_from_shortcode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_from_shortcode(pg_catalog.text) IS
'ID from Instagram''s URL form';
