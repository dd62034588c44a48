#pragma once
// One rank's view of an N-rank group that does not exist: for dry runs (predict/) on a
// CountingDevice. Every collective goes through the Communicator base as on a real group (the
// CollectiveBegin/End events with kind, bytes and unit reach the device's ledger, CommStats
// counts them), and the scratch a real communicator allocates on the device is allocated and
// freed here in the same sizes and order; no data moves.
//
// Note: the scratch follows the communicator the run would use. Mpi: deterministic
// reduce-scatter stages N chunks, deterministic all-reduce a staging and a receive buffer of
// ⌈count/N⌉·N elements each (comm/mpi_communicator.cpp); non-deterministic reductions use MPI's
// own buffers, outside the ledger. SharedGroup: reduce-scatter needs no scratch, all-reduce one
// chunk of ⌈count/N⌉ (comm/shared_device_communicator.h). A group of one rank has no scratch.
#include "comm/communicator.h"

#include <memory>

namespace shardscope::comm {

enum class VirtualKind : std::uint8_t { Mpi, SharedGroup };

// `size` ranks, this one being `rank` (0 ≤ rank < size); scratch on `device` (may be null).
std::unique_ptr<Communicator> makeVirtualCommunicator(device::Device* device, int size, int rank,
                                                      VirtualKind kind);

} // namespace shardscope::comm
