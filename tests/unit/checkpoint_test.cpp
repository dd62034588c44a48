// The checkpoint library without the engine (sha256: sha256_test.cpp): the metadata
// codec (round trip, every refusal), the resharding plan for every pair of world sizes and
// strategies on a model whose units no world size divides, and the faults a loader must name.
#include "checkpoint/format.h"
#include "checkpoint/reshard.h"
#include "checkpoint/sha256.h"
#include "checkpoint/store.h"
#include "core/error.h"
#include "plan/policy.h"
#include "plan/strategy.h"
#include "plan/units.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace shardscope::checkpoint {
namespace {

namespace fs = std::filesystem;
using plan::Strategy;

// d = 7, vocab 17, context 14: units of 217, 679, 679 and 133 elements, divisible by none of
// 2, 3, 4, 5, 8 — every world size pads every unit.
plan::GptShape oddShape() {
    return {2, 7, 7, 17, 14};
}

struct Truth { // the consolidated state every save starts from
    std::vector<std::vector<float>> master, m, v;
};

Truth truthFor(const Metadata& meta) {
    Truth t;
    for (std::size_t u = 0; u < meta.units.size(); ++u) {
        const std::uint64_t n = meta.units[u].elements;
        t.master.emplace_back(n);
        t.m.emplace_back(n);
        t.v.emplace_back(n);
        for (std::uint64_t i = 0; i < n; ++i) {
            t.master[u][i] = static_cast<float>(u * 1000 + i) * 0.001f + 0.5f;
            t.m[u][i] = -static_cast<float>(i) * 1e-4f - static_cast<float>(u);
            t.v[u][i] = static_cast<float>(i * i) * 1e-7f + 1e-9f;
        }
    }
    return t;
}

plan::Policy policyOf(Strategy s, int world) {
    plan::Knobs k;
    if (s == Strategy::FsdpHybridShard) k.hybridGroupSize = world % 2 == 0 ? 2 : 1;
    return plan::policyFor(s, k);
}

Metadata baseMeta(Strategy s, int world) {
    Metadata m;
    const plan::Policy p = policyOf(s, world);
    describeModel(m, oddShape(), static_cast<std::uint64_t>(p.shardCount(world)));
    m.strategy = std::string(plan::strategyName(s));
    m.worldSize = world;
    m.hybridGroup = p.hybrid ? p.hybridGroup : 0;
    m.precision = "bf16";
    m.step = 3;
    m.dataPosition = 3;
    m.seed = 5;
    m.microBatch = 2;
    m.optimizer = {1e-3, 0.9, 0.95, 1e-8, 0.1, 1.0, 3};
    return m;
}

// Saves `truth` as world `world` under strategy `s` would (each rank its replica part of its
// owned shard) into a fresh DIR; returns the step folder.
std::string saveAs(const std::string& root, Strategy s, int world, const Truth& truth,
                   std::uint64_t chunk = kDefaultChunkElements, std::int64_t step = 3) {
    Metadata m = baseMeta(s, world);
    m.chunkElements = chunk;
    m.step = step;
    const plan::Policy policy = policyOf(s, world);
    const std::string temp = tempDirName(m.step, newSaveId());
    createTemp(root, temp);
    for (int r = 0; r < world; ++r) {
        const Placement p = placementOf(policy, world, r);
        std::vector<SliceData> slices;
        for (std::size_t u = 0; u < m.units.size(); ++u) {
            const Span own = ownedSpan(p, policy.shardOptimizer, static_cast<std::int32_t>(u),
                                       m.units[u].elements);
            const Span part = replicaPart(own, p.copies, p.copyIndex);
            slices.push_back({part, truth.master[u].data() + part.begin,
                              truth.m[u].data() + part.begin, truth.v[u].data() + part.begin});
        }
        m.files.push_back(writeRankFile(root, temp, r, slices, chunk));
    }
    return commit(root, temp, m);
}

class checkpointDir : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/shardscope-ckpt-test-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root_ = tmpl;
    }
    void TearDown() override { fs::remove_all(root_); }
    std::string root_;
};

