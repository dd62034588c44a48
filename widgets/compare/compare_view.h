#pragma once
// Compare mode: several runs side by side, grouped by configuration (replay::comparable: one
// model, steps, N, seed, precision, data and batch per group; a mixed set is labelled A, B, …).
//   • ledgers: per rank, the model states by category as stacked bars, grouped per strategy,
//     with each rank's measured peak (◆) and the theory's model states (—);
//   • per-rank peak bytes per strategy (grouped bars) with the theory's predicted peak;
//   • communication bytes per step per strategy, stacked by collective, theory marked (◆);
//   • a parity badge per run: the largest |Δ| of its final weights against the DDP run of its
//     own configuration, or that there is none;
//   • the exposed communication per run: the share of a step spent waiting for communication
//     that no compute hid (the rank that waits most, median over the steps).
#include "replay/compare_data.h"

#include <QWidget>

class QCustomPlot;
class QLabel;
class QSplitter;

namespace shardscope::widgets {

class FlowLayout;

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);

    void setRuns(std::vector<report::RunReport> runs);
    const std::vector<report::RunReport>& runs() const { return runs_; }
    // Reads a file (one report, an array, or `compare --json` output); false with a reason.
    bool loadFile(const QString& path, QString* error);

    QCustomPlot* ledgerPlot() const { return ledger_; }
    QCustomPlot* peakPlot() const { return peak_; }
    QCustomPlot* commPlot() const { return comm_; }
    QStringList badgeTexts() const;
    QString headerText() const;
    QString runLabel(std::size_t i, QChar beforeMesh = QLatin1Char(' '))
        const; // "ZeRO-3", or "ZeRO-3 (B)" when configurations are mixed; "ZeRO-3 P2×D4" on a
               // mesh (a chart's narrow tick: the mesh after a line break)
    QColor runColor(std::size_t i) const;
    static QString
    configurationText(const report::RunReport& run); // "model tiny on 4 ranks, 3 steps, …"
    QStringList exposedTexts() const; // "ZeRO-3 47.1%" per run (empty when no run has it)
    QStringList exposedToolTips() const;
    static QString parityText(const replay::Parity& p);
    static QString exposedExplanation(); // what "exposed communication" means (tooltips)
    QString emptyText() const;           // shown while there is nothing to compare
    // Presentation mode: the ledgers and the charts below share the height equally (each needs
    // room for its axes at a projector's text size).
    void setPresenting(bool on);

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void buildLedger();
    void buildPeak();
    void buildComm();
    void buildBadges();
    void buildExposed();

    std::vector<report::RunReport> runs_;
    std::vector<int> groupOf_; // per run: its configuration group (0, 1, …)
    int groupCount_ = 0;
    QLabel* header_ = nullptr;
    FlowLayout* badges_ = nullptr; // wraps: many runs never widen the window
    QLabel* badgesTitle_ = nullptr;
    std::vector<QLabel*> badgeLabels_;
    QWidget* exposedRow_ = nullptr;
    FlowLayout* exposed_ = nullptr;
    QLabel* exposedTitle_ = nullptr;
    std::vector<QLabel*> exposedLabels_;
    QCustomPlot* ledger_ = nullptr;
    QCustomPlot* peak_ = nullptr;
    QCustomPlot* comm_ = nullptr;
    QSplitter* charts_ = nullptr; // the ledgers over the peaks and the traffic
    QLabel* empty_ = nullptr;     // instead of empty axes: what to do to fill the page
};

} // namespace shardscope::widgets
