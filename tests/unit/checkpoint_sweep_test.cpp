// Resharding through the real programs for every pair N, M in {1, 2, 3, 4, 5, 8}, the
// strategies rotating: the consolidated state after loading at M equals the one saved at N,
// bit for bit. About a minute: label `long`.
#include "checkpoint_cli.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace {

using namespace shardscope_test;

// Every pair N, M in {1, 2, 3, 4, 5, 8}, strategies rotating: label `long`.
TEST_F(checkpointReshard, LongEveryPairOfWorldSizes) {
    const std::vector<int> worlds = {1, 2, 3, 4, 5, 8};
    const std::vector<std::string> strategies = {"ddp",  "zero1",        "zero2",      "zero3",
                                                 "fsdp", "fsdp_grad_op", "fsdp_hybrid"};
    std::size_t k = 0;
    for (int n : worlds)
        for (int m : worlds) {
            const std::string& a = strategies[k % strategies.size()];
            const std::string& b = strategies[(k * 3 + 1) % strategies.size()];
            ++k;
            check({a.c_str(), n, b.c_str(), m});
        }
}

} // namespace
