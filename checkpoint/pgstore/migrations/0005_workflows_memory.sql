-- Workflow journals: one row per workflow, its record (CBOR) replaced as a
-- whole each time a step completes.
CREATE TABLE cairn_workflows (
	id      text PRIMARY KEY,
	data    bytea NOT NULL,
	updated timestamptz NOT NULL DEFAULT now()
);

-- Memory: short facts that agents naming the same namespace share, one row
-- per key (CBOR), replaced when the key is written again.
CREATE TABLE cairn_memory (
	namespace text NOT NULL,
	key       text NOT NULL,
	data      bytea NOT NULL,
	PRIMARY KEY (namespace, key)
);
