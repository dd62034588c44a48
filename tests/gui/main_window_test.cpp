// MainWindow: pages are added by id, and switching the language retranslates live widgets.
#include <QComboBox>
#include <QGroupBox>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QTest>

#include "calculator_page.h"
#include "language.h"
#include "main_window.h"

using namespace shardscope::widgets;

class MainWindowTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void pagesAreAddedById() {
        LanguageManager language;
        MainWindow window(&language);
        addDefaultPages(window);
        window.addPage(QStringLiteral("extra"), [] { return QStringLiteral("Extra"); }, new QLabel);
        QCOMPARE(window.pageIds(), QStringList({QStringLiteral("calculator"), QStringLiteral("extra")}));
        QVERIFY(qobject_cast<CalculatorPage*>(window.page(QStringLiteral("calculator"))));
        QVERIFY(window.showPage(QStringLiteral("extra")));
        QCOMPARE(window.findChild<QListWidget*>(QStringLiteral("pageList"))->currentRow(), 1);
        QVERIFY(!window.showPage(QStringLiteral("bogus")));
    }

    void switchingToChineseRetranslates() {
        LanguageManager language;
        QVERIFY(language.setLanguage(QStringLiteral("en")));
        MainWindow window(&language);
        addDefaultPages(window);
        auto* pages = window.findChild<QListWidget*>(QStringLiteral("pageList"));
        auto* strategy = window.findChild<QComboBox*>(QStringLiteral("strategyCombo"));
        QCOMPARE(pages->item(0)->text(), QStringLiteral("Calculator"));
        QCOMPARE(window.menuBar()->actions().first()->text(), QStringLiteral("&File"));
        const QString englishStrategy = strategy->currentText();

        // Qt posts QEvent::LanguageChange to every widget; it arrives on the next event loop turn.
        QVERIFY(language.setLanguage(QStringLiteral("zh_CN")));
        QTRY_COMPARE(pages->item(0)->text(), QStringLiteral("计算器"));
        QCOMPARE(window.menuBar()->actions().first()->text(), QStringLiteral("文件(&F)"));
        QVERIFY2(strategy->currentText() != englishStrategy, qPrintable(strategy->currentText()));
        QVERIFY(window.findChild<QAction*>(QStringLiteral("language_zh_CN"))->isChecked());
        // A label deep inside the Calculator page follows too.
        auto* title = window.findChild<QGroupBox*>(QStringLiteral("deepspeedPanel"));
        QCOMPARE(title->title(), QStringLiteral("DeepSpeed 估算器与 ShardScope 对比"));

        QVERIFY(language.setLanguage(QStringLiteral("en")));
        QTRY_COMPARE(pages->item(0)->text(), QStringLiteral("Calculator"));
        QCOMPARE(strategy->currentText(), englishStrategy);
    }

    void unknownLanguageIsRefused() {
        LanguageManager language;
        QVERIFY(!language.setLanguage(QStringLiteral("xx")));
        QCOMPARE(language.current(), QStringLiteral("en"));
    }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
