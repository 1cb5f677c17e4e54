-- Version 12: a chunked blob's chunks are each written in a transaction
-- of their own, so that a write cut off (a restart of the database) goes
-- on from the chunks it stored, checked, rather than from its first. Its
-- row is made first with whole = false, which a read takes as no blob,
-- and made whole by the transaction that finds every chunk there. An
-- unfinished row goes, chunks and all, with gc once older than the grace,
-- as any blob no agent names. Every row before this version is whole.
ALTER TABLE cairn_blobs ADD COLUMN whole boolean NOT NULL DEFAULT true;
