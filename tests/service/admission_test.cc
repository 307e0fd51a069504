// The admission rules (server/service/admission.h) on their own, each
// expected value worked from the rule as ServiceOptions states it: a slot
// limit admits that many calls and no more (0 counts as 1), light and heavy
// slots apart; a heavy call's parameters fit beside the others' within
// max_params_in_flight, or always when the others hold none; the unsent
// answer bytes stay within max_unsent_answer_bytes.

#include "server/service/admission.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chunkplan::service {
namespace {

using ::testing::HasSubstr;

ServiceOptions Limits(unsigned heavy, unsigned light, uint64_t params,
                      uint64_t answer_bytes) {
  ServiceOptions options;
  options.max_concurrent_searches = heavy;
  options.max_concurrent_light_searches = light;
  options.max_params_in_flight = params;
  options.max_unsent_answer_bytes = answer_bytes;
  return options;
}

TEST(AdmissionTest, HeavySlotsAdmitTheirLimitAndNoMore) {
  Admission admission(Limits(2, 5, 1000, 1000));
  EXPECT_TRUE(admission.Admit(/*light=*/false, 1).ok());
  EXPECT_TRUE(admission.Admit(/*light=*/false, 1).ok());
  const absl::Status third = admission.Admit(/*light=*/false, 1);
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(third.message(), HasSubstr("its limit of 2 concurrent searches "
                                         "(--max_concurrent_searches)"));
  EXPECT_EQ(admission.in_flight(), 2);
  EXPECT_EQ(admission.params_in_flight(), 2u);
  admission.Release(/*light=*/false, 1);
  EXPECT_EQ(admission.params_in_flight(), 1u);
  EXPECT_TRUE(admission.Admit(/*light=*/false, 1).ok());
}

TEST(AdmissionTest, LightSlotsAreApartFromHeavyOnes) {
  Admission admission(Limits(1, 2, 1000, 1000));
  ASSERT_TRUE(admission.Admit(/*light=*/false, 10).ok());
  EXPECT_TRUE(admission.Admit(/*light=*/true, 0).ok());
  EXPECT_TRUE(admission.Admit(/*light=*/true, 0).ok());
  const absl::Status light = admission.Admit(/*light=*/true, 0);
  EXPECT_EQ(light.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(light.message(),
              HasSubstr("its limit of 2 concurrent light searches "
                        "(--max_concurrent_light_searches)"));
  EXPECT_EQ(admission.in_flight(), 3);
  // A light slot holds no parameters.
  EXPECT_EQ(admission.params_in_flight(), 10u);
  admission.Release(/*light=*/true, 0);
  EXPECT_EQ(admission.in_flight(), 2);
  EXPECT_EQ(admission.params_in_flight(), 10u);
}

TEST(AdmissionTest, ALimitOfZeroAdmitsOne) {
  Admission admission(Limits(0, 0, 1000, 1000));
  EXPECT_TRUE(admission.Admit(/*light=*/false, 1).ok());
  EXPECT_FALSE(admission.Admit(/*light=*/false, 1).ok());
  EXPECT_TRUE(admission.Admit(/*light=*/true, 0).ok());
  EXPECT_FALSE(admission.Admit(/*light=*/true, 0).ok());
}

TEST(AdmissionTest, ParametersFitBesideTheOthersOrAlone) {
  Admission admission(Limits(10, 10, 100, 1000));
  // Alone, a call holds more than the limit: never refused for good.
  ASSERT_TRUE(admission.Admit(/*light=*/false, 150).ok());
  const absl::Status beside = admission.Admit(/*light=*/false, 1);
  EXPECT_EQ(beside.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(beside.message(),
              HasSubstr("already hold 150 of its 100 parameters in flight "
                        "(--max_params_in_flight), and this one has 1"));
  // The refused call gave its slot back.
  EXPECT_EQ(admission.in_flight(), 1);
  admission.Release(/*light=*/false, 150);
  // 60 + 40 = 100 fits; one more does not.
  EXPECT_TRUE(admission.Admit(/*light=*/false, 60).ok());
  EXPECT_TRUE(admission.Admit(/*light=*/false, 40).ok());
  EXPECT_FALSE(admission.Admit(/*light=*/false, 1).ok());
  EXPECT_EQ(admission.params_in_flight(), 100u);
  EXPECT_EQ(admission.in_flight(), 2);
}

TEST(AdmissionTest, ReweighShrinksAlwaysAndGrowsWithinTheLimit) {
  Admission admission(Limits(10, 10, 100, 1000));
  ASSERT_TRUE(admission.Admit(/*light=*/false, 60).ok());
  ASSERT_TRUE(admission.Admit(/*light=*/false, 40).ok());
  EXPECT_TRUE(admission.Reweigh(60, 50).ok());
  EXPECT_EQ(admission.params_in_flight(), 90u);
  // 40 + 61 = 101 > 100: refused, nothing changes.
  const absl::Status grown = admission.Reweigh(50, 61);
  EXPECT_EQ(grown.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(grown.message(), HasSubstr("already hold 40 of its 100"));
  EXPECT_EQ(admission.params_in_flight(), 90u);
  // 40 + 60 = 100 fits.
  EXPECT_TRUE(admission.Reweigh(50, 60).ok());
  EXPECT_EQ(admission.params_in_flight(), 100u);
  // Alone, a call may grow past the limit.
  admission.Release(/*light=*/false, 40);
  EXPECT_TRUE(admission.Reweigh(60, 500).ok());
  EXPECT_EQ(admission.params_in_flight(), 500u);
  admission.Release(/*light=*/false, 500);
  EXPECT_EQ(admission.params_in_flight(), 0u);
  EXPECT_EQ(admission.in_flight(), 0);
}

TEST(AdmissionTest, AnswerBytesStayWithinTheBudget) {
  Admission admission(Limits(10, 10, 100, 10));
  EXPECT_TRUE(admission.HoldAnswer(6).ok());
  // 6 + 5 = 11 > 10: refused, nothing held.
  const absl::Status over = admission.HoldAnswer(5);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.message(),
              HasSubstr("already holds 6 bytes of answers not yet sent, and "
                        "this answer of 5 bytes would pass its limit of 10 "
                        "(--max_unsent_answer_bytes)"));
  EXPECT_EQ(admission.unsent_answer_bytes(), 6u);
  // 6 + 4 = 10 fits.
  EXPECT_TRUE(admission.HoldAnswer(4).ok());
  EXPECT_EQ(admission.unsent_answer_bytes(), 10u);
  admission.ReleaseAnswer(6);
  EXPECT_TRUE(admission.HoldAnswer(6).ok());
  admission.ReleaseAnswer(6);
  admission.ReleaseAnswer(4);
  EXPECT_EQ(admission.unsent_answer_bytes(), 0u);
  // An answer larger than the budget is refused even alone.
  EXPECT_FALSE(admission.HoldAnswer(11).ok());
  EXPECT_EQ(admission.unsent_answer_bytes(), 0u);
}

// However the threads interleave, a limit of 5 admits exactly 5 of 16
// callers at once, and 5 x 10 parameters of a limit of 50.
TEST(AdmissionTest, ConcurrentCallersGetExactlyTheLimit) {
  constexpr int kCallers = 16;
  Admission admission(Limits(5, 5, 50, 1000));
  std::atomic<int> admitted{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      if (admission.Admit(/*light=*/false, 10).ok()) ++admitted;
    });
  }
  go.store(true, std::memory_order_release);
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(admitted.load(), 5);
  EXPECT_EQ(admission.in_flight(), 5);
  EXPECT_EQ(admission.params_in_flight(), 50u);
}

}  // namespace
}  // namespace chunkplan::service
