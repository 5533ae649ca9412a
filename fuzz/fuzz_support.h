#pragma once

// Shared by the fuzz targets: fixed key rings (so that a crash reproduces and the checked-in
// seed tokens open) and a check that aborts, which libFuzzer reports as a crash.

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "identity/key_ring.h"

namespace adserver::fuzz {

// Unix time the seed tokens were sealed at (2026-11-25); tokens open relative to it.
inline constexpr int64_t kNow = 1'764'028'800;

// Two keys: 1 is active, 2 an older key still accepted (the rotation path).
inline const identity::KeyRing& FixedKeys() {
  static const identity::KeyRing keys =
      std::move(identity::KeyRing::Parse(
                    "1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f,"
                    "2:202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"))
          .value();
  return keys;
}

// Aborts with `what` when `ok` is false: a broken round trip is a finding like a crash.
inline void Expect(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace adserver::fuzz
