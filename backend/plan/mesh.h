#pragma once
// The P × T × D mesh of a job's ranks, as the worker splits its communicators and as the replay
// tells who talked to whom: rank = stage·(T·D) + dataRank·T + tpRank — pipeline outermost, then
// data, tensor innermost (Megatron's order: a TP group, whose all-reduces run inside every layer,
// is T consecutive ranks, the likeliest to share a host; a pipeline hands activations across the
// slowest links least often). TP group = T consecutive ranks (color rank / T); DP group = the
// ranks of one stage with the same TP index; pipeline group = the ranks with the same DP and TP
// index across the stages (group rank = stage). HYBRID's shard groups are consecutive DP ranks
// [k·G, (k+1)·G) of one DP group, its replica groups the same index in every shard group. The
// colors are MPI_Comm_split's (key: the world rank, so members keep rank order); the shared path
// groups the ranks by the same colors. With P = 1 (d = ranks / T) they are the T × D mesh's.
#include <cstddef>
#include <vector>

namespace shardscope::plan {

inline int tensorColor(int rank, int t) {
    return rank / t;
}
inline int dataColor(int rank, int t, int d) {
    return rank / (t * d) * t + rank % t;
}
inline int pipeColor(int rank, int t, int d) {
    return rank % (t * d);
}
inline int shardColor(int rank, int t, int d, int g) {
    const int stage = rank / (t * d), local = rank % (t * d);
    return stage * (t * (d / g)) + (local % t) * (d / g) + (local / t) / g;
}
inline int replicaColor(int rank, int t, int d, int g) {
    const int stage = rank / (t * d), local = rank % (t * d);
    return stage * (t * g) + (local % t) * g + (local / t) % g;
}

// The members of every group with the same color, in rank order within each group.
template <class Color> std::vector<std::vector<int>> groupsBy(int n, Color color) {
    std::vector<std::vector<int>> out;
    for (int r = 0; r < n; ++r) {
        const auto c = static_cast<std::size_t>(color(r));
        if (out.size() <= c) out.resize(c + 1);
        out[c].push_back(r);
    }
    return out;
}

} // namespace shardscope::plan