TEST_F(checkpointDir, EveryWorldSizeAndStrategyReshardsBitForBit) {
    const std::vector<int> worlds = {1, 2, 3, 4, 5, 8};
    const std::vector<Strategy> strategies = {Strategy::Ddp, Strategy::Zero1, Strategy::Zero3,
                                              Strategy::FsdpHybridShard};
    Metadata shapeOnly = baseMeta(Strategy::Ddp, 1);
    const Truth truth = truthFor(shapeOnly);
    int pairs = 0;
    for (Strategy from : strategies)
        for (int n : worlds) {
            const std::string root =
                root_ + "/" + std::string(plan::strategyName(from)) + "-" + std::to_string(n);
            saveAs(root, from, n, truth);
            const Opened c = openCheckpoint(root);
            EXPECT_EQ(c.meta.worldSize, n);
            for (const FileCheck& f : verifyFiles(c))
                EXPECT_EQ(f.state, FileCheck::State::Ok) << f.name;
            for (Strategy to : strategies)
                for (int mm : worlds) {
                    const plan::Policy policy = policyOf(to, mm);
                    Truth loaded;
                    for (std::size_t u = 0; u < truth.master.size(); ++u) {
                        const std::size_t sz = truth.master[u].size();
                        loaded.master.emplace_back(sz, -1.0f);
                        loaded.m.emplace_back(sz, -1.0f);
                        loaded.v.emplace_back(sz, -1.0f);
                    }
                    std::uint64_t needed = 0;
                    for (int r = 0; r < mm; ++r) {
                        const Placement p = placementOf(policy, mm, r);
                        std::vector<SliceTarget> targets;
                        std::vector<std::vector<float>> bufs;
                        bufs.reserve(truth.master.size() * 3);
                        for (std::size_t u = 0; u < truth.master.size(); ++u) {
                            const Span own =
                                ownedSpan(p, policy.shardOptimizer, static_cast<std::int32_t>(u),
                                          truth.master[u].size());
                            for (int s = 0; s < 3; ++s)
                                bufs.emplace_back(own.elements(), -2.0f);
                            targets.push_back({own, bufs[bufs.size() - 3].data(),
                                               bufs[bufs.size() - 2].data(), bufs.back().data()});
                        }
                        needed += load(c, targets).bytesNeeded;
                        for (const SliceTarget& t : targets) { // consolidate what this rank got
                            const auto u = static_cast<std::size_t>(t.span.unit);
                            for (std::uint64_t i = t.span.begin; i < t.span.end; ++i) {
                                loaded.master[u][i] = t.master[i - t.span.begin];
                                loaded.m[u][i] = t.m[i - t.span.begin];
                                loaded.v[u][i] = t.v[i - t.span.begin];
                            }
                        }
                    }
                    // Bitwise: float == on finite values, and -1 (never loaded) would differ.
                    ASSERT_EQ(loaded.master, truth.master)
                        << plan::strategyName(from) << " N=" << n << " → " << plan::strategyName(to)
                        << " M=" << mm;
                    ASSERT_EQ(loaded.m, truth.m);
                    ASSERT_EQ(loaded.v, truth.v);
                    // Each rank read exactly its own shard's bytes, no more and no fewer.
                    std::uint64_t owned = 0;
                    for (int r = 0; r < mm; ++r)
                        for (std::size_t u = 0; u < truth.master.size(); ++u)
                            owned += ownedSpan(placementOf(policy, mm, r), policy.shardOptimizer,
                                               static_cast<std::int32_t>(u), truth.master[u].size())
                                         .elements();
                    EXPECT_EQ(needed, owned * kBytesPerElement);
                    ++pairs;
                }
        }
    EXPECT_EQ(pairs, 4 * 6 * 4 * 6);
}

TEST_F(checkpointDir, ReplicatedStateIsWrittenOnceByEveryRank) {
    const Truth truth = truthFor(baseMeta(Strategy::Ddp, 1));
    saveAs(root_, Strategy::Ddp, 3, truth);
    const Opened c = openCheckpoint(root_);
    std::uint64_t total = 0;
    for (const DataFile& f : c.meta.files) {
        EXPECT_GT(f.bytes, 0u) << f.name; // every rank writes
        total += f.bytes;
    }
    EXPECT_EQ(total, c.meta.paramCount * kBytesPerElement); // no byte twice, no padding
}

