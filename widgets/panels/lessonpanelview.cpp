// The Collective Lesson dock's read-outs: the group choices it offers, the texts of a step, the
// formula and the total, and the frame it hands the canvas (through the view state).
#include "lessonpanel.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "document/document.h"
#include "document/groupref.h"
#include "document/lessonframe.h"
#include "document/viewstate.h"
#include "layout/parallel.h"

#include <QComboBox>
#include <QLabel>
#include <QLocale>

#include <algorithm>
#include <numeric>

namespace railyard {

namespace {

// Groups listed per parallel dimension (a 16k-GPU job has thousands of DP groups).
constexpr int kGroupsPerDim = 16;
// Sender -> receiver arrows drawn per step (a 512-GPU ring has 512).
constexpr std::size_t kMaxArrows = 160;

QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}

QString bytes(double b)
{
    return QString::fromStdString(engine::formatBytes(b));
}

std::vector<int> range(int first, int count)
{
    std::vector<int> v(static_cast<std::size_t>(count));
    std::iota(v.begin(), v.end(), first);
    return v;
}

} // namespace

int LessonPanel::groupChoiceCount() const
{
    return static_cast<int>(m_choices.size());
}

std::vector<int> LessonPanel::groupChoice(int index) const
{
    if (index < 0 || index >= groupChoiceCount())
        return {};
    return m_choices[static_cast<std::size_t>(index)].gpus;
}

void LessonPanel::chooseGroup(int index)
{
    if (index < 0 || index >= groupChoiceCount())
        return;
    m_group->setCurrentIndex(index);
    controlsChanged();
}

void LessonPanel::rebuildGroups()
{
    const QString was = m_group->currentText();
    m_choices.clear();
    if (m_document) {
        const engine::Topology &t = m_document->topology();
        const int perNode = t.shape().gpusPerNode;
        const int nodes = t.shape().nodes;
        const auto add = [&](const QString &label, std::vector<int> gpus) {
            if (gpus.size() >= 2)
                m_choices.push_back({label, std::move(gpus)});
        };
        add(tr("One server: %1").arg(gpuListText(range(0, perNode))), range(0, perNode));
        if (nodes >= 2) {
            add(tr("Across two servers: GPU 0 of servers 0 and 1"), {0, perNode});
            add(tr("Across two servers: all %1 GPUs of servers 0 and 1").arg(2 * perNode),
                range(0, 2 * perNode));
        }
        if (m_view && m_view->selectedGpus().size() >= 2)
            add(tr("The selected GPUs (%1)").arg(gpuListText(m_view->selectedGpus())),
                m_view->selectedGpus());
        // Sizes that do not describe the cluster have no ranks: no parallel groups to offer.
        if (const engine::RankLayout *r = m_document->ranks()) {
            const engine::RankLayout &ranks = *r;
            using engine::Dim;
            for (const auto &[dim, kind] : {std::pair{Dim::TP, GroupKind::Tp},
                                            std::pair{Dim::CP, GroupKind::Cp},
                                            std::pair{Dim::EP, GroupKind::Ep},
                                            std::pair{Dim::DP, GroupKind::DpReplica}}) {
                const QString noun = dim == Dim::DP ? tr("DP group") : kindNoun(kind);
                const int count = std::min(kGroupsPerDim, ranks.groupCount(dim));
                for (int g = 0; g < count; ++g) {
                    std::vector<int> gpus = ranks.groupGpus(dim, g);
                    if (gpus.size() < 2)
                        break;
                    const QString label = tr("%1 %2: %3").arg(noun).arg(g).arg(gpuListText(gpus));
                    add(label, std::move(gpus));
                }
            }
        }
        if (t.gpuCount() <= engine::kLessonMaxRanks && t.gpuCount() > 2 * perNode)
            add(tr("The whole cluster (%1 GPUs)").arg(t.gpuCount()), range(0, t.gpuCount()));
    }
    const QSignalBlocker block(m_group);
    m_group->clear();
    for (const Choice &c : m_choices)
        m_group->addItem(c.label);
    int keep = m_group->findText(was);
    // The selection's entry stays chosen when the selection changes (its label changes).
    const QString selected = tr("The selected GPUs");
    if (keep < 0 && was.startsWith(selected))
        for (int i = 0; i < m_group->count() && keep < 0; ++i)
            if (m_group->itemText(i).startsWith(selected))
                keep = i;
    m_group->setCurrentIndex(keep >= 0 ? keep : 0);
}

QString LessonPanel::deviceName(int device) const
{
    if (!m_document || device < 0 || device >= m_document->topology().deviceCount())
        return tr("the switch");
    return QString::fromStdString(m_document->topology().deviceName(device));
}

QString LessonPanel::transferText(const engine::LessonTransfer &t) const
{
    const engine::CollectiveLesson &L = *m_lesson;
    const QString chunk = t.chunks >= L.chunks ? tr("every chunk")
                          : t.chunks == 1
                                  ? tr("chunk %1").arg(t.chunk)
                                  : tr("chunks %1\u2013%2").arg(t.chunk).arg(t.chunk + t.chunks - 1);
    return tr("%1 \u2192 %2: %3, %4, %5")
            .arg(deviceName(t.from),
                 deviceName(t.to),
                 chunk,
                 bytes(t.bytes),
                 t.reduce ? tr("added to what it holds") : tr("kept as is"));
}

