#include "launch/progress.h"

#include "core/event.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <iterator>
#include <mutex>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardscope::launch {

struct ProgressWriter::Record {
    std::atomic<std::uint64_t> seq;
    std::atomic<std::uint64_t> heartbeatNs;
    std::uint64_t entered;
    std::int64_t step;
    std::int32_t unit;
    std::uint32_t inside;
    std::atomic<std::int32_t> signal;
    char what[32];
};

namespace {
constexpr std::size_t kRecordBytes = sizeof(ProgressWriter::Record);
constexpr std::string_view kPrefix = "progress.";

// The active records of this process (rank threads share one), for the signal handler.
constexpr int kMaxRecords = 1024;
std::atomic<ProgressWriter::Record*> gRecords[kMaxRecords];
constexpr int kNoted[] = {SIGTERM, SIGINT, SIGHUP};
struct sigaction gPrevious[std::size(kNoted)];

// Async-signal-safe: atomic stores, sigaction, raise.
extern "C" void noteSignal(int signal) {
    for (auto& slot : gRecords)
        if (ProgressWriter::Record* r = slot.load(std::memory_order_acquire))
            r->signal.store(signal, std::memory_order_relaxed);
    for (std::size_t i = 0; i < std::size(kNoted); ++i)
        if (kNoted[i] == signal) ::sigaction(signal, &gPrevious[i], nullptr);
    ::raise(signal); // acts once this handler returns, as it would have without it
}

void installNoteSignal() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction action {};
        action.sa_handler = noteSignal;
        ::sigemptyset(&action.sa_mask);
        for (std::size_t i = 0; i < std::size(kNoted); ++i) {
            ::sigaction(kNoted[i], nullptr, &gPrevious[i]);
            // An ignored signal (nohup) stays ignored; any other disposition acts after the note.
            if (gPrevious[i].sa_handler != SIG_IGN) ::sigaction(kNoted[i], &action, nullptr);
        }
    });
}

void track(ProgressWriter::Record* r, ProgressWriter::Record* with) {
    for (auto& slot : gRecords) {
        ProgressWriter::Record* expected = r;
        if (slot.compare_exchange_strong(expected, with)) return;
    }
}
} // namespace

ProgressWriter::ProgressWriter(const std::string& folder, int rank) {
    if (folder.empty() || rank < 0) return;
    const std::string path = folder + "/" + std::string(kPrefix) + std::to_string(rank);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;
    if (::ftruncate(fd, static_cast<off_t>(kRecordBytes)) == 0) {
        void* map = ::mmap(nullptr, kRecordBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map != MAP_FAILED) {
            record_ = new (map) Record{};
            record_->step = -1;
            record_->unit = -1;
            record_->heartbeatNs.store(monotonicNs(), std::memory_order_release);
            track(nullptr, record_);
            installNoteSignal();
        }
    }
    ::close(fd);
}

ProgressWriter::~ProgressWriter() {
    // Untracked but left mapped (one page, for the process's life): a signal handler that loaded
    // the pointer just before may still store into it.
    if (record_) track(record_, nullptr);
}

void ProgressWriter::entered(const char* what, std::int32_t unit, std::int64_t step, bool counted) {
    if (!record_) return;
    record_->seq.fetch_add(1, std::memory_order_acq_rel); // odd: being updated
    if (counted) ++record_->entered;
    std::strncpy(record_->what, what, sizeof record_->what - 1);
    record_->unit = unit;
    record_->step = step;
    record_->inside = 1;
    record_->heartbeatNs.store(monotonicNs(), std::memory_order_relaxed);
    record_->seq.fetch_add(1, std::memory_order_release);
}

void ProgressWriter::left() {
    if (!record_) return;
    record_->seq.fetch_add(1, std::memory_order_acq_rel);
    record_->inside = 0;
    record_->heartbeatNs.store(monotonicNs(), std::memory_order_relaxed);
    record_->seq.fetch_add(1, std::memory_order_release);
}

void ProgressWriter::alive() {
    if (record_) record_->heartbeatNs.store(monotonicNs(), std::memory_order_relaxed);
}

