// The review report's content (engine/report/reviewreport): its sections in order, its numbers
// as the evaluation has them, the A/B comparison only with a pin, and Markdown that a title or
// a warning from a hostile file cannot break.
#include "base/units.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "report/reviewreport.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QTest>

#include <sstream>
#include <stdexcept>

using namespace railyard::engine;

namespace {

// Two HGX H100 servers, TP 8 in each and PP 2 across them (or TP 4, PP 4).
Layout twoServers(int tp, int pp)
{
    const std::string text = R"({"format": "railyard-layout", "version": 1,
        "title": "Two servers",
        "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 8,
                    "price_per_gpu_hour": 2.5},
        "model": {"preset": "llama3-8b"},
        "training": {"seq_len": 4096, "global_batch": 16, "micro_batch": 1},
        "parallel": {"tp": )" + std::to_string(tp)
                             + R"(, "pp": )" + std::to_string(pp) + R"(, "dp": 1}})";
    return parseLayout(text, "two-servers.railyard.json");
}

struct Priced
{
    Layout layout;
    Topology topology;
    Evaluation evaluation;
    explicit Priced(Layout l)
        : layout(std::move(l))
        , topology(buildTopology(layout.cluster, Catalog::builtin()))
        , evaluation(evaluate(layout, topology))
    {}
};

ReviewInput inputOf(const Priced &p)
{
    ReviewInput in;
    in.layout = &p.layout;
    in.topology = &p.topology;
    in.evaluation = &p.evaluation;
    in.title = p.layout.title;
    in.date = "1 January 2027";
    in.source = "two-servers.railyard.json";
    return in;
}

QStringList headings(const ReviewReport &r)
{
    QStringList list;
    for (const ReviewSection &s : r.sections)
        list << QString::fromStdString(s.heading);
    return list;
}

// The cells of a Markdown table row: split at every '|' not escaped by a backslash.
int cells(const QString &row)
{
    int n = 0;
    for (int i = 0; i < row.size(); ++i)
        if (row[i] == QLatin1Char('|') && (i == 0 || row[i - 1] != QLatin1Char('\\')))
            ++n;
    return n - 1;
}

} // namespace

