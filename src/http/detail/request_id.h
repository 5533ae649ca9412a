#pragma once

// Request ids (X-Request-Id): the id a client or proxy sent, if it can be echoed safely, else
// one made here. Allocation-free; for the event loops' hot path.

#include <cstddef>
#include <string_view>

namespace adserver::http::detail {

inline constexpr size_t kMaxRequestIdBytes = 128;
inline constexpr size_t kMadeRequestIdBytes = 16;

// True for 1..kMaxRequestIdBytes bytes of letters, digits and - _ . : / + = @ (a UUID, a
// trace id, a load balancer's id), which can be echoed in a header and a log line as they are.
bool IsValidRequestId(std::string_view value);

// Writes a new id of kMadeRequestIdBytes lowercase hex digits to `out`: the next value of a
// per-thread sequence with a random start, mixed (SplitMix64), so ids do not repeat within a
// thread and collide across threads and restarts with probability ~2^-64 per pair.
void MakeRequestId(char* out);

}  // namespace adserver::http::detail
