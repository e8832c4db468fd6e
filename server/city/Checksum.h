#pragma once
// The city file checksum: FNV-1a over 64-bit little-endian words (tail bytes zero-padded).
// Fast enough to verify a few MB on every load (about a millisecond per MB).

#include <cstddef>
#include <cstdint>

namespace taxicore::city {

// Checksum of data[0, size) reading the 8 bytes at skipOffset as zero (the stored checksum).
uint64_t cityChecksum(const unsigned char *data, size_t size, size_t skipOffset);

} // namespace taxicore::city
