// What the offload tiers move, recorded: shardscope-worker runs the small preset on 2 ranks
// (rank threads, and once under mpirun) with a recording, and every rank's transfer events per
// step add up to the traffic the schedule implies, derived from the units' shard sizes S_u (the
// handshake's padded elements / N), bf16 compute weights and gradients (2 bytes), fp32 master,
// m and v (12 bytes) in 4 KiB-aligned NVMe regions:
//   device → host: the gradient shards, Σ 2·S_u per micro-step (ZeRO-1: its slice of the
//                  all-reduced gradient, the same bytes);
//   host → device: the updated compute weights, Σ 2·S_u per step — or, with --offload-params
//                  host, the param shard before each of its all-gathers (forward and backward);
//   NVMe read and write: master, m and v of every unit, Σ 3·align(4·S_u) each per step.
// A run without offload records no transfer, and the exposed-transfer fraction is in [0, 1],
// 0 without offload.
#include "protocol/protocol.h"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace shardscope;

namespace {

using Traffic = std::array<std::uint64_t, kTransferCount>; // bytes by direction
constexpr std::uint64_t align4k(std::uint64_t n) {
    return (n + 4095) / 4096 * 4096;
}

class OffloadTransfers : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() / ("ss-xfer-" + std::to_string(::getpid()));
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    struct Run {
        protocol::Recording rec;
        json report;
    };
    // One step of the small preset on 2 ranks, with a recording and a report.
    Run run(bool mpi, const std::string& flags, int gradAccum = 1) {
        const fs::path trace = dir / "t.sstrace", report = dir / "r.json";
        fs::remove(trace);
        fs::remove(report);
        std::string cmd = mpi ? std::string(SHARDSCOPE_MPIRUN) + " -np 2 " + SHARDSCOPE_WORKER
                              : std::string(SHARDSCOPE_WORKER) + " --shared-device --ranks 2";
        cmd += " --model small --steps 1 --deterministic --grad-accum " +
               std::to_string(gradAccum) + " --trace " + trace.string() + " --json " +
               report.string() + " " + flags + " >" + (dir / "out").string() + " 2>&1";
        const int status = std::system(cmd.c_str());
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::ifstream in(dir / "out");
            std::ostringstream s;
            s << in.rdbuf();
            ADD_FAILURE() << cmd << "\n" << s.str();
            return {};
        }
        std::ifstream in(report);
        return {protocol::readRecording(trace.string()), json::parse(in)};
    }

    // Σ S_u over the units of the run's handshake.
    static std::uint64_t shardElements(const Run& r, std::uint64_t* nvmeBytes) {
        const json config = json::parse(r.rec.handshakes.at(0).configJson);
        const auto ranks = static_cast<std::uint64_t>(r.rec.handshakes.at(0).worldSize);
        std::uint64_t total = 0;
        *nvmeBytes = 0;
        for (const json& u : config.at("units")) {
            const std::uint64_t shard = u.at("padded").get<std::uint64_t>() / ranks;
            total += shard;
            *nvmeBytes += 3 * align4k(4 * shard);
        }
        return total;
    }

    // Bytes per (rank, step) and direction, from the TransferBegin events of the training steps;
    // every TransferBegin has its TransferEnd.
    static std::map<std::pair<std::int32_t, std::int64_t>, Traffic> traffic(const Run& r) {
        std::map<std::pair<std::int32_t, std::int64_t>, Traffic> out;
        std::map<std::int32_t, std::int64_t> open;
        for (const auto& b : r.rec.batches)
            for (const Event& e : b.events) {
                if (e.kind == EventKind::TransferBegin) ++open[e.rank];
                if (e.kind == EventKind::TransferEnd) --open[e.rank];
                if (e.kind != EventKind::TransferBegin || e.step < 0) continue;
                out[{e.rank, e.step}][static_cast<std::size_t>(e.transfer)] += e.bytes;
            }
        for (const auto& [rank, n] : open)
            EXPECT_EQ(n, 0) << "rank " << rank << ": unclosed transfers";
        return out;
    }

    static void expectTraffic(const Run& r, const Traffic& want, const std::string& what) {
        const auto got = traffic(r);
        ASSERT_EQ(got.size(), 2u) << what << ": one step on each of 2 ranks";
        for (const auto& [at, bytes] : got)
            for (std::size_t d = 1; d < kTransferCount; ++d)
                EXPECT_EQ(bytes[d], want[d])
                    << what << " rank " << at.first << " step " << at.second << " "
                    << transferName(static_cast<Transfer>(d));
        const double f = r.report.at("exposed_transfer_fraction").get<double>();
        EXPECT_GT(f, 0.0) << what;
        EXPECT_LE(f, 1.0) << what;
        for (const json& rank : r.report.at("ranks")) {
            const double rf = rank.at("exposed_transfer").at("fraction_median").get<double>();
            EXPECT_GE(rf, 0.0) << what;
            EXPECT_LE(rf, f) << what << ": the run's is the largest rank's";
        }
    }

    static Traffic directions(std::uint64_t down, std::uint64_t up, std::uint64_t nvme = 0) {
        Traffic t{};
        t[static_cast<std::size_t>(Transfer::DeviceToHost)] = down;
        t[static_cast<std::size_t>(Transfer::HostToDevice)] = up;
        t[static_cast<std::size_t>(Transfer::NvmeRead)] = nvme;
        t[static_cast<std::size_t>(Transfer::NvmeWrite)] = nvme;
        return t;
    }

    fs::path dir;
};

