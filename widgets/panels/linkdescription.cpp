#include "linkdescription.h"

#include "document/document.h"
#include "scene/style.h"
#include "step/timeline.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace railyard {

namespace {

QString gb(double bytes)
{
    if (bytes >= 1e9)
        return QObject::tr("%1 GB").arg(bytes / 1e9, 0, 'f', bytes >= 1e11 ? 0 : 1);
    return QObject::tr("%1 MB").arg(bytes / 1e6, 0, 'f', bytes >= 1e8 ? 0 : 1);
}

QString percent(double u)
{
    return QStringLiteral("%1%").arg(100.0 * u, 0, 'f', u < 0.1 ? 1 : 0);
}

// "3, 7, 12\u201315" with at most `limit` numbers or runs, then "(+N more)".
QString runsText(const std::vector<int> &values, int limit)
{
    QStringList parts;
    int shown = 0;
    std::size_t i = 0;
    while (i < values.size() && static_cast<int>(parts.size()) < limit) {
        std::size_t j = i;
        while (j + 1 < values.size() && values[j + 1] == values[j] + 1)
            ++j;
        parts << (j > i ? QStringLiteral("%1\u2013%2").arg(values[i]).arg(values[j])
                        : QString::number(values[i]));
        shown += static_cast<int>(j - i + 1);
        i = j + 1;
    }
    QString text = parts.join(QStringLiteral(", "));
    if (i < values.size())
        text += QObject::tr(" (+%1 more)").arg(static_cast<int>(values.size()) - shown);
    return text;
}

} // namespace

QString linkTitle(const engine::Topology &t, int link)
{
    const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
    return QStringLiteral("%1 \u2194 %2")
            .arg(QString::fromStdString(t.deviceName(l.a)),
                 QString::fromStdString(t.deviceName(l.b)));
}

LinkFacts linkFacts(const engine::Topology &t,
                    const engine::Evaluation &e,
                    const engine::RankLayout *ranks,
                    int link,
                    double now)
{
    return linkFacts(t, e.links.get(), e.timeline, ranks, link, now);
}

LinkFacts linkFacts(const engine::Topology &t,
                    const engine::LinkLoads *loads,
                    const engine::StepTimeline &timeline,
                    const engine::RankLayout *ranks,
                    int link,
                    double now)
{
    LinkFacts f;
    if (link < 0 || link >= t.linkCount())
        return f;
    const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
    f.link = link;
    f.title = linkTitle(t, link);
    f.kind = style::linkKindName(l.kind);
    f.gbPerS = l.gbPerS;
    f.health = l.health;
    f.lanes = l.lanes;
    f.now = now;
    const std::size_t i = static_cast<std::size_t>(link);
    if (loads && i < loads->size()) {
        f.bytesUp = loads->bytesUp[i];
        f.bytesDown = loads->bytesDown[i];
        f.utilization = loads->utilization[i];
    }
    f.kinds = timeline.empty() ? 0u : engine::kindsOnLink(timeline, link);
    if (ranks)
        f.crossings = engine::groupsCrossingLink(t,
                                                 *ranks,
                                                 link,
                                                 timeline.empty() ? nullptr : &timeline,
                                                 loads);
    return f;
}

LinkFacts documentLinkFacts(const Document &doc,
                            const engine::RankLayout *ranks,
                            int link,
                            double now)
{
    if (!doc.isServing())
        return linkFacts(doc.topology(), doc.evaluation(), ranks, link, now);
    // The training ranks do not name the serving groups: no crossings.
    const engine::ServingEvaluation *s = doc.servingEvaluation();
    const engine::ServingLinks *links = s && s->links ? s->links.get() : nullptr;
    LinkFacts f = linkFacts(doc.topology(),
                            links ? &links->decodeStep : nullptr,
                            doc.timeline(),
                            nullptr,
                            link,
                            now);
    f.decodeStep = true;
    if (links && link >= 0 && static_cast<std::size_t>(link) < links->requestBytes.size())
        f.bytesPerRequest = links->requestBytes[static_cast<std::size_t>(link)];
    return f;
}

