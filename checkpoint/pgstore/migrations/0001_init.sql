-- cairn's store, version 1. Records and states are the CBOR the file store
-- writes (see package checkpoint); the tables say only how they are found.

-- An agent: its newest snapshot, and the first journal sequence number
-- that follows it.
CREATE TABLE cairn_agents (
    id       text PRIMARY KEY,
    snapshot bytea NOT NULL,
    base     bigint NOT NULL,
    created  timestamptz NOT NULL DEFAULT now()
);

-- The records after an agent's snapshot, in order.
CREATE TABLE cairn_journal (
    agent   text NOT NULL,
    seq     bigint NOT NULL,
    type    smallint NOT NULL,
    payload bytea NOT NULL,
    PRIMARY KEY (agent, seq)
);

-- Content-addressed blobs shared by every agent: agent files, scripts,
-- tool modules, workspace archives.
CREATE TABLE cairn_blobs (
    digest text PRIMARY KEY,
    data   bytea NOT NULL
);

-- An agent's event history, one row per write, in order.
CREATE TABLE cairn_events (
    agent text NOT NULL,
    seq   bigserial,
    data  bytea NOT NULL,
    PRIMARY KEY (agent, seq)
);

CREATE TABLE cairn_bookmarks (
    agent text NOT NULL,
    label text NOT NULL,
    time  timestamptz NOT NULL,
    data  bytea NOT NULL,
    PRIMARY KEY (agent, label)
);

-- An agent's lease: who holds it, since when, until when unless renewed,
-- and the epoch that rises on every take. A released lease keeps its
-- epoch, so the next take still raises it.
CREATE TABLE cairn_leases (
    agent       text PRIMARY KEY,
    epoch       bigint NOT NULL DEFAULT 0,
    released    boolean NOT NULL DEFAULT true,
    holder_host text NOT NULL DEFAULT '',
    holder_pid  integer NOT NULL DEFAULT 0,
    holder_run  text NOT NULL DEFAULT '',
    since       timestamptz NOT NULL DEFAULT now(),
    expires     timestamptz NOT NULL DEFAULT now()
);

-- cairn_fence is the first statement of every write of an agent's state:
-- it renews the lease at epoch e, or fails the whole transaction with
-- SQLSTATE CF001 when the lease is no longer held at that epoch.
CREATE FUNCTION cairn_fence(a text, e bigint, ttl_ms bigint) RETURNS void AS $$
BEGIN
    UPDATE cairn_leases SET expires = now() + ttl_ms * interval '1 millisecond'
        WHERE agent = a AND epoch = e AND NOT released;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lease of agent % at epoch % is not held', a, e USING ERRCODE = 'CF001';
    END IF;
END
$$ LANGUAGE plpgsql;
