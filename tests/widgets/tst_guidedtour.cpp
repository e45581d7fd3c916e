// The Guided Tour dock: it lists the shipped scenarios, choosing one opens its layout as the
// document and shows its text (intro, thing to try, what to look for, assumptions); a
// comparison's second layout opens from its button; a bad tour file says what is wrong where.
#include "base/units.h"
#include "document/document.h"
#include "mainwindow.h"
#include "panels/guidedtourpanel.h"
#include "panels/pricingpanel.h"

#include "windowtest.h"

#include <QAction>
#include <QDockWidget>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTreeWidget>

using namespace railyard;
using namespace railyard::test;

namespace {

int scenarioIndex(const GuidedTourPanel &p, const std::string &id)
{
    for (int i = 0; i < p.scenarioCount(); ++i)
        if (p.scenario(i).id == id)
            return i;
    return -1;
}

} // namespace

class TestGuidedTour : public QObject
{
    Q_OBJECT

    QTemporaryDir m_recovery;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void cleanup() { closeMessageBoxes(); }

    void panelListsTheShippedScenarios()
    {
        GuidedTourPanel p;
        QVERIFY2(p.errorText().isEmpty(), qPrintable(p.errorText()));
        QCOMPARE(p.scenarioCount(), 12);
        QCOMPARE(p.list()->count(), 12);
        QVERIFY(p.list()->item(0)->text().startsWith(QStringLiteral("1. ")));
        // Every layout a scenario names is among the shipped examples.
        const QStringList examples = MainWindow::exampleLayouts();
        for (int i = 0; i < p.scenarioCount(); ++i)
            for (int k = 0; k < int(p.scenario(i).layouts.size()); ++k)
                QVERIFY2(examples.contains(p.layoutPath(i, k)), qPrintable(p.layoutPath(i, k)));
    }

    void choosingAScenarioOpensItsLayoutAndShowsItsText()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QDockWidget *dock = w.tourDock();
        QVERIFY(dock);
        QCOMPARE(dock->objectName(), QStringLiteral("GuidedTourDock"));
        QVERIFY(!dock->isVisible()); // until asked for
        // View > Guided Tour shows it.
        QAction *toggle = w.action(QStringLiteral("actionGuidedTour"));
        QVERIFY(toggle);
        bool inViewMenu = false;
        for (QAction *menu : w.menuBar()->actions())
            if (menu->menu() && menu->text().remove(QLatin1Char('&')) == QStringLiteral("View"))
                inViewMenu = menu->menu()->actions().contains(toggle);
        QVERIFY(inViewMenu);
        toggle->trigger();
        QVERIFY(dock->isVisible());

        GuidedTourPanel *p = w.tourPanel();
        const int qp = scenarioIndex(*p, "qp-tuning");
        QVERIFY(qp >= 0);
        QSignalSpy opened(p, &GuidedTourPanel::openLayoutRequested);
        // A click on the list item, as the student does.
        const QRect r = p->list()->visualItemRect(p->list()->item(qp));
        QTest::mouseClick(p->list()->viewport(), Qt::LeftButton, {}, r.center());
        QCOMPARE(opened.size(), 1);
        QCOMPARE(opened.front().front().toString(),
                 QStringLiteral(":/layouts/qp-tuning-gb300-qps1.railyard.json"));
        // The document is the scenario's layout, priced.
        QCOMPARE(w.document()->layout().cluster.tuning.qpsPerConnection, 1);
        QCOMPARE(w.document()->layout().cluster.gpuCount(), 512);
        QVERIFY(w.windowTitle().contains(QStringLiteral("Queue pairs per connection: 1")));
        QVERIFY(w.document()->evaluation().ok);
        const double stepOne = w.document()->evaluation().stepTimeS;
        // Its text: intro, the thing to try, what to look for, what the model assumes.
        const QString text = p->text()->toPlainText();
        const engine::TourScenario &s = p->scenario(qp);
        for (const std::string *part : {&s.intro, &s.tryThis, &s.lookFor, &s.assumes})
            QVERIFY2(text.contains(QString::fromStdString(*part).left(60)),
                     part->substr(0, 60).c_str());
        QVERIFY(text.contains(QStringLiteral("Try:")));
        QVERIFY(text.contains(QStringLiteral("Look for:")));
        QVERIFY(text.contains(QStringLiteral("What the model assumes:")));

        // The comparison's other side opens from its button.
        QPushButton *b = p->openButton(1);
        QVERIFY(b);
        QVERIFY(b->text().contains(QStringLiteral("NCCL_IB_QPS_PER_CONNECTION=4")));
        QTest::mouseClick(b, Qt::LeftButton);
        QCOMPARE(w.document()->layout().cluster.tuning.qpsPerConnection, 4);
        QVERIFY(w.document()->evaluation().stepTimeS < stepOne);
        QCOMPARE(p->currentScenario(), qp); // the text stays with the scenario

