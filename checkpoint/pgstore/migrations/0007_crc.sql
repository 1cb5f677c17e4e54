-- Version 7: a CRC-32C (Castagnoli) of each agent row's bytes, computed by
-- the writer and checked by every read, so that damage which leaves the
-- CBOR valid (a flipped byte inside a string) is found, as the file
-- store's frame CRCs find it. A journal row's covers its type and its
-- payload; a snapshot's, a past's and an event row's, their bytes. NULL,
-- in a row written before this version, is not checked.
ALTER TABLE cairn_agents ADD COLUMN snapshot_crc bigint;
ALTER TABLE cairn_journal ADD COLUMN crc bigint;
ALTER TABLE cairn_past ADD COLUMN crc bigint;
ALTER TABLE cairn_events ADD COLUMN crc bigint;
