#include "lessons/lesson_library.h"

#include "core/error.h"
#include "protocol/protocol.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <algorithm>

namespace shardscope::widgets {

LessonLibrary LessonLibrary::load(const QString& folder) {
    LessonLibrary library;
    const QDir dir(folder);
    for (const QString& file : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        QFile f(dir.filePath(file));
        if (!f.open(QIODevice::ReadOnly)) {
            library.problems << file + QStringLiteral(": ") + f.errorString();
            continue;
        }
        const QByteArray bytes = f.read(static_cast<qint64>(lessons::kMaxLessonBytes) + 1);
        const lessons::ParsedLesson parsed = lessons::parseLesson(
            std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
        if (!parsed) {
            library.problems << file + QStringLiteral(": ") + QString::fromStdString(parsed.error);
            continue;
        }
        const QString id = QString::fromStdString(parsed.lesson->id);
        if (library.find(id)) {
            library.problems << file + QStringLiteral(": the id '") + id +
                                    QStringLiteral("' is taken by another lesson");
            continue;
        }
        library.lessons.push_back(*parsed.lesson);
    }
    std::sort(library.lessons.begin(), library.lessons.end(),
              [](const lessons::Lesson& a, const lessons::Lesson& b) {
                  return a.order != b.order ? a.order < b.order : a.id < b.id;
              });
    return library;
}

const LessonLibrary& LessonLibrary::bundled() {
    static const LessonLibrary library = load(QStringLiteral(":/lessons"));
    return library;
}

const lessons::Lesson* LessonLibrary::find(const QString& id) const {
    const std::string key = id.toStdString();
    for (const lessons::Lesson& l : lessons)
        if (l.id == key) return &l;
    return nullptr;
}

QString bundledRecording(const QString& name) {
    const QString path = QStringLiteral(":/recordings/") + name;
    return QFile::exists(path) ? path : QString();
}

std::optional<report::RunReport> bundledReport(const QString& name) {
    static QHash<QString, std::optional<report::RunReport>> cache;
    if (const auto it = cache.constFind(name); it != cache.constEnd()) return it.value();
    std::optional<report::RunReport> found;
    QFile f(bundledRecording(name));
    if (!name.isEmpty() && f.open(QIODevice::ReadOnly)) {
        const QByteArray bytes = f.readAll();
        try {
            protocol::StreamDecoder decoder;
            decoder.feed(
                std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
            while (auto record = decoder.next())
                if (const auto* r = std::get_if<protocol::Report>(&*record))
                    if (auto parsed = report::parseRunReport(r->json))
                        found = std::move(*parsed.value);
        } catch (const shardscope::Error&) {
            found.reset();
        }
    }
    cache.insert(name, found);
    return found;
}

} // namespace shardscope::widgets
