#include "ingest/chain/chain_types.h"

#include "common/address.h"

namespace adserver::ingest::chain {

std::optional<Hash32> ParseHash32(std::string_view text) {
  if (text.size() != 66 || text[0] != '0' || text[1] != 'x') return std::nullopt;
  Hash32 out;
  for (size_t i = 0; i < 64; ++i) {
    char c = text[2 + i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return std::nullopt;
    out.bytes[i / 2] = static_cast<uint8_t>(out.bytes[i / 2] << 4 | d);
  }
  return out;
}

std::string FormatHash32(const Hash32& hash) {
  return "0x" + HexEncode(hash.bytes.data(), hash.bytes.size());
}

}  // namespace adserver::ingest::chain
