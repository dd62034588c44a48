#pragma once
// The Compare page: the runs the user puts side by side, one per strategy and configuration (a
// newer run of both replaces the older; runs of other configurations form their own groups, see
// replay::comparable): a fresh comparison of every strategy run by CompareRunner (the real CLI),
// which replaces what was shown; reports opened from files (`shardscope-cli compare --json`, or
// single run reports); the run the Ranks page shows, when the user adds it. Nothing joins on
// its own: a comparison holds what it ran and what was added. Shows CompareView.
#include "replay/compare_data.h"

#include <QWidget>
#include <memory>

class QPushButton;

namespace shardscope::widgets {

class CompareRunner;
class CompareView;

class ComparePage : public QWidget {
    Q_OBJECT
public:
    explicit ComparePage(QWidget* parent = nullptr);

    // A run's report, as the replay read it.
    void addReport(const report::RunReport& report);
    // The report of the run the Ranks page shows (null while none): "Add the Ranks page's run".
    void setCurrentReport(std::shared_ptr<const report::RunReport> report);
    bool openFiles(const QStringList& paths, QString* error);
    void clear();
    CompareView* view() const { return view_; }
    CompareRunner* runner() const { return runner_; }
    QWidget* exportTarget() const;

Q_SIGNALS:
    void statusMessage(const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    void merge(std::vector<report::RunReport> runs);
    void showComparison(const QByteArray& json);
    void chooseFiles();
    void retranslateUi();

    CompareView* view_;
    CompareRunner* runner_;
    QPushButton* open_;
    QPushButton* addCurrent_;
    QPushButton* clear_;
    std::shared_ptr<const report::RunReport> current_;
};

} // namespace shardscope::widgets
