// Reports as types (report/report.h): what is written reads back equal, a file without a
// schema gets the one line that says so, and hostile files are refused with one line — never
// an exception, a crash or a huge allocation.
#include "report/report.h"
#include "report/run_info.h"

#include <functional>
#include <gtest/gtest.h>
#include <string>

namespace shardscope::report {
namespace {

using nlohmann::json;

RunReport sample() {
    RunReport r;
    r.paramCount = 71900;
    r.worldSize = 2;
    r.strategy = "zero3";
    r.model = "tiny";
    r.precision = "bf16";
    r.microBatch = 4;
    r.steps = 3;
    r.seed = 7;
    r.data = "synthetic";
    r.config = {{"model", "tiny"}, {"knobs", {{"prefetch", 1}}}};
    r.losses = {4.5, 4.25, 4.0};
    r.stepMs = {1.5, 1.25, 1.0};
    for (int rank = 0; rank < 2; ++rank) {
        RankReport rr;
        rr.rank = rank;
        rr.peakBytes[index(Category::Activation)] = 1000 + static_cast<std::uint64_t>(rank);
        rr.peakTotal = 5000;
        rr.modelStateBytes[index(Category::ParamShard)] = 42;
        rr.commBytesPerStep = {{"all_gather", 300}, {"reduce_scatter", 150.5}};
        rr.exposedComm = {0.25, {0.5, 0.25, 0.125}, 2400, 1300, 2800};
        rr.exposedTransfer = {0.125, {0.25, 0.125, 0.0}, 900, 350};
        if (rank == 1) {
            DeviceMemory d;
            d.name = "cuda:0 (test GPU)";
            d.poolReservedHighBytes = 4096;
            d.outsideLedgerBytes = 512;
            rr.device = d;
        }
        r.ranks.push_back(rr);
    }
    r.commBytesPerStep = {{"all_gather", 300}};
    r.commPayloadBytesPerStep = {{"all_gather", 600}};
    r.commCallsPerStep = {{"all_gather", 4}};
    r.exposedCommFraction = 0.25;
    r.exposedTransferFraction = 0.125;
    r.theory.modelStateBytes[index(Category::ParamShard)] = 42;
    r.theory.ddpModelStateBytes[index(Category::ParamFull)] = 84;
    r.theory.predictedPeakBytes = 5000;
    r.theory.peakPhase = "backward block1";
    r.theory.commBytesPerStep = {{"all_gather", 300}};
    r.theory.psiEquivalents = 3.0;
    r.theory.notes = {"a note"};
    r.comparison = {true, -12, -0.5, 0.0};
    r.notes = {"measured peak equals the predicted peak"};
    r.paramDigest = "0123456789abcdef";
    return r;
}

std::string errorOf(const json& j) {
    const Parsed<RunReport> p = fromJson(j);
    EXPECT_FALSE(p.value.has_value()) << j.dump();
    EXPECT_EQ(p.error.find('\n'), std::string::npos) << "one line: " << p.error;
    return p.error;
}

TEST(reportSchema, RunReportRoundTrips) {
    const RunReport r = sample();
    const json j = toJson(r);
    EXPECT_EQ(j["schema"], "shardscope.run/1");
    for (const char* key : {"param_count", "world_size", "strategy", "losses", "ranks",
                            "comm_bytes_per_step", "theory", "param_digest"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(j["ranks"][0]["peak_bytes"].contains("total"));
    const Parsed<RunReport> back = fromJson(j);
    ASSERT_TRUE(back) << back.error;
    EXPECT_EQ(*back.value, r);
    EXPECT_EQ(toJson(*back.value), j);
    const Parsed<RunReport> text = parseRunReport(j.dump(2));
    ASSERT_TRUE(text) << text.error;
    EXPECT_EQ(*text.value, r);
}

// A pipeline's per-stage theory round-trips; stages that do not cover the units in order, or
// more of them than the run has ranks, are a damaged report.
TEST(reportSchema, PipelineStagesRoundTripAndAreBounded) {
    RunReport r = sample();
    r.config["pp"] = 2;
    for (std::int32_t s = 0; s < 2; ++s) {
        StageTheoryValues v;
        v.firstUnit = s * 2;
        v.endUnit = s * 2 + 2;
        v.modelStateBytes[index(Category::ParamShard)] = 100u + static_cast<std::uint64_t>(s);
        v.predictedPeakBytes = 1000u + static_cast<std::uint64_t>(s);
        v.commBytesPerStep = {{"pp_send", 64.0}};
        r.theory.stages.push_back(v);
    }
    const json j = toJson(r);
    const Parsed<RunReport> back = fromJson(j);
    ASSERT_TRUE(back) << back.error;
    EXPECT_EQ(*back.value, r);
    json gap = j;
    gap["theory"]["stages"][1]["first_unit"] = 3;
    gap["theory"]["stages"][1]["end_unit"] = 4;
    EXPECT_FALSE(fromJson(gap));
    json one = j;
    one["theory"]["stages"].erase(1);
    EXPECT_FALSE(fromJson(one));
    json otherMesh = j; // stages of another pipeline than the run's
    otherMesh["config"]["pp"] = 4;
    EXPECT_FALSE(fromJson(otherMesh));
    otherMesh["config"].erase("pp");
    EXPECT_FALSE(fromJson(otherMesh));
    json many = j;
    for (int k = 0; k < 70; ++k)
        many["theory"]["stages"].push_back(many["theory"]["stages"][1]);
    EXPECT_FALSE(fromJson(many));
}

// Interleaved: each stage lists its chunks, which tile the model in virtual-stage order (chunk c
// of stage s is c·P + s) and span the stage's first_unit to end_unit; anything else is damage.
TEST(reportSchema, InterleavedStagesListTheirChunksAndAreBounded) {
    RunReport r = sample();
    r.config["pp"] = 2;
    r.config["virtual_stages"] = 2;
    // Units 0 … 5: stage 0 holds [0, 2) and [3, 4), stage 1 [2, 3) and [4, 6).
    const std::vector<std::vector<std::pair<std::int32_t, std::int32_t>>> chunks = {
        {{0, 2}, {3, 4}}, {{2, 3}, {4, 6}}};
    for (const auto& c : chunks) {
        StageTheoryValues v;
        v.firstUnit = c.front().first;
        v.endUnit = c.back().second;
        v.chunks = c;
        r.theory.stages.push_back(v);
    }
    const json j = toJson(r);
    const Parsed<RunReport> back = fromJson(j);
    ASSERT_TRUE(back) << back.error;
    EXPECT_EQ(*back.value, r);
    json beyond = j; // the last chunk runs past its stage's end_unit
    beyond["theory"]["stages"][1]["chunks"][1][1] = 100;
    EXPECT_FALSE(fromJson(beyond));
    json wider = j; // a span wider than the chunks
    wider["theory"]["stages"][0]["end_unit"] = 6;
    EXPECT_FALSE(fromJson(wider));
    json swapped = j; // not in virtual-stage order
    swapped["theory"]["stages"][0]["chunks"] =
        json::array({json::array({3, 4}), json::array({0, 2})});
    EXPECT_FALSE(fromJson(swapped));
    json missing = j;
    missing["theory"]["stages"][1].erase("chunks");
    EXPECT_FALSE(fromJson(missing));
    json badV = j;
    badV["config"]["virtual_stages"] = 17;
    EXPECT_FALSE(fromJson(badV));
}

// A share of a step outside [0, 1] is a damaged report, not a figure to print.
TEST(reportSchema, FractionsOutsideZeroToOneAreRefused) {
    for (const char* key : {"exposed_comm_fraction", "exposed_transfer_fraction"})
        for (const double bad : {-5.0, 42.0}) {
            json j = toJson(sample());
            j[key] = bad;
            const Parsed<RunReport> back = fromJson(j);
            ASSERT_FALSE(back) << key << " " << bad;
            EXPECT_NE(back.error.find("is not a fraction in [0, 1]"), std::string::npos)
                << back.error;
        }
    json j = toJson(sample());
    j["ranks"][0]["exposed_comm"]["fraction_median"] = -3;
    EXPECT_FALSE(fromJson(j));
}

TEST(reportSchema, ConfigImportRoundTripsAndIsBounded) {
    RunReport r = sample();
    r.configImport =
        ConfigImport{"ds.json",
                     {{"zero_optimization.stage", "--strategy zero3"}},
                     {{"steps_per_print", "logging"}, {"scheduler", "constant learning rate"}}};
    const json j = toJson(r);
    EXPECT_EQ(j["config_import"]["applied"][0]["setting"], "--strategy zero3");
    EXPECT_EQ(j["config_import"]["ignored"][1]["key"], "scheduler");
    const Parsed<RunReport> back = fromJson(j);
    ASSERT_TRUE(back) << back.error;
    EXPECT_EQ(*back.value, r);
    // Absent in reports without an imported configuration.
    EXPECT_FALSE(toJson(sample()).contains("config_import"));
    json bad = j;
    bad["config_import"]["ignored"][0].erase("why");
    EXPECT_NE(errorOf(bad).find("config_import.ignored[0]"), std::string::npos);
    bad = j;
    bad["config_import"]["applied"] = json::array();
    for (int i = 0; i < 300; ++i)
        bad["config_import"]["applied"].push_back({{"key", "k"}, {"setting", "s"}});
    EXPECT_NE(errorOf(bad).find("at most"), std::string::npos);
}

TEST(reportSchema, CompareReportRoundTripsAndAcceptsOneRun) {
    CompareReport c;
    c.ranks = 2;
    c.strategies = {sample(), sample()};
    c.strategies[0].strategy = "ddp";
    c.strategies[1].maxAbsDeltaVsDdp = 0.0;
    const json j = toJson(c);
    EXPECT_EQ(j["schema"], "shardscope.compare/1");
    const Parsed<CompareReport> back = compareFromJson(j);
    ASSERT_TRUE(back) << back.error;
    EXPECT_EQ(*back.value, c);
    const Parsed<CompareReport> one = parseCompareReport(toJson(sample()).dump());
    ASSERT_TRUE(one) << one.error;
    EXPECT_EQ(one.value->strategies.size(), 1u);
}

TEST(reportSchema, TiersRoundTripAndOldFilesReadAsDeviceOnly) {
    RunReport r = sample();
    r.ranks[0].modelStateBytesByTier[index(Tier::Host)][index(Category::AdamM)] = 12;
    r.ranks[0].modelStateBytesByTier[index(Tier::Nvme)][index(Category::MasterFp32)] = 24;
    r.ranks[0].peakBytesByTier[index(Tier::Host)][index(Category::Workspace)] = 36;
    r.ranks[0].peakTotalByTier = {5000, 48, 24};
    r.theory.modelStateBytesByTier[index(Tier::Host)][index(Category::AdamV)] = 12;
    r.theory.peakBytesByTier = {5000, 48, 24};
    const json j = toJson(r);
    EXPECT_EQ(j["ranks"][0]["model_state_bytes_by_tier"]["nvme"]["master_fp32"], 24);
    EXPECT_EQ(j["ranks"][0]["peak_bytes_by_tier"]["host"]["total"], 48);
    EXPECT_EQ(j["theory"]["peak_bytes_by_tier"]["nvme"], 24);
    const Parsed<RunReport> back = fromJson(j);
    ASSERT_TRUE(back.value) << back.error;
    EXPECT_EQ(*back.value, r);

    json old = toJson(sample()); // a report from before tiers were measured
    for (json& rank : old["ranks"]) {
        rank.erase("model_state_bytes_by_tier");
        rank.erase("peak_bytes_by_tier");
    }
    old["theory"].erase("model_state_bytes_by_tier");
    old["theory"].erase("peak_bytes_by_tier");
    const Parsed<RunReport> legacy = fromJson(old);
    ASSERT_TRUE(legacy.value) << legacy.error;
    EXPECT_EQ(legacy.value->ranks[0].peakTotalByTier[index(Tier::Device)], 5000u);
    EXPECT_EQ(legacy.value->ranks[0]
                  .modelStateBytesByTier[index(Tier::Device)][index(Category::ParamShard)],
              42u);

    json missingTier = j;
    missingTier["ranks"][0]["model_state_bytes_by_tier"].erase("nvme");
    EXPECT_NE(errorOf(missingTier).find("expected the tiers device, host and nvme"),
              std::string::npos);
    json badTier = j;
    badTier["ranks"][0]["peak_bytes_by_tier"]["host"].erase("total");
    EXPECT_NE(errorOf(badTier).find("has no \"total\""), std::string::npos);
}

TEST(reportSchema, AFileWithoutSchemaGetsOneClearLine) {
    json j = toJson(sample());
    j.erase("schema");
    EXPECT_EQ(errorOf(j),
              "report has no schema field (written by an older ShardScope); re-run to regenerate");
    EXPECT_EQ(parseCompareReport(j.dump()).error, kNoSchemaMessage);
    json other = toJson(sample());
    other["schema"] = "shardscope.run/9";
    EXPECT_NE(errorOf(other).find("shardscope.run/9"), std::string::npos);
}

TEST(reportSchema, HostileFilesAreRefusedWithOneLine) {
    const json good = toJson(sample());
    const std::vector<std::pair<std::function<void(json&)>, const char*>> cases = {
        {[](json& j) { j["world_size"] = "two"; }, "world_size"},
        {[](json& j) { j["world_size"] = 0; }, "world_size"},
        {[](json& j) { j["world_size"] = 1ull << 40; }, "world_size"},
        {[](json& j) { j["ranks"][1]["rank"] = 2; }, "ranks[1].rank"},
        {[](json& j) { j["ranks"][1]["rank"] = 0; }, "twice"},
        {[](json& j) { j["ranks"][0]["rank"] = -1; }, "ranks[0].rank"},
        {[](json& j) { j["ranks"].push_back(j["ranks"][0]); }, "3 entries for world_size 2"},
        {[](json& j) { j["ranks"] = json::object(); }, "ranks"},
        {[](json& j) {
             j["losses"] = json::array({1.0, "x"});
         },
         "losses"},
        {[](json& j) { j["losses"] = std::vector<double>(1'000'001, 1.0); }, "losses"},
        {[](json& j) { j["ranks"][0]["peak_bytes"]["activation"] = -5; }, "activation"},
        {[](json& j) { j["ranks"][0]["peak_bytes"]["bogus"] = 5; }, "bogus"},
        {[](json& j) { j["ranks"][0]["peak_bytes"].erase("total"); }, "total"},
        {[](json& j) { j["ranks"][0]["exposed_comm"]["fraction_median"] = nullptr; },
         "fraction_median"},
        {[](json& j) { j["ranks"][1]["device"]["name"] = 3; }, "device.name"},
        {[](json& j) { j["ranks"][0]["exposed_transfer"]["exposed_ns"] = -1; },
         "exposed_transfer.exposed_ns"},
        {[](json& j) { j["exposed_transfer_fraction"] = "most"; }, "exposed_transfer_fraction"},
        {[](json& j) { j["theory"]["comm_bytes_per_step"]["all_gather"] = "lots"; }, "all_gather"},
        {[](json& j) { j["theory"]["notes"] = std::vector<std::string>(1000, "n"); }, "notes"},
        {[](json& j) { j["param_digest"] = std::string(5000, 'f'); }, "param_digest"},
        {[](json& j) { j.erase("theory"); }, "theory"},
        {[](json& j) { j["comparison"]["peak_delta_bytes"] = 1.5; }, "peak_delta_bytes"},
        {[](json& j) { j = json::array(); }, "not a JSON object"},
    };
    for (const auto& [mutate, needle] : cases) {
        json j = good;
        mutate(j);
        const std::string e = errorOf(j);
        EXPECT_NE(e.find(needle), std::string::npos) << needle << " → '" << e << "'";
    }
    EXPECT_EQ(parseRunReport("not json").error, "the report is not valid JSON");
    EXPECT_FALSE(parseCompareReport(
        R"({"schema":"shardscope.compare/1","ranks":2,"deterministic":true,"strategies":[]})"));
    // Every key replaced by a value of each other type: an answer, never an exception.
    for (const auto& [key, value] : good.items())
        for (const json& replacement :
             {json(nullptr), json("x"), json(-1), json(1e300), json::array(), json::object()}) {
            json j = good;
            j[key] = replacement;
            EXPECT_NO_THROW((void)fromJson(j)) << key;
        }
}

TEST(reportSchema, HandshakeRunInfoIsTolerantButBounded) {
    const Parsed<RunInfo> info =
        parseRunInfo(R"({"strategy":"zero3","backend":"cuda","shared_device":true})", 2);
    ASSERT_TRUE(info);
    EXPECT_EQ(info.value->backend, "cuda");
    EXPECT_EQ(info.value->worldSize, 2);
    EXPECT_FALSE(parseRunInfo("[1]", 2));
    EXPECT_FALSE(parseRunInfo(R"({"world_size": -3})", 2));
    // A resumed run's steps before it: counted on in every label, so bounded.
    EXPECT_EQ(parseRunInfo(R"({"steps_before": 3})", 2).value->stepsBefore, 3);
    EXPECT_FALSE(parseRunInfo(R"({"steps_before": -1})", 2));
    EXPECT_FALSE(parseRunInfo(R"({"steps_before": 18446744073709551615})", 2));
    EXPECT_FALSE(parseRunInfo(R"({"steps_before": 9007199254740993})", 2));
    EXPECT_FALSE(parseRunInfo(R"({"steps_before": 1e300})", 2));
    const json written = handshakeJson({{"strategy", "ddp"}}, 10, {{"block0", 10, 12}}, {}, {}, 99);
    const Parsed<RunInfo> back = parseRunInfo(written.dump(), 1);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value->units, (std::vector<UnitInfo>{{"block0", 10, 12}}));
    EXPECT_EQ(back.value->predictedPeakBytes, 99u);
    // The mesh's T (absent: 1) must cut the world into whole TP groups.
    EXPECT_EQ(info.value->tensorParallel, 1);
    const Parsed<RunInfo> mesh = parseRunInfo(R"({"world_size": 8, "tp": 2})", 8);
    ASSERT_TRUE(mesh);
    EXPECT_EQ(mesh.value->tensorParallel, 2);
    for (const char* bad : {R"({"world_size": 6, "tp": 4})", R"({"world_size": 4, "tp": 0})",
                            R"({"world_size": 2, "tp": 4})"})
        EXPECT_FALSE(parseRunInfo(bad, 2)) << bad;
    // P (absent: 1): an integer within the stages' limit, P × T cutting the world, a layer each.
    const Parsed<RunInfo> piped = parseRunInfo(
        R"({"world_size": 8, "tp": 2, "pp": 2, "units": [{"name": "embedding"},
           {"name": "block0"}, {"name": "block1"}, {"name": "head"}]})",
        8);
    ASSERT_TRUE(piped) << piped.error;
    EXPECT_EQ(piped.value->pipeParallel, 2);
    EXPECT_EQ(mesh.value->pipeParallel, 1);
    for (const char* bad :
         {R"({"world_size": 8, "tp": 2, "pp": 3})", R"({"world_size": 8, "pp": 2.5})",
          R"({"world_size": 8, "pp": 4294967298})", R"({"world_size": 8, "pp": 0})",
          R"({"world_size": 128, "pp": 128})",
          R"({"world_size": 8, "pp": 4, "units": [{"name": "embedding"}, {"name": "block0"},
             {"name": "head"}]})"})
        EXPECT_FALSE(parseRunInfo(bad, 8)) << bad;
    // A pipeline's stages have their own theory: each rank is compared with its stage's.
    CategoryBytes first{}, second{}, ddpFirst{}, ddpSecond{};
    first[index(Category::ParamShard)] = 40;
    second[index(Category::ParamShard)] = 24;
    ddpFirst[index(Category::ParamShard)] = 80;
    ddpSecond[index(Category::ParamShard)] = 48;
    json staged =
        handshakeJson({{"strategy", "zero3"}, {"world_size", 4}, {"pp", 2}}, 10,
                      {{"embedding", 4, 4}, {"block0", 2, 2}, {"block1", 2, 2}, {"head", 2, 2}},
                      first, ddpFirst, 99, 0, {{first, ddpFirst, 99}, {second, ddpSecond, 60}});
    const Parsed<RunInfo> stages = parseRunInfo(staged.dump(), 4);
    ASSERT_TRUE(stages) << stages.error;
    ASSERT_EQ(stages.value->stageTheory.size(), 2u);
    EXPECT_EQ(stages.value->stageOf(1), 0);
    EXPECT_EQ(stages.value->stageOf(2), 1);
    EXPECT_EQ(stages.value->theoryModelStatesOf(3), second);
    EXPECT_EQ(stages.value->ddpTheoryModelStatesOf(2), ddpSecond);
    EXPECT_EQ(stages.value->predictedPeakOf(3), 60u);
    EXPECT_EQ(stages.value->predictedPeakOf(0), 99u);
    EXPECT_EQ(stages.value->stageUnitRange(0), (std::pair{0, 2}));
    EXPECT_EQ(stages.value->stageUnitRange(1), (std::pair{2, 4}));
    // Without stages every rank has the one theory.
    EXPECT_EQ(back.value->theoryModelStatesOf(0), back.value->theoryModelStates);
    EXPECT_EQ(back.value->predictedPeakOf(0), 99u);
    // A list of another length than pp describes another mesh: refused, not drawn.
    staged["theory"]["stages"].push_back(staged["theory"]["stages"][0]);
    EXPECT_FALSE(parseRunInfo(staged.dump(), 4));
    staged["theory"]["stages"] = 7;
    EXPECT_FALSE(parseRunInfo(staged.dump(), 4));
}

} // namespace
} // namespace shardscope::report
