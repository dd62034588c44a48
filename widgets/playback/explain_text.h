#pragma once
// One plain sentence for what is happening at a replay position, e.g. "Rank 2 all-gathers
// block3: 4 shards of 1.2 MB become 4.8 MB of full parameters, freed after its forward."
// Pure (model + position in, translated text out) so tests pin the sentences in English and,
// with the zh_CN translator loaded, in Chinese.
#include "replay/replay_model.h"

#include <QCoreApplication>
#include <QString>
#include <optional>

namespace shardscope::widgets {

class Explain {
    Q_DECLARE_TR_FUNCTIONS(Explain)
public:
    // About the last applied event, i.e. events[index − 1] (index 0: before the run starts).
    static QString explain(const replay::ReplayModel& model, std::uint64_t index,
                           const replay::RunInfo& info);
    // About the last event of `rank` applied by `index` (the focus rank's view): what the rank
    // the user follows is doing, not whichever rank happened to log last.
    static QString explainForRank(const replay::ReplayModel& model, std::uint64_t index,
                                  const replay::RunInfo& info, int rank);
    // The event explainForRank describes: the last one of `rank` applied by `index`, if any.
    static std::optional<std::uint64_t> eventForRank(const replay::ReplayModel& model,
                                                     std::uint64_t index, int rank);
    // The same, for a given event (tests, tooltips).
    static QString sentence(const replay::ReplayModel& model, std::uint64_t eventIndex,
                            const replay::RunInfo& info);

    // The Checkpoints page. Why padding moves with N, with one unit's numbers: its flat buffer
    // of `elements` is padded to a multiple of the shard count (`padN` elements on the N = `n`
    // ranks that saved it, `padM` on the M = `m` that load it).
    static QString checkpointPadding(const QString& unit, std::uint64_t elements, int n,
                                     std::uint64_t padN, int m, std::uint64_t padM);
    // What resharding at load does, with new rank `rank`'s reads as the example.
    static QString reshardingAtLoad(int n, int m, int rank, std::size_t reads, std::size_t files,
                                    std::uint64_t bytes);

private:
    // A tier transfer: what moves, and why it happens there in the offload schedule.
    static QString transferSentence(const replay::ReplayModel& model, std::uint64_t eventIndex,
                                    const replay::RunInfo& info);
};

} // namespace shardscope::widgets
