#include "titleblock.h"

#include "base/safetext.h"
#include "base/showntext.h"
#include "base/units.h"
#include "document/document.h"
#include "scene/style.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QLocale>
#include <QPainter>
#include <QStringList>

#include <algorithm>

namespace railyard::render {

namespace {

constexpr int kPadX = 12;
constexpr int kPadY = 7;

QString tr(const char *text)
{
    return QCoreApplication::translate("TitleBlock", text);
}

// "2,048 servers of 8 × H100-SXM · 16,384 GPUs · 512 leaves, 32 spines"
QString clusterLine(const engine::Topology &t)
{
    const engine::ClusterShape &s = t.shape();
    const bool one = s.nodes == 1;
    const QString unit = s.nodesPerDomain > 1 ? (one ? tr("tray") : tr("trays"))
                                              : (one ? tr("server") : tr("servers"));
    QString line = tr("%1 %2 of %3 \u00d7 %4 \u00b7 %5 GPUs")
                           .arg(QLocale().toString(s.nodes), unit)
                           .arg(s.gpusPerNode)
                           .arg(QString::fromStdString(t.gpuSpec().id),
                                QLocale().toString(t.gpuCount()));
    if (s.hasFabric)
        line += tr(" \u00b7 %1 %2, %3 %4")
                        .arg(s.leaves)
                        .arg(s.leaves == 1 ? tr("leaf") : tr("leaves"))
                        .arg(s.spines)
                        .arg(s.spines == 1 ? tr("spine") : tr("spines"));
    return line;
}

// "llama3.1-405b · TP 8 · PP 16 (VP 4) · DP 128 · step 9.2 s ±8% · MFU 30%", or empty with no
// model. The ± is the step time's band from validation.
QString jobLine(const Document &doc)
{
    const engine::Layout &l = doc.layout();
    if (!l.model)
        return {};
    const QString model = l.model->preset.empty() ? tr("custom model")
                                                  : QString::fromStdString(l.model->preset);
    if (l.serving) {
        // Serving: the pools, the load and what a token costs in time.
        const auto pool = [](const engine::ServingPool &p) {
            QString s = tr("TP %1").arg(p.tp);
            if (p.ep > 1)
                s += tr(" EP %1").arg(p.ep);
            if (p.pp > 1)
                s += tr(" PP %1").arg(p.pp);
            return s + QStringLiteral(" \u00d7 %1").arg(p.replicas);
        };
        QString pools;
        if (l.serving->disaggregated)
            pools = tr("prefill %1, decode %2")
                            .arg(pool(l.serving->disaggregated->prefill),
                                 pool(l.serving->disaggregated->decode));
        else
            pools = pool(engine::ServingPool{l.parallel.tp,
                                             l.parallel.ep,
                                             l.parallel.pp,
                                             l.dataParallel(),
                                             l.parallel.attentionDp});
        QString job = model + QStringLiteral(" \u00b7 ") + pools;
        if (!l.mapping.empty())
            job += tr(" \u00b7 placed by hand");
        if (const engine::ServingEvaluation *e = doc.servingEvaluation(); e && e->ok)
            job += tr(" \u00b7 TTFT %1 \u00b7 TPOT %2 \u00b7 %3 tok/s per GPU")
                           .arg(QString::fromStdString(engine::formatSeconds(e->ttftS)),
                                QString::fromStdString(engine::formatSeconds(e->tpotS)))
                           .arg(e->outputTokensPerSPerGpu, 0, 'f', 0);
        return job;
    }
    const engine::ParallelConfig &p = l.parallel;
    QStringList sizes;
    sizes << tr("TP %1").arg(p.tp);
    if (p.cp > 1)
        sizes << tr("CP %1").arg(p.cp);
    if (p.ep > 1)
        sizes << tr("EP %1").arg(p.ep);
    sizes << (p.vp > 1 ? tr("PP %1 (VP %2)").arg(p.pp).arg(p.vp) : tr("PP %1").arg(p.pp));
    sizes << tr("DP %1").arg(l.dataParallel());
    QString job = model + QStringLiteral(" \u00b7 ") + sizes.join(QStringLiteral(" \u00b7 "));
    if (!l.mapping.empty())
        job += tr(" \u00b7 placed by hand");
    const engine::Evaluation &e = doc.evaluation();
    if (e.ok)
        job += tr(" \u00b7 step %1 \u00b1%2% \u00b7 MFU %3%")
                       .arg(QString::fromStdString(engine::formatSeconds(e.stepTimeS)))
                       .arg(QString::fromStdString(
                               engine::formatNumber(100 * e.stepTimeBand.fraction, 2)))
                       .arg(e.mfu * 100, 0, 'f', 0);
    return job;
}

} // namespace

TitleBlock::TitleBlock(const Document &doc, const QFont &font, int maxWidth, const QString &footer)
{
    // One line whatever the file holds: no line breaks or control characters reach the page.
    QString title = QString::fromStdString(
            engine::plainText(engine::shownTitle(doc.layout().title)));
    if (title.isEmpty())
        title = doc.displayName();
    QFont big = font;
    big.setPixelSize(15);
    big.setBold(true);
    QFont small = font;
    small.setPixelSize(12);
    QFont smallBold = small;
    smallBold.setBold(true);
    struct Line
    {
        QString text;
        QFont font;
        QColor colour;
    };
    std::vector<Line> lines = {{title, big, style::kTextDark},
                               {clusterLine(doc.topology()), small, style::kTextMuted}};
    if (const QString job = jobLine(doc); !job.isEmpty())
        lines.push_back({job, smallBold, style::kTextDark});
    if (!footer.isEmpty())
        lines.push_back({footer, small, style::kTextMuted});

    const int avail = std::max(80, maxWidth - 2 * kPadX);
    const int flags = Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap;
    int widest = 0;
    for (const Line &l : lines)
        widest = std::max(widest,
                          QFontMetrics(l.font)
                                  .boundingRect(QRect(0, 0, avail, 10000), flags, l.text)
                                  .width());
    widest = std::min(widest + 2, avail);
    int y = kPadY;
    for (const Line &l : lines) {
        const QRect r = QFontMetrics(l.font).boundingRect(QRect(0, 0, widest, 10000), flags, l.text);
        const int h = std::max(r.height(), QFontMetrics(l.font).height()) + 2;
        m_lines.push_back({l.text, QRect(kPadX, y, widest, h), l.font, flags});
        m_colours.push_back(l.colour);
        y += h;
    }
    m_size = QSize(widest + 2 * kPadX, y + kPadY);
}

void TitleBlock::paint(QPainter *painter, const QPoint &topLeft) const
{
    painter->save();
    painter->translate(topLeft);
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setRenderHint(QPainter::TextAntialiasing, true);
    painter->setPen(QPen(style::kRackBorder, 1));
    painter->setBrush(QColor(255, 255, 255, 238));
    painter->drawRoundedRect(QRectF(0.5, 0.5, m_size.width() - 1, m_size.height() - 1), 6, 6);
    for (std::size_t i = 0; i < m_lines.size(); ++i) {
        const PlacedText &l = m_lines[i];
        painter->setFont(l.font);
        painter->setPen(m_colours[i]);
        painter->drawText(l.rect, l.flags, l.text);
    }
    painter->restore();
}

} // namespace railyard::render
