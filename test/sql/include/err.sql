--
-- err(q) runs q and shows the SQLSTATE, message, detail and hint it raised,
-- or "no error".  Each suite that needs it includes this file first.
--
CREATE OR REPLACE FUNCTION err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; det text; hnt text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
  RETURN st || ': ' || msg
         || CASE WHEN det <> '' THEN E'\n  DETAIL: ' || det ELSE '' END
         || CASE WHEN hnt <> '' THEN E'\n  HINT: ' || hnt ELSE '' END;
END $$;
