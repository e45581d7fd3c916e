#include "reviewpdf.h"

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QPagedPaintDevice>
#include <QPainter>
#include <QTextLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace railyard {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("ReviewPdf", text);
}

// The type scale, in points, and the page's proportions (A4 portrait, 20 mm margins).
constexpr double kTitlePt = 24;
constexpr double kStepPt = 28;
constexpr double kHeadingPt = 14;
constexpr double kBodyPt = 9.5;
constexpr double kTablePt = 8.5;
constexpr double kCaptionPt = 8;
constexpr double kFooterPt = 7.5;
constexpr double kMarginMm = 20;
constexpr double kFooterMm = 10; // the footer's band, inside the bottom margin

const QColor kText(0x1d, 0x26, 0x33);
const QColor kMuted(0x5b, 0x66, 0x75);
const QColor kAccent(0x2f, 0x5d, 0x8a);
const QColor kRule(0xc8, 0xce, 0xd6);
const QColor kHeaderFill(0xee, 0xf2, 0xf6);
const QColor kStripe(0xf7, 0xf9, 0xfb);

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QFont sized(const QFont &base, double pt, bool bold = false, bool italic = false)
{
    QFont f = base;
    f.setPointSizeF(pt);
    f.setBold(bold);
    f.setItalic(italic);
    return f;
}

// Text wrapped to a width (at word boundaries, or anywhere in a word longer than the line: a
// hostile title of one 200-character word), measured and drawn on one device.
struct Wrapped
{
    std::shared_ptr<QTextLayout> layout;
    double height = 0;
    double width = 0; // the widest line
};

Wrapped wrap(const QString &text,
             const QFont &font,
             double width,
             QPaintDevice *device,
             Qt::Alignment align = Qt::AlignLeft)
{
    Wrapped w;
    w.layout = std::make_shared<QTextLayout>(text, font, device);
    QTextOption option;
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    option.setAlignment(align);
    w.layout->setTextOption(option);
    w.layout->beginLayout();
    const double leading = std::max(0.0, QFontMetricsF(font, device).leading());
    double y = 0;
    while (true) {
        QTextLine line = w.layout->createLine();
        if (!line.isValid())
            break;
        line.setLineWidth(std::max(1.0, width));
        line.setPosition(QPointF(0, y));
        y += line.height() + leading;
        w.width = std::max(w.width, line.naturalTextWidth());
    }
    w.layout->endLayout();
    w.height = y;
    return w;
}

// One line of a single-line width (for table columns' natural widths).
double advance(const QString &text, const QFont &font, QPaintDevice *device)
{
    return QFontMetricsF(font, device).horizontalAdvance(text);
}

} // namespace

struct ReviewPdf::Chunk
{
    double height = 0;
    double spaceBefore = 0;
    bool keepWithNext = false;
    bool pageBreakAfter = false;
    int header = -1;     // a table row: its table's header chunk
    std::string section; // a section's heading: the section
    std::function<void(QPainter *, const QPointF &)> paint;
};

ReviewPdf::ReviewPdf(const engine::ReviewReport &report,
                     Figures figures,
                     QPaintDevice *device,
                     const QFont &font,
                     const QString &footer)
    : m_device(device)
    , m_figures(std::move(figures))
    , m_base(font)
    , m_footer(footer)
{
    const double perMm = device->logicalDpiX() / 25.4;
    m_page = QSizeF(device->width(), device->height());
    const double margin = kMarginMm * perMm;
    m_body = QRectF(margin, margin, m_page.width() - 2 * margin, m_page.height() - 2 * margin);
    build(report);
    paginate();
}

ReviewPdf::~ReviewPdf() = default;

int ReviewPdf::pageCount() const
{
    return static_cast<int>(m_pages.size());
}

std::map<std::string, int> ReviewPdf::sectionPages() const
{
    return m_sectionPages;
}

