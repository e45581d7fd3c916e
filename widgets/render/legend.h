#pragma once

#include "placedtext.h"
#include "topology/topology.h"

#include <QFont>
#include <QRect>
#include <QString>

#include <functional>
#include <vector>

class QPainter;

namespace railyard {

struct CanvasState;

namespace render {

// The canvas legend: link kinds (or the load scale), device kinds and the colours of the groups
// the GPUs are coloured by. A function of the topology and the view state, not of a view, so the
// window, an export and a print draw the same legend (as Tiled's tmxrasterizer shares its
// renderer).
//
// Its size follows its content: every row is measured with the font it is drawn in, and a row
// wider than `maxWidth` wraps onto further lines under its heading rather than being clipped.
class Legend
{
public:
    Legend(const engine::Topology &topology,
           const CanvasState &state,
           const QFont &font,
           int maxWidth);

    bool isEmpty() const { return m_size.isEmpty(); }
    QSize size() const { return m_size; }
    // Draws the box with its top-left corner at `topLeft`.
    void paint(QPainter *painter, const QPoint &topLeft) const;

    // Every piece of text and where it goes, relative to the box (headings included): what a
    // test checks to see that nothing is cut off.
    std::vector<PlacedText> texts() const;

private:
    // One swatch, line or label: its width, and how to draw it inside its rectangle.
    struct Piece
    {
        int width = 0;
        int height = 0;
        int gap = 0;      // space after it on its line
        int textLeft = 0; // where its label starts, after its sample
        int textFlags = 0;
        QString text;
        QFont font;
        std::function<void(QPainter *, const QRect &)> draw;
        QRect rect; // placed, relative to the box
    };
    struct Row
    {
        QString heading;
        QRect headingRect;
        std::vector<Piece> pieces;
    };

    void build(const engine::Topology &topology, const CanvasState &state, int avail);
    void place(int maxWidth);
    Piece textPiece(const QString &text, const QColor &colour, int gap, int avail) const;

    QFont m_font, m_bold, m_tiny;
    std::vector<Row> m_rows;
    int m_headW = 0;
    QSize m_size;
};

} // namespace render
} // namespace railyard
