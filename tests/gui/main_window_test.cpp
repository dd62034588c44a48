// MainWindow: pages are added by id, and switching the language retranslates live widgets.
#include "app/main_window.h"
#include "app/pages.h"
#include "calculator/calculator_page.h"
#include "common/language.h"
#include "compare/compare_page.h"
#include "compare/compare_view.h"
#include "lessons/lesson_library.h"
#include "ranks/ranks_page.h"
#include "run/run_document.h"

#include <QComboBox>
#include <QFile>
#include <QGroupBox>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope::widgets;

class MainWindowTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void pagesAreAddedById() {
        LanguageManager language;
        MainWindow window(&language);
        addDefaultPages(window);
        window.addPage(
            QStringLiteral("extra"), [] { return QStringLiteral("Extra"); }, new QLabel);
        QCOMPARE(window.pageIds(),
                 QStringList({QStringLiteral("ranks"), QStringLiteral("timeline"),
                              QStringLiteral("flows"), QStringLiteral("compare"),
                              QStringLiteral("calculator"), QStringLiteral("checkpoints"),
                              QStringLiteral("extra")}));
        QVERIFY(qobject_cast<CalculatorPage*>(window.page(QStringLiteral("calculator"))));
        QVERIFY(qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks"))));
        QCOMPARE(window.findChild<QListWidget*>(QStringLiteral("pageList"))->currentRow(),
                 0); // Ranks first
        QVERIFY(window.showPage(QStringLiteral("extra")));
        QCOMPARE(window.findChild<QListWidget*>(QStringLiteral("pageList"))->currentRow(), 6);
        // File → Open recording… comes from the Ranks page, above Quit.
        const auto fileActions = window.menuBar()->actions().first()->menu()->actions();
        QCOMPARE(fileActions.first(),
                 qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")))->openAction());
        QVERIFY(!window.showPage(QStringLiteral("bogus")));
    }

    void switchingToChineseRetranslates() {
        LanguageManager language;
        QVERIFY(language.setLanguage(QStringLiteral("en")));
        MainWindow window(&language);
        addDefaultPages(window);
        auto* pages = window.findChild<QListWidget*>(QStringLiteral("pageList"));
        auto* strategy = window.findChild<QComboBox*>(QStringLiteral("strategyCombo"));
        auto* run = window.findChild<QPushButton*>(QStringLiteral("runButton"));
        QCOMPARE(pages->item(0)->text(), QStringLiteral("Ranks"));
        QCOMPARE(pages->item(4)->text(), QStringLiteral("Calculator"));
        QCOMPARE(run->text(), QStringLiteral("Run"));
        QCOMPARE(window.menuBar()->actions().first()->text(), QStringLiteral("&File"));
        const QString englishStrategy = strategy->currentText();

        // Qt posts QEvent::LanguageChange to every widget; it arrives on the next event loop turn.
        QVERIFY(language.setLanguage(QStringLiteral("zh_CN")));
        QTRY_COMPARE(pages->item(4)->text(), QStringLiteral("计算器"));
        QCOMPARE(pages->item(0)->text(), QStringLiteral("Rank 视图"));
        QCOMPARE(run->text(), QStringLiteral("运行"));
        QCOMPARE(window.menuBar()->actions().first()->text(), QStringLiteral("文件(&F)"));
        QVERIFY2(strategy->currentText() != englishStrategy, qPrintable(strategy->currentText()));
        QVERIFY(window.findChild<QAction*>(QStringLiteral("language_zh_CN"))->isChecked());
        // A label deep inside the Calculator page follows too.
        auto* title = window.findChild<QGroupBox*>(QStringLiteral("deepspeedPanel"));
        QCOMPARE(title->title(), QStringLiteral("DeepSpeed 估算器与 ShardScope 对比"));

        QVERIFY(language.setLanguage(QStringLiteral("en")));
        QTRY_COMPARE(pages->item(4)->text(), QStringLiteral("Calculator"));
        QCOMPARE(run->text(), QStringLiteral("Run"));
        QCOMPARE(strategy->currentText(), englishStrategy);
    }

    // A comparison holds what it ran and what the user added: a recording opened on the Ranks
    // page does not join it on its own (it once did, beside a fresh "Run all strategies"), the
    // button adds it, and a long status line wraps instead of widening the page.
    void compareHoldsOnlyWhatWasAdded() {
        LanguageManager language;
        MainWindow window(&language);
        addDefaultPages(window);
        auto* ranks = qobject_cast<RanksPage*>(window.page(QStringLiteral("ranks")));
        auto* compare = qobject_cast<ComparePage*>(window.page(QStringLiteral("compare")));
        auto* add = compare->findChild<QPushButton*>(QStringLiteral("compareAddCurrent"));
        QVERIFY(add && !add->isEnabled());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ddp.sstrace"));
        QVERIFY(QFile::copy(bundledRecording(QStringLiteral("ddp_tiny_4r.sstrace")), path));
        QVERIFY(ranks->openRecording(path));
        QTRY_VERIFY_WITH_TIMEOUT(!ranks->isBusy() && window.document().report(), 20000);
        QVERIFY(compare->view()->runs().empty());
        QVERIFY(add->isEnabled());
        QTest::mouseClick(add, Qt::LeftButton);
        QCOMPARE(compare->view()->runs().size(), std::size_t{1});
        QCOMPARE(compare->view()->runs().front().strategy, std::string("ddp"));
        auto* progress = compare->findChild<QLabel*>(QStringLiteral("compareProgress"));
        QVERIFY(progress);
        progress->setVisible(true);
        progress->setText(
            QStringLiteral("Running FSDP hybrid on 64 rank(s) (7 of 7)… ").repeated(6));
        QVERIFY2(compare->minimumSizeHint().width() <= 1024,
                 qPrintable(QString::number(compare->minimumSizeHint().width())));
    }

    void unknownLanguageIsRefused() {
        LanguageManager language;
        QVERIFY(!language.setLanguage(QStringLiteral("xx")));
        QCOMPARE(language.current(), QStringLiteral("en"));
    }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
