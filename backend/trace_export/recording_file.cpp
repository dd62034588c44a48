#include "trace_export/recording_file.h"

#include "core/error.h"
#include "core/user_files.h"
#include "protocol/protocol.h"
#include "replay/stream_assembler.h"

#include <cerrno>
#include <unistd.h>

namespace shardscope::trace_export {

namespace {

// Recordings are read chunk by chunk; the assembler bounds what it keeps by the bytes consumed.
constexpr std::uint64_t kMaxRecordingBytes = std::uint64_t{16} << 30;
constexpr std::size_t kChunk = 1 << 20;

[[noreturn]] void broken(const std::string& path, const std::string& what) {
    throw Error(ErrorKind::Format, path + ": " + what);
}

} // namespace

LoadedRecording loadRecording(const std::string& path, const std::string& flag) {
    const auto [fd, size] = openInputFile(path, flag, 0, kMaxRecordingBytes);
    protocol::StreamDecoder decoder;
    replay::StreamAssembler assembler;
    std::string chunk(kChunk, '\0');
    try {
        for (;;) {
            const ssize_t n = ::read(fd, chunk.data(), chunk.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw Error(ErrorKind::Io, flag + " " + path + ": " + ioErrorText(errno));
            if (n == 0) break;
            decoder.feed(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
            while (auto record = decoder.next())
                assembler.consume(std::move(*record));
        }
    } catch (const Error& e) {
        ::close(fd);
        if (e.kind() == ErrorKind::Io) throw;
        broken(path, e.what());
    }
    ::close(fd);
    if (!decoder.headerSeen()) broken(path, "not a ShardScope recording (too short)");
    if (decoder.bufferedBytes() != 0)
        broken(path, "truncated (" + std::to_string(decoder.bufferedBytes()) +
                         " bytes of an unfinished record at the end)");
    if (!assembler.hasRunInfo()) broken(path, "has no handshake record");
    LoadedRecording out;
    out.ended = assembler.ended();
    assembler.flushPartialStep();
    replay::StreamAssembler::Output o = assembler.take();
    out.model.reset(o.runInfo);
    out.model.append(o.steps);
    out.report = o.report;
    out.steps = static_cast<std::int64_t>(out.model.stepCount());
    return out;
}

} // namespace shardscope::trace_export