QString bytesText(const LinkFacts &f)
{
    const double total = f.bytesUp + f.bytesDown;
    QString text;
    if (total <= 0)
        text = f.decodeStep ? QObject::tr("idle in a decode step")
                            : QObject::tr("idle in the step");
    else
        text = (f.decodeStep ? QObject::tr("%1 per decode step (%2 up, %3 down)")
                             : QObject::tr("%1 per step (%2 up, %3 down)"))
                       .arg(gb(total), gb(f.bytesUp), gb(f.bytesDown));
    if (f.bytesPerRequest > 0)
        text += QObject::tr(" \u00b7 %1 per request").arg(gb(f.bytesPerRequest));
    return text;
}

QString utilizationText(const LinkFacts &f)
{
    QString text = (f.decodeStep ? QObject::tr("%1 decode-step average")
                                 : QObject::tr("%1 step average"))
                           .arg(percent(f.utilization));
    if (f.now >= 0)
        text += QObject::tr(" \u00b7 %1 now").arg(percent(f.now));
    return text;
}

QString crossingText(const LinkFacts &f, int perDim)
{
    QStringList parts;
    for (const engine::LinkCrossing &c : f.crossings) {
        const QString noun = QString::fromLatin1(engine::groupNoun(c.dim));
        parts << QStringLiteral("%1%2 %3").arg(noun,
                                               c.groups.size() > 1 ? QStringLiteral("s") : QString(),
                                               runsText(c.groups, perDim));
    }
    return parts.join(QStringLiteral("; "));
}

QString kindsText(unsigned kinds)
{
    using engine::PhaseKind;
    static const std::pair<PhaseKind, const char *> words[] = {
            {PhaseKind::Tp, QT_TR_NOOP("TP collectives")},
            {PhaseKind::Cp, QT_TR_NOOP("CP ring attention")},
            {PhaseKind::Ep, QT_TR_NOOP("EP all-to-all")},
            {PhaseKind::PpP2p, QT_TR_NOOP("PP send/recv")},
            {PhaseKind::Dp, QT_TR_NOOP("DP gradient reduction")},
            {PhaseKind::Optimizer, QT_TR_NOOP("optimizer")},
    };
    QStringList out;
    for (const auto &[kind, word] : words)
        if (kinds & (1u << static_cast<unsigned>(kind)))
            out << QObject::tr(word);
    return out.join(QStringLiteral(", "));
}

QString linkFaultText(const LinkFacts &f)
{
    if (f.link < 0 || f.health >= 1)
        return {};
    if (f.health <= 0)
        return QObject::tr("Down");
    QString text = QObject::tr("Degraded to %1 of its rate").arg(percent(f.health));
    const double left = f.lanes * f.health;
    if (f.lanes > 1 && std::abs(left - std::round(left)) < 1e-9)
        text += QObject::tr(" (%1 of %2 lanes left)")
                        .arg(std::lround(left))
                        .arg(std::lround(f.lanes));
    return text;
}

QString linkTooltip(const LinkFacts &f)
{
    if (f.link < 0)
        return {};
    QString html = QStringLiteral("<b>%1</b>").arg(f.title.toHtmlEscaped());
    if (const QString fault = linkFaultText(f); !fault.isEmpty())
        html += QStringLiteral("<br><b style=\"color:%1\">%2</b>")
                        .arg(style::kFaultDown.name(), fault.toHtmlEscaped());
    html += QStringLiteral("<br>%1, %2 GB/s per direction")
                    .arg(f.kind)
                    .arg(f.gbPerS, 0, 'f', f.gbPerS < 100 ? 1 : 0);
    html += QStringLiteral("<br>") + QObject::tr("Bytes: %1").arg(bytesText(f));
    html += QStringLiteral("<br>") + QObject::tr("Utilization: %1").arg(utilizationText(f));
    if (const QString groups = crossingText(f); !groups.isEmpty())
        html += QStringLiteral("<br>") + QObject::tr("Crossed by: %1").arg(groups.toHtmlEscaped());
    if (const QString kinds = kindsText(f.kinds); !kinds.isEmpty())
        html += QStringLiteral("<br>") + QObject::tr("Carries: %1").arg(kinds);
    return html;
}

} // namespace railyard
