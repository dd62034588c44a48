// The wire format: round trips, partial input, and refusal of broken or foreign streams.
#include "core/error.h"
#include "protocol/protocol.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>

using namespace shardscope;
using namespace shardscope::protocol;

namespace {

Event sampleEvent(int i) {
    Event e;
    e.timeNs = 1000u + static_cast<std::uint64_t>(i);
    e.rank = i % 4;
    e.kind = static_cast<EventKind>(i % static_cast<int>(kEventKindCount));
    e.category = static_cast<Category>(i % static_cast<int>(kCategoryCount));
    e.tier = Tier::Host;
    e.bytes = (1ull << 40) + static_cast<std::uint64_t>(i);
    e.unit = i - 1;
    e.phase = Phase::Backward;
    e.collective = CollectiveOp::ReduceScatter;
    e.peers = 4;
    e.microBatch = static_cast<std::int16_t>(i % 5 - 1);
    const bool transferKind = e.kind == EventKind::TransferBegin ||
                              e.kind == EventKind::TransferEnd || e.kind == EventKind::TransferWait;
    e.transfer = transferKind
                     ? static_cast<Transfer>(1 + i % (static_cast<int>(kTransferCount) - 1))
                     : Transfer::None;
    e.step = i / 3;
    return e;
}

std::string sampleStream() {
    std::string s;
    writeHeader(s);
    writeRecord(s, Handshake{1, 4, R"({"strategy":"zero3"})"});
    EventBatch batch{1, {}};
    for (int i = 0; i < 50; ++i)
        batch.events.push_back(sampleEvent(i));
    writeRecord(s, batch);
    writeRecord(s, StepSummary{0, 5.25, 123456});
    writeRecord(s, Failure{2, 3, "rank 2 exited (signal 9) in step 3"});
    writeRecord(s, Report{R"({"ok":true})"});
    writeRecord(s, End{});
    return s;
}

// Recomputes an encoded record's checksum after a test edited its payload on purpose.
void reseal(std::string& record) {
    const std::uint32_t crc = crc32c(std::string_view(record).substr(kRecordHeaderBytes),
                                     crc32c(std::string_view(record).substr(4, 1)));
    std::memcpy(record.data() + 5, &crc, sizeof crc);
}

bool sameEvent(const Event& a, const Event& b) {
    return a.timeNs == b.timeNs && a.rank == b.rank && a.kind == b.kind &&
           a.category == b.category && a.tier == b.tier && a.bytes == b.bytes && a.unit == b.unit &&
           a.phase == b.phase && a.collective == b.collective && a.peers == b.peers &&
           a.transfer == b.transfer && a.step == b.step && a.microBatch == b.microBatch;
}

} // namespace

TEST(Protocol, RoundTripsEveryRecordType) {
    const Recording rec = decodeRecording(sampleStream());
    ASSERT_EQ(rec.handshakes.size(), 1u);
    EXPECT_EQ(rec.handshakes[0].rank, 1);
    EXPECT_EQ(rec.handshakes[0].worldSize, 4);
    EXPECT_EQ(rec.handshakes[0].configJson, R"({"strategy":"zero3"})");
    ASSERT_EQ(rec.batches.size(), 1u);
    ASSERT_EQ(rec.batches[0].events.size(), 50u);
    for (int i = 0; i < 50; ++i)
        EXPECT_TRUE(sameEvent(rec.batches[0].events[i], sampleEvent(i)));
    ASSERT_EQ(rec.steps.size(), 1u);
    EXPECT_DOUBLE_EQ(rec.steps[0].loss, 5.25);
    EXPECT_EQ(rec.steps[0].stepNs, 123456u);
    ASSERT_EQ(rec.failures.size(), 1u);
    EXPECT_EQ(rec.failures[0].message, "rank 2 exited (signal 9) in step 3");
    EXPECT_EQ(rec.reportJson.value_or(""), R"({"ok":true})");
    EXPECT_TRUE(rec.ended);
}

TEST(Protocol, EventEncodingHasTheDocumentedSize) {
    EXPECT_EQ(encode(EventBatch{0, {sampleEvent(3)}}).size(), kRecordHeaderBytes + 8 + kEventBytes);
}

TEST(Protocol, DecoderCopesWithOneByteAtATime) {
    const std::string stream = sampleStream();
    StreamDecoder decoder;
    std::size_t records = 0;
    for (char c : stream) {
        decoder.feed(std::string_view(&c, 1));
        while (decoder.next())
            ++records;
    }
    EXPECT_EQ(records, 6u);
    EXPECT_EQ(decoder.bufferedBytes(), 0u);
}

