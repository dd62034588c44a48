#include "common/language.h"

#include <QCoreApplication>
#include <QLocale>

namespace shardscope::widgets {

LanguageManager::LanguageManager(QObject* parent) : QObject(parent) {}

QStringList LanguageManager::available() {
    return {QStringLiteral("en"), QStringLiteral("zh_CN")};
}

QString LanguageManager::systemDefault() {
    // zh_TW / zh_HK readers get English rather than Simplified characters they did not ask for.
    const QLocale system = QLocale::system();
    return system.language() == QLocale::Chinese &&
                   system.script() != QLocale::TraditionalChineseScript &&
                   system.territory() != QLocale::Taiwan && system.territory() != QLocale::HongKong
               ? QStringLiteral("zh_CN")
               : QStringLiteral("en");
}

bool LanguageManager::setLanguage(const QString& code) {
    if (!available().contains(code)) return false;
    if (installed_) {
        QCoreApplication::removeTranslator(&translator_);
        installed_ = false;
    }
    if (code != QLatin1String("en")) {
        // The .qm is compiled into the binary under :/i18n (translations/CMakeLists.txt).
        if (!translator_.load(QStringLiteral(":/i18n/shardscope_%1.qm").arg(code))) return false;
        QCoreApplication::installTranslator(&translator_);
        installed_ = true;
    }
    QLocale::setDefault(QLocale(code == QLatin1String("en") ? QStringLiteral("en_US") : code));
    current_ = code;
    Q_EMIT languageChanged(code);
    return true;
}

} // namespace shardscope::widgets
