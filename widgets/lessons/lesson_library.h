#pragma once
// The lessons compiled into the binary (resources/lessons/*.json, in their "order") and the
// bundled recordings they open (resources/recordings/*.sstrace). Adding a lesson is adding a
// file there: the build collects the folder.
#include "lessons/lesson.h"
#include "report/report.h"

#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

namespace shardscope::widgets {

struct LessonLibrary {
    std::vector<lessons::Lesson> lessons; // by order, then id
    QStringList problems;                 // "FILE: what is wrong", one per file that did not read

    // Reads every *.json under `folder` (a resource path such as ":/lessons" or a directory).
    static LessonLibrary load(const QString& folder);
    static const LessonLibrary& bundled(); // ":/lessons", read once
    const lessons::Lesson* find(const QString& id) const;
};

// The resource path of a bundled recording (":/recordings/NAME"); empty when there is none.
QString bundledRecording(const QString& name);
// The run report a bundled recording carries (read once, then kept); nullopt when it has none or
// does not read.
std::optional<report::RunReport> bundledReport(const QString& name);

} // namespace shardscope::widgets
