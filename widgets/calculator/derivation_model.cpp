#include "calculator/derivation_model.h"

#include "common/byte_format.h"
#include "common/category_palette.h"

#include <QBrush>
#include <QCoreApplication>
#include <QFont>

namespace shardscope::widgets {

namespace {

QVariant bytesCell(std::uint64_t bytes, int column) {
    switch (column) {
    case DerivationModel::BytesCol:
        return formatBytesExact(bytes);
    case DerivationModel::GbCol:
        return QString::number(static_cast<double>(bytes) / 1e9, 'f', 3);
    case DerivationModel::GibCol:
        return QString::number(static_cast<double>(bytes) / (1ull << 30), 'f', 3);
    default:
        return {};
    }
}

// The engine writes its formulas and sources in English (the CLI prints them too); their words
// are translated here, fragment by fragment, while the symbols and numbers stay as they are.
QString theoryText(const std::string& text) {
    static const char* const kFragments[] = {
        QT_TRANSLATE_NOOP("TheoryText", "unpadded, rounded up"),
        QT_TRANSLATE_NOOP("TheoryText", "padded elements"),
        QT_TRANSLATE_NOOP("TheoryText", "params (kept whole)"),
        QT_TRANSLATE_NOOP("TheoryText", "gathered from forward to backward"),
        QT_TRANSLATE_NOOP("TheoryText", "ZeRO paper"),
        QT_TRANSLATE_NOOP("TheoryText", "baseline DP"),
        QT_TRANSLATE_NOOP("TheoryText", "PyTorch FSDP"),
        QT_TRANSLATE_NOOP("TheoryText", "FULL_SHARD flat parameter"),
        QT_TRANSLATE_NOOP("TheoryText", "et al."),
    };
    QString out = QString::fromStdString(text);
    for (const char* f : kFragments)
        out.replace(QLatin1String(f), QCoreApplication::translate("TheoryText", f));
    return out;
}

bool isNumeric(int column) {
    return column == DerivationModel::BytesCol || column == DerivationModel::GbCol ||
           column == DerivationModel::GibCol;
}

} // namespace

DerivationModel::DerivationModel(QObject* parent) : QAbstractTableModel(parent) {}

void DerivationModel::setResult(std::shared_ptr<const CalculatorResult> result) {
    beginResetModel();
    result_ = std::move(result);
    endResetModel();
}

void DerivationModel::retranslate() {
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (rowCount() > 0) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int DerivationModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !result_ || !result_->error.isEmpty()) return 0;
    return static_cast<int>(result_->states.lines.size()) + 1; // + total
}

int DerivationModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

std::uint64_t DerivationModel::totalBytes() const {
    return result_->states.perRank.total();
}

QVariant DerivationModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    if (role == Qt::TextAlignmentRole && isNumeric(index.column()))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    const auto& lines = result_->states.lines;
    if (index.row() == static_cast<int>(lines.size())) return totalData(index.column(), role);
    return lineData(lines[static_cast<std::size_t>(index.row())], index.column(), role);
}

QVariant DerivationModel::lineData(const theory::DerivationLine& line, int column, int role) const {
    if (role == BytesRole) return QVariant::fromValue<qulonglong>(line.bytes);
    if (role == Qt::DecorationRole && column == CategoryCol) return categoryColor(line.category);
    if (role == Qt::ToolTipRole && column == CategoryCol)
        return QString::fromUtf8(categoryName(line.category).data(),
                                 static_cast<qsizetype>(categoryName(line.category).size()));
    if (role == Qt::ToolTipRole && (column == FormulaCol || column == SourceCol))
        return theoryText(column == FormulaCol ? line.formula : line.source);
    if (role != Qt::DisplayRole) return {};
    switch (column) {
    case CategoryCol:
        return categoryLabel(line.category);
    case TierCol:
        return tierLabel(line.tier);
    case FormulaCol:
        return theoryText(line.formula);
    case SourceCol:
        return theoryText(line.source);
    default:
        return bytesCell(line.bytes, column);
    }
}

QVariant DerivationModel::totalData(int column, int role) const {
    if (role == BytesRole) return QVariant::fromValue<qulonglong>(totalBytes());
    if (role == Qt::FontRole) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role != Qt::DisplayRole) return {};
    if (column == CategoryCol) return tr("Total model states");
    if (column == TierCol) return tr("all tiers");
    return bytesCell(totalBytes(), column);
}

QVariant DerivationModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case CategoryCol:
        return tr("Category");
    case TierCol:
        return tr("Tier");
    case FormulaCol:
        return tr("Formula");
    case SourceCol:
        return tr("Source");
    case BytesCol:
        return tr("Bytes");
    case GbCol:
        return tr("GB (10⁹ B)");
    case GibCol:
        return tr("GiB (2³⁰ B)");
    default:
        return {};
    }
}

} // namespace shardscope::widgets
