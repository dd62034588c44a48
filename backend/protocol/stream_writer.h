#pragma once
// Where rank 0 sends the event stream: a Unix socket opened by the parent (CLI or GUI) and/or
// a recording file. Both receive the identical byte stream (protocol/protocol.h).
//
// Note: a recording is written to "<path>.partial" and renamed into place by finish(), so a
// crash never leaves a half-written file under the requested name. A failed run still calls
// finish() after writing its Failure record: the recording of a failure is a valid file.
#include <cstdio>
#include <memory>
#include <string>

#include "protocol/protocol.h"

namespace shardscope {

class StreamWriter {
public:
    StreamWriter() = default;
    ~StreamWriter();
    StreamWriter(const StreamWriter&) = delete;
    StreamWriter& operator=(const StreamWriter&) = delete;

    // Connects to the parent's socket (throws Error(Io) naming the path when it cannot).
    void connectSocket(const std::string& path);
    // Starts a recording at `path` (throws Error(Io) when the folder is not writable).
    void openRecording(const std::string& path);
    bool active() const { return socket_ >= 0 || file_ != nullptr; }

    // Writes the header on first use, then the record, to every open target. A parent that
    // went away (EPIPE) is dropped silently; the recording goes on.
    void write(const protocol::Record& record);
    // A record another rank already encoded (protocol::encode), passed through byte for byte:
    // rank 0 forwards every rank's event batches without decoding and re-encoding them.
    void writeEncoded(const std::string& encodedRecord);
    void flush();
    // Flushes, closes and renames the recording into place.
    void finish();

private:
    void writeBytes(const std::string& bytes);
    int socket_ = -1;
    std::FILE* file_ = nullptr;
    std::string path_;
    bool headerWritten_ = false;
};

} // namespace shardscope
