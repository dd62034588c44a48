#pragma once
// The T × D mesh of a job's ranks, as the worker splits its communicators and as the replay
// tells who talked to whom: TP group = T consecutive ranks (color rank / T), DP group = the ranks
// with the same TP index (color rank % T), data-parallel rank = rank / T. HYBRID's shard groups
// are consecutive DP ranks [k·G, (k+1)·G) of one DP group, its replica groups the same index in
// every shard group. The colors are MPI_Comm_split's (key: the world rank, so members keep rank
// order); the shared path groups the ranks by the same colors.
#include <cstddef>
#include <vector>

namespace shardscope::plan {

inline int tensorColor(int rank, int t) {
    return rank / t;
}
inline int dataColor(int rank, int t) {
    return rank % t;
}
inline int shardColor(int rank, int t, int d, int g) {
    return (rank % t) * (d / g) + (rank / t) / g;
}
inline int replicaColor(int rank, int t, int g) {
    return (rank % t) * g + (rank / t) % g;
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
