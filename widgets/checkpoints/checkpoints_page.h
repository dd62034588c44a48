#pragma once
// The Checkpoints page: open a checkpoint folder, pick a step (latest by default), a target
// world size M and a strategy, and see how the loader reshards it — each unit's saved shards
// above the new ones, the byte ranges every new rank reads from every saved file (the loader's
// own plan, checkpoints/load_plan.h), bytes read per new rank, the padding at N and at M, and
// each file's verification (re-hashed on a worker thread). "Resume a run from here" hands the
// choice to the Ranks page's run settings.
#include "checkpoint/store.h"
#include "checkpoints/load_plan.h"
#include "run/run_request.h"

#include <QWidget>
#include <memory>
#include <optional>

class QAction;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTreeWidget;

namespace shardscope::widgets {

class ReshardView;

// What "Resume a run from here" carries: the step folder and the target world the page shows.
struct ResumeChoice {
    QString path;  // DIR/step-K
    QString model; // the run preset with the checkpoint's shape
    int ranks = 1;
    plan::Strategy strategy = plan::Strategy::Zero3;
    int hybridGroup = 0;
    std::uint64_t seed = 0;
    plan::PrecisionKind precision = plan::PrecisionKind::MixedBf16;
    int microBatch = 0; // 0: the preset's
};
// `base` (the run settings as they are) with the choice applied: model, ranks, strategy, seed,
// precision, micro-batch and --resume; tensor parallelism off (the format has no TP slices).
RunRequest resumeRequest(RunRequest base, const ResumeChoice& choice);

class CheckpointsPage : public QWidget {
    Q_OBJECT
public:
    explicit CheckpointsPage(QWidget* parent = nullptr);
    ~CheckpointsPage() override;

    QAction* openAction() const { return openAction_; } // File → Open checkpoint…
    // DIR (its steps, latest selected) or DIR/step-K. False, with message() saying why, when it
    // is not a readable checkpoint.
    bool openFolder(const QString& path);
    bool selectStep(const QString& stepName); // "step-4"
    void setTarget(int ranks, plan::Strategy strategy, int hybridGroup = 0);

    QString message() const; // the error shown on the page, or empty
    const LoadPlan* loadPlan() const { return plan_.get(); }
    const checkpoint::Metadata* metadata() const { return meta_.get(); }
    ReshardView* view() const { return view_; }
    // Per file: the verification text shown ("verifying…", "OK", "checksum mismatch: …").
    QStringList verificationTexts() const;
    bool verifying() const { return verifying_; }
    std::optional<ResumeChoice> resumeChoice() const; // nullopt when nothing resumable is shown

Q_SIGNALS:
    void resumeRequested(const shardscope::widgets::ResumeChoice& choice);

protected:
    void changeEvent(QEvent* event) override;

private:
    void build();
    void retranslateUi();
    void chooseFolder();
    void clearCheckpoint();
    bool refuse(const QString& why); // shows why the folder cannot open; false
    int fillSteps(const checkpoint::Listing& listing, const QString& select);
    void openStep(const QString& dir);
    void replan();
    void fillReads();
    void fillFiles();
    void startVerification();
    void showMessage(const QString& text);
    void updateSummary();
    void updateStepNames();
    QString explanation() const;

    QAction* openAction_ = nullptr;
    QPushButton* openButton_ = nullptr;
    QLabel* pathLabel_ = nullptr;
    QLabel* message_ = nullptr;
    QLabel* summary_ = nullptr;
    QLabel* stepLabel_ = nullptr;
    QLabel* ranksLabel_ = nullptr;
    QLabel* strategyLabel_ = nullptr;
    QLabel* hybridLabel_ = nullptr;
    QComboBox* step_ = nullptr;
    QSpinBox* ranks_ = nullptr;
    QComboBox* strategy_ = nullptr;
    QSpinBox* hybrid_ = nullptr;
    QPushButton* resume_ = nullptr;
    QLabel* resumeNote_ = nullptr;
    QLabel* explain_ = nullptr;
    QLabel* legend_ = nullptr;
    ReshardView* view_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QTreeWidget* reads_ = nullptr;
    QTreeWidget* files_ = nullptr;

    QString root_;
    QString latest_; // the step DIR/latest names
    std::optional<checkpoint::Opened> opened_;
    std::shared_ptr<const checkpoint::Metadata> meta_;
    std::shared_ptr<const LoadPlan> plan_;
    std::vector<checkpoint::FileCheck> checks_;
    bool verifying_ = false;
    QString verifyError_;
    std::uint64_t generation_ = 0; // a verification of an older step is dropped
    QString error_;
    bool targetProblem_ = false; // error_ is about M and the strategy, not the files
};

} // namespace shardscope::widgets
