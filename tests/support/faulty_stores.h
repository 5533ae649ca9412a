#pragma once

// Fault injection for store adapters (issue 17): decorators that wrap any adapter of a store
// interface and fail chosen calls, so that the callers' failure paths run against the same real
// adapters the contract suite checks (tests/unit/store/store_contract_test.cc). A failed call
// does not reach the wrapped adapter.

#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "common/status.h"
#include "decision/shared_caps.h"
#include "store/campaign_counter_store.h"
#include "store/exposure_store.h"
#include "store/identity_store.h"

namespace adserver::testing {

// Which calls fail. Thread-safe.
class FaultPlan {
 public:
  // The next `n` calls fail with `status`.
  void FailNext(int n, Status status = UnavailableError("injected fault")) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_next_ = n;
    status_ = std::move(status);
  }
  // Every call fails until Heal().
  void FailAll(Status status = UnavailableError("injected fault")) {
    FailNext(1 << 30, std::move(status));
  }
  void Heal() { FailNext(0); }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  int failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }
  // Counts a call; the status it fails with, if it does.
  std::optional<Status> Next() {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_;
    if (fail_next_ <= 0) return std::nullopt;
    --fail_next_;
    ++failed_;
    return status_;
  }

 private:
  mutable std::mutex mu_;
  int fail_next_ = 0;
  Status status_ = OkStatus();
  int calls_ = 0;
  int failed_ = 0;
};

class FaultyExposureStore final : public store::ExposureStore {
 public:
  FaultyExposureStore(store::ExposureStore& inner, FaultPlan& plan) : inner_(inner), plan_(plan) {}
  Status AddExposures(std::span<const store::ExposureWrite> writes) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.AddExposures(writes);
  }
  Result<std::optional<store::ExposureRecord>> Get(const Address& wallet,
                                                     store::Id campaign_id) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.Get(wallet, campaign_id);
  }
  Result<store::ExpiryStep> ExpireStep(int64_t cutoff, std::string_view after,
                                       size_t max_records) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.ExpireStep(cutoff, after, max_records);
  }
  Result<store::ExposureStats> Stats() override { return inner_.Stats(); }

 private:
  store::ExposureStore& inner_;
  FaultPlan& plan_;
};

class FaultyCampaignCounterStore final : public store::CampaignCounterStore {
 public:
  FaultyCampaignCounterStore(store::CampaignCounterStore& inner, FaultPlan& plan)
      : inner_(inner), plan_(plan) {}
  Status SaveCampaignCounters(const std::vector<store::CampaignCountersRecord>& rows) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.SaveCampaignCounters(rows);
  }
  Result<std::vector<store::CampaignCountersRecord>> LoadCampaignCounters() override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.LoadCampaignCounters();
  }

 private:
  store::CampaignCounterStore& inner_;
  FaultPlan& plan_;
};

class FaultyIdentityStore final : public store::IdentityStore {
 public:
  FaultyIdentityStore(store::IdentityStore& inner, FaultPlan& plan) : inner_(inner), plan_(plan) {}
  Result<store::ErasureDigestKey> DigestKey(const store::ErasureDigestKey& candidate) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.DigestKey(candidate);
  }
  Result<store::ErasureRecord> PutErasure(uint64_t digest, int64_t erased_at) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.PutErasure(digest, erased_at);
  }
  Status ScanErasures(int64_t after_seq,
                      const std::function<void(const store::ErasureRecord&)>& fn) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.ScanErasures(after_seq, fn);
  }
  Result<int64_t> DeleteErasuresBefore(int64_t cutoff) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.DeleteErasuresBefore(cutoff);
  }

 private:
  store::IdentityStore& inner_;
  FaultPlan& plan_;
};

class FaultyCapCounters final : public decision::CapCounterStore {
 public:
  FaultyCapCounters(decision::CapCounterStore& inner, FaultPlan& plan)
      : inner_(inner), plan_(plan) {}
  Result<std::vector<uint32_t>> AddAndRead(
      std::span<const decision::CapIncrement> increments) override {
    if (auto fault = plan_.Next()) return *fault;
    return inner_.AddAndRead(increments);
  }

 private:
  decision::CapCounterStore& inner_;
  FaultPlan& plan_;
};

}  // namespace adserver::testing
