#include "store/lmdb/detail/block_journal.h"

#include <cstring>

namespace adserver::store::detail {
namespace {

void PutVarint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

bool GetVarint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

bool GetVarint32(const uint8_t*& p, const uint8_t* end, uint32_t& v) {
  uint64_t wide = 0;
  if (!GetVarint(p, end, wide) || wide > UINT32_MAX) return false;
  v = static_cast<uint32_t>(wide);
  return true;
}

void PutString(const std::string& s, std::string& out) {
  PutVarint(s.size(), out);
  out += s;
}

bool GetString(const uint8_t*& p, const uint8_t* end, std::string& s) {
  uint64_t size = 0;
  if (!GetVarint(p, end, size) || size > static_cast<uint64_t>(end - p)) return false;
  s.assign(reinterpret_cast<const char*>(p), size);
  p += size;
  return true;
}

void PutBigEndian(uint64_t v, uint8_t* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(v & 0xFF);
    v >>= 8;
  }
}

uint64_t GetBigEndian(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | in[i];
  return v;
}

bool GetEntry(const uint8_t*& p, const uint8_t* end, JournalEntry& e) {
  if (end - p < 20) return false;
  std::memcpy(e.wallet.bytes.data(), p, 20);
  p += 20;
  if (!GetVarint32(p, end, e.project_id) || p == end) return false;
  uint8_t present = *p++;
  if (present > 1) return false;
  e.previous_day.reset();
  e.previous_count = 0;
  if (present == 0) return true;
  uint32_t day = 0;
  if (!GetVarint32(p, end, day) || !GetVarint32(p, end, e.previous_count)) return false;
  e.previous_day = day;
  return true;
}

}  // namespace

JournalKey MakeJournalKey(uint64_t chain_id, uint64_t block) {
  JournalKey key;
  PutBigEndian(chain_id, key.data());
  PutBigEndian(block, key.data() + 8);
  return key;
}

bool ParseJournalKey(std::span<const uint8_t> key, uint64_t& chain_id, uint64_t& block) {
  if (key.size() != 16) return false;
  chain_id = GetBigEndian(key.data());
  block = GetBigEndian(key.data() + 8);
  return true;
}

CheckpointKey MakeCheckpointKey(uint64_t chain_id) {
  CheckpointKey key;
  PutBigEndian(chain_id, key.data());
  return key;
}

void EncodeJournalRecord(const JournalRecord& record, std::string& out) {
  PutString(record.hash, out);
  PutString(record.parent_hash, out);
  PutVarint(record.entries.size(), out);
  for (const JournalEntry& e : record.entries) {
    out.append(reinterpret_cast<const char*>(e.wallet.bytes.data()), e.wallet.bytes.size());
    PutVarint(e.project_id, out);
    out.push_back(e.previous_day ? 1 : 0);
    if (!e.previous_day) continue;
    PutVarint(*e.previous_day, out);
    PutVarint(e.previous_count, out);
  }
}

bool DecodeJournalRecord(std::span<const uint8_t> data, JournalRecord& out) {
  const uint8_t* p = data.data();
  const uint8_t* end = p + data.size();
  uint64_t count = 0;
  if (!GetString(p, end, out.hash) || !GetString(p, end, out.parent_hash) ||
      !GetVarint(p, end, count)) {
    return false;
  }
  // Each entry takes at least 22 bytes: a corrupt count cannot make us allocate much.
  if (count > static_cast<uint64_t>(end - p) / 22) return false;
  out.entries.resize(count);
  for (JournalEntry& e : out.entries) {
    if (!GetEntry(p, end, e)) return false;
  }
  return p == end;
}

bool DecodeJournalHashes(std::span<const uint8_t> data, JournalRecord& out) {
  const uint8_t* p = data.data();
  const uint8_t* end = p + data.size();
  out.entries.clear();
  return GetString(p, end, out.hash) && GetString(p, end, out.parent_hash);
}

std::array<uint8_t, 8> EncodeBlockNumber(uint64_t block) {
  std::array<uint8_t, 8> out;
  PutBigEndian(block, out.data());
  return out;
}

bool DecodeBlockNumber(std::span<const uint8_t> data, uint64_t& block) {
  if (data.size() != 8) return false;
  block = GetBigEndian(data.data());
  return true;
}

}  // namespace adserver::store::detail