class TestReviewReport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sectionsAndNumbers()
    {
        const Priced b(twoServers(8, 2));
        QVERIFY(b.evaluation.ok);
        const ReviewReport r = makeReviewReport(inputOf(b));
        QCOMPARE(headings(r),
                 QStringList({"The cluster",
                              "Where the step goes",
                              "Step timeline",
                              "Memory per GPU",
                              "Hottest links",
                              "Warnings",
                              "Assumptions and where the model is unsure"}));
        QCOMPARE(r.stepTime, formatSeconds(b.evaluation.stepTimeS));
        QVERIFY(r.stepBand.find(formatSeconds(b.evaluation.stepTimeBand.lowS)) != std::string::npos);
        QVERIFY(r.comparedWith.empty());
        QCOMPARE(r.summary.rows.front().at(0), std::string("Step time"));
        QCOMPARE(r.summary.rows.front().at(1), formatSeconds(b.evaluation.stepTimeS));
        QVERIFY2(r.cluster.rfind("2 servers of 8 \u00d7 H100-SXM", 0) == 0, r.cluster.c_str());
        QCOMPARE(r.workload, std::string("llama3-8b \u00b7 TP 8 \u00b7 PP 2 \u00b7 DP 1"));
        QVERIFY2(r.training.find("selective recomputation") != std::string::npos,
                 r.training.c_str());
        QVERIFY2(r.training.find("selective recomputation (") == std::string::npos,
                 r.training.c_str());
        // Megatron's recompute modules, where not its default, are named.
        Layout modules = b.layout;
        modules.training.recompute = Recompute::Selective;
        modules.training.recomputeModules = kRecomputeLayernorm | kRecomputeMoeAct;
        const Priced m(modules);
        QVERIFY2(makeReviewReport(inputOf(m))
                                 .training.find("selective recomputation (layernorm+moe_act)")
                         != std::string::npos,
                 makeReviewReport(inputOf(m)).training.c_str());
        // Every table row has a cell for every column.
        for (const ReviewSection &s : r.sections)
            for (const ReviewBlock &block : s.blocks)
                if (block.kind == ReviewBlock::Kind::Table)
                    for (const auto &row : block.table.rows)
                        QCOMPARE(row.size(), block.table.columns.size());
    }

    void comparisonOnlyWithAPin()
    {
        const Priced b(twoServers(8, 2)), a(twoServers(4, 4));
        QVERIFY(a.evaluation.ok && b.evaluation.ok);
        ReviewInput in = inputOf(b);
        in.pinnedLayout = &a.layout;
        in.pinned = &a.evaluation;
        in.pinnedSource = "a.railyard.json";
        const ReviewReport r = makeReviewReport(in);
        QVERIFY(headings(r).contains(QStringLiteral("A/B comparison")));
        QVERIFY(r.comparedWith.find("a.railyard.json") != std::string::npos);
        const ReviewSection &ab = *std::find_if(r.sections.begin(), r.sections.end(), [](auto &s) {
            return s.heading == "A/B comparison";
        });
        const ReviewTable *metrics = nullptr;
        for (const ReviewBlock &block : ab.blocks)
            if (block.kind == ReviewBlock::Kind::Table && !metrics)
                metrics = &block.table;
        QVERIFY(metrics);
        QCOMPARE(metrics->rows.front().at(1), formatSeconds(a.evaluation.stepTimeS));
        QCOMPARE(metrics->rows.front().at(2), formatSeconds(b.evaluation.stepTimeS));
    }

    void unpricedStepIsRefused()
    {
        Priced p(twoServers(8, 2));
        p.evaluation.ok = false;
        p.evaluation.error = "sizes do not multiply";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeReviewReport(inputOf(p)));
    }

    // A title and a warning holding Markdown and HTML: one heading, tables with as many cells
    // in every row as in their header, no tag, no control character.
    void hostileTextStaysText()
    {
        Priced p(twoServers(8, 2));
        p.layout.title = "<b>x</b> | # *y* \x01\x1b[2J";
        Warning w;
        w.message = "a | b <img src=x> `code` \x07";
        w.costS = 0.5;
        p.evaluation.warnings.push_back(w);
        ReviewInput in = inputOf(p);
        in.title = p.layout.title;
        std::ostringstream out;
        writeReviewMarkdown(out, makeReviewReport(in), "my review-diagram.svg");
        const QString md = QString::fromStdString(out.str());
        QVERIFY(md.startsWith(QStringLiteral("# \\<b\\>x\\</b\\> \\| \\# \\*y\\* ")));
        // No '<' opens a tag: each is escaped, but for the diagram link's own <...>.
        QString withoutLink = md;
        withoutLink.remove(QStringLiteral("](<my review-diagram.svg>)"));
        QVERIFY(!withoutLink.contains(QRegularExpression(QStringLiteral("(?<!\\\\)<"))));
        QVERIFY(md.contains(QStringLiteral("a \\| b \\<img src=x\\> \\`code\\`")));
        for (const QChar c : md)
            QVERIFY2(c >= QLatin1Char(' ') || c == QLatin1Char('\n'), qPrintable(md.left(200)));
        QVERIFY(md.contains(QStringLiteral("![The cluster diagram](<my review-diagram.svg>)")));
        QVERIFY(md.contains(QStringLiteral("+500 ms")));
        const QStringList lines = md.split(QLatin1Char('\n'));
        int header = -1;
        for (const QString &line : lines) {
            if (!line.startsWith(QLatin1Char('|'))) {
                header = -1;
                continue;
            }
            if (header < 0)
                header = cells(line);
            QCOMPARE(cells(line), header);
        }
    }

    void memoryStagesAndDiagramPath()
    {
        const auto rows = memoryStageRows({39.7, 37.5, 37.5, 37.52, 42.8}, 80);
        QCOMPARE(rows.size(), std::size_t(3));
        QCOMPARE(rows[0], (std::vector<std::string>{"0", "39.7", "49.6%"}));
        QCOMPARE(rows[1], (std::vector<std::string>{"1-3", "37.5", "46.9%"}));
        QCOMPARE(rows[2], (std::vector<std::string>{"4", "42.8", "53.5%"}));
        QCOMPARE(reviewDiagramPath("out/review.md"), std::string("out/review-diagram.svg"));
        QCOMPARE(reviewDiagramPath("review"), std::string("review-diagram.svg"));
    }
};

QTEST_GUILESS_MAIN(TestReviewReport)
#include "tst_reviewreport.moc"