TEST_F(OffloadTransfers, RankThreadsRecordThePerTierTrafficOfTheSchedule) {
    const Run none = run(false, "--strategy zero3");
    ASSERT_FALSE(none.rec.handshakes.empty());
    std::uint64_t nvme = 0;
    const std::uint64_t s = shardElements(none, &nvme);
    EXPECT_TRUE(traffic(none).empty()) << "a run without offload moves nothing across tiers";
    EXPECT_EQ(none.report.at("exposed_transfer_fraction").get<double>(), 0.0);

    const Run host = run(false, "--strategy zero3 --offload-optimizer host", 2);
    ASSERT_FALSE(host.rec.handshakes.empty());
    expectTraffic(host, directions(2 * 2 * s, 2 * s), "zero3 optimizer host, 2 micro-steps");

    const Run params =
        run(false, "--strategy zero3 --offload-optimizer host --offload-params host");
    ASSERT_FALSE(params.rec.handshakes.empty());
    expectTraffic(params, directions(2 * s, 2 * 2 * s), "zero3 optimizer and params host");

    const Run zero1 = run(false, "--strategy zero1 --offload-optimizer host");
    ASSERT_FALSE(zero1.rec.handshakes.empty());
    expectTraffic(zero1, directions(2 * s, 2 * s), "zero1 optimizer host");

    const Run infinity =
        run(false, "--strategy zero3 --offload-optimizer nvme --nvme-dir " + dir.string());
    ASSERT_FALSE(infinity.rec.handshakes.empty());
    expectTraffic(infinity, directions(2 * s, 2 * s, nvme), "zero3 optimizer nvme");
}

TEST_F(OffloadTransfers, MpiRanksRecordTheSameTraffic) {
    const Run infinity =
        run(true, "--strategy zero3 --offload-optimizer nvme --offload-params host --nvme-dir " +
                      dir.string());
    ASSERT_FALSE(infinity.rec.handshakes.empty());
    std::uint64_t nvme = 0;
    const std::uint64_t s = shardElements(infinity, &nvme);
    // NVMe optimizer: updated weights are rounded into the host param shard (no copy); each
    // gather brings the shard to the device.
    expectTraffic(infinity, directions(2 * s, 2 * 2 * s, nvme),
                  "zero3 optimizer nvme, params host (mpirun)");
}

} // namespace
