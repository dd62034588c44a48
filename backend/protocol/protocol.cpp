#include "protocol/protocol.h"

#include "core/error.h"

#include <array>
#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace shardscope::protocol {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the codec writes host integers as little-endian");

// Every enum of an event is written as one u8: its values must fit.
template <class E> constexpr bool fitsU8(std::size_t count) {
    return sizeof(E) == sizeof(std::uint8_t) && count <= 256;
}
static_assert(fitsU8<EventKind>(kEventKindCount) && fitsU8<Category>(kCategoryCount) &&
              fitsU8<Tier>(kTierCount) && fitsU8<Phase>(kPhaseCount) &&
              fitsU8<CollectiveOp>(kCollectiveOpCount) && fitsU8<Transfer>(kTransferCount));
// Version 5's event layout; a different size means a changed layout and a new kProtocolVersion.
static_assert(kEventBytes == 44 && kEventBytesV3 == 42 && kEventBytesV2 == 41 &&
                  kProtocolVersion == 5,
              "event layout changed: bump kProtocolVersion");
// What version 2 could name: its kinds and enum ranges, before transfers (and an old writer may
// not have known Phase::Save or CollectiveOp::TpAllReduce, appended last; reading them is safe).
constexpr std::size_t kEventKindCountV2 = static_cast<std::size_t>(EventKind::StepEnd) + 1;
// Before version 5 no phase came after Save.
constexpr std::size_t kPhaseCountV4 = static_cast<std::size_t>(Phase::Save) + 1;

constexpr std::array<std::uint32_t, 256> crcTable() {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        t[i] = c;
    }
    return t;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = crcTable();

const char* recordName(std::uint8_t type) {
    switch (static_cast<RecordType>(type)) {
    case RecordType::Handshake:
        return "handshake";
    case RecordType::EventBatch:
        return "event batch";
    case RecordType::StepSummary:
        return "step summary";
    case RecordType::Report:
        return "report";
    case RecordType::Failure:
        return "failure";
    case RecordType::End:
        return "end";
    }
    return "unknown";
}

[[noreturn]] void malformed(const std::string& what) {
    throw Error(ErrorKind::Format, what);
}

template <class T> void put(std::string& out, T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    out.append(raw, sizeof(T));
}

void putString(std::string& out, std::string_view s) {
    put<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
    out.append(s);
}

// Reads fields from one record's payload; every read is bounds-checked.
class Reader {
public:
    Reader(std::string_view payload, const char* record) : p_(payload), record_(record) {}
    template <class T> T get() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, p_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return v;
    }
    std::string getString() {
        const auto n = get<std::uint32_t>();
        need(n);
        std::string s(p_.substr(at_, n));
        at_ += n;
        return s;
    }
    void finish() const {
        if (at_ != p_.size())
            malformed(std::string(record_) + " record has " + std::to_string(p_.size() - at_) +
                      " trailing bytes");
    }

private:
    void need(std::size_t n) const {
        if (p_.size() - at_ < n) malformed(std::string(record_) + " record is too short");
    }
    std::string_view p_;
    const char* record_;
    std::size_t at_ = 0;
};

template <class E> E checkedEnum(std::uint8_t raw, std::size_t count, const char* field) {
    if (raw >= count)
        malformed(std::string("event has an invalid ") + field + " (" + std::to_string(raw) + ")");
    return static_cast<E>(raw);
}

void putEvent(std::string& out, const Event& e) {
    put<std::uint64_t>(out, e.timeNs);
    put<std::uint64_t>(out, e.bytes);
    put<std::int64_t>(out, e.step);
    put<std::int32_t>(out, e.rank);
    put<std::int32_t>(out, e.unit);
    put<std::int32_t>(out, e.peers);
    put<std::uint8_t>(out, static_cast<std::uint8_t>(e.kind));
    put<std::uint8_t>(out, static_cast<std::uint8_t>(e.category));
    put<std::uint8_t>(out, static_cast<std::uint8_t>(e.tier));
    put<std::uint8_t>(out, static_cast<std::uint8_t>(e.phase));
    put<std::uint8_t>(out, static_cast<std::uint8_t>(e.collective));
    put<std::uint8_t>(out, static_cast<std::uint8_t>(e.transfer));
    put<std::int16_t>(out, e.microBatch);
}