TEST_F(checkpointDir, MetadataRoundTripsAndLatestNamesTheNewestStep) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    const std::string dir = saveAs(root_, Strategy::Zero3, 5, truth);
    EXPECT_EQ(dir, root_ + "/step-3");
    const Opened viaRoot = openCheckpoint(root_);
    const Opened viaStep = openCheckpoint(dir);
    EXPECT_EQ(viaRoot.dir, viaStep.dir);
    EXPECT_EQ(toJson(parseMetadata(toJson(viaRoot.meta), "x")), toJson(viaRoot.meta));
    // Saving the same step again swaps the folder atomically and leaves no temporary behind.
    saveAs(root_, Strategy::Zero3, 2, truth);
    const Listing l = listCheckpoints(root_);
    EXPECT_EQ(l.latest, "step-3");
    ASSERT_EQ(l.steps.size(), 1u);
    EXPECT_EQ(l.steps[0].meta->worldSize, 2);
    EXPECT_TRUE(l.temps.empty());
}

std::string firstError(const std::string& path) {
    try {
        const Opened c = openCheckpoint(path);
        const Metadata& m = c.meta;
        std::vector<std::vector<float>> bufs;
        std::vector<SliceTarget> targets;
        for (std::size_t u = 0; u < m.units.size(); ++u) {
            bufs.emplace_back(m.units[u].elements);
            targets.push_back({{static_cast<std::int32_t>(u), 0, m.units[u].elements},
                               bufs.back().data(),
                               nullptr,
                               nullptr});
        }
        load(c, targets);
    } catch (const Error& e) {
        EXPECT_TRUE(e.isUserInput()) << e.what();
        return e.what();
    }
    return "";
}

TEST_F(checkpointDir, FaultsAreNamedInOneLine) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    const std::string dir = saveAs(root_, Strategy::Zero3, 3, truth);
    EXPECT_EQ(firstError(root_), "");
    const std::string f1 = dir + "/rank-00001.bin";
    { // a flipped byte
        std::fstream f(f1, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        char c = 0;
        f.read(&c, 1);
        c = static_cast<char>(c ^ 0x10);
        f.seekp(100);
        f.write(&c, 1);
    }
    EXPECT_NE(firstError(root_).find("rank-00001.bin' fails its checksum"), std::string::npos)
        << firstError(root_);
    auto checks = verifyFiles(openCheckpoint(root_));
    EXPECT_EQ(checks[1].state, FileCheck::State::BadChecksum);
    EXPECT_EQ(checks[0].state, FileCheck::State::Ok);
    fs::resize_file(f1, 40); // truncated
    EXPECT_NE(firstError(root_).find("rank-00001.bin' is 40 bytes"), std::string::npos)
        << firstError(root_);
    EXPECT_EQ(verifyFiles(openCheckpoint(root_))[1].state, FileCheck::State::WrongSize);
    fs::remove(f1); // missing
    EXPECT_NE(firstError(root_).find("rank-00001.bin' is missing"), std::string::npos)
        << firstError(root_);
    EXPECT_EQ(verifyFiles(openCheckpoint(root_))[1].state, FileCheck::State::Missing);
    // A folder or a FIFO in its place is named as such, not as a file of the wrong size.
    fs::create_directory(f1);
    EXPECT_EQ(verifyFiles(openCheckpoint(root_))[1].state, FileCheck::State::Unreadable);
    EXPECT_EQ(verifyFiles(openCheckpoint(root_))[1].problem, "a folder, not a file");
    fs::remove(f1);
    ASSERT_EQ(::mkfifo(f1.c_str(), 0600), 0);
    EXPECT_EQ(verifyFiles(openCheckpoint(root_))[1].state, FileCheck::State::Unreadable);
    EXPECT_EQ(verifyFiles(openCheckpoint(root_))[1].problem,
              "not a regular file (a device, FIFO or socket)");
    fs::remove(f1);
    // 'latest' naming a step that is not there.
    { std::ofstream(root_ + "/latest", std::ios::trunc) << "step-99\n"; }
    EXPECT_NE(firstError(root_).find("latest' names 'step-99', which is not a step folder"),
              std::string::npos)
        << firstError(root_);
    // Not a checkpoint at all.
    EXPECT_NE(firstError(root_ + "/nothing").find("cannot open the checkpoint"), std::string::npos);
    fs::create_directory(root_ + "/empty");
    EXPECT_NE(firstError(root_ + "/empty").find("is not a checkpoint"), std::string::npos);
}

