#pragma once
// The Ranks page's settings: model preset, ranks, backend, strategy and its knobs, precision,
// checkpointing, capacity budget, steps. Every field is validated as it changes, with the
// reason shown under it; knobs the chosen strategy does not read are disabled. A one-line
// theory preview (model states, savings, predicted peak) sizes the run before it starts.
#include "plan/policy.h"
#include "run/run_request.h"

#include <QWidget>
#include <map>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QToolButton;

namespace shardscope::widgets {

class RunConfigPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunConfigPanel(QWidget* parent = nullptr);

    RunRequest request() const;
    void setRequest(const RunRequest& r);
    // Semantic issues plus text fields that did not parse; empty when the run can start.
    std::vector<FieldIssue> issues() const;
    bool isValid() const { return issues().empty(); }
    QString errorText(RunField field) const; // the message shown under a field, or empty

    // Widgets by field, for tests that type into them.
    QWidget* fieldWidget(RunField field) const;

    // Why ranks cannot run under mpirun here (mpiUnavailableReason()); non-empty ticks and
    // locks "Ranks as threads in one process" and says why under it. Empty: the user chooses
    // (default off).
    void setMpiUnavailable(const QString& reason);
    // What the GPU entry can do (default GpuSupport::probed()); tests pretend a device.
    void setGpuSupport(const GpuSupport& gpu);
    QString launchNote() const; // the hint under the threads checkbox, or empty
    // The predicted device peak per rank of the current settings (none while they are invalid),
    // and the warning shown when it exceeds the capacity budget (empty when it does not).
    std::optional<std::uint64_t> predictedPeakBytes() const { return predictedPeak_; }
    QString capacityWarning() const;

Q_SIGNALS:
    void requestChanged();

protected:
    void changeEvent(QEvent* event) override;

private:
    void build();
    void addField(RunField field, QWidget* widget);
    void updateOffloadChoices(const plan::Policy& policy);
    void buildNvmeRows();
    void updateNvmeRows();
    void chooseNvmeDir();
    void onChanged();
    void updatePreview();
    void updateCapacityWarning(const RunRequest& r);
    void retranslateUi();
    void fillCombos();
    void updateBackendItem();
    void buildCheckpointFields();
    void buildCarriedRow();
    void updateCarriedRow();

    QFormLayout* form_ = nullptr;
    QComboBox* model_ = nullptr;
    QSpinBox* ranks_ = nullptr;
    QComboBox* backend_ = nullptr;
    QComboBox* strategy_ = nullptr;
    QSpinBox* steps_ = nullptr;
    QComboBox* precision_ = nullptr;
    QLabel* precisionLabel_ = nullptr;
    QCheckBox* checkpointing_ = nullptr;
    QCheckBox* threads_ = nullptr;
    QLabel* launchNote_ = nullptr;
    QLineEdit* capacity_ = nullptr;
    QLineEdit* bucket_ = nullptr;
    QSpinBox* prefetch_ = nullptr;
    QCheckBox* reshard_ = nullptr;
    QSpinBox* inflight_ = nullptr;
    QDoubleSpinBox* persistence_ = nullptr;
    QSpinBox* hybrid_ = nullptr;
    QSpinBox* tensorParallel_ = nullptr;
    QSpinBox* pipeParallel_ = nullptr;
    QComboBox* pipeSchedule_ = nullptr; // every schedule (plan::kPipeScheduleTraits)
    QSpinBox* virtualStages_ = nullptr; // V: chunks per rank (interleaved only)
    QSpinBox* gradAccum_ = nullptr;
    QSpinBox* microBatch_ = nullptr;
    QComboBox* offloadOptimizer_ = nullptr; // device | host
    QComboBox* offloadParams_ = nullptr;
    QLineEdit* saveDir_ = nullptr;
    QSpinBox* saveEvery_ = nullptr;
    QLineEdit* resume_ = nullptr;
    QWidget* nvmeDirRow_ = nullptr; // folder field + Browse…
    QLineEdit* nvmeDir_ = nullptr;
    QToolButton* nvmeBrowse_ = nullptr;
    QToolButton* nvmeAdvanced_ = nullptr; // shows the aio rows
    QLineEdit* aioBlock_ = nullptr;
    QSpinBox* aioQueueDepth_ = nullptr;
    QLabel* carriedNote_ = nullptr;
    QToolButton* carriedClear_ = nullptr;
    std::vector<std::pair<runconfig::Field, runconfig::FieldValue>> carried_;
    QLabel* preview_ = nullptr;
    QLabel* capacityWarning_ = nullptr;
    std::optional<std::uint64_t> predictedPeak_;
    struct Row {
        QWidget* widget = nullptr;
        QLabel* label = nullptr;
        QLabel* error = nullptr;
    };
    std::map<RunField, Row> rows_;
    GpuSupport gpu_;
    QString mpiUnavailable_;
    bool loading_ = false;
};

} // namespace shardscope::widgets
