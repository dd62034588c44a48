#pragma once
// What a lesson's paragraph may quote: the numbers of the run the window has loaded (its
// handshake, its report and the ledger at the playhead), by placeholder name, already formatted
// for the UI language. Nothing here is a constant: with no run loaded there are no facts, and a
// paragraph that asks for one shows the name in braces (the lesson test refuses that).
#include "lessons/lesson.h"
#include "report/report.h"

#include <QHash>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>

namespace shardscope::replay {
class ReplayModel;
}

namespace shardscope::widgets {

class RunDocument;

using LessonFacts = QHash<QString, QString>;

// The facts of `document` for `rank` at the player's position (see resources/lessons/README.md
// for the names).
LessonFacts lessonFacts(RunDocument& document, int rank);

// The facts of a run report (model states, peak, communication) for `rank`, each name prefixed
// with `prefix` ("ref." for a reference run a step names).
void addReportFacts(LessonFacts& facts, const report::RunReport& report, int rank,
                    const QString& prefix);

// `text` with every {name} that `facts` holds replaced; the names it lacks go to `missing`.
QString fillPlaceholders(const QString& text, const LessonFacts& facts, QStringList* missing);

// The event index (events [0, k) applied) a seek lands on (At::Peak: where the seek's rank holds
// the most in that step), or nullopt naming why in `why`
// (no such step, no matching event).
std::optional<std::uint64_t> seekIndex(const replay::ReplayModel& model, const lessons::Seek& seek,
                                       QString* why);

} // namespace shardscope::widgets
