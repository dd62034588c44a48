#include "comm/virtual_communicator.h"

#include "core/categories.h"
#include "core/error.h"
#include "device/device.h"

#include <string>
#include <vector>

namespace shardscope::comm {

namespace {

class VirtualCommunicator final : public Communicator {
public:
    VirtualCommunicator(device::Device* device, int size, int rank, VirtualKind kind)
        : Communicator(device), size_(size), rank_(rank), kind_(kind) {
        if (size < 1 || rank < 0 || rank >= size)
            throw Error(ErrorKind::Internal, "virtual communicator: rank " + std::to_string(rank) +
                                                 " of " + std::to_string(size));
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string name() const override { return "virtual"; }
    void barrier() override {}
    std::vector<std::string> gatherBytes(const std::string& local, int root) override {
        if (rank_ != root) return {};
        return std::vector<std::string>(static_cast<std::size_t>(size_), local);
    }

protected:
    void doAllGather(const void*, void*, std::size_t, DType) override {}
    void doReduceScatter(const void*, void*, std::size_t count, DType t) override {
        if (size_ <= 1 || kind_ != VirtualKind::Mpi || !deterministic()) return;
        scratch(count * dtypeBytes(t) * static_cast<std::uint64_t>(size_));
    }
    void doAllReduce(void*, std::size_t count, DType t) override {
        if (size_ <= 1) return;
        const std::uint64_t n = static_cast<std::uint64_t>(size_);
        const std::uint64_t chunk = (count + n - 1) / n;
        if (kind_ == VirtualKind::SharedGroup) {
            scratch(chunk * dtypeBytes(t));
            return;
        }
        if (!deterministic()) return;
        device::Buffer staging = allocate(chunk * n * dtypeBytes(t));
        device::Buffer recv = allocate(chunk * n * dtypeBytes(t));
    }
    void doBroadcast(void*, std::size_t, int) override {}
    // Messages move nothing and complete at once (the counts and events are what a dry run
    // measures).
    std::uint64_t doSend(const void*, std::size_t, int) override { return 0; }
    bool doSendDone(std::uint64_t, bool) override { return true; }
    void doRecv(void*, std::size_t, int) override {}
    double doScalar(double value, bool max) override {
        // Every rank is taken to hold the same value.
        return max ? value : value * size_;
    }

private:
    device::Buffer allocate(std::uint64_t bytes) {
        if (!device_) return {};
        return device_->allocate(bytes, {Category::CommBuffer, Tier::Device, kNoUnit});
    }
    void scratch(std::uint64_t bytes) { device::Buffer b = allocate(bytes); }

    int size_;
    int rank_;
    VirtualKind kind_;
};

} // namespace

std::unique_ptr<Communicator> makeVirtualCommunicator(device::Device* device, int size, int rank,
                                                      VirtualKind kind) {
    return std::make_unique<VirtualCommunicator>(device, size, rank, kind);
}

} // namespace shardscope::comm
