#include "timelinepanel.h"

#include "base/units.h"
#include "charts/stepchart.h"
#include "document/document.h"
#include "document/viewstate.h"

#include <QComboBox>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <cmath>

namespace railyard {

using engine::Phase;
using engine::PhaseKind;

namespace {
constexpr int kLabelW = 64; // "stage 12"
constexpr int kPad = 6;

// Lanes under a stage's critical path: one per kind of communication.
int laneOf(const Phase &p)
{
    if (p.exposed)
        return 0;
    switch (p.kind) {
    case PhaseKind::Tp: return 1;
    case PhaseKind::Cp: return 2;
    case PhaseKind::Ep: return 2;
    case PhaseKind::PpP2p: return 3;
    case PhaseKind::Dp: return 4;
    default: return 1;
    }
}
constexpr int kLanes = 5;

// 1, 2 or 5 times a power of ten, near `raw`.
double niceTick(double raw)
{
    const double mag = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-12))));
    const double r = raw / mag;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}
} // namespace

GanttView::GanttView(Document *document, ViewState *view, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_view(view)
{
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QColor GanttView::kindColor(PhaseKind kind)
{
    switch (kind) {
    case PhaseKind::Compute: return StepChart::partColor(StepChart::Compute);
    case PhaseKind::Tp: return StepChart::partColor(StepChart::Tp);
    case PhaseKind::Cp: return StepChart::partColor(StepChart::Cp);
    case PhaseKind::Ep: return StepChart::partColor(StepChart::Ep);
    case PhaseKind::PpP2p: return StepChart::partColor(StepChart::PpP2p);
    case PhaseKind::Dp: return StepChart::partColor(StepChart::Dp);
    case PhaseKind::Optimizer: return StepChart::partColor(StepChart::Optimizer);
    case PhaseKind::Bubble: return StepChart::partColor(StepChart::PpBubble);
    }
    return Qt::gray;
}

double GanttView::xOf(double t) const
{
    const double step = m_document->evaluation().timeline.stepS;
    const double w = std::max(1, width() - kLabelW - 2 * kPad);
    return kLabelW + kPad + (step > 0 ? t / step : 0.0) * w;
}

double GanttView::timeAt(double x) const
{
    const double step = m_document->evaluation().timeline.stepS;
    const double w = std::max(1, width() - kLabelW - 2 * kPad);
    return std::clamp((x - kLabelW - kPad) / w, 0.0, 1.0) * step;
}

void GanttView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const engine::StepTimeline &tl = m_document->evaluation().timeline;
    if (tl.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No step to play: the step cannot be priced."));
        return;
    }
    const int stages = std::max(1, tl.stages);
    // Only the lanes this step uses (a step without TP has no TP lane); many stages: the
    // critical path and one communication lane.
    std::array<bool, kLanes> used{};
    used[0] = true;
    for (const Phase &ph : tl.phases)
        used[static_cast<std::size_t>(laneOf(ph))] = true;
    if (stages > 8) {
        std::fill(used.begin() + 1, used.end(), false);
        used[1] = true;
    }
    std::array<int, kLanes> slot{}; // a lane's place under the critical path
    int commLanes = 0;
    for (int l = 1; l < kLanes; ++l)
        slot[static_cast<std::size_t>(l)] = used[static_cast<std::size_t>(l)] ? ++commLanes : 0;
    const QFontMetricsF fm(font());
    const double axisH = fm.height() + 7;
    const double rowH = (height() - 2 * kPad - axisH) / stages;
    // The critical path is twice as tall as a communication lane; a gap under each row.
    const double laneH = rowH * 0.88 / (commLanes + 2);
    const double t = m_view->playbackTime();
    p.setFont(font());
    const QColor text = palette().color(QPalette::Text);
    const QColor faint = palette().color(QPalette::PlaceholderText);
    const bool laneNames = stages == 1 && laneH >= fm.height() * 0.8;
    for (int s = 0; s < stages; ++s) {
        const double top = kPad + s * rowH;
        if (laneNames) {
            // One stage: name the lanes instead ("critical path", then each communication).
            p.setPen(text);
            p.drawText(QRectF(0, top, kLabelW, 2 * laneH),
                       Qt::AlignVCenter | Qt::AlignRight,
                       tr("step"));
            p.setPen(faint);
            static const char *const names[kLanes] = {"", "TP", "CP/EP", "PP", "DP"};
            for (int l = 1; l < kLanes; ++l)
                if (const int k = slot[static_cast<std::size_t>(l)]; k > 0)
                    p.drawText(QRectF(0, top + laneH * (k + 1), kLabelW, laneH),
                               Qt::AlignVCenter | Qt::AlignRight,
                               tr(names[l]));
        } else if (rowH >= 10) {
            p.setPen(text);
            p.drawText(QRectF(0, top, kLabelW, rowH),
                       Qt::AlignVCenter | Qt::AlignRight,
                       stages > 1 ? tr("stage %1").arg(s) : tr("step"));
        }
    }
    // The time axis under the rows: a few round ticks.
    const double axisY = kPad + stages * rowH;
    const double step = tl.stepS;
    const double tick = niceTick(step / 5);
    p.setPen(faint);
    p.drawLine(QPointF(xOf(0), axisY + 1), QPointF(xOf(step), axisY + 1));
    for (double v = 0; v <= step * 1.0001; v += tick) {
        const double x = xOf(v);
        p.drawLine(QPointF(x, axisY + 1), QPointF(x, axisY + 4));
        const QString label = seconds(v);
        const double w = fm.horizontalAdvance(label);
        if (x + w / 2 <= width())
            p.drawText(QPointF(std::max(x - w / 2, double(kLabelW)), axisY + 6 + fm.ascent()),
                       label);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
    for (const Phase &ph : tl.phases) {
        const int lane = laneOf(ph);
        const int k = lane == 0 ? 0 : slot[static_cast<std::size_t>(stages > 8 ? 1 : lane)];
        const double top = kPad + ph.stage * rowH + (lane == 0 ? 0 : laneH * (k + 1));
        const double h = (lane == 0 ? 2 * laneH : laneH) - 1;
        const double x0 = xOf(ph.start), x1 = std::max(xOf(ph.end), x0 + 1);
        QColor c = kindColor(ph.kind);
        const bool running = t >= 0 && ph.start <= t && t < ph.end;
        if (t >= 0 && !running)
            c.setAlphaF(0.45);
        p.fillRect(QRectF(x0, top, x1 - x0, h), c);
        if (running && x1 - x0 > 2) {
            p.setPen(QPen(text, 1.5));
            p.drawRect(QRectF(x0, top, x1 - x0, h));
        }
    }
    if (t >= 0) {
        const double x = xOf(t);
        p.setPen(QPen(QColor(0xd0, 0x1c, 0x1c), 2));
        p.drawLine(QPointF(x, 0), QPointF(x, axisY));
    }
}

void GanttView::mousePressEvent(QMouseEvent *e)
{
    m_view->setPlaybackTime(timeAt(e->position().x()));
}

void GanttView::mouseMoveEvent(QMouseEvent *e)
{
    if (e->buttons() & Qt::LeftButton)
        m_view->setPlaybackTime(timeAt(e->position().x()));
}

TimelinePanel::TimelinePanel(Document *document, ViewState *view, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_view(view)
    , m_gantt(new GanttView(document, view, this))
    , m_play(new QToolButton(this))
    , m_average(new QToolButton(this))
    , m_speed(new QComboBox(this))
    , m_status(new QLabel(this))
{
    setObjectName("TimelinePanel");
    m_play->setObjectName("TimelinePlay");
    m_play->setToolTip(tr("Play the step / pause"));
    m_average->setText(tr("Step average"));
    m_average->setToolTip(tr("Show each link's load averaged over the step"));
    m_speed->setObjectName("TimelineSpeed");
    for (double s : {0.25, 0.5, 1.0, 2.0, 4.0})
        m_speed->addItem(QString::number(s) + QStringLiteral("\u00d7"), s);
    m_speed->setCurrentIndex(2);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 0);
    bar->addWidget(m_play);
    bar->addWidget(m_speed);
    bar->addWidget(m_average);
    bar->addWidget(m_status, 1);
    auto *box = new QVBoxLayout(this);
    box->setContentsMargins(0, 0, 0, 0);
    box->setSpacing(2);
    box->addLayout(bar);
    box->addWidget(m_gantt, 1);

    connect(m_play, &QToolButton::clicked, this, [this] {
        if (m_view->isPlaying())
            m_view->pause();
        else
            m_view->play();
    });
    connect(m_average, &QToolButton::clicked, m_view, &ViewState::clearPlaybackTime);
    connect(m_speed, &QComboBox::currentIndexChanged, this, [this] {
        m_view->setSpeed(m_speed->currentData().toDouble());
    });
    // The step's length is the evaluation's: the view state follows it, and says so.
    connect(m_document, &Document::evaluationChanged, this, &TimelinePanel::syncPlayback);
    connect(m_view, &ViewState::changed, this, &TimelinePanel::syncPlayback);
    syncPlayback();
}

TimelinePanel::~TimelinePanel() = default;

QString TimelinePanel::runningText() const
{
    const engine::StepTimeline &tl = m_document->evaluation().timeline;
    if (m_view->moment().empty() || tl.empty())
        return {};
    QStringList names;
    for (int i : m_view->moment().running) {
        if (static_cast<std::size_t>(i) >= tl.phases.size())
            continue; // a moment of the evaluation before (the view state hears of it next)
        const Phase &p = tl.phases[static_cast<std::size_t>(i)];
        if (p.stage != 0 && tl.stages > 1)
            continue; // stage 0's, for one line; the chart shows every stage's
        names << QString::fromStdString(p.name);
    }
    return names.join(QStringLiteral(" \u00b7 "));
}

void TimelinePanel::syncPlayback()
{
    m_play->setText(m_view->isPlaying() ? tr("Pause") : tr("Play"));
    m_play->setEnabled(m_view->stepLength() > 0);
    const double t = m_view->playbackTime();
    if (t < 0)
        m_status->setText(tr("Step %1 \u00b7 links show the step average \u00b7 click the chart "
                             "to scrub")
                                  .arg(seconds(m_view->stepLength())));
    else
        m_status->setText(tr("%1 of %2 \u00b7 %3")
                                  .arg(seconds(t), seconds(m_view->stepLength()), runningText()));
    m_gantt->update();
}

} // namespace railyard