Event getEvent(Reader& r, std::uint32_t version) {
    const bool v2 = version == 2;
    Event e;
    e.timeNs = r.get<std::uint64_t>();
    e.bytes = r.get<std::uint64_t>();
    e.step = r.get<std::int64_t>();
    e.rank = r.get<std::int32_t>();
    e.unit = r.get<std::int32_t>();
    e.peers = r.get<std::int32_t>();
    e.kind = checkedEnum<EventKind>(r.get<std::uint8_t>(), v2 ? kEventKindCountV2 : kEventKindCount,
                                    "kind");
    e.category = checkedEnum<Category>(r.get<std::uint8_t>(), kCategoryCount, "category");
    e.tier = checkedEnum<Tier>(r.get<std::uint8_t>(), kTierCount, "tier");
    e.phase = checkedEnum<Phase>(r.get<std::uint8_t>(), version >= 5 ? kPhaseCount : kPhaseCountV4,
                                 "phase");
    e.collective =
        checkedEnum<CollectiveOp>(r.get<std::uint8_t>(), kCollectiveOpCount, "collective");
    if (!v2) e.transfer = checkedEnum<Transfer>(r.get<std::uint8_t>(), kTransferCount, "transfer");
    if (version >= 4) {
        e.microBatch = r.get<std::int16_t>();
        if (e.microBatch < -1 || e.microBatch >= kMaxMicroBatches)
            malformed("event has an invalid micro-batch (" + std::to_string(e.microBatch) + ")");
    }
    // A transfer event says which way it moves; no other event moves anything between tiers.
    const bool transferKind = e.kind == EventKind::TransferBegin ||
                              e.kind == EventKind::TransferEnd || e.kind == EventKind::TransferWait;
    if (transferKind != (e.transfer != Transfer::None))
        malformed(std::string("event has ") + (transferKind
                                                   ? "no transfer direction"
                                                   : "a transfer direction outside a transfer"));
    return e;
}

struct PayloadWriter {
    std::string& out;
    void operator()(const Handshake& h) const {
        put(out, h.rank);
        put(out, h.worldSize);
        putString(out, h.configJson);
    }
    void operator()(const EventBatch& b) const {
        put(out, b.rank);
        put<std::uint32_t>(out, static_cast<std::uint32_t>(b.events.size()));
        for (const Event& e : b.events)
            putEvent(out, e);
    }
    void operator()(const StepSummary& s) const {
        put(out, s.step);
        put(out, s.loss);
        put(out, s.stepNs);
    }
    void operator()(const Report& r) const { putString(out, r.json); }
    void operator()(const Failure& f) const {
        put(out, f.rank);
        put(out, f.step);
        putString(out, f.message);
    }
    void operator()(const End&) const {}
};

RecordType typeOf(const Record& r) {
    return static_cast<RecordType>(r.index() + 1); // variant order = RecordType order
}

