#include "common/category_palette.h"

#include <QCoreApplication>
#include <array>
#include <cmath>

namespace shardscope::widgets {

QColor categoryColor(Category c) {
    // Within the memory family, the ZeRO paper's groups keep sub-families: parameters blue,
    // gradients teal, optimizer states green; shades (dark = shard, light = full) separate members.
    static const std::array<QColor, kCategoryCount> colors = {
        QColor(0x1f, 0x5f, 0xa6), // param_shard   dark blue
        QColor(0x7f, 0xb0, 0xe3), // param_full    light blue
        QColor(0x9f, 0xde, 0xc8), // grad_full     light mint
        QColor(0x1b, 0x9e, 0x77), // grad_shard    dark teal
        QColor(0x2e, 0x7d, 0x32), // master_fp32   dark green
        QColor(0x66, 0xbb, 0x4a), // adam_m        green
        QColor(0xb0, 0xd4, 0x5a), // adam_v        yellow-green
        QColor(0x5c, 0x6b, 0xc0), // activation    indigo
        QColor(0x26, 0xc6, 0xda), // comm_buffer   cyan
        QColor(0xaa, 0xb3, 0x2a), // workspace     olive
    };
    return colors[index(c)];
}

QColor tierColor(Tier t) {
    // Slate: the memory family's hue, desaturated, darker the closer to the compute.
    static const std::array<QColor, kTierCount> colors = {
        QColor(0x37, 0x47, 0x4f), // device
        QColor(0x78, 0x90, 0x9c), // host
        QColor(0xb0, 0xbe, 0xc5), // nvme
    };
    return colors[index(t)];
}

QColor activityColor(Activity a) {
    // Compute phases red/orange/brown, collectives gold/yellow/rust, a pipeline's point-to-point
    // messages muted (mauve, peach). Neighbours differ in
    // lightness as much as in hue, so a class tells them apart on a projector and with red-green
    // colour blindness (tests/gui/palette_test: ΔE under a deuteranopia and protanopia
    // simulation).
    static const std::array<QColor, kActivityCount> colors = {
        QColor(0xe6, 0x84, 0x32), // forward        orange
        QColor(0xe6, 0x2e, 0x3d), // backward       red
        QColor(0xec, 0xb1, 0xb7), // recompute      pale red (drawn inset)
        QColor(0x66, 0x2b, 0x00), // optimizer      brown
        QColor(0xf2, 0xa7, 0x0f), // all-gather     gold
        QColor(0xa2, 0x37, 0x09), // reduce-scatter dark rust
        QColor(0xf2, 0xde, 0x61), // all-reduce     yellow
        QColor(0x99, 0x88, 0x56), // broadcast      khaki
        QColor(0xff, 0x73, 0x89), // TP all-reduce  coral: short spans must still show
        QColor(0x4c, 0x17, 0x17), // checkpoint save maroon
        QColor(0x75, 0x5a, 0x5c), // pipeline send  greyed mauve: a message posted, nothing summed
        QColor(0xf0, 0xb6, 0x84), // pipeline recv  peach: mostly waiting (the bubble)
        QColor(0xa0, 0x28, 0x34), // weight grad    crimson: the backward's deferred half (zb1)
    };
    return colors[static_cast<std::size_t>(a)];
}

QColor transferColor(Transfer t) {
    // One hue band between the memory blues and the rank violets; lightness tells direction and
    // tier: the device's copies bright, NVMe's dark.
    switch (t) {
    case Transfer::DeviceToHost:
        return QColor::fromHsv(238, 190, 235);
    case Transfer::HostToDevice:
        return QColor::fromHsv(245, 110, 245);
    case Transfer::NvmeRead:
        return QColor::fromHsv(236, 220, 140);
    case Transfer::NvmeWrite:
        return QColor::fromHsv(244, 150, 185);
    case Transfer::None:
        break;
    }
    return neutralColor(128);
}

QColor spanKindColor(replay::SpanKind k) {
    const replay::SpanKindTraits& t = replay::traitsOf(k);
    if (t.row == replay::TimelineRow::Buffers) return categoryColor(Category::ParamFull);
    if (t.transfer != Transfer::None) return transferColor(t.transfer);
    return activityColor(activityOf(k));
}

namespace {
constexpr int kStrategyColors = 7;
const std::array<QColor, kStrategyColors>& strategyColors() {
    // FSDP variants sit near their ZeRO twins in hue (full ≈ ZeRO-3, grad-op ≈ ZeRO-2) but not
    // in lightness, and are drawn dashed: seven strategies on one chart stay apart, also with
    // red-green colour blindness (tests/gui/palette_test).
    static const std::array<QColor, kStrategyColors> colors = {
        QColor(0x36, 0x0c, 0x59), // DDP               deep purple
        QColor(0x7a, 0x30, 0xf2), // ZeRO-1            violet
        QColor(0xa3, 0x21, 0xa6), // ZeRO-2            orchid
        QColor(0xe5, 0x1d, 0x89), // ZeRO-3            magenta
        QColor(0x79, 0x00, 0x35), // FSDP full shard   wine
        QColor(0xe4, 0x9f, 0xde), // FSDP shard grad-op lilac
        QColor(0x8e, 0x7b, 0xeb), // FSDP hybrid       periwinkle
    };
    return colors;
}
constexpr double kRankHueLo = 250, kRankHueSpan = 85;
} // namespace

QColor strategyColor(int strategyIndex) {
    const auto i = static_cast<std::size_t>(std::max(strategyIndex, 0)) % strategyColors().size();
    return strategyColors()[i];
}

QColor rankColor(int rank, int ranks) {
    // Golden-ratio steps through the family's hues keep neighbours apart at any N; a value
    // cycle of three separates ranks whose hues land close. Labels use textOn().
    Q_UNUSED(ranks);
    const double step = std::fmod(std::max(rank, 0) * 0.6180339887, 1.0);
    const int hue = static_cast<int>(kRankHueLo + step * kRankHueSpan);
    static constexpr int kValues[] = {215, 150, 185};
    return QColor::fromHsv(hue, 170, kValues[std::max(rank, 0) % 3]);
}

QColor neutralColor(int lightness) {
    const int v = std::clamp(lightness, 0, 255);
    return QColor(v, v, v);
}

QColor alertColor() {
    return QColor(0xc0, 0x39, 0x2b);
}

QColor textOn(const QColor& background) {
    const double luma = 0.299 * static_cast<double>(background.redF()) +
                        0.587 * static_cast<double>(background.greenF()) +
                        0.114 * static_cast<double>(background.blueF());
    return luma > 0.6 ? QColor(0x20, 0x20, 0x20) : QColor(Qt::white);
}

std::vector<QColor> familyColors(ColorFamily f) {
    std::vector<QColor> out;
    switch (f) {
    case ColorFamily::Memory:
        for (Category c : kAllCategories)
            out.push_back(categoryColor(c));
        for (Tier t : kAllTiers)
            out.push_back(tierColor(t));
        break;
    case ColorFamily::Activities:
        for (std::size_t a = 0; a < kActivityCount; ++a)
            out.push_back(activityColor(static_cast<Activity>(a)));
        break;
    case ColorFamily::Ranks:
        for (const QColor& c : strategyColors())
            out.push_back(c);
        for (int r = 0; r < 64; ++r)
            out.push_back(rankColor(r, 64));
        break;
    case ColorFamily::Transfers:
        for (std::size_t t = 1; t < kTransferCount; ++t)
            out.push_back(transferColor(static_cast<Transfer>(t)));
        break;
    }
    return out;
}

std::pair<int, int> familyHues(ColorFamily f) {
    switch (f) {
    case ColorFamily::Memory:
        return {62, 233};
    case ColorFamily::Transfers:
        return {235, 248};
    case ColorFamily::Activities:
        return {345, 55};
    case ColorFamily::Ranks:
        return {static_cast<int>(kRankHueLo), static_cast<int>(kRankHueLo + kRankHueSpan)};
    }
    return {0, 0};
}

QString familyName(ColorFamily f) {
    switch (f) {
    case ColorFamily::Memory:
        return QCoreApplication::translate("Palette", "memory (greens, blues)");
    case ColorFamily::Activities:
        return QCoreApplication::translate("Palette", "activities (reds, yellows)");
    case ColorFamily::Ranks:
        return QCoreApplication::translate("Palette", "ranks and strategies (violets)");
    case ColorFamily::Transfers:
        return QCoreApplication::translate("Palette", "transfers between tiers (blue-violets)");
    }
    return {};
}

QString categoryLabel(Category c) {
    static const std::array<const char*, kCategoryCount> labels = {
        QT_TRANSLATE_NOOP("Category", "Parameter shard"),
        QT_TRANSLATE_NOOP("Category", "Full parameters"),
        QT_TRANSLATE_NOOP("Category", "Full gradients"),
        QT_TRANSLATE_NOOP("Category", "Gradient shard"),
        QT_TRANSLATE_NOOP("Category", "FP32 master weights"),
        QT_TRANSLATE_NOOP("Category", "Adam momentum (m)"),
        QT_TRANSLATE_NOOP("Category", "Adam variance (v)"),
        QT_TRANSLATE_NOOP("Category", "Activations"),
        QT_TRANSLATE_NOOP("Category", "Communication buffers"),
        QT_TRANSLATE_NOOP("Category", "Workspace"),
    };
    return QCoreApplication::translate("Category", labels[index(c)]);
}

QString tierLabel(Tier t) {
    static const std::array<const char*, kTierCount> labels = {
        QT_TRANSLATE_NOOP("Tier", "Device"),
        QT_TRANSLATE_NOOP("Tier", "Host"),
        QT_TRANSLATE_NOOP("Tier", "NVMe"),
    };
    return QCoreApplication::translate("Tier", labels[index(t)]);
}

const std::array<Category, kCategoryCount>& categoryStackOrder() {
    static const std::array<Category, kCategoryCount> order = {
        Category::MasterFp32, Category::AdamM,     Category::AdamV,    Category::ParamShard,
        Category::GradShard,  Category::ParamFull, Category::GradFull, Category::Activation,
        Category::CommBuffer, Category::Workspace};
    return order;
}

} // namespace shardscope::widgets
