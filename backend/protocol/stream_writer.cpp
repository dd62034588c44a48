#include "protocol/stream_writer.h"

#include "core/error.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace shardscope {

StreamWriter::~StreamWriter() {
    if (socket_ >= 0)
        ::close(socket_); // an unfinished recording's OutputFile removes its temporary file
}

void StreamWriter::connectSocket(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path))
        throw Error(ErrorKind::Io, "stream socket path is too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw Error(ErrorKind::Io, std::string("socket(): ") + std::strerror(errno));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int err = errno;
        ::close(fd);
        throw Error(ErrorKind::Io,
                    "cannot connect to the stream socket " + path + ": " + std::strerror(err));
    }
    // A parent that dies must not kill rank 0 with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    socket_ = fd;
}

void StreamWriter::openRecording(const std::string& path) {
    file_ = std::make_unique<OutputFile>(path, "--trace");
}

void StreamWriter::writeBytes(const std::string& bytes) {
    if (socket_ >= 0) {
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n =
                ::send(socket_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) { // the parent is gone; keep recording
                ::close(socket_);
                socket_ = -1;
                break;
            }
            done += static_cast<std::size_t>(n);
        }
    }
    if (file_) file_->write(bytes);
}

void StreamWriter::write(const protocol::Record& record) {
    if (!active()) return; // nobody listens: don't encode
    std::string bytes;
    if (!headerWritten_) {
        protocol::writeHeader(bytes);
        headerWritten_ = true;
    }
    protocol::writeRecord(bytes, record);
    writeBytes(bytes);
}

void StreamWriter::writeEncoded(const std::string& encodedRecord) {
    if (!active()) return;
    if (!headerWritten_) {
        std::string header;
        protocol::writeHeader(header);
        headerWritten_ = true;
        writeBytes(header + encodedRecord);
        return;
    }
    writeBytes(encodedRecord);
}

void StreamWriter::flush() {
    if (file_) file_->flush();
}

std::string StreamWriter::finish() {
    if (!file_) return {};
    const std::unique_ptr<OutputFile> file = std::move(file_);
    return file->commit();
}

} // namespace shardscope
