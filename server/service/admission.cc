#include "server/service/admission.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace chunkplan::service {

Admission::Admission(const ServiceOptions& options)
    : max_heavy_(options.max_concurrent_searches),
      max_light_(options.max_concurrent_light_searches),
      max_params_(options.max_params_in_flight),
      max_unsent_bytes_(options.max_unsent_answer_bytes) {}

absl::Status Admission::Admit(bool light, uint64_t params) {
  std::atomic<int>& in_flight = light ? light_ : heavy_;
  const unsigned flag = light ? max_light_ : max_heavy_;
  const int limit = static_cast<int>(std::max(1u, std::min(flag, 1u << 30)));
  int current = in_flight.load(std::memory_order_relaxed);
  do {
    if (current >= limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "this server already runs its limit of ", flag,
          light ? " concurrent light searches (--max_concurrent_light_searches)"
                : " concurrent searches (--max_concurrent_searches)",
          "; retry later"));
    }
  } while (!in_flight.compare_exchange_weak(current, current + 1,
                                            std::memory_order_acq_rel));
  if (light) return absl::OkStatus();
  absl::Status held = Reweigh(0, params);
  if (!held.ok()) in_flight.fetch_sub(1, std::memory_order_acq_rel);
  return held;
}

absl::Status Admission::Reweigh(uint64_t held, uint64_t weight) {
  uint64_t all = params_.load(std::memory_order_relaxed);
  do {
    const uint64_t others = all - held;
    if (others != 0 && weight > max_params_ - std::min(others, max_params_)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the searches this server runs already hold ", others, " of its ",
          max_params_,
          " parameters in flight (--max_params_in_flight), and this one has ",
          weight, "; retry later"));
    }
  } while (!params_.compare_exchange_weak(all, all - held + weight,
                                          std::memory_order_acq_rel));
  return absl::OkStatus();
}

void Admission::Release(bool light, uint64_t params) {
  if (light) {
    light_.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  params_.fetch_sub(params, std::memory_order_acq_rel);
  heavy_.fetch_sub(1, std::memory_order_acq_rel);
}

absl::Status Admission::HoldAnswer(uint64_t bytes) {
  uint64_t held = unsent_bytes_.load(std::memory_order_relaxed);
  do {
    if (held > max_unsent_bytes_ || bytes > max_unsent_bytes_ - held) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "this server already holds ", held,
          " bytes of answers not yet sent, and this answer of ", bytes,
          " bytes would pass its limit of ", max_unsent_bytes_,
          " (--max_unsent_answer_bytes); retry later"));
    }
  } while (!unsent_bytes_.compare_exchange_weak(held, held + bytes,
                                                std::memory_order_acq_rel));
  return absl::OkStatus();
}

void Admission::ReleaseAnswer(uint64_t bytes) {
  unsent_bytes_.fetch_sub(bytes, std::memory_order_acq_rel);
}

int Admission::in_flight() const {
  return heavy_.load(std::memory_order_acquire) +
         light_.load(std::memory_order_acquire);
}

uint64_t Admission::params_in_flight() const {
  return params_.load(std::memory_order_acquire);
}

uint64_t Admission::unsent_answer_bytes() const {
  return unsent_bytes_.load(std::memory_order_acquire);
}

}  // namespace chunkplan::service
