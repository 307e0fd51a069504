// FindRepeatedBlocks against its contract, checked by brute force: the
// blocks it returns are equal, cover half of the sizes in at least
// kMinRepeatedBlocks blocks, and no shorter block through the middle does.
#include "server/planner/engines/repeated_blocks.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

// The longest stretch [first, last + length) around the middle m whose
// sizes repeat with period `length` (s[k] == s[k + length] for k in [first,
// last)), found one index at a time.
struct Stretch {
  size_t first;
  size_t covered;
};
Stretch PeriodicStretch(const std::vector<uint64_t>& s, size_t length) {
  const size_t m = s.size() / 2;
  size_t last = m;
  while (last + length < s.size() && s[last] == s[last + length]) ++last;
  size_t first = m;
  while (first > 0 && s[first - 1] == s[first - 1 + length]) --first;
  return {first, last + length - first};
}

bool Qualifies(const std::vector<uint64_t>& s, size_t length) {
  if (s[s.size() / 2] != s[s.size() / 2 + length]) return false;
  const size_t count = PeriodicStretch(s, length).covered / length;
  return 2 * count * length >= s.size() && count >= kMinRepeatedBlocks;
}

// Checks FindRepeatedBlocks(s); true where it found blocks.
bool ExpectTheContract(const std::vector<uint64_t>& s, int round) {
  const RepeatedBlocks b = FindRepeatedBlocks(s);
  if (s.size() < kMinRepeatedSizes) {
    EXPECT_EQ(b.length, 0u) << "round " << round;
    return false;
  }
  // The shortest qualifying length, unless the repetitions of the shorter
  // ones (lengths at which the middle size recurs) exceed the budget.
  size_t shortest = 0;
  size_t spanned = 0;
  for (size_t length = 1; length < s.size() - s.size() / 2; ++length) {
    if (Qualifies(s, length)) {
      shortest = length;
      break;
    }
    if (s[s.size() / 2 + length] != s[s.size() / 2]) continue;
    spanned += PeriodicStretch(s, length).covered;
    if (spanned > kLookBudget * s.size()) break;
  }
  EXPECT_EQ(b.length, shortest) << "round " << round;
  if (b.length == 0 || b.length != shortest) return false;
  EXPECT_GE(b.count, kMinRepeatedBlocks);
  EXPECT_GE(2 * b.count * b.length, s.size()) << "round " << round;
  EXPECT_LE(b.begin + b.count * b.length, s.size());
  for (size_t j = 1; j < b.count; ++j) {
    for (size_t k = 0; k < b.length; ++k) {
      EXPECT_EQ(s[b.begin + j * b.length + k], s[b.begin + k])
          << "round " << round << " block " << j << " size " << k;
    }
  }
  // The blocks are whole: the stretch holds no further block.
  const Stretch st = PeriodicStretch(s, b.length);
  EXPECT_EQ(b.begin, st.first) << "round " << round;
  EXPECT_EQ(b.count, st.covered / b.length) << "round " << round;
  return true;
}

TEST(FindRepeatedBlocks, FindsTheLayersOfAModel) {
  // LLaMA-2 7B's shape: the embedding, 32 layers of 9, the norm and head.
  std::vector<uint64_t> s = {131072000};
  const std::vector<uint64_t> layer = {16777216, 16777216, 16777216,
                                       16777216, 45088768, 45088768,
                                       45088768, 4096,     4096};
  for (int l = 0; l < 32; ++l) s.insert(s.end(), layer.begin(), layer.end());
  s.push_back(4096);
  s.push_back(131072000);
  const RepeatedBlocks b = FindRepeatedBlocks(s);
  // The stretch starts at the first layer; the final norm continues the
  // pattern one size, which makes no whole block.
  EXPECT_EQ(b.begin, 1u);
  EXPECT_EQ(b.length, 9u);
  EXPECT_EQ(b.count, 32u);
}

TEST(FindRepeatedBlocks, TakesTheShortestBlock) {
  std::vector<uint64_t> s;
  for (int k = 0; k < 40; ++k) s.insert(s.end(), {7, 3});
  const RepeatedBlocks b = FindRepeatedBlocks(s);
  EXPECT_EQ(b.length, 2u);
  EXPECT_EQ(b.count, 40u);
  EXPECT_EQ(FindRepeatedBlocks(std::vector<uint64_t>(100, 5)).length, 1u);
}

TEST(FindRepeatedBlocks, FindsNoneWhereNothingRepeatsEnough) {
  std::vector<uint64_t> distinct(200);
  for (size_t i = 0; i < distinct.size(); ++i) distinct[i] = i;
  EXPECT_EQ(FindRepeatedBlocks(distinct).length, 0u);
  // Short: none, however regular.
  EXPECT_EQ(FindRepeatedBlocks(std::vector<uint64_t>(63, 1)).length, 0u);
  // Repeating, but over less than half of the sizes.
  std::vector<uint64_t> partial = distinct;
  for (size_t i = 90; i < 180; ++i) partial[i] = 1000 + (i - 90) % 30;
  for (size_t i = 100; i < 190; ++i) partial[i] = 2000 + i % 2;
  EXPECT_EQ(FindRepeatedBlocks(
                std::vector<uint64_t>(partial.begin(), partial.begin() + 200))
                .length,
            0u);
}

TEST(FindRepeatedBlocks, GivesUpAfterItsBudget) {
  // Blocks of 100, eight of them: 90 zeros, then 1..10. The middle size is
  // a block's first zero; every length below 90 repeats it over about 90
  // sizes only, and those spans exceed the budget long before length 100.
  std::vector<uint64_t> s;
  for (int b = 0; b < 8; ++b) {
    s.insert(s.end(), 90, 0);
    for (uint64_t v = 1; v <= 10; ++v) s.push_back(v);
  }
  EXPECT_EQ(FindRepeatedBlocks(s).length, 0u);
  ExpectTheContract(s, 0);
  // Without the zeros' near-repeats the blocks are found.
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 0) s[i] = 100 + i % 100;
  }
  EXPECT_EQ(FindRepeatedBlocks(s).length, 100u);
}

TEST(FindRepeatedBlocks, MeetsItsContractOnRandomSequences) {
  std::mt19937_64 rng(20261205);
  int found = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint64_t> s;
    const int alphabet = 1 + rng() % 6;
    const int head = rng() % 30;
    for (int k = 0; k < head; ++k) s.push_back(rng() % alphabet);
    std::vector<uint64_t> pattern(1 + rng() % 20);
    for (uint64_t& v : pattern) v = rng() % alphabet;
    const int layers = rng() % 30;
    for (int l = 0; l < layers; ++l) {
      s.insert(s.end(), pattern.begin(), pattern.end());
    }
    const int tail = rng() % 60;
    for (int k = 0; k < tail; ++k) s.push_back(rng() % alphabet);
    found += ExpectTheContract(s, round);
  }
  // Both answers are exercised.
  EXPECT_GT(found, 500);
  EXPECT_LT(found, 2500);
}

}  // namespace
}  // namespace chunkplan::planner
