--
-- Shortcodes: Instagram's URL form of an ID (/p/<code>/).
-- Base 64, most significant digit first, alphabet A-Z a-z 0-9 - _ (A = 0),
-- no padding and no leading A.
--
\set ECHO none
\getenv abs_srcdir PG_ABS_SRCDIR
\set err_file :abs_srcdir '/sql/include/err.sql'
\i :err_file
\set ECHO all
\set SHOW_CONTEXT never

SELECT shardid_to_shortcode(4185136929178974185) AS example;
SELECT shardid_from_shortcode('DoUl90AFPfp') AS example;

-- digits and place values
SELECT n, shardid_to_shortcode(n) AS code, shardid_from_shortcode(shardid_to_shortcode(n)) = n AS round_trip
  FROM unnest(ARRAY[0, 1, 25, 26, 51, 52, 61, 62, 63, 64, 65, 4095, 4096,
                    1099511627775, 9223372036854775807]::bigint[]) AS n;

-- The whole alphabet in order: each character's value is its position.
SELECT string_agg(shardid_to_shortcode(d), '' ORDER BY d) AS alphabet
  FROM generate_series(0, 63) AS d;
SELECT bool_and(shardid_from_shortcode(substr('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', d + 1, 1)) = d)
       AS every_digit
  FROM generate_series(0, 63) AS d;

-- the code is the ID's bits read six at a time
SELECT shardid_from_shortcode('BA') = 64 AS ba,
       shardid_from_shortcode('H__________') = 9223372036854775807 AS largest,
       shardid_from_shortcode('__________') = (1::bigint << 60) - 1 AS ten_digits;

-- Round trips over IDs of every width.
SELECT count(*) AS widths_round_tripped
  FROM generate_series(0, 62) AS b,
       LATERAL (SELECT (1::bigint << b) + b AS v) AS x
 WHERE shardid_from_shortcode(shardid_to_shortcode(x.v)) = x.v
   AND length(shardid_to_shortcode(x.v)) = b / 6 + 1;

-- Bad shortcodes.
SELECT err($$SELECT shardid_from_shortcode('DoUl90+FPfp')$$);   -- bad character
SELECT err($$SELECT shardid_from_shortcode('DoUl90AFPf=')$$);   -- padding
SELECT err($$SELECT shardid_from_shortcode('DoUl 90AFPf')$$);   -- space
SELECT err($$SELECT shardid_from_shortcode('DoUl 90AFPfp')$$);  -- 12 characters: too long, whatever they are
SELECT err($$SELECT shardid_from_shortcode('DoUlé')$$);         -- not ASCII
SELECT err($$SELECT shardid_from_shortcode('')$$);              -- empty
SELECT err($$SELECT shardid_from_shortcode('BAAAAAAAAAAA')$$);  -- 12 digits: too long
SELECT err($$SELECT shardid_from_shortcode('DoUl90AFPfé')$$);   -- 11 characters, 12 bytes
-- a long input is refused by its length, and shown cut (at a character)
SELECT err($$SELECT shardid_from_shortcode(repeat('é', 1000000) || '+')$$);
SELECT err($$SELECT shardid_from_shortcode('IAAAAAAAAAA')$$);   -- 2^63: over 63 bits
SELECT err($$SELECT shardid_from_shortcode('___________')$$);   -- 2^66 - 1
SELECT err($$SELECT shardid_from_shortcode('ADoUl90AFPf')$$);   -- leading A
