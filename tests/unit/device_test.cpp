// CpuDevice and Buffer: every allocation is in the ledger, frees happen exactly once (RAII).
#include "core/error.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <vector>

namespace shardscope {
namespace {

TEST(device, BuffersAreTaggedCountedAndFreedOnce) {
    Ledger ledger;
    device::CpuDevice cpu(ledger);
    EXPECT_EQ(cpu.kind(), device::DeviceKind::Cpu);
    {
        device::Buffer a = cpu.allocate(100, {Category::Activation, Tier::Device, 2});
        device::Buffer b = cpu.allocateArray<float>(10, {Category::AdamM, Tier::Host, 0}, true);
        EXPECT_EQ(ledger.live().at(Category::Activation, Tier::Device), 100u);
        EXPECT_EQ(ledger.live().at(Category::AdamM, Tier::Host), 40u);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u) << "64-byte aligned";
        for (float v : b.as<float>())
            EXPECT_EQ(v, 0.0f);
        EXPECT_EQ(b.tag().category, Category::AdamM);

        device::Buffer moved = std::move(a);
        EXPECT_TRUE(a.empty()); // NOLINT(bugprone-use-after-move): moved-from is defined empty
        EXPECT_EQ(ledger.live().at(Category::Activation, Tier::Device), 100u)
            << "a move is not a free";
        moved = cpu.allocate(30, {Category::Activation, Tier::Device, 2}); // frees the 100 bytes
        EXPECT_EQ(ledger.live().at(Category::Activation, Tier::Device), 30u);
        EXPECT_EQ(ledger.peak().at(Category::Activation, Tier::Device), 130u);
        moved.reset();
        moved.reset(); // idempotent
        EXPECT_EQ(ledger.live().at(Category::Activation, Tier::Device), 0u);
    }
    EXPECT_EQ(ledger.liveBytes(), 0u);
    EXPECT_EQ(ledger.peakBytes(), 170u);
    EXPECT_TRUE(cpu.allocate(0, {}).empty()) << "zero bytes: no buffer, no ledger entry";
    EXPECT_EQ(ledger.allocations(), 3u);
}

TEST(device, CapacityRefusalLeavesTheLedgerUntouched) {
    Ledger ledger;
    ledger.setCapacity(Tier::Device, 1000);
    device::CpuDevice cpu(ledger);
    device::Buffer a = cpu.allocate(600, {Category::ParamFull, Tier::Device, 0});
    try {
        device::Buffer b = cpu.allocate(500, {Category::GradFull, Tier::Device, 1});
        FAIL() << "the budget must refuse 600 + 500 > 1000";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    }
    EXPECT_EQ(ledger.liveBytes(), 600u);
    EXPECT_EQ(ledger.peakBytes(), 600u);
    // Host tier has its own (unlimited) budget.
    device::Buffer host = cpu.allocate(5000, {Category::MasterFp32, Tier::Host, 0});
    EXPECT_EQ(ledger.liveTierBytes(Tier::Host), 5000u);
    device::Buffer exact = cpu.allocate(400, {Category::GradFull, Tier::Device, 1});
    EXPECT_EQ(ledger.liveTierBytes(Tier::Device), 1000u) << "exactly at capacity is allowed";
}

} // namespace
} // namespace shardscope
