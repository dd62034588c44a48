#pragma once
// The decoder side of a run, living on its own QThread: it accepts rank 0's connection on the
// private local socket (or reads a recording file), decodes the stream and assembles steps,
// and hands immutable results to the UI thread through queued signals. Steps are coalesced
// into one signal per kFlushMs so a fast 64-rank stream cannot flood the UI's event queue.
#include "protocol/protocol.h"
#include "replay/stream_assembler.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <memory>

class QLocalServer;
class QLocalSocket;

namespace shardscope::widgets {

using StepListPtr = std::shared_ptr<const replay::StepList>;
using RunInfoPtr = std::shared_ptr<const replay::RunInfo>;
using RunReportPtr = std::shared_ptr<const report::RunReport>;

class StreamReceiver : public QObject {
    Q_OBJECT
public:
    explicit StreamReceiver(QObject* parent = nullptr);
    ~StreamReceiver() override;

    static constexpr int kFlushMs = 30;

public Q_SLOTS:
    // Listens on socketPath (inside a private folder); returns an error text or empty.
    QString listen(const QString& socketPath);
    // Reads and decodes a whole recording, then emits finishedReading().
    void readFile(const QString& path);
    void close();

Q_SIGNALS:
    void runInfoReady(shardscope::widgets::RunInfoPtr info);
    void stepsReady(shardscope::widgets::StepListPtr steps);
    void reportReady(shardscope::widgets::RunReportPtr report);
    void reportUnreadable(const QString& message); // the run replays without its report
    void failureReceived(shardscope::replay::FailureInfo failure);
    void streamEnded();                       // an End record
    void streamError(const QString& message); // unreadable or inconsistent stream
    void connectionOpened();                  // rank 0 connected
    void connectionClosed();                  // rank 0 closed the socket (after any flush)
    void finishedReading();                   // readFile() is done (after any error)

private:
    void onNewConnection();
    void onReadyRead();
    // Feeds bytes to the decoder and assembler; false after a stream error (reported).
    bool consume(const char* data, qsizetype size);
    void flush();
    void fail(const QString& message);
    void resetDecoder();

    QLocalServer* server_ = nullptr;
    QLocalSocket* socket_ = nullptr;
    QTimer flushTimer_;
    std::unique_ptr<protocol::StreamDecoder> decoder_;
    std::unique_ptr<replay::StreamAssembler> assembler_;
    bool failed_ = false;
};

void registerRunMetaTypes();

} // namespace shardscope::widgets