TEST(Protocol, RefusesAnotherVersionNamingBoth) {
    std::string stream = sampleStream();
    stream[8] = 7; // version field, little-endian low byte
    try {
        decodeRecording(stream);
        FAIL() << "a foreign version was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Format);
        EXPECT_NE(std::string(e.what()).find("version 7"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("versions 2 to " + std::to_string(kProtocolVersion)),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("newer ShardScope"), std::string::npos) << e.what();
    }
}

// A version-3 event: version 4's fields without the micro-batch (kEventBytesV3); a version-2
// event also without the transfer byte (kEventBytesV2).
std::string v3Event(const Event& e) {
    std::string out = encode(EventBatch{0, {e}}).substr(kRecordHeaderBytes + 8);
    out.resize(kEventBytesV3);
    return out;
}
std::string v2Event(const Event& e) {
    std::string out = v3Event(e);
    out.pop_back();
    return out;
}

std::string v2Batch(const std::vector<std::string>& events) {
    std::string payload(8, '\0');
    const auto n = static_cast<std::uint32_t>(events.size());
    std::memcpy(payload.data() + 4, &n, sizeof n);
    for (const std::string& e : events)
        payload += e;
    std::string record(kRecordHeaderBytes, '\0');
    const auto length = static_cast<std::uint32_t>(payload.size());
    std::memcpy(record.data(), &length, sizeof length);
    record[4] = static_cast<char>(RecordType::EventBatch);
    record += payload;
    reseal(record);
    return record;
}

// Recordings from before transfers (version 2, 41-byte events) still read, their events whole.
TEST(Protocol, ReadsVersionTwoRecordings) {
    std::string s;
    writeHeader(s);
    s[8] = 2;
    writeRecord(s, Handshake{0, 1, "{}"});
    Event a = sampleEvent(4), b = sampleEvent(7);
    a.rank = b.rank = 0;
    a.transfer = b.transfer = Transfer::None;
    a.microBatch = b.microBatch = -1; // not in version 2
    s += v2Batch({v2Event(a), v2Event(b)});
    writeRecord(s, End{});
    const Recording rec = decodeRecording(s);
    ASSERT_EQ(rec.batches.size(), 1u);
    ASSERT_EQ(rec.batches[0].events.size(), 2u);
    EXPECT_TRUE(sameEvent(rec.batches[0].events[0], a));
    EXPECT_TRUE(sameEvent(rec.batches[0].events[1], b));
    EXPECT_TRUE(rec.ended);

    // Version 2 had no transfer kinds: one there is damage, not a transfer.
    std::string bad = s.substr(0, s.size() - encode(End{}).size());
    Event t = a;
    t.kind = EventKind::TransferBegin;
    bad += v2Batch({v2Event(t)});
    try {
        decodeRecording(bad);
        FAIL() << "a transfer kind in a version-2 stream was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("invalid kind"), std::string::npos) << e.what();
    }
}

// Recordings from before micro-batches (version 3, 42-byte events) still read: every event
// belongs to no micro-batch.
TEST(Protocol, ReadsVersionThreeRecordings) {
    std::string s;
    writeHeader(s);
    s[8] = 3;
    writeRecord(s, Handshake{0, 1, "{}"});
    Event a = sampleEvent(4), b = sampleEvent(8);
    a.rank = b.rank = 0;
    a.microBatch = 3;
    b.microBatch = 1;
    s += v2Batch({v3Event(a), v3Event(b)});
    writeRecord(s, End{});
    const Recording rec = decodeRecording(s);
    ASSERT_EQ(rec.batches.size(), 1u);
    ASSERT_EQ(rec.batches[0].events.size(), 2u);
    a.microBatch = b.microBatch = -1;
    EXPECT_TRUE(sameEvent(rec.batches[0].events[0], a));
    EXPECT_TRUE(sameEvent(rec.batches[0].events[1], b));
}

// A micro-batch index is −1 (none) or below the most a step may have: anything else is damage.
TEST(Protocol, RefusesAMicroBatchOutsideItsRange) {
    for (const std::int16_t bad : {std::int16_t{-2}, kMaxMicroBatches, std::int16_t{32767}}) {
        std::string s;
        writeHeader(s);
        writeRecord(s, Handshake{0, 1, "{}"});
        Event e = sampleEvent(4);
        e.rank = 0;
        e.microBatch = bad;
        writeRecord(s, EventBatch{0, {e}});
        try {
            decodeRecording(s);
            FAIL() << "micro-batch " << bad << " was accepted";
        } catch (const Error& err) {
            EXPECT_NE(std::string(err.what()).find("micro-batch"), std::string::npos) << err.what();
        }
    }
}

// Version 5 added one phase, weight_grad (a split backward's W): a version-4 file cannot hold it,
// a version-5 file can.
TEST(Protocol, AWeightGradientPhaseIsVersionFivesOnly) {
    for (const std::uint32_t version : {4u, 5u}) {
        std::string s;
        writeHeader(s);
        s[8] = static_cast<char>(version);
        writeRecord(s, Handshake{0, 1, "{}"});
        Event e = sampleEvent(4);
        e.rank = 0;
        e.kind = EventKind::ComputeBegin;
        e.phase = Phase::WeightGrad;
        e.collective = CollectiveOp::None;
        writeRecord(s, EventBatch{0, {e}});
        writeRecord(s, End{});
        if (version == 5) {
            const Recording rec = decodeRecording(s);
            ASSERT_EQ(rec.batches.size(), 1u);
            EXPECT_EQ(rec.batches[0].events.at(0).phase, Phase::WeightGrad);
            continue;
        }
        try {
            decodeRecording(s);
            FAIL() << "a version-4 file named phase weight_grad";
        } catch (const Error& err) {
            EXPECT_NE(std::string(err.what()).find("phase"), std::string::npos) << err.what();
        }
    }
}

// The committed golden recording is a version-2 file written by an older build.
TEST(Protocol, ReadsTheVersionTwoGoldenRecording) {
    const Recording rec =
        readRecording(SHARDSCOPE_SOURCE_DIR "/tests/data/golden_zero3_tiny_2r.sstrace");
    EXPECT_EQ(rec.handshakes.size(), 2u);
    EXPECT_FALSE(rec.batches.empty());
    EXPECT_TRUE(rec.ended);
}

TEST(Protocol, RefusesAnInvalidTransferDirection) {
    std::string s;
    writeHeader(s);
    writeRecord(s, Handshake{0, 1, "{}"});
    std::string batch = encode(EventBatch{0, {sampleEvent(8)}});
    batch[kRecordHeaderBytes + 8 + kEventBytesV3 - 1] = 9; // the transfer byte
    reseal(batch);
    s += batch;
    try {
        decodeRecording(s);
        FAIL() << "an invalid transfer direction was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("transfer"), std::string::npos) << e.what();
    }
}

// A transfer event without a direction, or any other event with one, is a damaged recording:
// the timeline would draw it as a transfer it never was.
TEST(Protocol, RefusesATransferWithoutDirectionAndADirectionOutsideATransfer) {
    for (const bool transfer : {true, false}) {
        Event e = sampleEvent(8);
        if (transfer)
            e.transfer = Transfer::None;
        else
            e.kind = EventKind::Alloc;
        std::string s;
        writeHeader(s);
        writeRecord(s, Handshake{0, 1, "{}"});
        writeRecord(s, EventBatch{0, {e}});
        EXPECT_THROW(decodeRecording(s), Error) << transfer;
    }
}

TEST(Protocol, RefusesBadMagicTruncationAndBadEnums) {
    EXPECT_THROW(decodeRecording("not a trace at all"), Error);
    const std::string stream = sampleStream();
    EXPECT_THROW(decodeRecording(stream.substr(0, stream.size() - 3)), Error);
    EXPECT_THROW(decodeRecording(stream.substr(0, 6)), Error);

    std::string s;
    writeHeader(s);
    writeRecord(s, Handshake{0, 1, "{}"});
    std::string batch = encode(EventBatch{0, {sampleEvent(0)}});
    batch[kRecordHeaderBytes + 8 + 36 + 1] = 99; // the category byte of the first event
    reseal(batch);
    s += batch;
    try {
        decodeRecording(s);
        FAIL() << "an invalid category was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("category"), std::string::npos) << e.what();
    }
}

TEST(Protocol, RefusesInconsistentHandshakeAndHugeLengths) {
    std::string s;
    writeHeader(s);
    writeRecord(s, Handshake{5, 4, "{}"});
    EXPECT_THROW(decodeRecording(s), Error);

    std::string huge;
    writeHeader(huge);
    huge += std::string("\xff\xff\xff\xff\x01\0\0\0\0", 9);
    StreamDecoder d;
    d.feed(huge);
    EXPECT_THROW(d.next(), Error);
}

TEST(Protocol, RefusesWorldSizesPastTheLimit) {
    for (const std::int32_t world : {kMaxWorldSize + 1, 1 << 30}) {
        std::string s;
        writeHeader(s);
        writeRecord(s, Handshake{0, world, "{}"});
        try {
            decodeRecording(s);
            FAIL() << world << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("world size " + std::to_string(world)),
                      std::string::npos)
                << e.what();
        }
    }
    std::string ok;
    writeHeader(ok);
    writeRecord(ok, Handshake{kMaxWorldSize - 1, kMaxWorldSize, "{}"});
    EXPECT_EQ(decodeRecording(ok).handshakes.size(), 1u);
}