// Edits metadata.json and returns the loader's message.
std::string withMetadata(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
    const std::string path = dir + "/metadata.json";
    std::ifstream in(path);
    nlohmann::json j = nlohmann::json::parse(in);
    in.close();
    edit(j);
    std::ofstream(path, std::ios::trunc) << j.dump();
    try {
        openCheckpoint(dir);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
        return e.what();
    }
    return "";
}

TEST_F(checkpointDir, MetadataOfAnotherShapeVersionOrLayoutIsRefused) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero1, 1));
    const std::string dir = saveAs(root_, Strategy::Zero1, 4, truth);
    const std::string good = dir + "/metadata.json";
    const std::string keep = good + ".keep";
    fs::copy_file(good, keep);
    auto restore = [&] { fs::copy_file(keep, good, fs::copy_options::overwrite_existing); };
    struct Case {
        std::function<void(nlohmann::json&)> edit;
        std::string says;
    };
    const std::vector<Case> cases = {
        {[](nlohmann::json& j) { j["version"] = 3; },
         "format version 3; this build reads versions 1 to 2"},
        {[](nlohmann::json& j) { j["files"][1]["ranges"][0]["chunks"].erase(0); },
         "chunks has 2 hashes; elements"},
        {[](nlohmann::json& j) { j["files"][1]["ranges"][0]["chunks"][0] = std::string(64, 'a'); },
         "sha256 does not match the file's chunk hashes"},
        {[](nlohmann::json& j) { j["hash_chunk_elements"] = 3; },
         "hash_chunk_elements is 3, outside [16,"},
        {[](nlohmann::json& j) { j["format"] = "something"; }, "is not a ShardScope checkpoint"},
        {[](nlohmann::json& j) { j["model"]["d_model"] = 14; }, "model says"},
        {[](nlohmann::json& j) { j["units"][1]["elements"] = 1; },
         "unit 1 is 'block0' of 1 elements"},
        {[](nlohmann::json& j) {
             j["files"][2]["ranges"][0]["end"] = j["files"][2]["ranges"][0]["end"].get<int>() - 1;
         },
         "bytes; its ranges make"},
        {[](nlohmann::json& j) { j["files"][3]["rank"] = 2; }, "lists rank 2's file twice"},
        {[](nlohmann::json& j) { j["files"][1]["name"] = "../../etc/passwd"; },
         "should be named 'rank-00001.bin'"},
        {[](nlohmann::json& j) { j["files"].erase(3); }, "miss elements"},
        {[](nlohmann::json& j) { j["world_size"] = 100000; }, "world_size is 100000, outside"},
        {[](nlohmann::json& j) { j["world_size"] = 5; },
         "lists no file for rank 4 of a world of 5"},
        {[](nlohmann::json& j) { j["files"][0]["sha256"] = "xyz"; }, "is not a sha256"},
        {[](nlohmann::json& j) { j["params"][0]["offset"] = 3; }, "does not match the model shape"},
        {[](nlohmann::json& j) { j["pipe_parallel"] = 3; },
         "pipe_parallel (3) does not divide world_size 4"},
        {[](nlohmann::json& j) { j["pipe_parallel"] = 0; }, "pipe_parallel is 0, outside"},
        {[](nlohmann::json& j) { j["pipe_parallel"] = "two"; }, "pipe_parallel is not an integer"},
    };
    for (const Case& c : cases) {
        restore();
        const std::string said = withMetadata(dir, c.edit);
        EXPECT_NE(said.find(c.says), std::string::npos)
            << "expected '" << c.says << "' in: " << said;
        EXPECT_EQ(said.find('\n'), std::string::npos) << said;
        EXPECT_EQ(said.find("the metadata the "), std::string::npos)
            << "reads as a sentence: " << said;
    }
    restore();
    std::ofstream(good, std::ios::trunc) << std::string(100000, '[');
    try {
        openCheckpoint(dir);
        ADD_FAILURE() << "deep nesting accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("nested deeper"), std::string::npos) << e.what();
    }
}

