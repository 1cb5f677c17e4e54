-- When each blob was last stored, so that garbage collection leaves alone
-- a blob that an agent being created has stored and does not name yet.
ALTER TABLE cairn_blobs ADD COLUMN stored timestamptz NOT NULL DEFAULT now();