Record decodePayload(RecordType type, std::string_view payload, std::uint32_t version) {
    switch (type) {
    case RecordType::Handshake: {
        Reader r(payload, "handshake");
        Handshake h{r.get<std::int32_t>(), r.get<std::int32_t>(), r.getString()};
        r.finish();
        if (h.worldSize < 1 || h.worldSize > kMaxWorldSize)
            malformed("handshake names world size " + std::to_string(h.worldSize) +
                      " (readers accept 1 to " + std::to_string(kMaxWorldSize) + ")");
        if (h.rank < 0 || h.rank >= h.worldSize)
            malformed("handshake names rank " + std::to_string(h.rank) + " of world size " +
                      std::to_string(h.worldSize));
        return h;
    }
    case RecordType::EventBatch: {
        Reader r(payload, "event batch");
        EventBatch b;
        b.rank = r.get<std::int32_t>();
        const auto n = r.get<std::uint32_t>();
        const std::size_t eventBytes = version == 2   ? kEventBytesV2
                                       : version == 3 ? kEventBytesV3
                                                      : kEventBytes;
        if (payload.size() != 8 + std::uint64_t{n} * eventBytes)
            malformed("event batch says " + std::to_string(n) + " events but holds " +
                      std::to_string(payload.size()) + " bytes");
        b.events.reserve(n);
        for (std::uint32_t i = 0; i < n; ++i)
            b.events.push_back(getEvent(r, version));
        r.finish();
        return b;
    }
    case RecordType::StepSummary: {
        Reader r(payload, "step summary");
        StepSummary s{r.get<std::int64_t>(), r.get<double>(), r.get<std::uint64_t>()};
        r.finish();
        return s;
    }
    case RecordType::Report: {
        Reader r(payload, "report");
        Report rep{r.getString()};
        r.finish();
        return rep;
    }
    case RecordType::Failure: {
        Reader r(payload, "failure");
        Failure f{r.get<std::int32_t>(), r.get<std::int64_t>(), r.getString()};
        r.finish();
        return f;
    }
    case RecordType::End:
        if (!payload.empty()) malformed("end record has a payload");
        return End{};
    }
    malformed("unknown record type " + std::to_string(static_cast<int>(type)));
}

} // namespace

std::uint32_t crc32cPortable(std::string_view bytes, std::uint32_t crc) {
    crc = ~crc;
    for (const char c : bytes)
        crc = kCrcTable[(crc ^ static_cast<std::uint8_t>(c)) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)
namespace {
// SSE4.2's crc32 instruction is CRC-32C itself (the same reflected polynomial, no final
// inversion): 8 bytes an instruction instead of a table lookup a byte. Every record is checked
// by the GUI's decoder and checksummed by the worker's writer, so this is on both paths.
__attribute__((target("sse4.2"))) std::uint32_t crc32cSse42(std::string_view bytes,
                                                            std::uint32_t crc) {
    const char* p = bytes.data();
    std::size_t n = bytes.size();
    std::uint64_t c = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, p, sizeof word);
        c = _mm_crc32_u64(c, word);
    }
    auto c32 = static_cast<std::uint32_t>(c);
    for (; n > 0; ++p, --n)
        c32 = _mm_crc32_u8(c32, static_cast<std::uint8_t>(*p));
    return ~c32;
}
// Asked on first use, not in a static initializer: __builtin_cpu_supports needs
// __builtin_cpu_init before it when it may run ahead of libgcc's own constructor.
bool hasSse42() {
    static const bool have = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("sse4.2") != 0;
    }();
    return have;
}
} // namespace
#endif

std::uint32_t crc32c(std::string_view bytes, std::uint32_t crc) {
#if defined(__x86_64__)
    if (hasSse42()) return crc32cSse42(bytes, crc);
#endif
    return crc32cPortable(bytes, crc);
}

void writeHeader(std::string& out) {
    out.append(kMagic);
    put<std::uint32_t>(out, kProtocolVersion);
}

void writeRecord(std::string& out, const Record& record) {
    std::string payload;
    std::visit(PayloadWriter{payload}, record);
    if (payload.size() > kMaxRecordBytes)
        throw Error(ErrorKind::Internal, "record of " + std::to_string(payload.size()) +
                                             " bytes exceeds the protocol's limit");
    const auto type = static_cast<std::uint8_t>(typeOf(record));
    put<std::uint32_t>(out, static_cast<std::uint32_t>(payload.size()));
    put<std::uint8_t>(out, type);
    put<std::uint32_t>(
        out, crc32c(payload, crc32c(std::string_view(reinterpret_cast<const char*>(&type), 1))));
    out.append(payload);
}

std::string encode(const Record& record) {
    std::string out;
    writeRecord(out, record);
    return out;
}

void StreamDecoder::feed(std::string_view bytes) {
    // Compact lazily so a long stream doesn't keep every byte it ever saw.
    if (offset_ > 0 && offset_ * 2 > buffer_.size()) {
        buffer_.erase(0, offset_);
        consumed_ += offset_;
        offset_ = 0;
    }
    buffer_.append(bytes.data(), bytes.size());
}

