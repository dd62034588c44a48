#pragma once
// The Compare page: every run finished (or recording opened) in this session adds its report,
// one per strategy and configuration (a newer run of both replaces the older; runs of other
// configurations form their own groups, see replay::comparable), plus reports opened
// from files (`shardscope-cli compare --json`, or single run reports), or a fresh comparison of
// every strategy run by CompareRunner (the real CLI). Shows CompareView.
#include "replay/compare_data.h"

#include <QWidget>

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
    QPushButton* clear_;
};

} // namespace shardscope::widgets