// Loads rank `rank` of `world` under `s`; the stats, and the loaded state in `out` (per unit).
LoadStats loadRank(const Opened& c, Strategy s, int world, int rank, Truth& out) {
    const plan::Policy policy = policyOf(s, world);
    const Placement p = placementOf(policy, world, rank);
    std::vector<SliceTarget> targets;
    out = {};
    for (std::size_t u = 0; u < c.meta.units.size(); ++u) {
        const Span own = ownedSpan(p, policy.shardOptimizer, static_cast<std::int32_t>(u),
                                   c.meta.units[u].elements);
        out.master.emplace_back(own.elements(), -1.0f);
        out.m.emplace_back(own.elements(), -1.0f);
        out.v.emplace_back(own.elements(), -1.0f);
    }
    for (std::size_t u = 0; u < c.meta.units.size(); ++u)
        targets.push_back({ownedSpan(p, policy.shardOptimizer, static_cast<std::int32_t>(u),
                                     c.meta.units[u].elements),
                           out.master[u].data(), out.m[u].data(), out.v[u].data()});
    return load(c, targets);
}

// A unit whose blocks are larger than a write batch (8 MiB): the writer splits them across
// writevs, and the file still loads bit for bit and verifies.
TEST_F(checkpointDir, BlocksLargerThanAWriteBatchRoundTrip) {
    Metadata m = baseMeta(Strategy::Ddp, 1);
    describeModel(m, plan::GptShape{1, 256, 4, 8300, 16},
                  1); // embedding: 2.1 M elements, 8.5 MB a block
    ASSERT_GT(m.units[0].elements * sizeof(float), std::uint64_t{8} << 20);
    const Truth truth = truthFor(m);
    const std::string temp = tempDirName(m.step, newSaveId());
    createTemp(root_, temp);
    std::vector<SliceData> slices;
    for (std::size_t u = 0; u < m.units.size(); ++u)
        slices.push_back({Span{static_cast<std::int32_t>(u), 0, m.units[u].elements},
                          truth.master[u].data(), truth.m[u].data(), truth.v[u].data()});
    m.files.push_back(writeRankFile(root_, temp, 0, slices));
    const std::string dir = commit(root_, temp, m);
    EXPECT_EQ(fs::file_size(dir + "/" + dataFileName(0)), m.paramCount * kBytesPerElement);
    Truth back;
    loadRank(openCheckpoint(dir), Strategy::Ddp, 1, 0, back);
    EXPECT_TRUE(back.master == truth.master && back.m == truth.m && back.v == truth.v);
    for (const FileCheck& f : verifyFiles(openCheckpoint(dir)))
        EXPECT_EQ(f.state, FileCheck::State::Ok) << f.name;
}

TEST_F(checkpointDir, LoadReadsOnlyTheChunksItsShardOverlaps) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    constexpr std::uint64_t k = 16;
    for (const auto& [from, n, to, mm] : {std::tuple{Strategy::Zero3, 3, Strategy::Zero3, 2},
                                          {Strategy::Ddp, 1, Strategy::Zero3, 8},
                                          {Strategy::Ddp, 3, Strategy::FsdpHybridShard, 4},
                                          {Strategy::Zero1, 5, Strategy::Zero3, 4}}) {
        const std::string root = root_ + "/" + std::to_string(n) + "-" + std::to_string(mm);
        const Opened c = openCheckpoint(saveAs(root, from, n, truth, k));
        std::uint64_t read = 0, wholeRanges = 0;
        for (int r = 0; r < mm; ++r) {
            Truth got;
            const LoadStats st = loadRank(c, to, mm, r, got);
            const plan::Policy policy = policyOf(to, mm);
            std::vector<Span> needs;
            for (std::size_t u = 0; u < c.meta.units.size(); ++u) {
                needs.push_back(ownedSpan(placementOf(policy, mm, r), policy.shardOptimizer,
                                          static_cast<std::int32_t>(u), c.meta.units[u].elements));
                ASSERT_TRUE(std::equal(got.master[u].begin(), got.master[u].end(),
                                       truth.master[u].begin() +
                                           static_cast<std::ptrdiff_t>(needs.back().begin)));
                ASSERT_TRUE(std::equal(got.v[u].begin(), got.v[u].end(),
                                       truth.v[u].begin() +
                                           static_cast<std::ptrdiff_t>(needs.back().begin)));
            }
            const std::vector<Read> reads = planReads(c.meta, needs);
            // The plan the Checkpoints page draws is what the loader read, byte for byte.
            std::uint64_t planned = 0;
            for (const FileBytes& b : bytesToRead(c.meta, needs))
                planned += b.end - b.begin;
            EXPECT_EQ(planned, st.bytesRead);
            // At most one partly needed chunk at each end of each block's part.
            EXPECT_LE(st.bytesRead,
                      st.bytesNeeded + reads.size() * kStates * 2 * (k - 1) * sizeof(float));
            EXPECT_GE(st.bytesRead, st.bytesNeeded);
            for (const Read& rd : reads)
                wholeRanges += c.meta.files[rd.file].ranges[rd.range].bytes();
            read += st.bytesRead;
        }
        // Reading each touched range whole (what one checksum per range forces) reads more.
        EXPECT_LT(read, wholeRanges) << n << " → " << mm;
    }
}

