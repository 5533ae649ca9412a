#pragma once

// What a long-lived thread says about itself to the operating system: a name (shown by
// `top -H`, `ps -L`, perf and gdb) and, for background work, a lower scheduling priority, so
// that bulk work (wallet-table rebuilds, exposure writes, indexer catch-up, rollups) yields the
// CPU to the event loops when both want it (issue 18 item 9), and costs nothing when a core is
// idle.

#include <string_view>

namespace adserver {

// Names the calling thread; at most 15 bytes are kept. Best effort.
void NameThisThread(std::string_view name);

// Nice value of background threads (0 = normal, 19 = lowest): about a tenth of a normal
// thread's share of a busy core.
inline constexpr int kBackgroundNice = 10;

// Lowers the calling thread's priority to `nice` (Linux schedules threads one by one; raising
// it back needs privileges). Best effort: false when refused.
bool LowerThisThreadPriority(int nice = kBackgroundNice);

// Moves the calling thread to SCHED_IDLE: it runs only on CPU time no other thread wants, and
// a waking normal thread (an event loop) takes the core from it at once. For work outside the
// server process with nothing waiting on it (a bulk import next to a live server); threads
// started afterwards inherit it. Best effort: false when refused.
bool MakeThisThreadIdle();

}  // namespace adserver