// The instruction path and the table agree on every length and alignment, chained or not.
TEST(Protocol, Crc32cOfTheCpuIsTheTablesCrc) {
    std::string bytes(300, '\0');
    std::uint32_t x = 12345;
    for (char& c : bytes) {
        x = x * 1664525u + 1013904223u;
        c = static_cast<char>(x >> 24);
    }
    const std::string_view all(bytes);
    for (std::size_t at = 0; at < 9; ++at)
        for (std::size_t len = 0; len + at <= 64; ++len)
            ASSERT_EQ(crc32c(all.substr(at, len)), crc32cPortable(all.substr(at, len)))
                << at << "+" << len;
    EXPECT_EQ(crc32c(all.substr(100), crc32c(all.substr(0, 100))), crc32cPortable(all));
    EXPECT_EQ(crc32cPortable("123456789"), 0xE3069283u);
}

// Every record carries a CRC-32C: one flipped bit anywhere in a record names the byte where
// the damaged record starts.
TEST(Protocol, ChecksumsFindDamageAndNameTheByte) {
    EXPECT_EQ(crc32c("123456789"), 0xE3069283u); // the CRC-32C check value
    const std::string stream = sampleStream();
    const std::size_t handshakeEnd =
        kHeaderBytes + encode(Handshake{1, 4, R"({"strategy":"zero3"})"}).size();
    for (const std::size_t at : {handshakeEnd + 4, handshakeEnd + 6,
                                 handshakeEnd + kRecordHeaderBytes + 100, stream.size() - 20}) {
        std::string damaged = stream;
        damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
        try {
            decodeRecording(damaged);
            FAIL() << "damage at " << at << " went unnoticed";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Format);
            EXPECT_NE(std::string(e.what()).find("damaged at byte "), std::string::npos)
                << e.what();
            if (at < handshakeEnd + kRecordHeaderBytes + 1000) {
                EXPECT_NE(std::string(e.what()).find("byte " + std::to_string(handshakeEnd) + ":"),
                          std::string::npos)
                    << e.what();
            }
        }
    }
}

