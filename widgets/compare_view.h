#pragma once
// Compare mode: several runs (one per strategy, same model and N) side by side.
//   • ledgers: per rank, the model states by category as stacked bars, grouped per strategy,
//     with each rank's measured peak (◆) and the theory's model states (—);
//   • per-rank peak bytes per strategy (grouped bars) with the theory's predicted peak;
//   • communication bytes per step per strategy, stacked by collective, theory marked (◆);
//   • a parity badge per run: the largest |Δ| of its final weights against DDP.
#include <QWidget>

#include "compare_data.h"

class QCustomPlot;
class QHBoxLayout;
class QLabel;

namespace shardscope::widgets {

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);

    void setRuns(std::vector<CompareRun> runs);
    const std::vector<CompareRun>& runs() const { return runs_; }
    // Reads a file (one report, an array, or `compare --json` output); false with a reason.
    bool loadFile(const QString& path, QString* error);

    QCustomPlot* ledgerPlot() const { return ledger_; }
    QCustomPlot* peakPlot() const { return peak_; }
    QCustomPlot* commPlot() const { return comm_; }
    QStringList badgeTexts() const;
    static QString parityText(const Parity& p);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void buildLedger();
    void buildPeak();
    void buildComm();
    void buildBadges();

    std::vector<CompareRun> runs_;
    QLabel* header_ = nullptr;
    QHBoxLayout* badges_ = nullptr;
    std::vector<QLabel*> badgeLabels_;
    QCustomPlot* ledger_ = nullptr;
    QCustomPlot* peak_ = nullptr;
    QCustomPlot* comm_ = nullptr;
};

} // namespace shardscope::widgets