TEST_F(checkpointDir, ADamagedChunkOutsideTheShardIsNeverReadButVerifyFindsIt) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    const std::string dir = saveAs(root_, Strategy::Zero3, 1, truth, 16);
    const Opened c = openCheckpoint(dir);
    // The last master element of unit 0: owned by rank 1 of 2, not by rank 0.
    const std::uint64_t at = (c.meta.units[0].elements - 1) * sizeof(float);
    {
        std::fstream f(dir + "/rank-00000.bin", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(at));
        char ch = 0;
        f.read(&ch, 1);
        ch = static_cast<char>(ch ^ 0x01);
        f.seekp(static_cast<std::streamoff>(at));
        f.write(&ch, 1);
    }
    Truth got;
    EXPECT_NO_THROW(loadRank(c, Strategy::Zero3, 2, 0, got));
    try {
        loadRank(c, Strategy::Zero3, 2, 1, got);
        ADD_FAILURE() << "a damaged chunk was loaded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("rank-00000.bin' fails its checksum"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("unit '" + c.meta.units[0].name + "'"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(verifyFiles(c)[0].state, FileCheck::State::BadChecksum);
}

TEST_F(checkpointDir, VersionOneCheckpointsStillLoadAndVerify) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    const std::string dir = saveAs(root_, Strategy::Zero3, 3, truth);
    // Rewrite the metadata as version 1 wrote it: one sha256 per range, no chunks.
    Metadata m = openCheckpoint(dir).meta;
    m.version = 1;
    for (DataFile& f : m.files) {
        std::ifstream in(dir + "/" + f.name, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
        f.sha256 = sha256Hex(bytes);
        std::uint64_t off = 0;
        for (Range& r : f.ranges) {
            r.sha256 = sha256Hex(std::string_view(bytes).substr(off, r.bytes()));
            r.chunks.clear();
            off += r.bytes();
        }
    }
    const std::string text = toJson(m);
    EXPECT_EQ(text.find("hash_chunk_elements"), std::string::npos);
    EXPECT_EQ(text.find("chunks"), std::string::npos);
    std::ofstream(dir + "/metadata.json", std::ios::trunc) << text;
    const Opened c = openCheckpoint(dir);
    ASSERT_EQ(c.meta.version, 1);
    for (const FileCheck& f : verifyFiles(c))
        EXPECT_EQ(f.state, FileCheck::State::Ok) << f.name << ": " << f.problem;
    for (int r = 0; r < 2; ++r) {
        Truth got;
        loadRank(c, Strategy::Zero3, 2, r, got);
        const Span s = ownedSpan(placementOf(policyOf(Strategy::Zero3, 2), 2, r), true, 1,
                                 c.meta.units[1].elements);
        EXPECT_TRUE(std::equal(got.m[1].begin(), got.m[1].end(),
                               truth.m[1].begin() + static_cast<std::ptrdiff_t>(s.begin)));
    }
    fs::resize_file(dir + "/rank-00002.bin", 8);
    EXPECT_EQ(verifyFiles(c)[2].state, FileCheck::State::WrongSize);
}

