#pragma once
// The derivation table: one row per theory::DerivationLine (category, tier, formula, source,
// bytes in B, GB and GiB) plus a total row, so no number appears without its formula.
#include "calculator/calculator_compute.h"

#include <QAbstractTableModel>
#include <memory>

namespace shardscope::widgets {

class DerivationModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        CategoryCol,
        TierCol,
        FormulaCol,
        SourceCol,
        BytesCol,
        GbCol,
        GibCol,
        ColumnCount
    };
    static constexpr int BytesRole = Qt::UserRole + 1; // exact bytes as qulonglong

    explicit DerivationModel(QObject* parent = nullptr);

    void setResult(std::shared_ptr<const CalculatorResult> result);
    // Headers and category names are translated text: refresh them after a language change.
    void retranslate();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QVariant lineData(const theory::DerivationLine& line, int column, int role) const;
    QVariant totalData(int column, int role) const;
    std::uint64_t totalBytes() const;

    std::shared_ptr<const CalculatorResult> result_;
};

} // namespace shardscope::widgets