void ReviewPdf::addText(const QString &text,
                        const QFont &font,
                        const QColor &colour,
                        double spaceBefore,
                        bool keepWithNext,
                        double indent)
{
    const Wrapped w = wrap(text, font, m_body.width() - indent, m_device);
    Chunk c;
    c.height = w.height;
    c.spaceBefore = spaceBefore;
    c.keepWithNext = keepWithNext;
    c.paint = [w, colour, indent](QPainter *p, const QPointF &at) {
        p->setPen(colour);
        w.layout->draw(p, at + QPointF(indent, 0));
    };
    m_chunks.push_back(std::move(c));
}

void ReviewPdf::addTable(const engine::ReviewTable &table, const QString &caption)
{
    const std::size_t n = table.columns.size();
    if (n == 0)
        return;
    const QFont body = sized(m_base, kTablePt);
    const QFont bold = sized(m_base, kTablePt, true);
    const double pad = QFontMetricsF(body, m_device).height() * 0.35;
    const double avail = m_body.width();
    if (!caption.isEmpty())
        addText(caption, sized(m_base, kCaptionPt, false, true), kMuted, 8, true);

    // Column widths: each column's widest cell on one line; numbers keep theirs, text columns
    // share what is left in proportion to theirs (and wrap).
    std::vector<double> natural(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        natural[i] = advance(qs(table.columns[i]), bold, m_device);
        for (const auto &row : table.rows)
            if (i < row.size())
                natural[i] = std::max(natural[i], advance(qs(row[i]), body, m_device));
        natural[i] += 2 * pad + 1;
    }
    const auto isNumber = [&](std::size_t i) {
        return i < table.numeric.size() && table.numeric[i];
    };
    std::vector<double> widths = natural;
    const double total = std::accumulate(natural.begin(), natural.end(), 0.0);
    if (total > avail) {
        double fixed = 0, flexible = 0;
        for (std::size_t i = 0; i < n; ++i)
            (isNumber(i) ? fixed : flexible) += std::min(natural[i], avail * 0.3);
        for (std::size_t i = 0; i < n; ++i)
            widths[i] = isNumber(i) || flexible == 0
                                ? std::min(natural[i], avail * 0.3)
                                : std::min(natural[i], avail * 0.3) * (avail - fixed) / flexible;
        // Whatever is still too wide (a table of numbers only) shrinks in proportion.
        const double sum = std::accumulate(widths.begin(), widths.end(), 0.0);
        if (sum > avail)
            for (double &w : widths)
                w *= avail / sum;
    } else {
        // The full width: the first text column takes the rest.
        std::size_t grow = 0;
        while (grow < n && isNumber(grow))
            ++grow;
        widths[grow < n ? grow : 0] += avail - total;
    }

    const auto rowChunk = [&](const std::vector<std::string> &cells, bool header, int index) {
        std::vector<Wrapped> wrapped;
        double h = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const QString text = i < cells.size() ? qs(cells[i]) : QString();
            wrapped.push_back(wrap(text,
                                   header ? bold : body,
                                   widths[i] - 2 * pad,
                                   m_device,
                                   isNumber(i) ? Qt::AlignRight : Qt::AlignLeft));
            h = std::max(h, wrapped.back().height);
        }
        Chunk c;
        c.height = h + 2 * pad;
        c.keepWithNext = header;
        const bool stripe = !header && index % 2 == 1;
        c.paint = [wrapped, widths, pad, header, stripe, height = c.height](QPainter *p,
                                                                            const QPointF &at) {
            const double w = std::accumulate(widths.begin(), widths.end(), 0.0);
            if (header || stripe)
                p->fillRect(QRectF(at, QSizeF(w, height)), header ? kHeaderFill : kStripe);
            p->setPen(QPen(header ? kMuted : kRule, header ? 1.0 : 0.6));
            p->drawLine(QPointF(at.x(), at.y() + height), QPointF(at.x() + w, at.y() + height));
            p->setPen(kText);
            double x = at.x();
            for (std::size_t i = 0; i < wrapped.size(); ++i) {
                wrapped[i].layout->draw(p, QPointF(x + pad, at.y() + pad));
                x += widths[i];
            }
        };
        return c;
    };
    Chunk head = rowChunk(table.columns, true, 0);
    head.spaceBefore = caption.isEmpty() ? 8 : 3;
    const int headIndex = static_cast<int>(m_chunks.size());
    m_chunks.push_back(std::move(head));
    int index = 0;
    for (const auto &row : table.rows) {
        Chunk c = rowChunk(row, false, index++);
        c.header = headIndex;
        m_chunks.push_back(std::move(c));
    }
}

