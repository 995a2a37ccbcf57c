// CRC-32C (Castagnoli, as iSCSI and TFRecord use it) and TFRecord's masked form. A table-driven byte-wise
// implementation: the event files it checks are small, and Debian bookworm's Abseil predates absl/crc.
#ifndef NMSPARSE_REPORT_CRC32C_H_
#define NMSPARSE_REPORT_CRC32C_H_

#include <cstdint>
#include <string_view>

namespace nmsparse::report {

uint32_t Crc32c(std::string_view data);

// TFRecord stores ((crc >> 15) | (crc << 17)) + 0xa282ead8, so that a CRC of CRCs is not trivially a CRC.
uint32_t MaskedCrc32c(std::string_view data);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_CRC32C_H_
