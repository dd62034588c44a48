#pragma once
// The one mechanism behind every strategy, shared by its source files: sharded.cpp (unshard,
// reshard, gradient reduction, the optimizer's slices), sharded_offload.cpp (ZeRO-Offload's
// tier crossings) and sharded_weights.cpp (the final weights, gathered). Private to the strategy
// library: the interface is strategy/sharding.h.
#include "plan/buckets.h"
#include "plan/pipeline.h"
#include "plan/policy.h"
#include "strategy/sharding.h"

#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <vector>

namespace shardscope::strategy::detail {

using device::Buffer;

struct UnitState {
    const plan::UnitLayout* layout = nullptr;
    std::uint64_t n = 0;      // elements
    std::uint64_t padded = 0; // P: a multiple of the shard count
    std::uint64_t shard = 0;  // S = P / shards
    std::uint64_t lo = 0;     // this rank's slice [lo, lo + S)
    bool persistent = false;  // ZeRO-3 param persistence: param_full kept whole (n elements)
    Buffer paramFull, paramShard, gradFull, gradShard, master, adamM, adamV;
    Buffer stage; // device copy of a host-tier param shard, the all-gather's input
    // NVMe tier: master, m, v of the shard in one file region of 3 × nvmeRegion bytes at nvmeAt,
    // staged in host memory around the unit's update; `rounded` keeps the updated bf16 weights
    // for the parameter all-gather after the optimizer (ZeRO-1/2, persistent units).
    std::uint64_t nvmeElements = 0, nvmeAt = 0, nvmeRegion = 0;
    Buffer nvmeStage, rounded;
    offload::NvmeStore::Ticket nvmeTicket = 0; // the read or write of nvmeStage in flight (0: none)
    // --offload-params nvme: the bf16 param shard in a file region of paramRegion bytes at
    // paramAt; paramRead stages it on its way to the device (read ahead of the all-gather),
    // paramWrite the updated shard on its way back (written behind the optimizer).
    std::uint64_t paramAt = 0, paramRegion = 0;
    Buffer paramRead, paramWrite;
    offload::NvmeStore::Ticket paramReadTicket = 0, paramWriteTicket = 0;
    Transfer nvmeTransfer = Transfer::None; // … which of the two (its events' direction)
};

// Ledger cells of bytes that live in files (the NVMe tier): counted while this lives.
struct NvmeCells {
    Ledger* ledger = nullptr;
    struct Cell {
        Category category;
        std::int32_t unit;
        std::uint64_t bytes;
    };
    std::vector<Cell> cells;
    NvmeCells() = default;
    NvmeCells(const NvmeCells&) = delete;
    NvmeCells& operator=(const NvmeCells&) = delete;
    void add(Category c, std::int32_t unit, std::uint64_t bytes) {
        ledger->recordAlloc(c, Tier::Nvme, bytes, unit);
        cells.push_back({c, unit, bytes});
    }
    ~NvmeCells() {
        for (auto it = cells.rbegin(); it != cells.rend(); ++it)
            ledger->recordFree(it->category, Tier::Nvme, it->bytes, it->unit);
    }
};

class Sharded final : public Sharding {
public:
    Sharded(const StrategyConfig& config, device::Device& device, const CommGroups& groups);
    // No block of the NVMe tier may still be in flight into a staging buffer freed below.
    ~Sharded() override {
        if (nvme_) nvme_->waitAll();
    }

    std::string name() const override { return std::string(plan::strategyName(config_.strategy)); }
    const std::vector<plan::UnitLayout>& units() const override { return layouts_; }
    comm::Communicator& world() override { return *groups_.world; }
    int dataRank() const override { return groups_.data->rank(); }
    int dataRanks() const override { return groups_.data->size(); }
    comm::Communicator& dataGroup() override { return *groups_.data; }
    comm::Communicator* tensorGroup() override { return groups_.tensor; }
    comm::Communicator* pipeGroup() override { return groups_.pipe; }
    std::int32_t firstUnit() const override { return first_; }
    std::int32_t endUnit() const override { return end_; }