std::vector<RankProgress> readProgress(const std::string& folder) {
    std::vector<RankProgress> out;
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) return out;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (!name.starts_with(kPrefix)) continue;
        const std::string digits = name.substr(kPrefix.size());
        if (digits.empty() || digits.size() > 6 ||
            digits.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const int fd = ::open((folder + "/" + name).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
            static_cast<std::size_t>(st.st_size) < kRecordBytes) {
            ::close(fd); // not (yet) a whole record: reading past its end would be SIGBUS
            continue;
        }
        void* map = ::mmap(nullptr, kRecordBytes, PROT_READ, MAP_SHARED, fd, 0);
        ::close(fd);
        if (map == MAP_FAILED) continue;
        const auto* r = static_cast<const ProgressWriter::Record*>(map);
        for (int attempt = 0; attempt < 1000; ++attempt) {
            const std::uint64_t before = r->seq.load(std::memory_order_acquire);
            RankProgress p;
            p.rank = std::stoi(digits);
            p.entered = r->entered;
            p.inside = r->inside != 0;
            p.what.assign(r->what, ::strnlen(r->what, sizeof r->what));
            p.unit = r->unit;
            p.step = r->step;
            p.heartbeatNs = r->heartbeatNs.load(std::memory_order_relaxed);
            p.signal = r->signal.load(std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (before % 2 == 0 && r->seq.load(std::memory_order_relaxed) == before) {
                out.push_back(p);
                break;
            }
        }
        ::munmap(map, kRecordBytes);
    }
    ::closedir(dir);
    std::sort(out.begin(), out.end(),
              [](const RankProgress& a, const RankProgress& b) { return a.rank < b.rank; });
    return out;
}

std::optional<StuckRank> findStuckRank(const std::vector<RankProgress>& ranks,
                                       std::uint64_t silentNs) {
    if (ranks.size() < 2) return std::nullopt;
    // Against the latest heartbeat, not the clock: records read after the job was torn down
    // (every rank silent since) still tell the rank that stopped long before the others.
    std::uint64_t latest = 0;
    for (const RankProgress& p : ranks)
        latest = std::max(latest, p.heartbeatNs);
    const auto fresh = [&](const RankProgress& p) { return latest < p.heartbeatNs + silentNs; };
    const bool anyFresh = std::any_of(ranks.begin(), ranks.end(), fresh);
    const bool anySilent = !std::all_of(ranks.begin(), ranks.end(), fresh);
    // The collective the others wait in (or just gave up on): the furthest live rank's last one.
    const RankProgress* waiting = nullptr;
    for (const RankProgress& p : ranks) {
        if (anyFresh && anySilent && !fresh(p)) continue;
        if (!waiting || p.entered > waiting->entered ||
            (p.entered == waiting->entered && p.inside && !waiting->inside))
            waiting = &p;
    }
    std::vector<const RankProgress*> stuck;
    if (anyFresh && anySilent) {
        for (const RankProgress& p : ranks)
            if (!fresh(p)) stuck.push_back(&p);
    } else { // no heartbeat tells them apart: whoever entered fewest collectives
        std::uint64_t fewest = waiting->entered;
        for (const RankProgress& p : ranks)
            fewest = std::min(fewest, p.entered);
        if (fewest == waiting->entered) return std::nullopt;
        for (const RankProgress& p : ranks)
            if (p.entered == fewest) stuck.push_back(&p);
    }
    std::stable_sort(stuck.begin(), stuck.end(), [](const RankProgress* a, const RankProgress* b) {
        return a->entered < b->entered;
    });
    StuckRank out;
    out.rank = stuck.front()->rank;
    out.step = stuck.front()->step;
    out.arrived = stuck.front()->inside && stuck.front()->entered >= waiting->entered;
    out.what = out.arrived ? stuck.front()->what : waiting->what;
    out.unit = out.arrived ? stuck.front()->unit : waiting->unit;
    for (std::size_t i = 1; i < stuck.size(); ++i)
        out.alsoStuck.push_back(stuck[i]->rank);
    return out;
}

} // namespace shardscope::launch
