#pragma once
// The short glossary of ZeRO/FSDP words the views use, in the UI language: unit, shard,
// unshard (all-gather), reshard, reduce-scatter, all-reduce, prefetch, exposed communication,
// and every ledger category.
// linkTerms() turns a sentence into rich text whose terms link to their entries ("glossary:ID"),
// so the explain panel can show a definition as a tooltip and open the glossary on click.
#include <QCoreApplication>
#include <QString>
#include <QStringList>
#include <vector>

namespace shardscope::widgets {

struct GlossaryEntry {
    QString id;   // stable: "unit", "all-gather", "param_full", …
    QString term; // translated heading
    QStringList
        match; // translated words that link here in sentences (longest first is not required)
    QString definition; // translated, one or two sentences
};

class Glossary {
    Q_DECLARE_TR_FUNCTIONS(Glossary)
public:
    static std::vector<GlossaryEntry> entries(); // in the current language
    static const GlossaryEntry* find(const std::vector<GlossaryEntry>& entries, const QString& id);
    // HTML-escaped `sentence` with each term's first occurrence linked as <a href="glossary:ID">.
    static QString linkTerms(const QString& sentence, const std::vector<GlossaryEntry>& entries);
    // The whole glossary as HTML with an anchor per entry (for a QTextBrowser).
    static QString html(const std::vector<GlossaryEntry>& entries);
};

} // namespace shardscope::widgets