void ReviewPdf::addFigure(engine::ReviewFigure figure, const QString &caption)
{
    const auto it = m_figures.find(figure);
    const QFont captionFont = sized(m_base, kCaptionPt, false, true);
    const Wrapped text = wrap(caption, captionFont, m_body.width(), m_device);
    if (it == m_figures.end() || !it->second.height || !it->second.paint) {
        addText(caption, captionFont, kMuted, 8);
        return;
    }
    const Figure f = it->second;
    const double gap = 6;
    const double maxH = m_body.height() - text.height - gap - 40;
    const double h = std::min(maxH, f.height(m_body.width(), maxH));
    Chunk c;
    c.height = h + gap + text.height;
    c.spaceBefore = 10;
    const double width = m_body.width();
    c.paint = [f, h, gap, text, width](QPainter *p, const QPointF &at) {
        p->save();
        f.paint(p, QRectF(at, QSizeF(width, h)));
        p->restore();
        p->setPen(kMuted);
        text.layout->draw(p, at + QPointF(0, h + gap));
    };
    m_chunks.push_back(std::move(c));
}

void ReviewPdf::addTitlePage(const engine::ReviewReport &r)
{
    const double w = m_body.width();
    const QFont label = sized(m_base, kCaptionPt, true);
    addText(tr("DESIGN REVIEW"), label, kAccent, 0);
    addText(qs(r.title), sized(m_base, kTitlePt, true), kText, 10);
    QString meta = qs(r.date);
    if (!r.source.empty())
        meta += (meta.isEmpty() ? QString() : QStringLiteral(" \u00b7 ")) + qs(r.source);
    if (!meta.isEmpty())
        addText(meta, sized(m_base, kBodyPt), kMuted, 6);
    {
        Chunk rule;
        rule.height = 1;
        rule.spaceBefore = 18;
        rule.paint = [w](QPainter *p, const QPointF &at) {
            p->setPen(QPen(kAccent, 1.5));
            p->drawLine(at, at + QPointF(w, 0));
        };
        m_chunks.push_back(std::move(rule));
    }
    const std::pair<QString, std::string> lines[] = {{tr("Cluster"), r.cluster},
                                                     {tr("Workload"), r.workload},
                                                     {qs(r.trainingLabel), r.training}};
    for (const auto &[name, value] : lines) {
        addText(name.toUpper(), label, kMuted, 14);
        addText(qs(value), sized(m_base, 11), kText, 2);
    }
    addText(qs(r.stepTimeLabel).toUpper(), label, kMuted, 22);
    addText(qs(r.stepTime), sized(m_base, kStepPt, true), kAccent, 2);
    addText(tr("Band from validation: %1").arg(qs(r.stepBand)), sized(m_base, 11), kText, 2);
    if (!r.comparedWith.empty())
        addText(qs(r.comparedWith), sized(m_base, kBodyPt), kText, 10);
    addText(tr("KEY NUMBERS"), label, kMuted, 24, true);
    addTable(r.summary, QString());
    m_chunks.back().pageBreakAfter = true;
}

void ReviewPdf::build(const engine::ReviewReport &r)
{
    addTitlePage(r);
    const QFont heading = sized(m_base, kHeadingPt, true);
    const QFont body = sized(m_base, kBodyPt);
    for (const engine::ReviewSection &section : r.sections) {
        addText(qs(section.heading), heading, kAccent, m_chunks.back().pageBreakAfter ? 0 : 22, true);
        m_chunks.back().section = section.heading;
        for (const engine::ReviewBlock &block : section.blocks) {
            switch (block.kind) {
            case engine::ReviewBlock::Kind::Paragraph:
                addText(qs(block.text), body, kText, 6);
                break;
            case engine::ReviewBlock::Kind::Bullets: {
                const double indent = QFontMetricsF(body, m_device)
                                              .horizontalAdvance(QStringLiteral("\u2022  "));
                for (const std::string &item : block.items) {
                    addText(qs(item), body, kText, 3, false, indent);
                    const auto text = std::move(m_chunks.back().paint);
                    const double ascent = QFontMetricsF(body, m_device).ascent();
                    m_chunks.back().paint = [text, body, ascent](QPainter *p, const QPointF &at) {
                        p->setPen(kText);
                        p->setFont(body);
                        p->drawText(at + QPointF(0, ascent), QStringLiteral("\u2022"));
                        text(p, at);
                    };
                }
                break;
            }
            case engine::ReviewBlock::Kind::Table: addTable(block.table, qs(block.text)); break;
            case engine::ReviewBlock::Kind::Figure: addFigure(block.figure, qs(block.text)); break;
            }
        }
    }
}

