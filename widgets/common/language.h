#pragma once
// UI language: English (the source language) or Simplified Chinese, switchable at runtime.
// Installing or removing the translator makes Qt send QEvent::LanguageChange to every widget,
// and each widget's retranslateUi() picks up the new strings.
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTranslator>

namespace shardscope::widgets {

class LanguageManager : public QObject {
    Q_OBJECT
public:
    explicit LanguageManager(QObject* parent = nullptr);

    static QStringList available(); // "en", "zh_CN"
    static QString systemDefault(); // from QLocale::system(), else "en"
    // Switches the UI language; false (and nothing changes) for an unknown code.
    bool setLanguage(const QString& code);
    QString current() const { return current_; }

Q_SIGNALS:
    void languageChanged(const QString& code);

private:
    QTranslator translator_;
    bool installed_ = false;
    QString current_ = QStringLiteral("en");
};

} // namespace shardscope::widgets
