#include "faultmarksitem.h"

#include "scene/clustergeometry.h"
#include "scene/style.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

namespace railyard {

namespace {
constexpr double kMinPx = 8;   // a marked device is never drawn smaller than this on screen
constexpr double kCrossPx = 7; // half the size of a link's cross on screen
constexpr int kLabelPx = 11;   // the labels' text
constexpr std::size_t kMaxTakenSegments = 20000; // a rail down at 16k GPUs: a readable share

QString rateText(double fraction)
{
    const double pct = 100 * fraction;
    return QStringLiteral("%1%").arg(pct, 0, 'f', std::abs(pct - std::round(pct)) < 0.05 ? 0 : 1);
}

QString slowdownText(double x)
{
    return QStringLiteral("%1x").arg(x, 0, 'g', 3);
}

// The point halfway along a route.
QPointF midpoint(const QPolygonF &path)
{
    if (path.isEmpty())
        return {};
    double total = 0;
    for (int i = 1; i < path.size(); ++i)
        total += QLineF(path[i - 1], path[i]).length();
    double left = total / 2;
    for (int i = 1; i < path.size(); ++i) {
        const QLineF seg(path[i - 1], path[i]);
        if (seg.length() >= left && seg.length() > 0)
            return seg.pointAt(left / seg.length());
        left -= seg.length();
    }
    return path.back();
}

QPen cosmetic(const QColor &colour, double width, Qt::PenStyle style = Qt::SolidLine)
{
    QPen pen(colour, width, style, Qt::RoundCap, Qt::RoundJoin);
    pen.setCosmetic(true);
    return pen;
}

} // namespace

FaultMarksItem::FaultMarksItem(const ClusterGeometry &geometry)
    : m_geometry(geometry)
{
    setZValue(7.2); // over racks, rails and location names, under the graph and the selection
    setAcceptedMouseButtons(Qt::NoButton);
    const engine::Topology &t = geometry.topology();
    // Per device and per link: down, or what is left (the worst fault on it wins).
    std::map<int, std::pair<bool, QString>> devices, links;
    std::set<int> taken;
    for (const engine::ResolvedFault &rf : t.faults()) {
        const engine::Fault &f = rf.fault;
        const bool down = f.state == engine::FaultState::Down;
        const QString label = f.slowdown ? slowdownText(*f.slowdown)
                              : f.rate   ? rateText(*f.rate)
                                         : QString();
        if (f.target == engine::FaultTarget::Link) {
            for (int l : rf.links) {
                const double health = t.links()[static_cast<std::size_t>(l)].health;
                auto &mark = links[l];
                mark.first = mark.first || health <= 0;
                if (!mark.first)
                    mark.second = rateText(health);
            }
            continue;
        }
        for (int d : rf.devices) {
            auto &mark = devices[d];
            mark.first = mark.first || down;
            if (!mark.first)
                mark.second = label;
        }
        if (down)
            taken.insert(rf.links.begin(), rf.links.end());
    }
    for (const auto &[d, mark] : devices)
        addDevice(d, mark.first, mark.second);
    for (const auto &[l, mark] : links)
        addLink(l, mark.first, mark.second);

    // The links a failed device takes with it, drawn once per shared segment.
    std::set<std::array<long long, 4>> seen;
    for (int l : taken) {
        if (links.count(l) != 0)
            continue;
        const QPolygonF path = geometry.linkPath(l);
        m_bounds = m_bounds.united(path.boundingRect());
        for (int i = 1; i < path.size() && m_takenLinks.size() < kMaxTakenSegments; ++i) {
            std::array<long long, 4> k = {std::llround(path[i - 1].x() * 10),
                                          std::llround(path[i - 1].y() * 10),
                                          std::llround(path[i].x() * 10),
                                          std::llround(path[i].y() * 10)};
            if (std::make_pair(k[2], k[3]) < std::make_pair(k[0], k[1]))
                k = {k[2], k[3], k[0], k[1]};
            if (seen.insert(k).second)
                m_takenLinks.emplace_back(path[i - 1], path[i]);
        }
    }
    // Room for the marks' least size on screen when zoomed far out.
    m_bounds = m_bounds.isNull() ? QRectF() : m_bounds.adjusted(-400, -400, 400, 400);
    setVisible(!m_bounds.isNull());
}

void FaultMarksItem::addDevice(int device, bool down, const QString &label)
{
    Mark m;
    m.rect = m_geometry.deviceRect(device);
    m.at = m.rect.center();
    m.label = label;
    m_bounds = m_bounds.united(m.rect);
    (down ? m_downDevices : m_degradedDevices).push_back(std::move(m));
}

void FaultMarksItem::addLink(int link, bool down, const QString &label)
{
    Mark m;
    m.path = m_geometry.linkPath(link);
    m.at = midpoint(m.path);
    m.label = label;
    m_bounds = m_bounds.united(m.path.boundingRect());
    (down ? m_downLinks : m_degradedLinks).push_back(std::move(m));
}

QStringList FaultMarksItem::labels() const
{
    QStringList out;
    for (const auto *marks : {&m_degradedDevices, &m_degradedLinks})
        for (const Mark &m : *marks)
            out << m.label;
    return out;
}

void FaultMarksItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const double lod = std::max(1e-6, option->levelOfDetailFromTransform(painter->worldTransform()));
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setBrush(Qt::NoBrush);
    QColor faded = style::kFaultDown;
    faded.setAlpha(190);

