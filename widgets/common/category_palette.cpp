#include "common/category_palette.h"

#include <QCoreApplication>
#include <array>

namespace shardscope::widgets {

QColor categoryColor(Category c) {
    // Groups share a hue family (params blue, grads green, optimizer warm, rest grey/purple)
    // so the ZeRO paper's three model-state groups read at a glance; shades separate members.
    static const std::array<QColor, kCategoryCount> colors = {
        QColor(0x4c, 0x78, 0xa8), // param_shard   blue
        QColor(0x9e, 0xc5, 0xe8), // param_full    light blue
        QColor(0x8f, 0xd1, 0x7f), // grad_full     light green
        QColor(0x3a, 0x92, 0x3a), // grad_shard    green
        QColor(0xe4, 0x57, 0x56), // master_fp32   red
        QColor(0xf5, 0x85, 0x18), // adam_m        orange
        QColor(0xf2, 0xc1, 0x4e), // adam_v        yellow
        QColor(0xb2, 0x79, 0xa2), // activation    purple
        QColor(0x72, 0xb7, 0xb2), // comm_buffer   teal
        QColor(0x9d, 0x96, 0x8d), // workspace     grey
    };
    return colors[index(c)];
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

} // namespace shardscope::widgets

namespace shardscope::widgets {

QColor strategyColor(int strategyIndex) {
    // Tableau-10-like hues; FSDP variants get hues near their ZeRO twins (full ≈ ZeRO-3,
    // grad-op ≈ ZeRO-2) and are drawn dashed, so overlapping curves stay distinguishable.
    static const std::array<QColor, 7> colors = {
        QColor(0x33, 0x33, 0x33), // DDP
        QColor(0x1f, 0x77, 0xb4), // ZeRO-1
        QColor(0x2c, 0xa0, 0x2c), // ZeRO-2
        QColor(0xd6, 0x27, 0x28), // ZeRO-3
        QColor(0xff, 0x7f, 0x0e), // FSDP full shard
        QColor(0x17, 0xbe, 0xcf), // FSDP shard grad-op
        QColor(0x94, 0x67, 0xbd), // FSDP hybrid
    };
    return colors[static_cast<std::size_t>(strategyIndex) % colors.size()];
}

const std::array<Category, kCategoryCount>& categoryStackOrder() {
    static const std::array<Category, kCategoryCount> order = {
        Category::MasterFp32, Category::AdamM,     Category::AdamV,      Category::ParamShard, Category::GradShard,
        Category::ParamFull,  Category::GradFull,  Category::Activation, Category::CommBuffer, Category::Workspace};
    return order;
}

QColor spanKindColor(replay::SpanKind k) {
    switch (k) {
    case replay::SpanKind::Forward: return QColor(0x4c, 0x78, 0xa8);
    case replay::SpanKind::Backward: return QColor(0xe4, 0x57, 0x56);
    case replay::SpanKind::Recompute: return QColor(0xb2, 0x79, 0xa2);
    case replay::SpanKind::Optimizer: return QColor(0x54, 0xa2, 0x4b);
    case replay::SpanKind::AllGather: return QColor(0x2a, 0x9d, 0x8f);
    case replay::SpanKind::ReduceScatter: return QColor(0xf5, 0x85, 0x18);
    case replay::SpanKind::AllReduce: return QColor(0xd4, 0xa0, 0x17);
    case replay::SpanKind::Broadcast: return QColor(0x9d, 0x75, 0x5d);
    case replay::SpanKind::ParamFull: return categoryColor(Category::ParamFull);
    case replay::SpanKind::Save: return QColor(0x79, 0x70, 0x6e);
    }
    return Qt::gray;
}

} // namespace shardscope::widgets
