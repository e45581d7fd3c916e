#include "ganttview.h"

#include "base/units.h"
#include "charts/stepchart.h"
#include "document/document.h"
#include "document/viewstate.h"

#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>

namespace railyard {

using engine::Phase;
using engine::PhaseKind;

namespace {

constexpr int kLabelW = 64; // "stage 12"
constexpr int kPad = 6;
constexpr int kLanes = 5;

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

// The rows' geometry: one row per stage; in it the critical path (twice a lane's height) and the
// communication lanes the step uses (many stages: one communication lane).
struct GanttView::Rows
{
    int stages = 1;
    std::array<int, kLanes> slot{}; // a lane's place under the critical path
    int commLanes = 0;
    bool oneCommLane = false;
    double axisH = 0;
    double rowH = 0;
    double laneH = 0;

    double top(int stage) const { return kPad + stage * rowH; }
    // The vertical extent of a phase's bar.
    std::pair<double, double> span(const Phase &p) const
    {
        const int lane = laneOf(p);
        const int k = lane == 0 ? 0 : slot[static_cast<std::size_t>(oneCommLane ? 1 : lane)];
        const double y = top(p.stage) + (lane == 0 ? 0 : laneH * (k + 1));
        return {y, (lane == 0 ? 2 * laneH : laneH) - 1};
    }
};

GanttView::Rows GanttView::rows() const
{
    Rows r;
    const engine::StepTimeline &tl = m_view->timeline();
    r.stages = std::max(1, tl.stages);
    // Only the lanes this step uses (a step without TP has no TP lane); many stages: the
    // critical path and one communication lane.
    // Which lanes the phases use, counted once per timeline: rows() runs for every phase's box
    // (hover, clicks, painting), and thousands of phases made each box cost a pass over all.
    if (m_lanesUsed.empty() || m_lanesOf != tl.phases.data() || m_lanesCount != tl.phases.size()) {
        m_lanesUsed.assign(kLanes, 0);
        m_lanesUsed[0] = 1;
        for (const Phase &ph : tl.phases)
            m_lanesUsed[static_cast<std::size_t>(laneOf(ph))] = 1;
        m_lanesOf = tl.phases.data();
        m_lanesCount = tl.phases.size();
    }
    std::array<bool, kLanes> used{};
    for (std::size_t l = 0; l < used.size(); ++l)
        used[l] = m_lanesUsed[l] != 0;
    r.oneCommLane = r.stages > 8;
    if (r.oneCommLane) {
        std::fill(used.begin() + 1, used.end(), false);
        used[1] = true;
    }
    for (int l = 1; l < kLanes; ++l)
        r.slot[static_cast<std::size_t>(l)] = used[static_cast<std::size_t>(l)] ? ++r.commLanes : 0;
    r.axisH = QFontMetricsF(font()).height() + 7;
    r.rowH = (height() - 2 * kPad - r.axisH) / r.stages;
    // A gap under each row.
    r.laneH = r.rowH * 0.88 / (r.commLanes + 2);
    return r;
}

GanttView::GanttView(Document *document, ViewState *view, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_view(view)
{
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::ClickFocus); // + - 0 after a click in the chart
    setToolTip(tr("Click or drag to scrub; wheel or +/- to zoom, Shift+wheel to pan, 0 to fit"));
    // A new evaluation or the other serving timeline: the lanes are counted again.
    connect(m_document, &Document::evaluationChanged, this, [this] { m_lanesUsed.clear(); });
    connect(m_view, &ViewState::changed, this, [this](ViewState::Changes what) {
        if (what & ViewState::Timeline)
            m_lanesUsed.clear();
    });
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

double GanttView::visibleSpan() const
{
    return m_view->timeline().stepS / m_zoom;
}

double GanttView::visibleStart() const
{
    const double step = m_view->timeline().stepS;
    return std::clamp(m_start, 0.0, std::max(0.0, step - visibleSpan()));
}

double GanttView::xOf(double t) const
{
    const double span = visibleSpan();
    const double w = std::max(1, width() - kLabelW - 2 * kPad);
    return kLabelW + kPad + (span > 0 ? (t - visibleStart()) / span : 0.0) * w;
}

double GanttView::timeAt(double x) const
{
    const double step = m_view->timeline().stepS;
    const double w = std::max(1, width() - kLabelW - 2 * kPad);
    return std::clamp(visibleStart() + (x - kLabelW - kPad) / w * visibleSpan(), 0.0, step);
}

void GanttView::setZoom(double zoom, double anchor)
{
    zoom = std::clamp(zoom, 1.0, kMaxZoom);
    const double x = xOf(anchor);
    m_zoom = zoom;
    // Keep `anchor` under the same x.
    const double w = std::max(1, width() - kLabelW - 2 * kPad);
    m_start = anchor - (x - kLabelW - kPad) / w * visibleSpan();
    m_start = visibleStart();
    update();
    Q_EMIT viewChanged();
}

void GanttView::setVisibleStart(double seconds)
{
    const double before = visibleStart();
    m_start = seconds;
    m_start = visibleStart();
    if (m_start != before) {
        update();
        Q_EMIT viewChanged();
    }
}

void GanttView::fit()
{
    m_zoom = 1;
    m_start = 0;
    update();
    Q_EMIT viewChanged();
}

QString GanttView::stepLabel() const
{
    if (!m_document || !m_document->isServing())
        return tr("step");
    if (m_view->servingTimeline() == ViewState::ServingTimeline::Request)
        return tr("request");
    const QString full = tr("decode step");
    return QFontMetricsF(font()).horizontalAdvance(full) <= kLabelW - 2 ? full : tr("decode");
}

int GanttView::labelStride() const
{
    const Rows r = rows();
    const double need = QFontMetricsF(font()).height() * 1.05;
    int stride = 1;
    while (stride < r.stages && stride * r.rowH < need)
        stride *= 2;
    return stride;
}

QRectF GanttView::phaseRect(int index) const
{
    const engine::StepTimeline &tl = m_view->timeline();
    if (index < 0 || index >= static_cast<int>(tl.phases.size()))
        return {};
    const Rows r = rows();
    const Phase &ph = tl.phases[static_cast<std::size_t>(index)];
    const auto [top, h] = r.span(ph);
    const double x0 = xOf(ph.start), x1 = std::max(xOf(ph.end), x0 + 1);
    return QRectF(x0, top, x1 - x0, std::max(1.0, h));
}

int GanttView::phaseAt(const QPointF &pos) const
{
    const engine::StepTimeline &tl = m_view->timeline();
    if (pos.x() < kLabelW)
        return -1;
    int hit = -1;
    double nearest = kMinTargetPx / 2 + 1e-9;
    for (int i = 0; i < static_cast<int>(tl.phases.size()); ++i) {
        const QRectF box = phaseRect(i);
        // Rows a pixel or two tall take a click anywhere in their row.
        if (pos.y() < box.top() - 1 || pos.y() > box.bottom() + 1)
            continue;
        if (box.left() <= pos.x() && pos.x() <= box.right())
            return i;
        // A narrow phase: within half the minimum target of its middle.
        if (box.width() < kMinTargetPx) {
            const double d = std::abs(pos.x() - box.center().x());
            if (d < nearest) {
                nearest = d;
                hit = i;
            }
        }
    }
    return hit;
}

void GanttView::scrubTo(const QPointF &pos)
{
    double t = timeAt(pos.x());
    // A click beside a phase too narrow to hit lands inside it.
    if (const int i = phaseAt(pos); i >= 0) {
        const Phase &ph = m_view->timeline().phases[static_cast<std::size_t>(i)];
        if (t < ph.start || t >= ph.end)
            t = (ph.start + ph.end) / 2;
    }
    m_view->setPlaybackTime(t);
}

void GanttView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const engine::StepTimeline &tl = m_view->timeline();
    if (tl.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No step to play: the step cannot be priced."));
        return;
    }
    const Rows r = rows();
    const int stages = r.stages;
    const QFontMetricsF fm(font());
    const double t = m_view->playbackTime();
    p.setFont(font());
    const QColor text = palette().color(QPalette::Text);
    const QColor faint = palette().color(QPalette::PlaceholderText);
    const bool laneNames = stages == 1 && r.laneH >= fm.height() * 0.8;
    if (laneNames) {
        // One stage: name the lanes instead ("critical path", then each communication).
        const double top = r.top(0);
        p.setPen(text);
        p.drawText(QRectF(0, top, kLabelW, 2 * r.laneH),
                   Qt::AlignVCenter | Qt::AlignRight,
                   stepLabel());
        p.setPen(faint);
        static const char *const names[kLanes] = {"", "TP", "CP/EP", "PP", "DP"};
        for (int l = 1; l < kLanes; ++l)
            if (const int k = r.slot[static_cast<std::size_t>(l)]; k > 0)
                p.drawText(QRectF(0, top + r.laneH * (k + 1), kLabelW, r.laneH),
                           Qt::AlignVCenter | Qt::AlignRight,
                           tr(names[l]));
    } else {
        // Every stride-th stage, centred on its row, with a faint rule at its top when rows
        // are too thin to have a label each.
        const int stride = labelStride();
        const double labelH = fm.height();
        for (int s = 0; s < stages; s += stride) {
            const double mid = r.top(s) + r.rowH / 2;
            const double y = std::clamp(mid - labelH / 2, 0.0, r.top(stages) - labelH);
            p.setPen(text);
            p.drawText(QRectF(0, y, kLabelW - 4, labelH),
                       Qt::AlignVCenter | Qt::AlignRight,
                       stages > 1 ? tr("stage %1").arg(s) : stepLabel());
            if (stride > 1) {
                p.setPen(QPen(faint, 0, Qt::DotLine));
                p.drawLine(QPointF(kLabelW, r.top(s)), QPointF(width() - kPad, r.top(s)));
            }
        }
    }
    // The time axis under the rows: a few round ticks over the part in view.
    const double axisY = r.top(stages);
    const double from = visibleStart(), to = from + visibleSpan();
    const double tick = niceTick(visibleSpan() / 5);
    p.setPen(faint);
    p.drawLine(QPointF(xOf(from), axisY + 1), QPointF(xOf(to), axisY + 1));
    for (double v = std::ceil(from / tick - 1e-9) * tick; v <= to * 1.0001; v += tick) {
        const double x = xOf(v);
        p.drawLine(QPointF(x, axisY + 1), QPointF(x, axisY + 4));
        const QString label = seconds(v);
        const double w = fm.horizontalAdvance(label);
        if (x + w / 2 <= width())
            p.drawText(QPointF(std::max(x - w / 2, double(kLabelW)), axisY + 6 + fm.ascent()),
                       label);
    }
    // The phases, clipped to the chart (zoomed in, they run past its edges).
    p.save();
    p.setClipRect(QRectF(kLabelW, 0, width() - kLabelW, axisY));
    p.setRenderHint(QPainter::Antialiasing, false);
    for (int i = 0; i < static_cast<int>(tl.phases.size()); ++i) {
        const Phase &ph = tl.phases[static_cast<std::size_t>(i)];
        if (ph.end < from || ph.start > to)
            continue;
        const QRectF box = phaseRect(i);
        QColor c = kindColor(ph.kind);
        const bool running = t >= 0 && ph.start <= t && t < ph.end;
        if (t >= 0 && !running)
            c.setAlphaF(0.45);
        p.fillRect(box, c);
        if (running && box.width() > 2) {
            p.setPen(QPen(text, 1.5));
            p.drawRect(box);
        }
    }
    p.restore();
    if (t >= from && t <= to) {
        const double x = xOf(t);
        p.setPen(QPen(QColor(0xd0, 0x1c, 0x1c), 2));
        p.drawLine(QPointF(x, 0), QPointF(x, axisY));
    }
}

void GanttView::mousePressEvent(QMouseEvent *e)
{
    if (e->button() == Qt::LeftButton)
        scrubTo(e->position());
}

void GanttView::mouseMoveEvent(QMouseEvent *e)
{
    if (e->buttons() & Qt::LeftButton)
        m_view->setPlaybackTime(timeAt(e->position().x()));
}

void GanttView::wheelEvent(QWheelEvent *e)
{
    const QPoint d = e->angleDelta();
    // Shift+wheel or a sideways wheel pans; the wheel zooms around the cursor.
    if ((e->modifiers() & Qt::ShiftModifier) || std::abs(d.x()) > std::abs(d.y())) {
        const int notches = (std::abs(d.x()) > std::abs(d.y()) ? d.x() : d.y());
        setVisibleStart(visibleStart() - notches / 120.0 * visibleSpan() / 8);
    } else if (d.y() != 0) {
        setZoom(m_zoom * std::pow(1.25, d.y() / 120.0), timeAt(e->position().x()));
    }
    e->accept();
}

void GanttView::keyPressEvent(QKeyEvent *e)
{
    const double centre = visibleStart() + visibleSpan() / 2;
    switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: setZoom(m_zoom * 1.5, centre); return;
    case Qt::Key_Minus: setZoom(m_zoom / 1.5, centre); return;
    case Qt::Key_0:
    case Qt::Key_Home: fit(); return;
    case Qt::Key_Left: setVisibleStart(visibleStart() - visibleSpan() / 8); return;
    case Qt::Key_Right: setVisibleStart(visibleStart() + visibleSpan() / 8); return;
    default: QWidget::keyPressEvent(e);
    }
}

bool GanttView::event(QEvent *e)
{
    if (e->type() == QEvent::ToolTip) {
        // The phase under the cursor: its name, stage and when it runs.
        auto *help = static_cast<QHelpEvent *>(e);
        const int i = phaseAt(help->pos());
        if (i < 0) {
            QToolTip::showText(help->globalPos(), toolTip(), this);
            return true;
        }
        const engine::StepTimeline &tl = m_view->timeline();
        const Phase &ph = tl.phases[static_cast<std::size_t>(i)];
        QToolTip::showText(help->globalPos(),
                           tr("<b>%1</b><br>stage %2 \u00b7 %3 to %4 (%5)%6")
                                   .arg(QString::fromStdString(ph.name).toHtmlEscaped())
                                   .arg(ph.stage)
                                   .arg(seconds(ph.start), seconds(ph.end), seconds(ph.duration()))
                                   .arg(ph.exposed ? tr("<br>on the critical path")
                                                   : tr("<br>beside compute")),
                           this);
        return true;
    }
    return QWidget::event(e);
}

} // namespace railyard
