// Checkpoints with the ranks as MPI processes (shardscope-cli starts mpirun): same-world resume
// is bitwise the uninterrupted run, and the consolidated state survives a change of world size
// and strategy in both directions between mpirun ranks and rank threads.
#include "checkpoint_cli.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using namespace shardscope_test;

class checkpointMpi : public checkpointReshard {
protected:
    checkpointMpi() { launch_ = ""; }
};

TEST_F(checkpointMpi, SameWorldResumeIsBitwiseTheUninterruptedRun) {
    const nlohmann::json ref = run("zero3", 3, 4, "");
    run("zero3", 3, 2, "--save " + path("a"));
    const nlohmann::json second = run("zero3", 3, 2, "--resume " + path("a"));
    ASSERT_EQ(second["losses"].size(), 2u);
    EXPECT_EQ(second["losses"][0], ref["losses"][2]);
    EXPECT_EQ(second["losses"][1], ref["losses"][3]);
    EXPECT_EQ(second["param_digest"], ref["param_digest"]);
}

TEST_F(checkpointMpi, ReshardsBetweenWorldSizesAndStrategies) {
    check({"zero3", 3, "fsdp", 2});
    check({"ddp", 2, "zero2", 4});
}

TEST_F(checkpointMpi, ReshardsBetweenMpiRanksAndRankThreads) {
    const std::string src = path("mpi");
    run("fsdp", 4, 1, "--save " + src);
    launch_ = "--shared-device";
    const nlohmann::json conv =
        run("zero1", 3, 0, "--resume " + src + " --save " + path("threads"));
    EXPECT_EQ(conv["resumed_from"]["world_size"], 4);
    EXPECT_TRUE(consolidated(src) == consolidated(path("threads")));
    launch_ = "";
    run("zero3", 2, 0, "--resume " + path("threads") + " --save " + path("back"));
    EXPECT_TRUE(consolidated(src) == consolidated(path("back")));
}

} // namespace
