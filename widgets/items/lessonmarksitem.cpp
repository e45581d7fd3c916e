#include "lessonmarksitem.h"

#include "document/lessonframe.h"
#include "scene/clustergeometry.h"

#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace railyard {

namespace {
const QColor kSend{0xea, 0x58, 0x0c};    // orange: sends in this step
const QColor kReceive{0xdb, 0x27, 0x77}; // pink: receives in this step
const QColor kDone{0x05, 0x96, 0x69};    // the share of the result held
constexpr double kMinPx = 6;
} // namespace

LessonMarksItem::LessonMarksItem(const ClusterGeometry &geometry)
    : m_geometry(geometry)
{
    setZValue(12);
    setVisible(false);
    setAcceptedMouseButtons(Qt::NoButton);
}

void LessonMarksItem::setFrame(const LessonFrame *frame)
{
    prepareGeometryChange();
    m_marks.clear();
    m_arrows.clear();
    m_caption.clear();
    m_bounds = QRectF();
    if (frame) {
        std::map<int, std::size_t> index;
        const auto mark = [&](int device) -> Mark & {
            auto [it, added] = index.emplace(device, m_marks.size());
            if (added) {
                m_marks.push_back({});
                m_marks.back().rect = m_geometry.deviceRect(device);
            }
            return m_marks[it->second];
        };
        for (int d : frame->senders)
            mark(d).sends = true;
        for (int d : frame->receivers)
            mark(d).receives = true;
        for (const LessonFrame::Badge &b : frame->badges) {
            Mark &m = mark(b.device);
            m.badge = b.text;
            m.progress = b.progress;
        }
        m_caption = frame->caption;
        for (const LessonFrame::Arrow &a : frame->arrows)
            if (a.from != a.to)
                m_arrows.emplace_back(m_geometry.deviceRect(a.from), m_geometry.deviceRect(a.to));
        for (const Mark &m : m_marks)
            m_bounds = m_bounds.united(m.rect);
        // Room for rings, badges and bars drawn at a fixed size on screen when zoomed out.
        if (!m_bounds.isNull())
            m_bounds.adjust(-600, -600, 600, 600);
    }
    setVisible(!m_marks.empty());
    update();
}

void LessonMarksItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    // Everything in device pixels: rings, badges and bars keep their size at any zoom.
    const QTransform world = painter->worldTransform();
    painter->save();
    painter->resetTransform();
    painter->setRenderHint(QPainter::Antialiasing, true);
    QFont font = painter->font();
    font.setPixelSize(11);
    font.setBold(true);
    painter->setFont(font);
    const QFontMetrics fm(font);
    const QRect clip = painter->viewport();
    double top = drawArrows(painter, world);
    QRectF marked;
    for (const Mark &m : m_marks) {
        QRectF r = world.mapRect(m.rect);
        if (r.width() < kMinPx)
            r.adjust(-(kMinPx - r.width()) / 2, 0, (kMinPx - r.width()) / 2, 0);
        if (r.height() < kMinPx)
            r.adjust(0, -(kMinPx - r.height()) / 2, 0, (kMinPx - r.height()) / 2);
        marked = marked.united(r);
        if (!r.adjusted(-40, -40, 40, 40).intersects(clip))
            continue;
        const bool large = r.width() >= 28;
        painter->setBrush(Qt::NoBrush);
        if (m.sends) {
            painter->setPen(QPen(kSend, large ? 3 : 2));
            painter->drawRoundedRect(r.adjusted(-3, -3, 3, 3), 4, 4);
        }
        if (m.receives) {
            QPen pen(kReceive, large ? 2.5 : 1.5, Qt::DashLine);
            painter->setPen(pen);
            painter->drawRoundedRect(r.adjusted(-7, -7, 7, 7), 6, 6);
        }
        if (!large)
            continue;
        if (m.progress >= 0) {
            const QRectF bar(r.left(), r.bottom() + 10, r.width(), 6);
            painter->setPen(QPen(QColor(0x9c, 0xa3, 0xaf), 1));
            painter->setBrush(Qt::white);
            painter->drawRect(bar);
            painter->setPen(Qt::NoPen);
            painter->setBrush(kDone);
            painter->drawRect(QRectF(bar.left(), bar.top(), bar.width() * m.progress, bar.height()));
        }
        if (!m.badge.isEmpty()) {
            const int w = fm.horizontalAdvance(m.badge) + 10;
            const QRectF badge(r.right() - w + 6, r.top() - 10, w, fm.height() + 4);
            painter->setPen(QPen(Qt::white, 1.5));
            painter->setBrush(m.sends ? kSend : kReceive);
            painter->drawRoundedRect(badge, 7, 7);
            painter->setPen(Qt::white);
            painter->drawText(badge, Qt::AlignCenter, m.badge);
        }
    }
    // The step's name over the marked devices and their arrows, where the eye already is.
    if (!m_caption.isEmpty() && !marked.isNull()) {
        QFont big = font;
        big.setPixelSize(13);
        painter->setFont(big);
        const QFontMetrics fb(big);
        top = std::min(top, marked.top() - 12);
        const QRectF box(std::max(marked.left(), double(clip.left()) + 8),
                         std::max(top - fb.height() - 14, double(clip.top()) + 4),
                         fb.horizontalAdvance(m_caption) + 16,
                         fb.height() + 8);
        painter->setPen(QPen(kSend, 1.5));
        painter->setBrush(QColor(255, 255, 255, 235));
        painter->drawRoundedRect(box, 5, 5);
        painter->setPen(QColor(0x1f, 0x29, 0x37));
        painter->drawText(box, Qt::AlignCenter, m_caption);
    }
    painter->restore();
}

