#pragma once

// Locks that say what they guard (issue 41 item 5). A member a mutex guards is declared
// ADS_GUARDED_BY(mu_), a function that expects the caller to hold it ADS_REQUIRES(mu_), and
// clang's thread-safety analysis (-Wthread-safety, on in the clang build CI runs, warnings as
// errors) checks every access at compile time. Other compilers see the plain types: the macros
// expand to nothing and Mutex is a std::mutex.
//
// libstdc++'s std::mutex carries no capability attributes, hence the thin wrappers:
//
//   mutable Mutex mu_;
//   std::vector<Entry> pending_ ADS_GUARDED_BY(mu_);
//
//   void Add(Entry e) {
//     MutexLock lock(mu_);
//     pending_.push_back(std::move(e));
//     wake_.NotifyOne();
//   }
//   void Run() {
//     MutexLock lock(mu_);
//     wake_.Wait(mu_, [this]() ADS_REQUIRES(mu_) { return !pending_.empty() || stopping_; });
//   }
//
// A lambda that reads guarded members under a lock its caller holds says so (as above): the
// analysis looks at each function alone.

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define ADS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ADS_THREAD_ANNOTATION(x)
#endif

#define ADS_CAPABILITY(x) ADS_THREAD_ANNOTATION(capability(x))
#define ADS_SCOPED_CAPABILITY ADS_THREAD_ANNOTATION(scoped_lockable)
#define ADS_GUARDED_BY(x) ADS_THREAD_ANNOTATION(guarded_by(x))
#define ADS_PT_GUARDED_BY(x) ADS_THREAD_ANNOTATION(pt_guarded_by(x))
#define ADS_ACQUIRED_AFTER(...) ADS_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ADS_REQUIRES(...) ADS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ADS_ACQUIRE(...) ADS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ADS_RELEASE(...) ADS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ADS_TRY_ACQUIRE(...) ADS_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ADS_EXCLUDES(...) ADS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ADS_ASSERT_CAPABILITY(x) ADS_THREAD_ANNOTATION(assert_capability(x))
#define ADS_RETURN_CAPABILITY(x) ADS_THREAD_ANNOTATION(lock_returned(x))
#define ADS_NO_THREAD_SAFETY_ANALYSIS ADS_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace adserver {

class CondVar;

// A std::mutex the analysis knows. Also BasicLockable (lock/unlock), so std::scoped_lock
// works where two are taken at once (the analysis then trusts the caller).
class ADS_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ADS_ACQUIRE() { mu_.lock(); }
  void unlock() ADS_RELEASE() { mu_.unlock(); }
  bool try_lock() ADS_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds this mutex where it cannot see it (a callback that
  // runs under a lock taken by its caller's caller). Checks nothing at run time.
  void AssertHeld() const ADS_ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope. Unlock() and Lock() let a loop drop it around slow work.
class ADS_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ADS_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() ADS_RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() ADS_RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void Lock() ADS_ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// A std::condition_variable waited on with a held Mutex (the caller's MutexLock stays the
// owner; the wait releases and retakes the mutex as std::condition_variable does).
class CondVar {
 public:
  void NotifyOne() noexcept { cv_.notify_one(); }
  void NotifyAll() noexcept { cv_.notify_all(); }

  void Wait(Mutex& mu) ADS_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  template <typename Predicate>
  void Wait(Mutex& mu, Predicate done) ADS_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock, std::move(done));
    lock.release();
  }
  // False when the time ran out (without a predicate: a notification or a spurious wake-up
  // returns true).
  template <typename Rep, typename Period>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout) ADS_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool woken = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  // The predicate's value when the wait ends (false = timed out with it still false).
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout, Predicate done)
      ADS_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool result = cv_.wait_for(lock, timeout, std::move(done));
    lock.release();
    return result;
  }
  template <typename Clock, typename Duration, typename Predicate>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline, Predicate done)
      ADS_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool result = cv_.wait_until(lock, deadline, std::move(done));
    lock.release();
    return result;
  }

 private:
  std::condition_variable cv_;
};

}  // namespace adserver
