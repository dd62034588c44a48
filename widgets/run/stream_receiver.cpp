#include "run/stream_receiver.h"

#include "core/error.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>

namespace shardscope::widgets {

void registerRunMetaTypes() {
    qRegisterMetaType<RunInfoPtr>("shardscope::widgets::RunInfoPtr");
    qRegisterMetaType<StepListPtr>("shardscope::widgets::StepListPtr");
    qRegisterMetaType<RunReportPtr>("shardscope::widgets::RunReportPtr");
    qRegisterMetaType<replay::FailureInfo>("shardscope::replay::FailureInfo");
}

StreamReceiver::StreamReceiver(QObject* parent) : QObject(parent), flushTimer_(this) {
    registerRunMetaTypes();
    flushTimer_.setSingleShot(true);
    flushTimer_.setInterval(kFlushMs);
    connect(&flushTimer_, &QTimer::timeout, this, &StreamReceiver::flush);
    resetDecoder();
}

StreamReceiver::~StreamReceiver() = default;

void StreamReceiver::resetDecoder() {
    decoder_ = std::make_unique<protocol::StreamDecoder>();
    assembler_ = std::make_unique<replay::StreamAssembler>();
    failed_ = false;
}

QString StreamReceiver::listen(const QString& socketPath) {
    close();
    resetDecoder();
    server_ = new QLocalServer(this);
    server_->setSocketOptions(
        QLocalServer::UserAccessOption); // only this user, inside a 0700 folder
    server_->setMaxPendingConnections(1);
    if (!server_->listen(socketPath)) {
        const QString error = server_->errorString();
        delete server_;
        server_ = nullptr;
        return error;
    }
    connect(server_, &QLocalServer::newConnection, this, &StreamReceiver::onNewConnection);
    return {};
}

void StreamReceiver::onNewConnection() {
    while (QLocalSocket* incoming = server_->nextPendingConnection()) {
        if (socket_) { // one stream per run: rank 0 only
            incoming->abort();
            incoming->deleteLater();
            continue;
        }
        socket_ = incoming;
        Q_EMIT connectionOpened();
        connect(socket_, &QLocalSocket::readyRead, this, &StreamReceiver::onReadyRead);
        connect(socket_, &QLocalSocket::disconnected, this, [this] {
            onReadyRead(); // whatever arrived with the close
            if (!failed_) assembler_->flushPartialStep();
            flush();
            Q_EMIT connectionClosed();
        });
        onReadyRead();
    }
}

void StreamReceiver::onReadyRead() {
    if (!socket_ || failed_) return;
    const QByteArray bytes = socket_->readAll();
    if (!bytes.isEmpty()) consume(bytes.constData(), bytes.size());
}

bool StreamReceiver::consume(const char* data, qsizetype size) {
    if (failed_) return false;
    try {
        decoder_->feed(std::string_view(data, static_cast<std::size_t>(size)));
        bool urgent = false;
        while (auto record = decoder_->next()) {
            urgent = urgent || !(std::holds_alternative<protocol::EventBatch>(*record) ||
                                 std::holds_alternative<protocol::StepSummary>(*record));
            assembler_->consume(std::move(*record));
        }
        // Steps wait for the coalescing timer; the configuration, failures and the end go now.
        if (urgent) flush();
        if (!flushTimer_.isActive()) flushTimer_.start();
        return true;
    } catch (const Error& e) {
        fail(QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        fail(QString::fromStdString(e.what()));
    }
    return false;
}

void StreamReceiver::flush() {
    replay::StreamAssembler::Output out = assembler_->take();
    if (out.empty()) return;
    if (out.runInfo) Q_EMIT runInfoReady(out.runInfo);
    if (!out.steps.empty())
        Q_EMIT stepsReady(std::make_shared<const replay::StepList>(std::move(out.steps)));
    if (out.report) Q_EMIT reportReady(out.report);
    if (!out.reportProblem.empty())
        Q_EMIT reportUnreadable(QString::fromStdString(out.reportProblem));
    for (const replay::FailureInfo& f : out.failures)
        Q_EMIT failureReceived(f);
    if (out.ended) Q_EMIT streamEnded();
}

void StreamReceiver::fail(const QString& message) {
    if (failed_) return;
    assembler_->flushPartialStep(); // what decoded cleanly before the damage still shows
    flush();
    failed_ = true;
    Q_EMIT streamError(message);
    if (socket_) socket_->abort();
}

void StreamReceiver::readFile(const QString& path) {
    close();
    resetDecoder();
    QFile file(path);
    // Regular files only: opening a FIFO or a device would block the window.
    if (const QFileInfo info(path); info.exists() && !info.isFile()) {
        fail(QCoreApplication::translate("StreamReceiver", "cannot open %1: not a regular file")
                 .arg(path));
        Q_EMIT finishedReading();
        return;
    }
    if (!file.open(QIODevice::ReadOnly)) {
        fail(QCoreApplication::translate("StreamReceiver", "cannot open %1: %2")
                 .arg(path, file.errorString()));
        Q_EMIT finishedReading();
        return;
    }
    QElapsedTimer sinceFlush;
    sinceFlush.start();
    while (!file.atEnd() && !failed_) {
        const QByteArray chunk = file.read(1 << 20);
        if (chunk.isEmpty() && file.error() != QFile::NoError) {
            fail(QCoreApplication::translate("StreamReceiver", "cannot read %1: %2")
                     .arg(path, file.errorString()));
            break;
        }
        consume(chunk.constData(), chunk.size());
        if (sinceFlush.elapsed() >= kFlushMs) {
            flush();
            sinceFlush.restart();
        }
    }
    if (!failed_) {
        if (!decoder_->headerSeen())
            fail(QCoreApplication::translate("StreamReceiver",
                                             "%1 is not a ShardScope recording (too short)")
                     .arg(path));
        else if (decoder_->bufferedBytes() != 0)
            fail(QCoreApplication::translate(
                     "StreamReceiver",
                     "%1 is truncated (%2 bytes of an unfinished record at the end)")
                     .arg(path)
                     .arg(decoder_->bufferedBytes()));
        else if (!assembler_->hasRunInfo())
            fail(QCoreApplication::translate("StreamReceiver", "%1 has no handshake record")
                     .arg(path));
        else if (const int shown = static_cast<int>(assembler_->lastStep() + 1);
                 !assembler_->ended())
            fail(QCoreApplication::translate(
                     "StreamReceiver",
                     "%1 ends before the run finished — showing the first %n step(s)", nullptr,
                     shown)
                     .arg(path));
    }
    if (!failed_) assembler_->flushPartialStep();
    flushTimer_.stop();
    flush();
    Q_EMIT finishedReading();
}

void StreamReceiver::close() {
    flushTimer_.stop();
    if (socket_) {
        socket_->disconnect(this);
        socket_->abort();
        socket_->deleteLater();
        socket_ = nullptr;
    }
    if (server_) {
        server_->close();
        server_->deleteLater();
        server_ = nullptr;
    }
}

} // namespace shardscope::widgets