    if (!m_takenLinks.empty()) {
        painter->setPen(cosmetic(faded, 1.5, Qt::DashLine));
        painter->drawLines(m_takenLinks.data(), static_cast<int>(m_takenLinks.size()));
    }
    // A degraded link: a hatched band along its route.
    for (const Mark &m : m_degradedLinks) {
        painter->setPen(cosmetic(QColor(255, 255, 255, 220), 9));
        painter->drawPolyline(m.path);
        QPen hatch(QBrush(style::kFaultDegraded, Qt::BDiagPattern), 9);
        hatch.setCosmetic(true);
        hatch.setCapStyle(Qt::FlatCap);
        painter->setPen(hatch);
        painter->drawPolyline(m.path);
        painter->setPen(cosmetic(style::kFaultDegraded, 1.5));
        painter->drawPolyline(m.path);
    }
    // A link down: dashed red, crossed out halfway.
    for (const Mark &m : m_downLinks) {
        painter->setPen(cosmetic(QColor(255, 255, 255, 220), 6));
        painter->drawPolyline(m.path);
        painter->setPen(cosmetic(style::kFaultDown, 2.5, Qt::DashLine));
        painter->drawPolyline(m.path);
    }

    // Devices, at least kMinPx on screen.
    const double minUnits = kMinPx / lod;
    const auto grown = [&](QRectF r) {
        const double pad = 1.5 / lod;
        r.adjust(-pad, -pad, pad, pad);
        if (r.width() < minUnits)
            r.adjust(-(minUnits - r.width()) / 2, 0, (minUnits - r.width()) / 2, 0);
        if (r.height() < minUnits)
            r.adjust(0, -(minUnits - r.height()) / 2, 0, (minUnits - r.height()) / 2);
        return r;
    };
    for (const Mark &m : m_degradedDevices) {
        const QRectF r = grown(m.rect);
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(255, 255, 255, 150));
        painter->drawRect(r);
        painter->setBrush(QBrush(style::kFaultDegraded, Qt::BDiagPattern));
        painter->drawRect(r);
        painter->setBrush(Qt::NoBrush);
        painter->setPen(cosmetic(style::kFaultDegraded, 2.5));
        painter->drawRect(r);
    }
    QColor tint = style::kFaultDown;
    tint.setAlpha(45);
    for (const Mark &m : m_downDevices) {
        const QRectF r = grown(m.rect);
        painter->setPen(cosmetic(style::kFaultDown, 2.5));
        painter->setBrush(tint);
        painter->drawRect(r);
        painter->drawLine(r.topLeft(), r.bottomRight());
        painter->drawLine(r.topRight(), r.bottomLeft());
    }
    painter->setBrush(Qt::NoBrush);

    // The crosses on links and the labels, a fixed size on screen (Plates draws in device
    // coordinates: the scene's points are mapped by the transform it found).
    const QTransform world = painter->worldTransform();
    paint::Plates plates(painter, &m_plates);
    const QRectF visible = plates.visibleScene().adjusted(-50 / lod, -50 / lod, 50 / lod, 50 / lod);
    for (const Mark &m : m_downLinks) {
        if (!visible.contains(m.at))
            continue;
        const QPointF c = world.map(m.at);
        const QPointF a(kCrossPx, kCrossPx), b(kCrossPx, -kCrossPx);
        painter->setPen(cosmetic(QColor(255, 255, 255, 230), 6));
        painter->drawLine(c - a, c + a);
        painter->drawLine(c - b, c + b);
        painter->setPen(cosmetic(style::kFaultDown, 3));
        painter->drawLine(c - a, c + a);
        painter->drawLine(c - b, c + b);
    }
    for (const auto *marks : {&m_degradedLinks, &m_degradedDevices})
        for (const Mark &m : *marks)
            if (!m.label.isEmpty() && visible.contains(m.at))
                plates.draw(m.at, m.label, kLabelPx, Qt::AlignCenter, paint::Plates::Style::Light);
}

} // namespace railyard
