#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace adserver::identity {

// One sealing key: a one-byte id (written in front of every sealed value) and 32 key bytes.
struct SealingKey {
  uint8_t id = 0;
  std::array<uint8_t, 32> bytes{};
};

// The keys identity cookies (and click tokens) are sealed with: one active key (seals new values)
// plus older keys that still open values sealed before a rotation. Immutable after construction;
// thread-safe.
class KeyRing {
 public:
  // Parses `<id>:<64 hex chars>` entries (id 1..255) separated by commas, spaces or new lines;
  // the first is active. InvalidArgument (naming `field`, the setting the text came from; no
  // key material in the message) for a malformed entry, a duplicate id or an empty text. Also
  // the format of the click-token keys (events.keys).
  static Result<KeyRing> Parse(std::string_view text, std::string_view field = "identity.keys");
  // A ring with one fresh random key (id 1), for a process without configured keys.
  static KeyRing Random();

  const SealingKey& active() const { return keys_.front(); }
  // The key with this id, or null.
  const SealingKey* Find(uint8_t id) const;
  size_t size() const { return keys_.size(); }

 private:
  explicit KeyRing(std::vector<SealingKey> keys) : keys_(std::move(keys)) {}
  std::vector<SealingKey> keys_;  // non-empty; [0] is active
};

}  // namespace adserver::identity