    void beforeForward(std::int32_t unit) override;
    void afterForward(std::int32_t unit) override;
    void beforeBackward(std::int32_t unit) override;
    ParamView params(std::int32_t unit) const override;
    void storeGradients(std::int32_t unit, std::span<const float> grads,
                        const MicroStep& micro) override;
    void afterInputGradients(std::int32_t unit) override;
    void afterWeightGradients(std::int32_t unit, const MicroStep& micro) override;
    void endBackward(const MicroStep& micro) override;
    OwnedSlice owned(std::int32_t unit) override;
    OwnedSlice beginUpdate(std::int32_t unit, OwnedSlice slice) override;
    void endUpdate(std::int32_t unit) override;
    void afterOptimizer() override;
    std::vector<std::vector<float>> gatherWeights() override;
    void discardTransients() override;

private:
    UnitState& state(std::int32_t u) { return units_.at(static_cast<std::size_t>(u)); }
    std::int32_t unitOf(const UnitState& s) const {
        return static_cast<std::int32_t>(&s - units_.data());
    }
    std::int32_t unitCount() const { return static_cast<std::int32_t>(units_.size()); }
    // The states of this rank's stage (every unit without pipeline parallelism).
    auto held() {
        return units_ | std::views::filter([this](UnitState& s) { return holds(unitOf(s)); });
    }
    bool holds(std::int32_t u) const { return chunkOf(u) >= 0; }
    // The chunk of the stage that holds unit u (-1: none); its units.
    int chunkOf(std::int32_t u) const;
    const plan::StageUnits& chunk(std::int32_t u) const {
        return chunks_.at(static_cast<std::size_t>(chunkOf(u)));
    }
    comm::Communicator& shardComm() { return *groups_.shard; }
    comm::DType dtype() const { return mixed_ ? comm::DType::Bf16 : comm::DType::F32; }
    Buffer allocate(std::uint64_t elements, Category c, std::int32_t unit, bool zeroed = false,
                    Tier tier = Tier::Device) {
        return device_.allocate(elements * eb_, {c, tier, unit}, zeroed);
    }
    static bool onHost(const Buffer& b) { return b.tag().tier == Tier::Host; }
    // Copies into a buffer of either tier (host tier: plain memory; nothing to copy on a
    // device without memory).
    void put(const Buffer& to, std::uint64_t byteOffset, const void* from, std::uint64_t bytes);
    // A device-side result into a host-tier buffer: device → host, accumulating in the working
    // dtype if asked (through a host staging buffer).
    void intoHost(Buffer& to, std::uint64_t elementOffset, const void* deviceSrc,
                  std::uint64_t count, bool accumulate, std::int32_t unit);
    // bf16 of `count` host fp32 values into `out` (device or host memory).
    void roundInto(const float* master, std::uint64_t count, void* out, bool outOnHost,
                   std::int32_t unit);
    // NVMe transfers as events (core/event.h; device ↔ host copies: Device::recordedUpload/
    // recordedDownload): a span opens when submitted and closes when the rank sees it complete.
    void transferEvent(EventKind kind, Transfer t, std::int32_t unit, std::uint64_t bytes);
    void pollNvme(); // closes the spans of NVMe transfers that completed meanwhile
    void setupNvme(UnitState& s, std::int32_t unit, std::uint64_t elements);
    void writeInitialNvme(UnitState& s, std::int32_t unit, std::span<const float> master);
    void startNvmeRead(UnitState& s, std::int32_t unit);
    void finishNvmeTransfer(UnitState& s);                 // waits for its read or write
    std::vector<float> readNvmeMaster(const UnitState& s); // instrumentation (gatherWeights)
    // --offload-params nvme (the shard of a unit that is gathered, not persistent, in a file).
    bool paramsOnNvme(const UnitState& s) const {
        return paramTier_ == Tier::Nvme && policy_.shardParams && !s.persistent;
    }
    void setupNvmeParams(UnitState& s, std::int32_t unit);
    void writeInitialNvmeParams(UnitState& s, std::int32_t unit, std::span<const float> values);
    void
    startParamRead(std::int32_t unit); // if the unit will be gathered and its read is not out yet
    void beginParamRead(UnitState& s, std::int32_t unit);
    const void* arrivedParams(UnitState& s,
                              std::int32_t unit); // waits for the read: the shard on the host
    // The updated bf16 shard into the file: rounded from a host master, or from the device
    // master (hostMaster null) through a device → host copy; drains behind the next unit.
    void writeNvmeParams(std::int32_t unit, const float* hostMaster);
    void finishParamWrite();
    void validateOffload() const;
    void setup();
    void initialValues(std::int32_t unit, std::vector<float>& padded) const;
    std::vector<std::vector<float>> stageWeights();
    std::vector<std::vector<float>> gatherSlices();
    void gather(std::int32_t unit, bool prefetch);
    void finishInflight();
    void reshard(std::int32_t unit);
    void packForReduce(std::int32_t unit, const MicroStep& micro);
    void flushReduce(const plan::Bucket& bucket, const MicroStep& micro);
    void reduceUnit(std::int32_t unit, const MicroStep& micro);
    void updateComputeWeights(); // after the optimizer: the working copies from the master weights
    void gatherUpdatedParams();
    void writeOwnParams(UnitState& s, std::uint64_t offset, std::uint64_t length, void* out);
    void gatherPersistent(UnitState& s, std::int32_t unit);
    // dst[i] (+)= src[i] in the working dtype: bf16 adds in fp32 and rounds once.
    void combine(void* dst, const void* src, std::uint64_t count, bool accumulate) const;

