#pragma once
// Why the predicted peak exceeds the model states: the peak split into the brief's terms,
// actual peak = shard (model states) + activations + gathered unit(s) + buffers + workspace,
// as a stacked bar and as derivation rows with their formulas. The terms are read off the
// engine's ledger at the predicted peak (PeakPrediction::atPeak), so they sum to the peak.
#include "calculator/calculator_compute.h"

#include <QWidget>
#include <memory>
#include <vector>

class QLabel;
class QTableWidget;

namespace shardscope::widgets {

enum class PeakTermKind : std::uint8_t {
    ModelStates,
    Activations,
    Gathered,
    GradsInFlight,
    Buffers,
    Workspace
};

struct PeakTerm {
    PeakTermKind kind;
    std::uint64_t bytes = 0;
    ByteTable parts; // the device cells behind the term (model states: one per category)
};

// Terms of the chosen scenario's peak (empty without a peak); they sum to peak->peakBytes.
std::vector<PeakTerm> peakTerms(const CalculatorResult& r);

class PeakBreakdown : public QWidget {
    Q_OBJECT
public:
    explicit PeakBreakdown(QWidget* parent = nullptr);
    void setResult(std::shared_ptr<const CalculatorResult> result);

    static QString termName(PeakTermKind k);
    QString formula(const PeakTerm& t) const;
    // What a bare parameter count's peak assumes (empty with a shape).
    QString assumptionText() const;
    QTableWidget* table() const { return table_; }

protected:
    void changeEvent(QEvent* event) override;

private:
    class Bar;
    void rebuild();

    std::shared_ptr<const CalculatorResult> result_;
    std::vector<PeakTerm> terms_;
    Bar* bar_ = nullptr;
    QLabel* note_ = nullptr;
    QTableWidget* table_ = nullptr;
};

} // namespace shardscope::widgets
