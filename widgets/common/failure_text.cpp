#include "common/failure_text.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/run_labels.h"
#include "core/categories.h"
#include "plan/collective.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <functional>
#include <vector>

namespace shardscope::widgets {
namespace {

QString bytes(const QString& digits) {
    return formatDecimal(digits.toDouble());
}

// "all-gather", "reduce-scatter", "barrier", "the all-gather of block1": a collective as the
// worker names it (plan::displayText), in the UI's words.
QString collective(const QString& what) {
    static const QRegularExpression ofUnit(QStringLiteral("^(.+) of (.+)$"));
    if (const auto m = ofUnit.match(what); m.hasMatch())
        return QCoreApplication::translate("FailureText", "the %1 of %2")
            .arg(collective(m.captured(1)), m.captured(2));
    for (const CollectiveOp op : plan::kCollectives)
        if (what == QLatin1String(plan::displayText(op))) return collectiveLabel(op);
    if (what == QLatin1String("barrier"))
        return QCoreApplication::translate("FailureText", "barrier");
    return what;
}

// The ledger names a unit ("block1") where it can, else "no unit" or "unit 7".
QString unit(const QString& name) {
    static const QRegularExpression numbered(QStringLiteral("^unit (\\d+)$"));
    if (name == QLatin1String("no unit"))
        return QCoreApplication::translate("FailureText", "no unit in particular");
    if (const auto m = numbered.match(name); m.hasMatch())
        return QCoreApplication::translate("FailureText", "unit %1").arg(m.captured(1));
    return name;
}

QString category(const QString& name) {
    const auto c = parseCategory(name.toStdString());
    return c ? categoryLabel(*c) : name;
}

QString tier(const QString& name) {
    const auto t = parseTier(name.toStdString());
    return t ? tierLabel(*t).toLower() : name; // "device memory" (no case in Chinese)
}

struct Form {
    QRegularExpression pattern;
    std::function<QString(const QRegularExpressionMatch&)> render;
};

// Note: one row per form a message takes at its source (core/ledger.cpp, comm/*, app/worker,
// launch/ending.cpp); tests/gui/failure_text_test feeds each the source's own text, so a changed
// source fails there instead of falling back to English here.
const std::vector<Form>& forms() {
    static const std::vector<Form> all = [] {
        std::vector<Form> f;
        const auto add = [&f](const char* pattern,
                              std::function<QString(const QRegularExpressionMatch&)> render) {
            f.push_back({QRegularExpression(QString::fromUtf8(pattern)), std::move(render)});
        };
        add(R"(^out of memory on rank (\d+): allocating (\d+) bytes of (\w+) for (.+) would exceed the (\w+) capacity of (\d+) bytes \((\d+) bytes live\)$)",
            [](const QRegularExpressionMatch& m) {
                return QCoreApplication::translate(
                           "FailureText",
                           "out of %5 memory on rank %1: %2 of %3 for %4 do not fit under its "
                           "capacity of %6 (%7 live)")
                    .arg(m.captured(1), bytes(m.captured(2)), category(m.captured(3)),
                         unit(m.captured(4)), tier(m.captured(5)), bytes(m.captured(6)),
                         bytes(m.captured(7)));
            });
        add(R"(^(.+) on rank (\d+) timed out after (\d+) s waiting for its peers$)",
            [](const QRegularExpressionMatch& m) {
                return QCoreApplication::translate(
                           "FailureText",
                           "the %1 on rank %2 waited %3 s for its peers and timed out")
                    .arg(collective(m.captured(1)), m.captured(2), m.captured(3));
            });
        add(R"(^rank (\d+): (.+) timed out after (\d+) ms waiting for rank\(s\) (.+)$)",
            [](const QRegularExpressionMatch& m) {
                return QCoreApplication::translate(
                           "FailureText",
                           "rank %1: the %2 waited %3 ms for rank(s) %4 and timed out")
                    .arg(m.captured(1), collective(m.captured(2)), m.captured(3), m.captured(4));
            });
        add(R"(^rank (\d+): (.+) can never complete: rank (\d+) has left the group$)",
            [](const QRegularExpressionMatch& m) {
                return QCoreApplication::translate(
                           "FailureText",
                           "rank %1: the %2 can never complete: rank %3 has left the group")
                    .arg(m.captured(1), collective(m.captured(2)), m.captured(3));
            });
        add(R"(^rank (\d+) left the group while its peers waited in a collective$)",
            [](const QRegularExpressionMatch& m) {
                return QCoreApplication::translate(
                           "FailureText",
                           "rank %1 left the group while its peers waited in a collective")
                    .arg(m.captured(1));
            });
        add(R"(^it did not arrive at the (.+?) \(rank (\d+) waited (\d+) ms\)$)",
            [](const QRegularExpressionMatch& m) {
                return QCoreApplication::translate(
                           "FailureText", "it did not arrive at the %1 (rank %2 waited %3 ms)")
                    .arg(collective(m.captured(1)), m.captured(2), m.captured(3));
            });
        add(R"(^it (did not arrive at|stopped inside) the (.+?)(?: \(nor did ranks? ([\d, ]+)\))?$)",
            [](const QRegularExpressionMatch& m) {
                const QString where = collective(m.captured(2));
                QString out =
                    m.captured(1) == QLatin1String("stopped inside")
                        ? QCoreApplication::translate("FailureText", "it stopped inside %1")
                              .arg(where)
                        : QCoreApplication::translate("FailureText", "it did not arrive at %1")
                              .arg(where);
                if (m.hasCaptured(3) && !m.captured(3).isEmpty())
                    out += QCoreApplication::translate("FailureText", " (nor did rank(s) %1)")
                               .arg(m.captured(3));
                return out;
            });
        add(R"(^interrupted by (SIG\w+|signal \d+) after step (\d+)$)",
            [](const QRegularExpressionMatch& m) {
                return QCoreApplication::translate("FailureText", "interrupted by %1 after step %2")
                    .arg(m.captured(1), m.captured(2));
            });
        add(R"(^interrupted by (SIG\w+|signal \d+)$)", [](const QRegularExpressionMatch& m) {
            return QCoreApplication::translate("FailureText", "interrupted by %1")
                .arg(m.captured(1));
        });
        add(R"(^terminated by (SIG\w+|signal \d+) from outside \(sent to mpirun\)$)",
            [](const QRegularExpressionMatch& m) {
                return QCoreApplication::translate("FailureText",
                                                   "terminated by %1 from outside (sent to mpirun)")
                    .arg(m.captured(1));
            });
        add(R"(^its process is stopped \(SIGSTOP\)$)", [](const QRegularExpressionMatch&) {
            return QCoreApplication::translate("FailureText", "its process is stopped (SIGSTOP)");
        });
        // A stall: how long, then why (each why a form of its own below).
        add(R"(^no progress for (\d+) s: (.+)$)", [](const QRegularExpressionMatch& m) {
            return QCoreApplication::translate("FailureText", "no progress for %1 s: %2")
                .arg(m.captured(1), failureText(m.captured(2)));
        });
        add(R"(^a rank is stuck$)", [](const QRegularExpressionMatch&) {
            return QCoreApplication::translate("FailureText", "a rank is stuck");
        });
        add(R"(^mpirun is stopped \(SIGSTOP\)$)", [](const QRegularExpressionMatch&) {
            return QCoreApplication::translate("FailureText", "mpirun is stopped (SIGSTOP)");
        });
        add(R"(^the worker process holding every rank thread is stopped \(SIGSTOP\)$)",
            [](const QRegularExpressionMatch&) {
                return QCoreApplication::translate(
                    "FailureText",
                    "the worker process holding every rank thread is stopped (SIGSTOP)");
            });
        add(R"(^stopped$)", [](const QRegularExpressionMatch&) {
            return QCoreApplication::translate("FailureText", "stopped");
        });
        return f;
    }();
    return all;
}

} // namespace

QString failureText(const QString& message) {
    for (const Form& f : forms())
        if (const QRegularExpressionMatch m = f.pattern.match(message); m.hasMatch())
            return f.render(m);
    return message;
}

} // namespace shardscope::widgets