        // Another scenario replaces text and buttons; a single-layout one has one button.
        const int bubble = scenarioIndex(*p, "pipeline-bubble");
        p->selectScenario(bubble);
        QCOMPARE(w.document()->layout().parallel.pp, 4);
        QVERIFY(p->text()->toPlainText().contains(QStringLiteral("(p-1)/(v m)")));
        QVERIFY(p->openButton(0));
        QVERIFY(!p->openButton(1));
    }

    // The tour's comparison as a student runs it: open A from the dock, pin it with Compare >
    // Pin, open B from the dock: A survives the open (it used to live in the replaced
    // document), and Pricing compares A with B and says which file A came from.
    void pinnedAOutlivesOpeningB()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.action(QStringLiteral("actionGuidedTour"))->trigger();
        GuidedTourPanel *p = w.tourPanel();
        const int moe = scenarioIndex(*p, "moe-nvl72-vs-h200");
        QVERIFY(moe >= 0);
        const QRect r = p->list()->visualItemRect(p->list()->item(moe));
        QTest::mouseClick(p->list()->viewport(), Qt::LeftButton, {}, r.center());
        QVERIFY(w.document()->layout().title.starts_with("MoE on a GB200 NVL72 rack"));
        QVERIFY(w.document()->evaluation().ok);
        const double stepA = w.document()->evaluation().stepTimeS;

        QAction *pin = menuAction(w,
                                  {QStringLiteral("Compare"),
                                   QStringLiteral("Pin Current State as A")});
        QVERIFY(pin);
        pin->trigger();
        QVERIFY(w.document()->pinned());

        QPushButton *b = p->openButton(1);
        QVERIFY(b);
        QTest::mouseClick(b, Qt::LeftButton);
        QVERIFY(w.document()->layout().title.starts_with("MoE on H200 servers"));
        const Document::Snapshot *a = w.document()->pinned();
        QVERIFY2(a, "the pin was dropped when B opened");
        // The example's name (an example has no file of its own), and its title beside it.
        QCOMPARE(a->source, QStringLiteral("moe-gb200-nvl72.railyard.json"));
        QCOMPARE(a->sourcePath, QStringLiteral(":/layouts/moe-gb200-nvl72.railyard.json"));
        QCOMPARE(a->evaluation.stepTimeS, stepA);
        QVERIFY(a->layout.cluster != w.document()->layout().cluster);

        // Pricing: A beside B, where A came from, the change "vs A", and no link compared
        // across two clusters.
        PricingPanel *pricing = w.pricingPanel();
        QVERIFY2(pricing->pinnedText().contains(QStringLiteral("moe-gb200-nvl72.railyard.json")),
                 qPrintable(pricing->pinnedText()));
        QVERIFY(pricing->pinnedText().contains(QStringLiteral("MoE on a GB200 NVL72 rack")));
        QVERIFY(!pricing->metrics()->isColumnHidden(0));
        QCOMPARE(pricing->metrics()->horizontalHeaderItem(0)->text(), QStringLiteral("A"));
        QCOMPARE(pricing->metrics()->horizontalHeaderItem(1)->text(), QStringLiteral("B"));
        QVERIFY(pricing->metrics()->horizontalHeaderItem(0)->toolTip().contains(
                QStringLiteral("moe-gb200-nvl72")));
        QCOMPARE(pricing->metrics()->item(0, 0)->text(),
                 QString::fromStdString(engine::formatSeconds(stepA)));
        QVERIFY2(pricing->changeText().endsWith(QStringLiteral(" vs A")),
                 qPrintable(pricing->changeText()));
        QCOMPARE(pricing->linkChanges()->topLevelItemCount(), 1);
        QVERIFY(pricing->linkChanges()->topLevelItem(0)->text(0).contains(
                QStringLiteral("another cluster")));

        // Unpin ends the comparison; the next open has nothing to carry.
        menuAction(w, {QStringLiteral("Compare"), QStringLiteral("Unpin A")})->trigger();
        QVERIFY(!w.document()->pinned());
        QVERIFY(pricing->pinnedText().isEmpty());
        QTest::mouseClick(p->openButton(0), Qt::LeftButton);
        QVERIFY(!w.document()->pinned());
    }

    void aBadTourFileSaysWhereAndWhat()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("tour.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "railyard-tour", "version": 1, "scenarios": [{"id": "x"}]})");
        f.close();
        GuidedTourPanel p;
        QSignalSpy opened(&p, &GuidedTourPanel::openLayoutRequested);
        QVERIFY(!p.load(path, QStringLiteral(":/layouts")));
        QCOMPARE(p.scenarioCount(), 0);
        QCOMPARE(p.list()->count(), 0);
        QVERIFY2(p.errorText().contains(path
                                        + QStringLiteral(": /scenarios/0: missing required "
                                                         "key \"title\"")),
                 qPrintable(p.errorText()));
        QVERIFY(p.text()->toPlainText().contains(QStringLiteral("missing required key")));
        QVERIFY(!p.load(dir.filePath(QStringLiteral("absent.json")), QString()));
        QVERIFY(p.errorText().contains(QStringLiteral("absent.json")));
        QCOMPARE(opened.size(), 0);
    }
};

QTEST_MAIN(TestGuidedTour)
#include "tst_guidedtour.moc"