double LessonMarksItem::drawArrows(QPainter *painter, const QTransform &world) const
{
    double top = std::numeric_limits<double>::infinity();
    // An arc from the top of the sender to the top of the receiver, higher the farther apart
    // they are, with its head at the receiver: which GPU hands what to which, whatever switch
    // the bytes cross on the way.
    QPen halo(QColor(255, 255, 255, 220), 4.5);
    halo.setCapStyle(Qt::RoundCap);
    QPen pen(kSend, 2);
    pen.setCapStyle(Qt::RoundCap);
    for (const auto &[fromRect, toRect] : m_arrows) {
        const QRectF a = world.mapRect(fromRect), b = world.mapRect(toRect);
        // Devices in one row (GPU to GPU): an arc over the row. Devices in different rows (a
        // GPU and its NVSwitch below): from the facing edges, nearly straight.
        const bool sameRow = std::abs(a.center().y() - b.center().y())
                             < std::max(a.height(), b.height());
        QPointF p0, p1, control;
        if (sameRow) {
            p0 = QPointF(a.center().x(), a.top() - 4);
            p1 = QPointF(b.center().x(), b.top() - 4);
            const double lift = std::min(0.35 * QLineF(p0, p1).length(), 160.0) + 10;
            control = QPointF((p0.x() + p1.x()) / 2, std::min(p0.y(), p1.y()) - lift);
        } else {
            const bool down = b.center().y() > a.center().y();
            p0 = QPointF(a.center().x(), down ? a.bottom() + 3 : a.top() - 3);
            p1 = QPointF(b.center().x(), down ? b.top() - 3 : b.bottom() + 3);
            control = (p0 + p1) / 2 + QPointF(0, down ? -6 : 6);
        }
        if (QLineF(p0, p1).length() < 4)
            continue;
        QPainterPath path(p0);
        path.quadTo(control, p1);
        top = std::min(top, path.boundingRect().top());
        painter->setBrush(Qt::NoBrush);
        painter->setPen(halo);
        painter->drawPath(path);
        painter->setPen(pen);
        painter->drawPath(path);
        // The head, along the curve's last direction.
        const QPointF dir = p1 - control;
        const double len = std::hypot(dir.x(), dir.y());
        if (len <= 0)
            continue;
        const QPointF u = dir / len, n(-u.y(), u.x());
        const QPointF tip = p1, base = p1 - u * 9;
        const QPolygonF head({tip, base + n * 4.5, base - n * 4.5});
        painter->setPen(QPen(Qt::white, 1));
        painter->setBrush(kSend);
        painter->drawPolygon(head);
    }
    return top;
}

} // namespace railyard
