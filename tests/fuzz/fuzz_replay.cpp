// libFuzzer: a recording's bytes through the decoder AND the replay the GUI builds from them
// (StreamAssembler → ReplayModel → ledger queries, a cursor, the replay clock, the timeline and
// flow indexes, playback navigation and the plotted series). A malformed
// stream may end in Error (the GUI shows it); anything else — a crash, a sanitizer report, another
// exception type — is a finding.
#include "core/error.h"
#include "protocol/protocol.h"
#include "replay/flow_state.h"
#include "replay/playback_nav.h"
#include "replay/rank_series.h"
#include "replay/replay_model.h"
#include "replay/stream_assembler.h"
#include "replay/timeline_index.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace shardscope;

namespace {

void query(const replay::ReplayModel& model) {
    const std::uint64_t n = model.eventCount();
    for (const std::uint64_t k : {std::uint64_t{0}, n / 3, n / 2, n ? n - 1 : 0, n, n + 5}) {
        const replay::LedgerState state = model.stateAt(k);
        if (state.size() != static_cast<std::size_t>(model.worldSize())) __builtin_trap();
        (void)model.replayNsAt(k);
        if (k < n) (void)model.event(k);
    }
    (void)model.indexAtReplayNs(model.totalReplayNs() / 2);
    replay::ReplayCursor cursor(model);
    cursor.moveTo(n / 2);
    cursor.moveTo(n);
    cursor.moveTo(1);
    if (model.stepCount() == 0) return;
    replay::TimelineIndex timeline;
    timeline.reset(model.worldSize());
    timeline.update(model);
    (void)timeline.spanCount();
    for (int rank = 0; rank < timeline.laneCount(); ++rank)
        (void)timeline.spanAt(rank, replay::TimelineRow{}, timeline.endNs() / 2, 10);
    replay::FlowIndex flows;
    flows.reset(model.worldSize());
    flows.update(model);
    for (const std::uint64_t k : {std::uint64_t{0}, n / 2, n}) {
        (void)replay::computeFlowState(model, flows, k);
        for (const auto target : {replay::NavTarget::Event, replay::NavTarget::Unit,
                                  replay::NavTarget::Phase, replay::NavTarget::Step}) {
            (void)replay::nextTarget(model, k, target, model.worldSize() - 1);
            (void)replay::previousTarget(model, k, target, 0);
        }
    }
    for (int rank = 0; rank < model.worldSize() && rank < 4; ++rank)
        (void)replay::rankSeries(model.step(0), rank, 64);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    protocol::StreamDecoder decoder;
    replay::StreamAssembler assembler;
    replay::ReplayModel model;
    // Fed in two pieces, as a socket would, and drained after each.
    const std::size_t split = size > 0 ? data[0] % (size + 1) : 0;
    try {
        for (const std::string_view piece : {bytes.substr(0, split), bytes.substr(split)}) {
            decoder.feed(piece);
            while (auto record = decoder.next())
                assembler.consume(std::move(*record));
            auto out = assembler.take();
            if (out.runInfo) model.reset(out.runInfo);
            model.append(out.steps);
        }
        assembler.flushPartialStep();
        model.append(assembler.take().steps);
    } catch (const Error&) {
        // Refused: what was handed out before the throw must still replay.
    }
    query(model);
    // The whole-file reader agrees or refuses.
    try {
        (void)protocol::decodeRecording(bytes);
    } catch (const Error&) {
    }
    return 0;
}
