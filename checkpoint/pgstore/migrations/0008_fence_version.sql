-- Version 8: the fence checks the schema version too. A node that opened
-- the database at an older version and goes on writing after another node
-- migrated it would write rows the newer schema does not expect; every
-- write's first statement is the fence, so the fence refuses it, with
-- SQLSTATE CF002 and the version found in its detail, and the transaction
-- fails whole. cairn_fence(a, e, ttl_ms, v) is the fence of a build that
-- writes schema version v; a later migration need only raise the version.
CREATE FUNCTION cairn_fence(a text, e bigint, ttl_ms bigint, v integer) RETURNS void AS $$
DECLARE
    newest integer;
BEGIN
    SELECT max(version) INTO newest FROM cairn_schema;
    IF newest > v THEN
        RAISE EXCEPTION 'the database''s cairn schema has schema version %, this cairn writes up to %: upgrade cairn (nothing was written)', newest, v
            USING ERRCODE = 'CF002', DETAIL = newest::text;
    END IF;
    UPDATE cairn_leases SET expires = now() + ttl_ms * interval '1 millisecond'
        WHERE agent = a AND epoch = e AND NOT released;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lease of agent % at epoch % is not held', a, e USING ERRCODE = 'CF001';
    END IF;
END
$$ LANGUAGE plpgsql;

-- The fence of the builds before this version, which know neither the
-- check above nor what this version and later ones store: it refuses
-- every write of theirs, saying to upgrade, so that they stop rather than
-- write what a newer schema does not expect.
CREATE OR REPLACE FUNCTION cairn_fence(a text, e bigint, ttl_ms bigint) RETURNS void AS $$
DECLARE
    newest integer;
BEGIN
    SELECT max(version) INTO newest FROM cairn_schema;
    RAISE EXCEPTION 'the database''s cairn schema has schema version %, newer than this cairn''s: upgrade cairn (nothing was written)', newest
        USING ERRCODE = 'CF002', DETAIL = newest::text;
END
$$ LANGUAGE plpgsql;