void StreamDecoder::readHeader() {
    const std::string_view avail(buffer_.data() + offset_, buffer_.size() - offset_);
    const std::size_t cmp = std::min(avail.size(), kMagic.size());
    if (avail.substr(0, cmp) != kMagic.substr(0, cmp))
        malformed("not a ShardScope stream (bad magic)");
    if (avail.size() < kHeaderBytes) return;
    std::uint32_t version = 0;
    std::memcpy(&version, avail.data() + kMagic.size(), sizeof version);
    if (version < kOldestReadableVersion || version > kProtocolVersion)
        malformed("written with protocol version " + std::to_string(version) +
                  ", but this build reads versions " + std::to_string(kOldestReadableVersion) +
                  " to " + std::to_string(kProtocolVersion) +
                  (version > kProtocolVersion ? " (open it with a newer ShardScope)"
                                              : " (record the run again with this build)"));
    version_ = version;
    offset_ += kHeaderBytes;
    headerSeen_ = true;
}

std::optional<Record> StreamDecoder::next() {
    if (!headerSeen_) {
        readHeader();
        if (!headerSeen_) return std::nullopt;
    }
    const std::size_t avail = buffer_.size() - offset_;
    if (avail < kRecordHeaderBytes) return std::nullopt;
    const auto at = [this] { return "damaged at byte " + std::to_string(position()) + ": "; };
    std::uint32_t length = 0;
    std::memcpy(&length, buffer_.data() + offset_, sizeof length);
    if (length > kMaxRecordBytes)
        malformed(at() + "record length " + std::to_string(length) +
                  " exceeds the protocol's limit");
    if (avail < kRecordHeaderBytes + std::size_t{length}) return std::nullopt;
    const std::string_view typeByte(buffer_.data() + offset_ + 4, 1);
    std::uint32_t checksum = 0;
    std::memcpy(&checksum, buffer_.data() + offset_ + 5, sizeof checksum);
    const std::string_view payload(buffer_.data() + offset_ + kRecordHeaderBytes, length);
    const auto rawType = static_cast<std::uint8_t>(typeByte[0]);
    if (crc32c(payload, crc32c(typeByte)) != checksum)
        malformed(at() + "the " + recordName(rawType) + " record's checksum does not match");
    Record record = [&] {
        try {
            return decodePayload(static_cast<RecordType>(rawType), payload, version_);
        } catch (const Error& e) {
            malformed(at() + e.what());
        }
    }();
    offset_ += kRecordHeaderBytes + std::size_t{length};
    ++records_;
    return record;
}

Recording decodeRecording(std::string_view bytes, const std::string& what) {
    StreamDecoder decoder;
    decoder.feed(bytes);
    Recording rec;
    try {
        while (auto record = decoder.next()) {
            if (auto* h = std::get_if<Handshake>(&*record))
                rec.handshakes.push_back(std::move(*h));
            else if (auto* b = std::get_if<EventBatch>(&*record))
                rec.batches.push_back(std::move(*b));
            else if (auto* s = std::get_if<StepSummary>(&*record))
                rec.steps.push_back(*s);
            else if (auto* r = std::get_if<Report>(&*record))
                rec.reportJson = std::move(r->json);
            else if (auto* f = std::get_if<Failure>(&*record))
                rec.failures.push_back(std::move(*f));
            else
                rec.ended = true;
        }
    } catch (const Error& e) {
        throw Error(ErrorKind::Format, what + ": " + e.what());
    }
    if (!decoder.headerSeen())
        throw Error(ErrorKind::Format, what + ": too short to be a recording");
    if (decoder.bufferedBytes() != 0)
        throw Error(ErrorKind::Format, what + ": truncated (" +
                                           std::to_string(decoder.bufferedBytes()) +
                                           " bytes of an unfinished record at the end)");
    if (rec.handshakes.empty()) throw Error(ErrorKind::Format, what + ": no handshake record");
    return rec;
}

Recording readRecording(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::Io, "cannot open recording '" + path + "'");
    std::ostringstream data;
    data << in.rdbuf();
    if (in.bad()) throw Error(ErrorKind::Io, "cannot read recording '" + path + "'");
    return decodeRecording(data.str(), "recording '" + path + "'");
}

} // namespace shardscope::protocol
