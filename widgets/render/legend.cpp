#include "legend.h"

#include "document/groupref.h"
#include "scene/canvasstate.h"
#include "scene/style.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QLinearGradient>
#include <QLocale>
#include <QPainter>

#include <algorithm>
#include <array>

namespace railyard::render {

using engine::DeviceKind;
using engine::LinkKind;

namespace {

constexpr int kRowH = 20;
constexpr int kPad = 10; // inside the box, left and right
constexpr int kMaxSwatches = 16;
constexpr int kGradientW = 150;
constexpr int kSwatchW = 26;

QString tr(const char *text)
{
    return QCoreApplication::translate("Legend", text);
}

void drawGradient(QPainter *painter, const QRect &r, const std::function<QColor(double)> &colour)
{
    QLinearGradient g(r.left(), 0, r.right(), 0);
    for (int i = 0; i <= 10; ++i)
        g.setColorAt(i / 10.0, colour(i / 10.0));
    painter->setPen(Qt::NoPen);
    painter->setBrush(g);
    painter->drawRoundedRect(QRectF(r.left(), r.top() + 5, r.width(), kRowH - 10), 3, 3);
}

} // namespace

Legend::Legend(const engine::Topology &topology,
               const CanvasState &state,
               const QFont &font,
               int maxWidth)
    : m_font(font)
{
    m_font.setPixelSize(12);
    m_bold = m_font;
    m_bold.setBold(true);
    m_tiny = m_font;
    m_tiny.setPixelSize(10);
    m_tiny.setBold(true);
    build(topology, state, maxWidth);
    place(maxWidth);
}

Legend::Piece Legend::textPiece(const QString &text, const QColor &colour, int gap, int avail) const
{
    // A note wider than the room left wraps at word boundaries inside its own rectangle.
    const QFontMetrics fm(m_font);
    Piece p;
    p.text = text;
    p.font = m_font;
    p.gap = gap;
    p.width = fm.horizontalAdvance(text) + 2;
    p.height = kRowH;
    p.textFlags = Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap;
    if (p.width > avail) {
        const QRect wrapped = fm.boundingRect(QRect(0, 0, avail, 1000), Qt::TextWordWrap, text);
        p.width = std::min(avail, wrapped.width() + 2);
        p.height = std::max(kRowH, wrapped.height() + 4);
    }
    p.draw = [colour, text](QPainter *painter, const QRect &r) {
        painter->setPen(colour);
        painter->drawText(r, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, text);
    };
    return p;
}

void Legend::build(const engine::Topology &t, const CanvasState &state, int maxWidth)
{
    // The link kinds present, in their enum's order (counted by the topology: there are
    // 141,000 links at 16,384 GPUs, and this runs on every repaint).
    std::vector<LinkKind> kinds;
    for (LinkKind k :
         {LinkKind::NvLink, LinkKind::Pcie, LinkKind::Ib, LinkKind::Ethernet, LinkKind::C2C})
        if (t.linkCountOf(k) > 0)
            kinds.push_back(k);
    std::vector<DeviceKind> devices;
    for (DeviceKind k : {DeviceKind::Gpu,
                         DeviceKind::NvSwitch,
                         DeviceKind::PcieSwitch,
                         DeviceKind::Cpu,
                         DeviceKind::Nic,
                         DeviceKind::Leaf,
                         DeviceKind::Spine,
                         DeviceKind::Core})
        if (t.countOf(k) > 0)
            devices.push_back(k);
    if (kinds.empty() && devices.empty())
        return;

    const bool loads = state.linkLoad() || state.lesson;
    const bool groups = state.colouring();
    Row links{loads ? tr("Link load") : tr("Links"), {}, {}};
    Row devs{tr("Devices"), {}, {}};
    Row grp{groups ? (state.groupHeading.isEmpty() ? kindNoun(*state.colourBy()) + tr("s")
                                                   : state.groupHeading)
                   : QString(),
            {},
            {}};

    const QFontMetrics fmb(m_bold), fm(m_font);
    Row graph{state.graphCaption.isEmpty() ? QString() : tr("NCCL graph"), {}, {}};
    Row faults{t.hasFaults() ? tr("Faults") : QString(), {}, {}};
    m_headW = std::max({fmb.horizontalAdvance(links.heading),
                        fmb.horizontalAdvance(devs.heading),
                        fmb.horizontalAdvance(grp.heading),
                        fmb.horizontalAdvance(graph.heading),
                        fmb.horizontalAdvance(faults.heading)})
              + 12;
    const int avail = std::max(60, maxWidth - 2 * kPad - m_headW);

    // A sample (line or swatch) `sampleW` wide, then its label, kept together on one line.
    const auto labelled = [&](int sampleW,
                              const QString &text,
                              std::function<void(QPainter *, const QRect &)> sample) {
        Piece p;
        p.text = text;
        p.font = m_font;
        p.width = sampleW + 8 + fm.horizontalAdvance(text) + 2;
        p.height = kRowH;
        p.gap = 14;
        p.textLeft = sampleW + 8;
        p.textFlags = Qt::AlignLeft | Qt::AlignVCenter;
        p.draw = [sampleW, text, sample](QPainter *painter, const QRect &r) {
            sample(painter, QRect(r.left(), r.top(), sampleW, r.height()));
            painter->setPen(style::kTextDark);
            painter->drawText(r.adjusted(sampleW + 8, 0, 0, 0),
                              Qt::AlignLeft | Qt::AlignVCenter,
                              text);
        };
        return p;
    };
    const auto line = [](const QPen &pen) {
        return [pen](QPainter *painter, const QRect &r) {
            painter->setPen(pen);
            const int y = r.top() + kRowH / 2;
            painter->drawLine(r.left(), y, r.right(), y);
        };
    };

    if (loads) {
        QPen idle(style::kIdleLink, 3);
        idle.setCapStyle(Qt::FlatCap);
        links.pieces.push_back(labelled(34, tr("idle"), line(idle)));
        Piece scale;
        scale.width = kGradientW;
        scale.height = kRowH;
        scale.gap = 10;
        scale.font = m_tiny;
        scale.draw = [](QPainter *painter, const QRect &r) {
            drawGradient(painter, r, [](double u) { return style::loadColor(std::max(u, 0.02)); });
            painter->setPen(Qt::white);
            painter->drawText(r.adjusted(4, 0, -4, 0),
                              Qt::AlignLeft | Qt::AlignVCenter,
                              QStringLiteral("0%"));
            painter->drawText(r.adjusted(4, 0, -4, 0),
                              Qt::AlignHCenter | Qt::AlignVCenter,
                              QStringLiteral("25%"));
            painter->setPen(style::kTextDark);
            painter->drawText(r.adjusted(4, 0, -4, 0),
                              Qt::AlignRight | Qt::AlignVCenter,
                              QStringLiteral("100%"));
        };
        links.pieces.push_back(std::move(scale));
        // A serving layout's moment is of its decode step or of one request's life.
        const bool requestMoment = state.serving && state.view
                                   && state.view->servingTimeline()
                                              == ViewState::ServingTimeline::Request;
        links.pieces.push_back(
                textPiece(state.lesson
                                  ? tr("busy share of the lesson's step (its bottleneck: 100%)")
                          : state.moment().empty()
                                  ? (state.serving ? tr("utilization, decode-step average "
                                                        "(busiest direction)")
                                                   : tr("utilization, step average (busiest "
                                                        "direction)"))
                          : requestMoment ? tr("utilization at this moment of one request's life")
                          : state.serving ? tr("utilization at this moment of the decode step")
                                          : tr("utilization at this moment of the step"),
                          style::kTextMuted,
                          0,
                          avail));
    } else {
        for (LinkKind k : kinds) {
            QPen pen(style::linkColor(k), 3, style::linkPenStyle(k));
            pen.setCapStyle(Qt::FlatCap);
            links.pieces.push_back(labelled(34, style::linkKindName(k), line(pen)));
        }
    }
    for (DeviceKind k : devices) {
        const QColor fill = style::deviceFill(k);
        devs.pieces.push_back(
                labelled(20, style::deviceKindName(k), [fill](QPainter *painter, const QRect &r) {
                    painter->setPen(QPen(fill.darker(135), 1));
                    painter->setBrush(fill);
                    painter->drawRoundedRect(QRectF(r.left(), r.top() + 4, r.width(), kRowH - 8),
                                             3,
                                             3);
                }));
    }
    m_rows.push_back(std::move(links));
    m_rows.push_back(std::move(devs));
    if (!graph.heading.isEmpty()) {
        // The NCCL graph overlay: a line in each channel's colour (a few), then what it is.
        const int shown = std::min<int>(static_cast<int>(state.graphColours.size()), 8);
        for (int i = 0; i < shown; ++i) {
            Piece p;
            p.width = 14;
            p.height = kRowH;
            p.gap = i + 1 == shown ? 10 : 2;
            QPen pen(state.graphColours[static_cast<std::size_t>(i)], 3);
            pen.setCapStyle(Qt::RoundCap);
            p.draw = line(pen);
            graph.pieces.push_back(std::move(p));
        }
        graph.pieces.push_back(textPiece(state.graphCaption, style::kTextDark, 0, avail));
        m_rows.push_back(std::move(graph));
    }
    if (!faults.heading.isEmpty()) {
        // As FaultMarksItem draws them: crossed out in red, hatched with what is left.
        faults.pieces.push_back(labelled(20, tr("down"), [](QPainter *painter, const QRect &r) {
            const QRectF box(r.left(), r.top() + 4, r.width(), kRowH - 8);
            QColor tint = style::kFaultDown;
            tint.setAlpha(45);
            painter->setPen(QPen(style::kFaultDown, 2));
            painter->setBrush(tint);
            painter->drawRect(box);
            painter->drawLine(box.topLeft(), box.bottomRight());
            painter->drawLine(box.topRight(), box.bottomLeft());
        }));
        faults.pieces.push_back(
                labelled(20,
                         tr("degraded or slow (what is left)"),
                         [](QPainter *painter, const QRect &r) {
                             const QRectF box(r.left(), r.top() + 4, r.width(), kRowH - 8);
                             painter->setPen(Qt::NoPen);
                             painter->setBrush(QBrush(style::kFaultDegraded, Qt::BDiagPattern));
                             painter->drawRect(box);
                             painter->setBrush(Qt::NoBrush);
                             painter->setPen(QPen(style::kFaultDegraded, 2));
                             painter->drawRect(box);
                         }));
        QPen taken(style::kFaultDown, 1.5, Qt::DashLine);
        faults.pieces.push_back(labelled(34, tr("taken down with a failed device"), line(taken)));
        m_rows.push_back(std::move(faults));
    }
    if (!groups)
        return;

    const int count = state.groupCount;
    // Pipeline stages run along a scale: many of them read as the scale, not as swatches.
    const bool gradient = state.ordered() && count > kMaxSwatches;
    QString note;
    if (gradient) {
        Piece scale;
        scale.width = kGradientW;
        scale.height = kRowH;
        scale.gap = 10;
        scale.font = m_tiny;
        scale.draw = [count](QPainter *painter, const QRect &r) {
            drawGradient(painter, r, [count](double v) {
                return style::groupColor(static_cast<int>(std::lround(v * (count - 1))),
                                         count,
                                         true);
            });
        };
        grp.pieces.push_back(std::move(scale));
        note = tr("%1 to %2").arg(0).arg(count - 1);
    } else {
        const int swatches = std::min(count, kMaxSwatches);
        for (int i = 0; i < swatches; ++i) {
            const QColor fill = state.groupFill(i);
            // Named groups (a serving layout's prefill and decode pools) say their names.
            const QString name = static_cast<std::size_t>(i) < state.groupNames.size()
                                         ? state.groupNames[static_cast<std::size_t>(i)]
                                         : QString::number(i);
            Piece p;
            p.width = std::max(kSwatchW, QFontMetrics(m_tiny).horizontalAdvance(name) + 10);
            p.height = kRowH;
            p.gap = 4;
            p.text = name;
            p.font = m_tiny;
            p.textFlags = Qt::AlignCenter;
            p.draw = [fill, name](QPainter *painter, const QRect &r) {
                painter->setPen(QPen(fill.darker(140), 1));
                painter->setBrush(fill);
                const QRectF box(r.left(), r.top() + 2, r.width(), kRowH - 4);
                painter->drawRoundedRect(box, 3, 3);
                painter->setPen(style::textOn(fill));
                painter->drawText(box, Qt::AlignCenter, name);
            };
            grp.pieces.push_back(std::move(p));
        }
        if (!grp.pieces.empty())
            grp.pieces.back().gap = 10;
        if (count > kMaxSwatches)
            note = tr("\u2026 %1 in all; colours repeat every %2")
                           .arg(QLocale().toString(count))
                           .arg(style::kGroupHues);
    }
    if (!note.isEmpty())
        grp.pieces.push_back(textPiece(note, style::kTextMuted, 0, avail));
    m_rows.push_back(std::move(grp));
}

void Legend::place(int maxWidth)
{
    if (m_rows.empty())
        return;
    const int left = kPad + m_headW;
    const int avail = std::max(60, maxWidth - 2 * kPad - m_headW);
    int y = 6;
    int widest = 0;
    for (Row &row : m_rows) {
        row.headingRect = QRect(kPad, y, m_headW, kRowH);
        int x = 0;
        int lineH = kRowH;
        for (Piece &p : row.pieces) {
            // Wrap before a piece that would run past the room left (never the first on a line).
            if (x > 0 && x + p.width > avail) {
                y += lineH;
                x = 0;
                lineH = kRowH;
            }
            p.rect = QRect(left + x, y, p.width, p.height);
            lineH = std::max(lineH, p.height);
            widest = std::max(widest, x + p.width);
            x += p.width + p.gap;
        }
        y += lineH;
    }
    m_size = QSize(left + widest + kPad, y + 6);
}

void Legend::paint(QPainter *painter, const QPoint &topLeft) const
{
    if (isEmpty())
        return;
    painter->save();
    painter->translate(topLeft);
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setRenderHint(QPainter::TextAntialiasing, true);
    painter->setPen(QPen(style::kRackBorder, 1));
    painter->setBrush(QColor(255, 255, 255, 238));
    painter->drawRoundedRect(QRectF(0.5, 0.5, m_size.width() - 1, m_size.height() - 1), 6, 6);
    for (const Row &row : m_rows) {
        painter->setFont(m_bold);
        painter->setPen(style::kTextDark);
        painter->drawText(row.headingRect, Qt::AlignLeft | Qt::AlignVCenter, row.heading);
        for (const Piece &p : row.pieces) {
            painter->setFont(p.font);
            p.draw(painter, p.rect);
        }
    }
    painter->restore();
}

std::vector<PlacedText> Legend::texts() const
{
    std::vector<PlacedText> out;
    for (const Row &row : m_rows) {
        out.push_back({row.heading, row.headingRect, m_bold, Qt::AlignLeft | Qt::AlignVCenter});
        for (const Piece &p : row.pieces)
            if (!p.text.isEmpty())
                out.push_back({p.text, p.rect.adjusted(p.textLeft, 0, 0, 0), p.font, p.textFlags});
    }
    return out;
}

} // namespace railyard::render