// A conversion of an older step into the folder that holds a newer one (`--resume ck/step-3
// --steps 0 --save ck`) writes step-3 but never moves `latest` back from step-5.
TEST_F(checkpointDir, LatestNeverMovesBackwards) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    saveAs(root_, Strategy::Zero3, 2, truth, kDefaultChunkElements, 3);
    saveAs(root_, Strategy::Zero3, 2, truth, kDefaultChunkElements, 5);
    EXPECT_EQ(listCheckpoints(root_).latest, "step-5");
    const std::string dir = saveAs(root_, Strategy::Zero3, 3, truth, kDefaultChunkElements, 3);
    EXPECT_EQ(dir, root_ + "/step-3");
    const Listing l = listCheckpoints(root_);
    EXPECT_EQ(l.latest, "step-5");
    ASSERT_EQ(l.steps.size(), 2u);
    EXPECT_EQ(l.steps[0].meta->worldSize, 3); // the conversion itself landed
    EXPECT_EQ(openCheckpoint(root_).meta.step, 5);
    saveAs(root_, Strategy::Zero3, 2, truth, kDefaultChunkElements, 7);
    EXPECT_EQ(listCheckpoints(root_).latest, "step-7");
    // A `latest` naming a step that is not there holds nothing back.
    { std::ofstream(root_ + "/latest", std::ios::trunc) << "step-9\n"; }
    saveAs(root_, Strategy::Zero3, 2, truth, kDefaultChunkElements, 8);
    EXPECT_EQ(listCheckpoints(root_).latest, "step-8");
    EXPECT_EQ(openCheckpoint(root_).meta.step, 8);
}

TEST_F(checkpointDir, ASaveThatFailsLeavesThePreviousCheckpointAndLatest) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    saveAs(root_, Strategy::Zero3, 2, truth);
    // An interrupted save: its temporary folder stays, loading ignores it, inspect lists it.
    Metadata next = baseMeta(Strategy::Zero3, 2);
    next.step = 4;
    const std::string temp = tempDirName(4, "dead");
    createTemp(root_, temp);
    std::ofstream(root_ + "/" + temp + "/rank-00000.bin") << "partial";
    const Opened c = openCheckpoint(root_);
    EXPECT_EQ(c.meta.step, 3);
    const Listing l = listCheckpoints(root_);
    EXPECT_EQ(l.latest, "step-3");
    ASSERT_EQ(l.temps.size(), 1u);
    EXPECT_EQ(l.temps[0], temp);
}

TEST_F(checkpointDir, ExportNeverReplacesAFileOfTheCheckpointItReads) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    const std::string dir = saveAs(root_, Strategy::Zero3, 2, truth);
    const Opened c = openCheckpoint(root_);
    fs::create_symlink(dir + "/rank-00001.bin", root_ + "/alias");
    for (const std::string& out :
         {dir + "/metadata.json", dir + "/rank-00000.bin", root_ + "/latest", root_ + "/alias",
          dir + "/weights.safetensors", root_ + "/latest.new"}) {
        try {
            exportSafetensors(c, out, false, "--out");
            ADD_FAILURE() << "exported over " << out;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
            EXPECT_NE(std::string(e.what()).find("could replace a part of the checkpoint"),
                      std::string::npos)
                << e.what();
        }
    }
    for (const FileCheck& f : verifyFiles(openCheckpoint(root_)))
        EXPECT_EQ(f.state, FileCheck::State::Ok) << f.name;
}

TEST_F(checkpointDir, AnExportStoppedBetweenUnitsLeavesNoFileBehind) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    saveAs(root_, Strategy::Zero3, 2, truth);
    const Opened c = openCheckpoint(root_);
    fs::create_directory(root_ + "/out");
    int units = 0;
    EXPECT_THROW(exportSafetensors(c, root_ + "/out/model.safetensors", true, "--out",
                                   [&] {
                                       if (++units == 2)
                                           throw Error(ErrorKind::Comm, "interrupted");
                                   }),
                 Error);
    EXPECT_EQ(units, 2);
    EXPECT_TRUE(fs::is_empty(root_ + "/out")) << "neither the output nor its temporary file";
    units = 0;
    exportSafetensors(c, root_ + "/out/model.safetensors", false, "--out", [&] { ++units; });
    EXPECT_EQ(units, static_cast<int>(c.meta.units.size())) << "called before every unit";
}

