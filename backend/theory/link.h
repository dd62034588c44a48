#pragma once
// What a step's collectives would cost on a GPU link: an α-β estimate beside the exposed
// communication CPU ranks measure over MPI (a student sees half a step waiting and must learn
// that a GPU cluster's figure differs, and by how much).
//
// Note: ring collectives, nccl-tests' bandwidth definition. One call costs
//   α_call + hops · α_hop + sent / busbw,
// `sent` being what one rank sends (already (G−1)/G of the payload, 2(G−1)/G for an all-reduce:
// the report's comm bytes), `hops` the ring's G−1 steps (2(G−1) for an all-reduce), G the
// group the collective ran in. No congestion, no overlap with compute, no protocol switch with
// the message size: an estimate, and labelled as one wherever it is shown.
#include "core/event.h"

#include <string_view>

namespace shardscope::theory {

struct LinkModel {
    std::string_view name;
    double callLatencyUs; // α per call: launch and the protocol's set-up
    double hopLatencyUs;  // α per ring step
    double busGBs;        // busbw a large collective reaches (10^9 bytes/s)
};

// NVLink 4 between H100 SXM GPUs in one node: latencies of NCCL's ring with its low-latency
// protocol on NVLink (src/graph/tuning.cc: a base of 6.6 µs; 0.47 µs per hop, the per-hop figure
// of its earlier releases), busbw from NVLink 4's 450 GB/s per direction at the 80 % large
// collectives reach. LL's latency with a large message's bandwidth: optimistic for mid-size
// messages, which NCCL sends with protocols of higher latency or lower bandwidth.
inline constexpr LinkModel kNvlinkH100{"H100 NVLink", 6.6, 0.47, 360.0};

struct LinkEstimate {
    double latencySeconds = 0;
    double bandwidthSeconds = 0;
    double seconds() const { return latencySeconds + bandwidthSeconds; }
    LinkEstimate& operator+=(const LinkEstimate& o) {
        latencySeconds += o.latencySeconds;
        bandwidthSeconds += o.bandwidthSeconds;
        return *this;
    }
};

// `calls` collectives of kind `op` over groups of `groupSize` ranks sending `sentBytes` in all
// (per rank). A group of one, no calls or a kind that is no collective cost nothing.
LinkEstimate estimateCollectives(const LinkModel& link, CollectiveOp op, double sentBytes,
                                 double calls, int groupSize);

} // namespace shardscope::theory
