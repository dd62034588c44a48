#pragma once
// The Calculator page: inputs on the left, the scaling chart and the stacked category bars on
// top, the derivation table and DeepSpeed's estimator below. Input edits are coalesced by a
// single-shot timer, so dragging a spinbox recomputes once, not once per tick.
#include "calculator/calculator_compute.h"

#include <QTimer>
#include <QWidget>
#include <memory>

class QLabel;
class QSplitter;
class QTableView;
class QTabWidget;

namespace shardscope::widgets {

class CalculatorInputs;
class CategoryBarChart;
class DeepSpeedPanel;
class DerivationModel;
class MeshChart;
class PeakBreakdown;
class PipelineChart;
class ScalingChart;

class CalculatorPage : public QWidget {
    Q_OBJECT
public:
    explicit CalculatorPage(QWidget* parent = nullptr);

    // The result on screen (the last valid one while the input is invalid).
    std::shared_ptr<const CalculatorResult> result() const { return shown_; }
    QString errorText() const;
    // Presentation mode: the two charts take the page (the numbers below collapse to a handle).
    void setPresenting(bool on);
    // Runs a pending recompute now (batch screenshots, tests).
    void recomputeNow();

    static constexpr int kCoalesceMs = 20;

Q_SIGNALS:
    void statusMessage(const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    QWidget* buildInputColumn();
    QWidget* buildOutputs();
    void recompute();
    void showResult(std::shared_ptr<const CalculatorResult> result);
    void retranslateUi();
    QString summaryText() const;

    QTimer recomputeTimer_;
    CalculatorInputs* inputs_ = nullptr;
    QLabel* errorLabel_ = nullptr;
    QLabel* summary_ = nullptr;
    ScalingChart* scaling_ = nullptr;
    CategoryBarChart* bars_ = nullptr;
    DerivationModel* derivation_ = nullptr;
    QTableView* table_ = nullptr;
    PeakBreakdown* peak_ = nullptr;
    MeshChart* mesh_ = nullptr;
    QTabWidget* numberTabs_ = nullptr;
    PipelineChart* pipeline_ = nullptr;
    DeepSpeedPanel* deepspeed_ = nullptr;
    QSplitter* outputs_ = nullptr; // the charts over the numbers
    int followedRanks_ = 0;
    QLabel* inputsTitle_ = nullptr;
    std::shared_ptr<const CalculatorResult> shown_;
    QString error_;
};

} // namespace shardscope::widgets
