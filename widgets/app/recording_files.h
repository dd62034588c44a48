#pragma once
// The File-menu actions on the window's run: Save recording as…, Open recent, Export current
// view….
//
// Saving re-encodes what the GUI holds (every event of every rank, the steps' summaries, the
// report, failures) with the protocol's own encoder, so a live run can be saved as well as a
// recording that was opened; reading it back gives the same replay.
#include "replay/replay_model.h"

#include <QObject>
#include <QStringList>
#include <string>
#include <vector>

class QAction;
class QMenu;

namespace shardscope::widgets {

class MainWindow;
class RunDocument;

// The recording of what `model` holds (protocol::writeHeader + records).
std::string encodeRecording(const replay::ReplayModel& model, const std::string& reportJson,
                            const std::vector<replay::FailureInfo>& failures);

class RecordingFiles : public QObject {
    Q_OBJECT
public:
    RecordingFiles(MainWindow& window, RunDocument& document);

    bool saveRecording(const QString& path, QString* error) const;
    bool exportCurrentView(const QString& path, QString* error) const;
    QWidget* currentExportTarget() const;
    QStringList recentFiles() const;
    void addRecent(const QString& path);
    static constexpr int kMaxRecent = 8;

private:
    void rebuildRecentMenu();
    void retranslateUi();
    bool eventFilter(QObject* watched, QEvent* event) override;

    MainWindow& window_;
    RunDocument& document_;
    QAction* save_;
    QAction* export_;
    QMenu* recent_;
};

} // namespace shardscope::widgets
