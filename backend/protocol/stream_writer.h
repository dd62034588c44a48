#pragma once
// Where rank 0 sends the event stream: a Unix socket opened by the parent (CLI or GUI) and/or
// a recording file. Both receive the identical byte stream (protocol/protocol.h).
//
// Note: a recording is an OutputFile (core/user_files.h): written beside its target and renamed
// into place by finish(), so a crash never leaves a half-written file under the requested name.
// A failed run still calls finish() after writing its Failure record: the recording of a
// failure is a valid file.
#include "core/user_files.h"
#include "protocol/protocol.h"

#include <memory>
#include <string>

namespace shardscope {

class StreamWriter {
public:
    StreamWriter() = default;
    ~StreamWriter();
    StreamWriter(const StreamWriter&) = delete;
    StreamWriter& operator=(const StreamWriter&) = delete;

    // Connects to the parent's socket (throws Error(Io) naming the path when it cannot).
    void connectSocket(const std::string& path);
    // Starts a recording at `path` (throws as OutputFile does, naming --trace).
    void openRecording(const std::string& path);
    bool active() const { return socket_ >= 0 || file_ != nullptr; }

    // Writes the header on first use, then the record, to every open target. A parent that
    // went away (EPIPE) is dropped silently; the recording goes on.
    void write(const protocol::Record& record);
    // A record another rank already encoded (protocol::encode), passed through byte for byte:
    // rank 0 forwards every rank's event batches without decoding and re-encoding them.
    void writeEncoded(const std::string& encodedRecord);
    void flush();
    // Flushes, closes and renames the recording into place; returns where it went (the path
    // given, or the name it was kept under when another process wrote that path meanwhile;
    // empty without a recording).
    std::string finish();
    // Drops an unfinished recording (its temporary file is removed): for a process about to
    // end without running destructors (MPI_Abort, _Exit) after finish() failed.
    void discard() { file_.reset(); }

private:
    void writeBytes(const std::string& bytes);
    int socket_ = -1;
    std::unique_ptr<OutputFile> file_;
    bool headerWritten_ = false;
};

} // namespace shardscope
