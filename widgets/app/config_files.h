#pragma once
// The File-menu actions for files other tools write and read: Import configuration… (DeepSpeed
// ds_config.json or an Accelerate YAML onto the Ranks page's run settings, with the listing of
// what was applied and what was ignored, and why) and Export for Perfetto… / Export ledger as
// CSV… (backend/trace_export, on the run the window holds).
#include <QObject>
#include <QString>
#include <QStringList>

class QAction;

namespace shardscope::widgets {

class MainWindow;
class RunDocument;
class RunConfigPanel;

class ConfigFiles : public QObject {
    Q_OBJECT
public:
    ConfigFiles(MainWindow& window, RunDocument& document, RunConfigPanel& panel);

    // Applies the file to the panel; `listing` gets "applied: …" / "ignored: …" lines. False
    // with the one-line reason in `error` when the file does not read (the panel is unchanged).
    bool importConfig(const QString& path, QStringList* listing, QString* error);
    bool exportPerfetto(const QString& path, QString* error) const;
    bool exportCsv(const QString& path, QString* error) const;

private:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void retranslateUi();
    void showListing(const QString& path, const QStringList& listing);

    MainWindow& window_;
    RunDocument& document_;
    RunConfigPanel& panel_;
    QAction* import_;
    QAction* perfetto_;
    QAction* csv_;
};

} // namespace shardscope::widgets
