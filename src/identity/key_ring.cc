#include "identity/key_ring.h"

#include <sodium.h>

#include <string>

#include "common/check.h"
#include "common/crypto.h"

namespace adserver::identity {
namespace {

Status BadKeys(std::string_view field, std::string message) {
  return InvalidArgumentError("invalid key ring " + std::string(field),
                              {FieldError{std::string(field), std::move(message)}});
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsSeparator(char c) { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

Result<KeyRing> KeyRing::Parse(std::string_view text, std::string_view field) {
  std::vector<SealingKey> keys;
  size_t entry = 0;
  while (!text.empty()) {
    while (!text.empty() && IsSeparator(text.front())) text.remove_prefix(1);
    if (text.empty()) break;
    size_t end = 0;
    while (end < text.size() && !IsSeparator(text[end])) ++end;
    std::string_view item = text.substr(0, end);
    text.remove_prefix(end);
    ++entry;
    std::string where = "entry " + std::to_string(entry);
    size_t colon = item.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon > 3) {
      return BadKeys(field, where + " must be <id>:<64 hex characters>");
    }
    int id = 0;
    for (char c : item.substr(0, colon)) {
      if (c < '0' || c > '9') return BadKeys(field, where + ": key id must be a number 1..255");
      id = id * 10 + (c - '0');
    }
    if (id < 1 || id > 255) return BadKeys(field, where + ": key id must be a number 1..255");
    std::string_view hex = item.substr(colon + 1);
    if (hex.size() != 64)
      return BadKeys(field, where + ": key must be 64 hex characters (32 bytes)");
    SealingKey key;
    key.id = static_cast<uint8_t>(id);
    for (size_t i = 0; i < 32; ++i) {
      int hi = HexValue(hex[2 * i]);
      int lo = HexValue(hex[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return BadKeys(field, where + ": key must be 64 hex characters (32 bytes)");
      key.bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    for (const SealingKey& k : keys) {
      if (k.id == key.id) return BadKeys(field, where + ": duplicate key id " + std::to_string(id));
    }
    keys.push_back(key);
  }
  if (keys.empty()) return BadKeys(field, "no key given");
  return KeyRing(std::move(keys));
}

KeyRing KeyRing::Random() {
  ADS_CHECK(InitCrypto()) << "libsodium cannot be initialised";
  SealingKey key;
  key.id = 1;
  randombytes_buf(key.bytes.data(), key.bytes.size());
  return KeyRing({key});
}

const SealingKey* KeyRing::Find(uint8_t id) const {
  for (const SealingKey& k : keys_) {
    if (k.id == id) return &k;
  }
  return nullptr;
}

}  // namespace adserver::identity