QString LessonPanel::stepDetail() const
{
    const engine::CollectiveLesson &L = *m_lesson;
    const engine::LessonStep &s = L.steps[static_cast<std::size_t>(m_step)];
    QString bottleneck;
    if (s.bottleneckLink >= 0 && m_document && s.bottleneckLink < m_document->topology().linkCount())
        bottleneck = tr(", bound by %1")
                             .arg(QString::fromStdString(
                                     m_document->topology().linkName(s.bottleneckLink)));
    QString text = tr("This step: %1 (%2 alone%3). Done after it: %4 of %5 (plus %6 latency).")
                           .arg(seconds(s.timeS),
                                seconds(s.linkS),
                                bottleneck,
                                seconds(s.startS + s.timeS),
                                seconds(L.bandwidthS),
                                seconds(L.latencyS));
    return text;
}

QString LessonPanel::formulaHtml() const
{
    const engine::CollectiveLesson &L = *m_lesson;
    QStringList lines;
    for (const std::string &f : L.formula)
        lines << QString::fromStdString(f).toHtmlEscaped();
    QString html = QStringLiteral("<div style='font-family:monospace'>")
                   + lines.join(QStringLiteral("<br>")) + QStringLiteral("</div>");
    if (!L.notes.empty()) {
        QStringList notes;
        for (const std::string &n : L.notes)
            notes << QString::fromStdString(n).toHtmlEscaped();
        html += QStringLiteral("<div style='color:#5b6675'>") + notes.join(QStringLiteral("<br>"))
                + QStringLiteral("</div>");
    }
    return html;
}

QString LessonPanel::totalText() const
{
    const engine::CollectiveLesson &L = *m_lesson;
    return tr("Total %1 = %2 steps (%3) + latency %4. The engine's estimate for this collective "
              "(what Pricing and `railyard collective` use): %5. Bus bandwidth %6 GB/s.")
            .arg(seconds(L.totalS))
            .arg(L.steps.size())
            .arg(seconds(L.bandwidthS))
            .arg(seconds(L.latencyS))
            .arg(seconds(L.estimateS))
            .arg(QString::fromStdString(engine::formatNumber(L.busbwGBps())));
}

QString LessonPanel::textbookText() const
{
    // Seconds to the millisecond, as the seed article prints them (0.068 s, 0.694 s).
    const auto s3 = [](double s) { return QLocale().toString(s, 'f', 3) + QStringLiteral(" s"); };
    const engine::CollectiveLesson &L = *m_lesson;
    const engine::CollectiveResult &flat = L.textbook;
    if (!(flat.timeS > 0) || !(L.textbookEfficiency > 0))
        return {};
    const double rate = flat.bottleneckGBps / L.textbookEfficiency;
    return tr("Textbook flat ring (the seed article's formula, no latency or hierarchy): "
              "%1 × %2 at the ring's slowest link, %3 GB/s (%4) × %5% = %6, "
              "%7× the realistic %8.")
            .arg(QString::fromStdString(
                         engine::formatNumber(engine::busBandwidthFactor(L.op, L.ranks))),
                 bytes(L.bytes),
                 QString::fromStdString(engine::formatNumber(rate)),
                 QString::fromStdString(flat.bottleneck))
            .arg(qRound(100 * L.textbookEfficiency))
            .arg(s3(flat.timeS),
                 QLocale().toString(L.estimateS > 0 ? flat.timeS / L.estimateS : 0.0, 'f', 1),
                 s3(L.estimateS));
}

void LessonPanel::publishFrame()
{
    if (!m_view)
        return;
    if (!m_active || !m_lesson || !m_document || m_document->topology().buildId() != m_topology) {
        m_view->setLesson(nullptr);
        return;
    }
    const engine::Topology &t = m_document->topology();
    const engine::CollectiveLesson &L = *m_lesson;
    const engine::LessonStep &s = L.steps[static_cast<std::size_t>(m_step)];
    auto frame = std::make_shared<LessonFrame>();
    frame->topology = t.buildId();
    for (const engine::LessonLinkLoad &l : engine::lessonStepLoads(t, L, m_step))
        frame->links.push_back({l.link, static_cast<float>(l.load), l.reverse});
    std::vector<int> sent(static_cast<std::size_t>(L.ranks), -1);
    for (std::size_t i = 0; i < s.transfers.size(); ++i) {
        const engine::LessonTransfer &x = s.transfers[i];
        frame->senders.push_back(x.from);
        frame->receivers.push_back(x.to);
        if (frame->arrows.size() < kMaxArrows
            && std::none_of(frame->arrows.begin(), frame->arrows.end(), [&](const auto &a) {
                   return a.from == x.from && a.to == x.to;
               }))
            frame->arrows.push_back({x.from, x.to});
        if (x.fromRank >= 0 && sent[static_cast<std::size_t>(x.fromRank)] < 0)
            sent[static_cast<std::size_t>(x.fromRank)] = static_cast<int>(i);
    }
    for (auto *v : {&frame->senders, &frame->receivers}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    const engine::LessonProgress after = engine::lessonProgress(L, m_step + 1);
    for (int r = 0; r < L.ranks; ++r) {
        LessonFrame::Badge b;
        b.device = t.gpuDevice(L.gpus[static_cast<std::size_t>(r)]);
        b.progress = static_cast<float>(after.done(r, L.op));
        if (const int i = sent[static_cast<std::size_t>(r)]; i >= 0) {
            const engine::LessonTransfer &x = s.transfers[static_cast<std::size_t>(i)];
            b.text = x.chunks >= L.chunks ? tr("all")
                     : x.chunks == 1
                             ? QStringLiteral("c%1").arg(x.chunk)
                             : QStringLiteral("c%1-%2").arg(x.chunk).arg(x.chunk + x.chunks - 1);
        }
        frame->badges.push_back(b);
    }
    frame->caption = tr("Step %1 of %2 \u00B7 %3")
                             .arg(m_step + 1)
                             .arg(L.steps.size())
                             .arg(QString::fromStdString(s.phase));
    m_view->setLesson(std::move(frame));
}

} // namespace railyard
