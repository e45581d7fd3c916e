#pragma once

#include <QGraphicsItem>

#include <vector>

namespace railyard {

class ClusterGeometry;
struct LessonFrame;

// The collective lesson's marks over the racks: a ring on each device that sends in the
// current step (solid, orange) and each that receives (dashed, pink), an arrow from each sender
// to its receiver, a badge with the chunk it sends, and a bar under each GPU with the share of
// its final result it holds. Badges and
// bars are drawn at a fixed size on screen, so they read at any zoom.
class LessonMarksItem : public QGraphicsItem
{
public:
    enum { Type = UserType + 12 };

    explicit LessonMarksItem(const ClusterGeometry &geometry);

    int type() const override { return Type; }
    // The frame's devices and badges (null: nothing). The frame is copied.
    void setFrame(const LessonFrame *frame);
    int markCount() const { return static_cast<int>(m_marks.size()); }

    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    // Returns the highest point (device y) the arrows reach.
    double drawArrows(QPainter *painter, const QTransform &world) const;
    struct Mark
    {
        QRectF rect;
        bool sends = false;
        bool receives = false;
        QString badge;
        float progress = -1;
    };
    const ClusterGeometry &m_geometry;
    std::vector<Mark> m_marks;
    std::vector<std::pair<QRectF, QRectF>> m_arrows; // sender, receiver
    QString m_caption;
    QRectF m_bounds;
};

} // namespace railyard
