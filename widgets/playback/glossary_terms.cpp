#include "playback/glossary_terms.h"

#include "common/category_palette.h"

#include <algorithm>
#include <array>

namespace shardscope::widgets {

std::vector<GlossaryEntry> Glossary::entries() {
    std::vector<GlossaryEntry> e = {
        {QStringLiteral("unit"),
         tr("unit"),
         {tr("unit")},
         tr("A sharding unit: the group of parameters gathered and freed together (FSDP: one "
            "wrapped module's flat "
            "parameter; here the embedding, each transformer block and the head). Its flat buffer "
            "is padded to a "
            "multiple of the rank count so every shard has the same size.")},
        {QStringLiteral("shard"),
         tr("shard"),
         {tr("shard")},
         tr("A rank's 1/N slice of a unit's flat buffer. Sharded strategies keep only shards "
            "between uses.")},
        {QStringLiteral("all-gather"),
         tr("unshard (all-gather)"),
         {tr("all-gather"), tr("unshard")},
         tr("Every rank sends its shard to every other rank, so all ranks end with the full unit: "
            "N shards of S bytes "
            "become N × S bytes on each rank. Each rank sends (N−1)/N of the full size.")},
        {QStringLiteral("reshard"),
         tr("reshard"),
         {tr("reshard")},
         tr("Freeing a unit's gathered full parameters after use, keeping only the shard. This is "
            "what keeps ZeRO-3 / "
            "FSDP memory at 1/N of the model plus the units in flight.")},
        {QStringLiteral("reduce-scatter"),
         tr("reduce-scatter"),
         {tr("reduce-scatter")},
         tr("Each rank's full gradient is cut into N chunks; chunk j is summed over all ranks and "
            "lands on rank j, "
            "which keeps it as its gradient shard. Half the traffic of an all-reduce.")},
        {QStringLiteral("all-reduce"),
         tr("all-reduce"),
         {tr("all-reduce")},
         tr("Every rank ends with the sum of all ranks' buffers (DDP's gradient synchronisation). "
            "A ring sends "
            "2(N−1)/N of the buffer per rank: a reduce-scatter followed by an all-gather.")},
        {QStringLiteral("prefetch"),
         tr("prefetch"),
         {tr("prefetch")},
         tr("Starting the next unit's all-gather before the current unit's compute ends, so "
            "communication overlaps "
            "compute; it costs one more gathered unit of memory.")},
        {QStringLiteral("exposed-communication"),
         tr("exposed communication"),
         {tr("exposed communication")},
         tr("The share of a step a rank spends waiting for communication that no compute hid: the "
            "union of the "
            "intervals in which any collective was outstanding, minus the time the rank was "
            "computing, over the step "
            "time. Prefetching the next unit's all-gather and reducing gradients in buckets during "
            "backward hide "
            "communication behind compute; what is left is exposed.")},
        {QStringLiteral("tensor-parallel"),
         tr("tensor parallelism (TP)"),
         {tr("tensor parallelism"), tr("TP all-reduce")},
         tr("TP splits the computation, ZeRO splits the storage. With tensor parallelism T "
            "consecutive ranks share "
            "every layer's work: each holds heads / T attention heads and 4d / T MLP features and "
            "computes only those, "
            "and the partial outputs are summed by an all-reduce of the activations (forward) and "
            "of the input "
            "gradients (backward) — traffic on the critical path that grows with the batch, not "
            "the model. ZeRO / "
            "FSDP keep every rank computing the whole layer for its own samples and shard only the "
            "parameters, "
            "gradients and optimizer state. They combine on a T × D mesh: ZeRO shards each TP "
            "slice over the D "
            "data-parallel ranks, and both kinds of collective share the same links. Pipeline "
            "parallelism (layers on "
            "different ranks) is not simulated here.")},
        {QStringLiteral("padding"),
         tr("padding"),
         {tr("padding")},
         tr("Elements added at the end of a unit's flat buffer so that it splits into N equal "
            "shards: up to N − 1 of "
            "them, so the amount and which rank holds it change with N. Checkpoints never store "
            "it.")},
        {QStringLiteral("reshard-at-load"),
         tr("resharding at load"),
         {tr("resharding at load")},
         tr("Loading a checkpoint saved by N ranks into M ranks (or another strategy): every new "
            "rank works out the "
            "element ranges of its new shard and reads just the byte ranges of the saved files "
            "that overlap them. "
            "Not the same as resharding parameters after use.")},
        {QStringLiteral("mesh"),
         tr("T × D mesh"),
         {tr("T × D mesh"), tr("tensor-parallel group"), tr("data-parallel group")},
         tr("N = T × D ranks: each tensor-parallel group is T consecutive ranks that split every "
            "layer (heads, MLP "
            "columns and rows), each data-parallel group is the D ranks with the same TP index, "
            "over which ZeRO / FSDP "
            "shard that TP slice's parameters, gradients and optimizer state. Why combine them: TP "
            "divides what one "
            "sample's computation needs per rank (weights and activations of a layer) but its "
            "all-reduce after every "
            "row-parallel layer sits on the critical path, so T stays within a node's fast links; "
            "ZeRO divides the "
            "stored states over any number of ranks and hides its all-gathers behind compute by "
            "prefetching, but "
            "every rank still computes and keeps the activations of the whole layer. What they "
            "share: the same links "
            "and the same step time — a TP all-reduce waits for nothing to overlap it, while "
            "ZeRO's collectives "
            "compete with it for bandwidth.")},
        {QStringLiteral("pipeline-parallel"),
         tr("pipeline parallelism"),
         {tr("pipeline parallelism"), tr("pipeline stage"), tr("P × T × D mesh")},
         tr("Placing consecutive layers on different ranks (P stages) and streaming each step's "
            "M micro-batches through them: a stage receives the activations of its predecessor, "
            "computes its layers and sends its output on (a point-to-point message, pp_send / "
            "pp_recv), and the gradients travel back the same way. Each stage's ranks hold only "
            "its layers' states, sharded by ZeRO / FSDP over its D data-parallel ranks, and T "
            "ranks may split each layer: N = P × T × D, the pipeline outermost (its messages carry "
            "the least), TP innermost (it all-reduces inside every layer). Its price is the "
            "bubble and the activations of the micro-batches in flight.")},
        {QStringLiteral("bubble"),
         tr("bubble"),
         {tr("bubble"), tr("pipeline bubble"), tr("1F1B"), tr("GPipe")},
         tr("The time a pipeline stage waits for its neighbour inside a step: while the first "
            "micro-batches fill the pipeline and the last ones drain it. GPipe (every forward, "
            "then every backward) and 1F1B (one forward, one backward once the pipeline is full) "
            "idle (P − 1)/(M + P − 1) of the step in theory; 1F1B holds fewer micro-batches' "
            "activations (at most P − s on stage s, GPipe all M). The Timeline hatches each "
            "stage's measured bubble beside the schedule's theory.")},
        {QStringLiteral("ledger"),
         tr("ledger"),
         {tr("ledger")},
         tr("Per rank, the live and peak bytes of every category and tier, updated by every "
            "allocation and free.")},
    };
    // Ledger categories: linked by their translated label and by their wire name.
    static const std::array<const char*, kCategoryCount> defs = {
        QT_TR_NOOP("This rank's slice of the parameters (bf16 with mixed precision): persistent "
                   "under ZeRO-3 / FSDP."),
        QT_TR_NOOP("A unit's whole parameters: always live under DDP and ZeRO-1/2; under ZeRO-3 "
                   "only between unshard and reshard."),
        QT_TR_NOOP("A unit's whole gradient as backward produces it, before it is reduced."),
        QT_TR_NOOP("This rank's slice of the summed gradient, what its optimizer shard needs."),
        QT_TR_NOOP("The fp32 copy of the weights the optimizer updates (mixed precision), 4 bytes "
                   "per parameter."),
        QT_TR_NOOP("Adam's first moment, 4 bytes per parameter; sharded from ZeRO-1 on."),
        QT_TR_NOOP("Adam's second moment, 4 bytes per parameter; sharded from ZeRO-1 on."),
        QT_TR_NOOP("Layer outputs kept from the forward pass for the backward pass; checkpointing "
                   "recomputes them instead."),
        QT_TR_NOOP("Staging buffers for collectives, such as gradient buckets."),
        QT_TR_NOOP("Short-lived scratch memory of kernels, such as fp32 copies of bf16 weights."),
    };
    for (Category c : kAllCategories) {
        const QString wire = QString::fromLatin1(categoryName(c).data(),
                                                 static_cast<qsizetype>(categoryName(c).size()));
        e.push_back({wire,
                     categoryLabel(c) + QStringLiteral(" (") + wire + QLatin1Char(')'),
                     {wire, categoryLabel(c)},
                     tr(defs[index(c)])});
    }
    return e;
}

const GlossaryEntry* Glossary::find(const std::vector<GlossaryEntry>& entries, const QString& id) {
    const auto it = std::find_if(entries.begin(), entries.end(),
                                 [&id](const GlossaryEntry& g) { return g.id == id; });
    return it == entries.end() ? nullptr : &*it;
}

QString Glossary::linkTerms(const QString& sentence, const std::vector<GlossaryEntry>& entries) {
    struct Match {
        qsizetype pos, len;
        const GlossaryEntry* entry;
    };
    std::vector<Match> all;
    for (const GlossaryEntry& g : entries)
        for (const QString& word : g.match)
            if (!word.isEmpty())
                for (qsizetype pos = sentence.indexOf(word, 0, Qt::CaseInsensitive); pos >= 0;
                     pos = sentence.indexOf(word, pos + 1, Qt::CaseInsensitive))
                    all.push_back({pos, word.size(), &g});
    // Longer words claim their text first ("reshard" before the "shard" inside it), then the
    // earliest occurrence; one link per entry.
    std::sort(all.begin(), all.end(), [](const Match& a, const Match& b) {
        return a.len != b.len ? a.len > b.len : a.pos < b.pos;
    });
    std::vector<Match> chosen;
    for (const Match& m : all) {
        const bool overlaps = std::any_of(chosen.begin(), chosen.end(), [&m](const Match& c) {
            return m.entry == c.entry || (m.pos < c.pos + c.len && c.pos < m.pos + m.len);
        });
        if (!overlaps) chosen.push_back(m);
    }
    std::sort(chosen.begin(), chosen.end(),
              [](const Match& a, const Match& b) { return a.pos < b.pos; });
    QString out;
    qsizetype at = 0;
    for (const Match& m : chosen) {
        out += sentence.mid(at, m.pos - at).toHtmlEscaped();
        out += QStringLiteral("<a href=\"glossary:%1\">%2</a>")
                   .arg(m.entry->id, sentence.mid(m.pos, m.len).toHtmlEscaped());
        at = m.pos + m.len;
    }
    out += sentence.mid(at).toHtmlEscaped();
    return out;
}

QString Glossary::html(const std::vector<GlossaryEntry>& entries) {
    QString out;
    for (const GlossaryEntry& g : entries)
        out += QStringLiteral("<p><a name=\"%1\"></a><b>%2</b>: %3</p>")
                   .arg(g.id, g.term.toHtmlEscaped(), g.definition.toHtmlEscaped());
    return out;
}

} // namespace shardscope::widgets
