#pragma once
// Side panel: DeepSpeed's estimate_zero{2,3}_model_states_mem_needs_all_live rows for the same
// Ψ next to ShardScope's bytes for the same offload setting, and why the two differ.
#include "calculator/calculator_compute.h"

#include <QGroupBox>

class QLabel;
class QSpinBox;
class QTableWidget;

namespace shardscope::widgets {

class DeepSpeedPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit DeepSpeedPanel(QWidget* parent = nullptr);

    int gpusPerNode() const;
    int nodes() const;
    // The scenario's N as GPUs per node × nodes (at most 8 per node); the spins stay editable.
    void followRanks(int ranks);
    void setResult(std::shared_ptr<const CalculatorResult> result);

Q_SIGNALS:
    void layoutChanged(); // gpus per node or nodes edited

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    void fillTable();
    QString whyTheyDiffer() const;

    std::shared_ptr<const CalculatorResult> result_;
    QLabel* gpusLabel_ = nullptr;
    QLabel* nodesLabel_ = nullptr;
    QSpinBox* gpusSpin_ = nullptr;
    QSpinBox* nodesSpin_ = nullptr;
    QLabel* headline_ = nullptr;
    QTableWidget* table_ = nullptr;
    QLabel* why_ = nullptr;
};

} // namespace shardscope::widgets