TEST(Protocol, AStreamCutAtARecordBoundaryIsNotEnded) {
    std::string s;
    writeHeader(s);
    writeRecord(s, Handshake{0, 1, "{}"});
    writeRecord(s, StepSummary{0, 1, 1});
    EXPECT_FALSE(decodeRecording(s).ended);
    writeRecord(s, End{});
    EXPECT_TRUE(decodeRecording(s).ended);
}

TEST(Protocol, PrintableTextEscapesControlsAndCaps) {
    EXPECT_EQ(printableText("rank 1: out of memory"), "rank 1: out of memory");
    EXPECT_EQ(printableText("a\x1b[31mred\nb\t\x7f"), "a\\x1b[31mred\\nb\\t\\x7f");
    EXPECT_EQ(printableText("größe ✓"), "größe ✓");     // whole UTF-8 sequences pass
    EXPECT_EQ(printableText("\xff\xc3"), "\\xff\\xc3"); // broken ones are escaped
    EXPECT_EQ(printableText(std::string(5000, 'x'), 10), std::string(10, 'x') + "…");
    EXPECT_EQ(printableText(std::string(5000, 'x')).size(), 2000u + std::string("…").size());
}

TEST(Protocol, ReadRecordingReportsMissingFilesAsIo) {
    try {
        readRecording("/nonexistent/dir/x.sstrace");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Io);
    }
}
