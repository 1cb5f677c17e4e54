package pgstore

import (
	"hash/crc32"
)

// Rows carry a CRC-32C of their bytes (schema version 7, see
// migrations/0007_crc.sql), computed as they are written and checked as
// they are read: a byte flipped in a row, by a disk, a bad restore or a
// hand, is reported as damage to that row even where the CBOR still
// decodes. A row written by a cairn before version 7 has none (NULL) and
// is not checked. The checksum is kept as a bigint, the uint32 as it is.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sum is the CRC-32C of data.
func sum(data []byte) int64 { return int64(crc32.Checksum(data, castagnoli)) }

// recordSum is the CRC-32C of a journal row: its type, big-endian, then
// its payload.
func recordSum(typ int16, payload []byte) int64 {
	c := crc32.Update(0, castagnoli, []byte{byte(uint16(typ) >> 8), byte(typ)})
	return int64(crc32.Update(c, castagnoli, payload))
}

// sumMismatch reports whether a row's stored checksum, if it has one,
// differs from got.
func sumMismatch(stored *int64, got int64) bool { return stored != nil && *stored != got }

// badSum is the reason a row whose checksum does not match is refused.
const badSum = "its bytes do not match the checksum written with them"
