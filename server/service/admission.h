#ifndef CHUNKPLAN_SERVER_SERVICE_ADMISSION_H_
#define CHUNKPLAN_SERVER_SERVICE_ADMISSION_H_

// Which calls the server takes at once, and how many bytes of answers it
// holds unsent: the admission limits of ServiceOptions
// (max_concurrent_searches, max_concurrent_light_searches,
// max_params_in_flight, max_unsent_answer_bytes), each a counter that any
// thread may take from and give back to. Thread-safe; nothing blocks: a
// call beyond a limit is refused at once.

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "server/service/service_options.h"

namespace chunkplan::service {

class Admission {
 public:
  // The limits of `options` (a concurrency limit of 0 counts as 1).
  explicit Admission(const ServiceOptions& options);

  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // Takes a light slot (max_concurrent_light_searches) or a heavy one
  // (max_concurrent_searches) that holds `params` of max_params_in_flight
  // (HoldParams' rule); else RESOURCE_EXHAUSTED naming the limit's flag,
  // and nothing is taken. A light slot holds no parameters.
  absl::Status Admit(bool light, uint64_t params);

  // Makes a heavy call that holds `held` of max_params_in_flight hold
  // `weight` instead: OK when `weight` fits beside what the other heavy
  // calls hold, always when they hold none (a request within max_params is
  // never refused for good); else RESOURCE_EXHAUSTED naming
  // --max_params_in_flight, and nothing changes.
  absl::Status Reweigh(uint64_t held, uint64_t weight);

  // Gives back what Admit took (with what Reweigh made it): a light slot,
  // or a heavy one and the `params` it holds.
  void Release(bool light, uint64_t params);

  // Holds `bytes` of an answer that is ready and not yet sent: OK when the
  // bytes held stay within max_unsent_answer_bytes; else RESOURCE_EXHAUSTED
  // naming the flag, and nothing is held.
  absl::Status HoldAnswer(uint64_t bytes);

  // Gives back `bytes` that HoldAnswer held (gRPC is done with the call).
  void ReleaseAnswer(uint64_t bytes);

  // Calls admitted and not yet released, heavy and light together.
  int in_flight() const;

  // Parameters that the heavy calls admitted hold.
  uint64_t params_in_flight() const;

  // Bytes that HoldAnswer holds.
  uint64_t unsent_answer_bytes() const;

 private:
  const unsigned max_heavy_;
  const unsigned max_light_;
  const uint64_t max_params_;
  const uint64_t max_unsent_bytes_;
  std::atomic<int> heavy_{0};
  std::atomic<int> light_{0};
  std::atomic<uint64_t> params_{0};
  std::atomic<uint64_t> unsent_bytes_{0};
};

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_ADMISSION_H_