TEST_F(checkpointDir, ExportWritesSafetensorsWithoutPadding) {
    const Truth truth = truthFor(baseMeta(Strategy::Zero3, 1));
    saveAs(root_, Strategy::Zero3, 3, truth);
    const Opened c = openCheckpoint(root_);
    const std::string out = root_ + "/model.safetensors";
    const std::uint64_t bytes = exportSafetensors(c, out, true, "--out");
    ASSERT_EQ(fs::file_size(out), bytes);
    std::ifstream in(out, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::uint64_t len = 0;
    for (int i = 7; i >= 0; --i)
        len = (len << 8) | static_cast<unsigned char>(all[static_cast<std::size_t>(i)]);
    ASSERT_LE(8 + len, all.size());
    EXPECT_EQ((8 + len) % 8, 0u);
    const nlohmann::json h = nlohmann::json::parse(all.substr(8, len));
    const std::string data = all.substr(8 + len);
    EXPECT_EQ(data.size(), c.meta.paramCount * kBytesPerElement);
    for (const ParamEntry& p : c.meta.params) {
        for (int s = 0; s < kStates; ++s) {
            const std::string name =
                s == 0 ? p.name
                       : p.name + "." + std::string(kStateNames[static_cast<std::size_t>(s)]);
            ASSERT_TRUE(h.contains(name)) << name;
            const auto& e = h[name];
            EXPECT_EQ(e["dtype"], "F32");
            const auto b = e["data_offsets"][0].get<std::uint64_t>();
            const auto en = e["data_offsets"][1].get<std::uint64_t>();
            ASSERT_EQ(en - b, p.rows * p.cols * 4) << name;
            const auto& src = s == 0 ? truth.master : s == 1 ? truth.m : truth.v;
            EXPECT_EQ(std::memcmp(data.data() + b,
                                  src[static_cast<std::size_t>(p.unit)].data() + p.offset, en - b),
                      0)
                << name;
        }
    }
}

// A checkpoint written by an earlier build (its own SHA-256 code, before OpenSSL's) verifies
// whole and chunk by chunk, and a flipped byte in a copy of it does not.
TEST(checkpointFixture, ACheckpointOfAnEarlierBuildStillVerifies) {
    const std::string fixture =
        std::string(SHARDSCOPE_SOURCE_DIR) + "/tests/data/checkpoint_v2_tiny_2r/step-1";
    const Opened c = openCheckpoint(fixture);
    ASSERT_EQ(c.meta.version, 2);
    ASSERT_EQ(c.meta.files.size(), 2u);
    for (const FileCheck& f : verifyFiles(c))
        EXPECT_EQ(f.state, FileCheck::State::Ok) << f.name << ": " << f.problem;

    const fs::path copy =
        fs::temp_directory_path() / ("shardscope-fixture-" + std::to_string(::getpid()));
    fs::remove_all(copy);
    fs::copy(fixture, copy, fs::copy_options::recursive);
    {
        std::fstream f(copy / "rank-00001.bin", std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(300000);
        const char byte = static_cast<char>(f.get());
        f.seekp(300000);
        f.put(static_cast<char>(byte ^ 0x20));
    }
    // A key given twice in the metadata is refused (which one counts would depend on the reader).
    {
        std::ifstream in(copy / "metadata.json");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::size_t at = text.find("\"seed\"");
        ASSERT_NE(at, std::string::npos);
        text.insert(at, "\"seed\": 1, ");
        const fs::path twice = copy.string() + "-twice";
        fs::copy(copy, twice, fs::copy_options::recursive);
        std::ofstream(twice / "metadata.json", std::ios::trunc) << text;
        try {
            openCheckpoint(twice.string());
            ADD_FAILURE() << "a duplicate key was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Format);
            EXPECT_NE(std::string(e.what()).find("key \"data.seed\" is given twice"),
                      std::string::npos)
                << e.what();
        }
        fs::remove_all(twice);
    }
    const std::vector<FileCheck> checks = verifyFiles(openCheckpoint(copy.string()));
    EXPECT_EQ(checks[0].state, FileCheck::State::Ok);
    EXPECT_EQ(checks[1].state, FileCheck::State::BadChecksum);
    fs::remove_all(copy);
}

} // namespace
} // namespace shardscope::checkpoint
