-- Version 10: a CRC-32C of each bookmark's and each memory fact's bytes,
-- as version 7 gave the agents' rows theirs, so that a byte flipped where
-- the CBOR still decodes is found rather than forked from or recalled.
-- NULL, in a row written before this version, is not checked.
ALTER TABLE cairn_bookmarks ADD COLUMN crc bigint;
ALTER TABLE cairn_memory ADD COLUMN crc bigint;
