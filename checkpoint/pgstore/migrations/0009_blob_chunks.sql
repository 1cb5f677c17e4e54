-- Version 9: a blob larger than one chunk (blobChunk, 4 MiB) is kept in
-- rows of cairn_blob_chunks, numbered from 0, rather than in one value,
-- which PostgreSQL caps below 1 GB. Its row in cairn_blobs then holds no
-- data, its size, and how many chunks it has; chunks is 0 for a blob held
-- in data, as every blob before this version is, which reads as it did.
-- The chunks go with their blob's row.
ALTER TABLE cairn_blobs ADD COLUMN size bigint;
ALTER TABLE cairn_blobs ADD COLUMN chunks integer NOT NULL DEFAULT 0;
CREATE TABLE cairn_blob_chunks (
    digest text NOT NULL REFERENCES cairn_blobs ON DELETE CASCADE,
    idx    integer NOT NULL,
    data   bytea NOT NULL,
    PRIMARY KEY (digest, idx)
);
