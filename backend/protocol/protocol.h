#pragma once
// The one versioned wire format shared by workers, the CLI, the GUI and recordings (.sstrace).
//
// Layout: an 8-byte magic "SSTRACE\n", a little-endian u32 protocol version, then records.
// Each record is u32 payload length, u8 record type, u32 CRC-32C of the type byte and the
// payload, then the payload. Integers are little-endian. A recording file is exactly the stream
// a job sends to its parent; a complete one ends with an End record (every run, failed or not,
// writes one), so a file without it was cut short.
//
// Note: bump kProtocolVersion whenever a record's payload changes; readers refuse other
// versions with a message naming both (no best-effort decoding of a foreign layout).
// Event enum values are part of this format (see core/event.h, core/categories.h).
// Versions read: kProtocolVersion and kOldestReadableVersion up to it. Version 4 is version 5
// without Phase::WeightGrad (the same layout; its writers never split a backward). Version 3 is
// version 4 without micro-batches: an event has no micro-batch field (kEventBytesV3). Version 2 is
// version 3 without transfers: an event has no transfer byte (kEventBytesV2) and no Transfer* kind.
#include "core/event.h"
#include "core/printable.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace shardscope::protocol {

inline constexpr std::string_view kMagic = "SSTRACE\n";
inline constexpr std::uint32_t kProtocolVersion = 5;
inline constexpr std::uint32_t kOldestReadableVersion = 2;
inline constexpr std::size_t kHeaderBytes = 12;             // magic + version
inline constexpr std::size_t kRecordHeaderBytes = 9;        // length + type + checksum
inline constexpr std::uint32_t kMaxRecordBytes = 64u << 20; // refuse absurd lengths early
// The largest world size a stream may name. Readers size per-rank tables from it before any
// event arrives, so it is bounded here, not by whatever a file says; a larger job needs a new
// protocol version.
inline constexpr std::int32_t kMaxWorldSize = 4096;
// One encoded Event: its fields back to back, in putEvent's order (protocol.cpp).
inline constexpr std::size_t kEventBytes =
    sizeof(Event::timeNs) + sizeof(Event::bytes) + sizeof(Event::step) + sizeof(Event::rank) +
    sizeof(Event::unit) + sizeof(Event::peers) + sizeof(Event::kind) + sizeof(Event::category) +
    sizeof(Event::tier) + sizeof(Event::phase) + sizeof(Event::collective) +
    sizeof(Event::transfer) + sizeof(Event::microBatch);
inline constexpr std::size_t kEventBytesV3 = kEventBytes - sizeof(Event::microBatch);
inline constexpr std::size_t kEventBytesV2 = kEventBytesV3 - sizeof(Event::transfer);

enum class RecordType : std::uint8_t {
    Handshake = 1,   // once per rank: who it is and what it runs
    EventBatch = 2,  // one rank's events, batched per step
    StepSummary = 3, // per step, from rank 0: loss and step time
    Report = 4,      // the final JSON report
    Failure = 5,     // a rank failed: rank, step, message
    End = 6,         // clean end of stream
};

struct Handshake {
    std::int32_t rank = 0;
    std::int32_t worldSize = 1;
    std::string configJson; // the RunConfig as JSON (strategy, model, knobs, unit names…)
};

struct EventBatch {
    std::int32_t rank = 0;
    std::vector<Event> events;
};

struct StepSummary {
    std::int64_t step = 0;
    double loss = 0;
    std::uint64_t stepNs = 0;
};

struct Report {
    std::string json;
};

struct Failure {
    std::int32_t rank = -1; // -1: the launcher itself
    std::int64_t step = -1; // counted from 0 like StepSummary; -1: during setup
    std::string message;
};

struct End {};

using Record = std::variant<Handshake, EventBatch, StepSummary, Report, Failure, End>;

// CRC-32C (Castagnoli), continuing from `crc` (0 to start): the CPU's crc32 instruction where it
// has one (SSE4.2), else crc32cPortable, a table a byte (the definition the tests compare with).
std::uint32_t crc32c(std::string_view bytes, std::uint32_t crc = 0);
std::uint32_t crc32cPortable(std::string_view bytes, std::uint32_t crc = 0);

// Text from a stream, made safe to show: core/printable.h (a message from a file is shown, never
// interpreted).
using shardscope::printableText;

// Appends the stream header / one record to `out`.
void writeHeader(std::string& out);
void writeRecord(std::string& out, const Record& record);
std::string encode(const Record& record); // record only, no header

// Incremental decoder: feed any split of the stream (one byte at a time works), pull complete
// records. Malformed input throws Error(Format) with a message naming what is wrong and where
// ("damaged at byte N: …"); after a throw the decoder stays failed.
class StreamDecoder {
public:
    void feed(std::string_view bytes);
    std::optional<Record> next();

    bool headerSeen() const { return headerSeen_; }
    std::uint32_t version() const { return version_; } // the stream's, once its header is seen
    std::size_t bufferedBytes() const { return buffer_.size() - offset_; }
    std::uint64_t recordsDecoded() const { return records_; }
    // Bytes of the stream consumed by complete records (and the header) so far.
    std::uint64_t position() const { return consumed_ + offset_; }

private:
    void readHeader();
    std::string buffer_;
    std::size_t offset_ = 0;
    std::uint64_t consumed_ = 0; // bytes dropped from the front of buffer_
    bool headerSeen_ = false;
    std::uint32_t version_ = kProtocolVersion;
    std::uint64_t records_ = 0;
};

// A whole recording read from a file. Throws Error(Io) if unreadable, Error(Format) if broken,
// including a stream that stops mid-record ("truncated"); a stream cut at a record boundary
// reads, with ended == false.
struct Recording {
    std::vector<Handshake> handshakes; // index = rank once sorted; size = world size
    std::vector<EventBatch> batches;
    std::vector<StepSummary> steps;
    std::optional<std::string> reportJson;
    std::vector<Failure> failures;
    bool ended = false; // an End record was seen
};
Recording readRecording(const std::string& path);
Recording decodeRecording(std::string_view bytes, const std::string& what = "recording");

} // namespace shardscope::protocol