    StrategyConfig config_;
    plan::Policy policy_;
    device::Device& device_;
    device::Ops& ops_; // copies and conversions on the device's memory
    CommGroups groups_;
    bool mixed_;
    std::uint64_t eb_;                  // bytes per element of params and grads (2 bf16, 4 fp32)
    Tier optimizerTier_ = Tier::Device; // master, m, v
    Tier gradTier_ = Tier::Device;      // gradient shards (ZeRO-2/3, FSDP)
    Tier paramTier_ = Tier::Device;     // param shards (ZeRO-3, FSDP)
    std::unique_ptr<offload::NvmeStore>
        nvme_; // the rank's file (absent on a device without memory)
    NvmeCells nvmeCells_;
    std::uint64_t shards_ = 1;
    std::uint64_t shardRank_ = 0;
    std::vector<plan::UnitLayout> layouts_;
    std::vector<UnitState> units_;
    std::int32_t first_ = 0, end_ = 0;     // the span of the stage's units [first_, end_)
    std::vector<plan::StageUnits> chunks_; // its chunks (one without virtual stages)

    CollectiveOp reduceOp_ =
        CollectiveOp::AllReduce; // of the reduce buckets: all-reduce or reduce-scatter
    // Per chunk, in backward order (U−1 … 0): a chunk's backward runs whole in one pipeline op, so
    // a plan is packed and flushed in one go, the cursor back at 0 when it completes.
    std::vector<std::vector<plan::Bucket>> reducePlans_;
    std::size_t reduceChunk_ = 0;          // cursor: the plan being packed
    std::vector<plan::Bucket> gatherPlan_; // unit order 0 … U−1 (ZeRO-1/2 after the optimizer)
    std::size_t reduceBucket_ = 0;         // cursor: the bucket being packed
    std::size_t reducePiece_ = 0;
    Buffer bucket_;                       // staging of the bucket being packed (comm_buffer)
    std::int32_t inflightUnit_ = kNoUnit; // the prefetch whose all-gather is in flight
    std::uint64_t inflightTicket_ = 0;
    std::int32_t paramWriting_ = kNoUnit; // the unit whose param shard write is in flight
};

} // namespace shardscope::strategy::detail