void ReviewPdf::paginate()
{
    const double top = m_body.top(), bottom = m_body.bottom();
    const std::size_t n = m_chunks.size();
    // What must fit below a chunk's top for it to start there: itself and, while a chunk asks
    // to be kept with the next, the next one too (a heading with its first paragraph, a
    // table's header with its first row); never more than a page.
    std::vector<double> need(n, 0);
    for (std::size_t i = n; i-- > 0;) {
        const Chunk &c = m_chunks[i];
        need[i] = c.height;
        if (c.keepWithNext && i + 1 < n)
            need[i] += m_chunks[i + 1].spaceBefore + need[i + 1];
        need[i] = std::min(need[i], m_body.height());
    }
    m_pages.assign(1, {});
    double y = top;
    for (std::size_t i = 0; i < n; ++i) {
        const Chunk &c = m_chunks[i];
        double space = y == top ? 0 : c.spaceBefore;
        if (y > top && y + space + need[i] > bottom) {
            m_pages.emplace_back();
            y = top;
            space = 0;
            // A table continued on a new page repeats its header.
            if (c.header >= 0) {
                m_pages.back().push_back({-c.header - 1, y});
                y += m_chunks[static_cast<std::size_t>(c.header)].height;
            }
        }
        m_pages.back().push_back({static_cast<int>(i), y + space});
        if (!c.section.empty())
            m_sectionPages[c.section] = static_cast<int>(m_pages.size());
        y += space + c.height;
        if (c.pageBreakAfter && i + 1 < n) {
            m_pages.emplace_back();
            y = top;
        }
    }
}

bool ReviewPdf::paint(QPagedPaintDevice *device, QPainter *p) const
{
    const QFont footer = sized(m_base, kFooterPt);
    const QFontMetricsF fm(footer, m_device);
    const double perMm = m_device->logicalDpiX() / 25.4;
    const double footerTop = m_page.height() - kMarginMm * perMm
                             + (kMarginMm - kFooterMm) * perMm / 2;
    const int pages = pageCount();
    for (int page = 0; page < pages; ++page) {
        if (page > 0 && !device->newPage())
            return false;
        p->save();
        p->setRenderHint(QPainter::Antialiasing, true);
        p->setRenderHint(QPainter::TextAntialiasing, true);
        for (const Placed &placed : m_pages[static_cast<std::size_t>(page)]) {
            const int index = placed.chunk < 0 ? -placed.chunk - 1 : placed.chunk;
            const Chunk &c = m_chunks[static_cast<std::size_t>(index)];
            if (c.paint) {
                p->save();
                c.paint(p, QPointF(m_body.left(), placed.y));
                p->restore();
            }
        }
        // The footer: the title (cut to the space there is) and the page number.
        p->setFont(footer);
        p->setPen(QPen(kRule, 0.8));
        p->drawLine(QPointF(m_body.left(), footerTop), QPointF(m_body.right(), footerTop));
        p->setPen(kMuted);
        const QString number = tr("Page %1 of %2").arg(page + 1).arg(pages);
        const double numberW = fm.horizontalAdvance(number);
        const QString left = fm.elidedText(m_footer, Qt::ElideRight, m_body.width() - numberW - 24);
        const double baseline = footerTop + 4 + fm.ascent();
        p->drawText(QPointF(m_body.left(), baseline), left);
        p->drawText(QPointF(m_body.right() - numberW, baseline), number);
        p->restore();
    }
    return true;
}

} // namespace railyard
