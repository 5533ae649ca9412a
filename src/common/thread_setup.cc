#include "common/thread_setup.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>

namespace adserver {

void NameThisThread(std::string_view name) {
  std::string cut(name.substr(0, 15));
  pthread_setname_np(pthread_self(), cut.c_str());
}

bool LowerThisThreadPriority(int nice) {
  const auto tid = static_cast<id_t>(gettid());
  errno = 0;
  int current = getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return false;
  if (current >= nice) return true;
  return setpriority(PRIO_PROCESS, tid, nice) == 0;
}

bool MakeThisThreadIdle() {
  sched_param param{};
  param.sched_priority = 0;
  return sched_setscheduler(0, SCHED_IDLE, &param) == 0;  // 0: the calling thread
}

}  // namespace adserver
