-- An agent's past boundaries (checkpoint.Timeline): one row per committed
-- round, the state then without its conversation and what the round
-- changed in the workspace (CBOR, as the file store frames it).
CREATE TABLE cairn_past (
    agent text NOT NULL,
    round bigint NOT NULL,
    data  bytea NOT NULL,
    PRIMARY KEY (agent, round)
);
