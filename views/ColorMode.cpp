#include "views/ColorMode.h"

#include <algorithm>
#include <array>
#include <set>

namespace mario::views {

namespace {

// Tableau 10 with its grey swapped for indigo (grey is the optimizer's and the waits'):
// ten hues that stay apart at box size, the usual choice for categorical micro-batches.
constexpr std::array<QRgb, 10> kMicrobatchPalette{
    qRgb(0x4E, 0x79, 0xA7), qRgb(0xF2, 0x8E, 0x2B), qRgb(0xE1, 0x57, 0x59), qRgb(0x76, 0xB7, 0xB2),
    qRgb(0x59, 0xA1, 0x4F), qRgb(0xED, 0xC9, 0x48), qRgb(0xB0, 0x7A, 0xA1), qRgb(0xFF, 0x9D, 0xA7),
    qRgb(0x9C, 0x75, 0x5F), qRgb(0x6B, 0x6E, 0xCF)};
// Okabe–Ito: chunks and directions are few, and these stay apart for colour-blind readers.
constexpr std::array<QRgb, 6> kChunkPalette{qRgb(0x00, 0x72, 0xB2), qRgb(0xE6, 0x9F, 0x00), qRgb(0x00, 0x9E, 0x73),
                                            qRgb(0xCC, 0x79, 0xA7), qRgb(0x56, 0xB4, 0xE9), qRgb(0xD5, 0x5E, 0x00)};
constexpr std::array<QRgb, 4> kDirectionPalette{qRgb(0x00, 0x72, 0xB2), qRgb(0xD5, 0x5E, 0x00), qRgb(0x00, 0x9E, 0x73),
                                                qRgb(0xCC, 0x79, 0xA7)};
// The kind key's swatches: the kind's lightness and pattern on a neutral grey.
const QColor kKeyGrey(0x70, 0x70, 0x70);
const QColor kWaitGrey(0xDA, 0xDA, 0xDA);

// Kinds that belong to no micro-batch, chunk or direction of their own keep one colour.
bool ownColor(BoxKind kind) {
    return kind == BoxKind::ReduceGrad || kind == BoxKind::Optimizer || kind == BoxKind::Wait;
}

QColor mix(const QColor& color, const QColor& with, double share) {
    return QColor::fromRgbF(color.redF() + share * (with.redF() - color.redF()),
                            color.greenF() + share * (with.greenF() - color.greenF()),
                            color.blueF() + share * (with.blueF() - color.blueF()));
}

QColor readableTextOn(const QColor& c) {
    // Relative luminance (sRGB weights), as textColorOn does for the kind colours.
    const double luminance = 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF();
    return luminance < 0.5 ? QColor(Qt::white) : QColor(0x20, 0x20, 0x20);
}

QRgb paletteColor(ColorMode mode, int group) {
    switch (mode) {
        case ColorMode::Microbatch:
            return kMicrobatchPalette[static_cast<std::size_t>(group) % kMicrobatchPalette.size()];
        case ColorMode::Chunk: return kChunkPalette[static_cast<std::size_t>(group) % kChunkPalette.size()];
        case ColorMode::Direction: return kDirectionPalette[static_cast<std::size_t>(group) % kDirectionPalette.size()];
        case ColorMode::Kind: break;
    }
    return kKeyGrey.rgb();
}

// A kind on a base colour: lightness for the backward family, a pattern for the forwards
// that checkpointing changes.
BoxStyle styleOnBase(BoxKind kind, const QColor& base) {
    BoxStyle style;
    style.fill = base;
    const QColor ink(0, 0, 0, 110);  // dark enough over any palette colour, light or not
    switch (kind) {
        case BoxKind::CheckpointedForward: style.overlay = QBrush(ink, Qt::BDiagPattern); break;
        case BoxKind::Recompute: style.overlay = QBrush(ink, Qt::DiagCrossPattern); break;
        case BoxKind::Backward:
        case BoxKind::BackwardInput: style.fill = mix(base, Qt::white, 0.45); break;
        case BoxKind::BackwardWeight: style.fill = mix(base, Qt::white, 0.72); break;
        default: break;
    }
    style.text = readableTextOn(style.fill);
    return style;
}

QString keyLabel(BoxKind kind) {
    switch (kind) {
        case BoxKind::Forward: return QStringLiteral("forward (full colour)");
        case BoxKind::CheckpointedForward: return QStringLiteral("checkpointed forward (hatched)");
        case BoxKind::Recompute: return QStringLiteral("recompute (cross-hatched)");
        case BoxKind::Backward: return QStringLiteral("backward (light)");
        case BoxKind::BackwardInput: return QStringLiteral("backward, input grad (light)");
        case BoxKind::BackwardWeight: return QStringLiteral("backward, weight grad (lighter)");
        default: return labelOf(kind);
    }
}

QString groupLabel(ColorMode mode, int group, int groups, int largest, const Timeline& timeline) {
    switch (mode) {
        case ColorMode::Microbatch: {
            if (largest < groups) return QStringLiteral("micro-batch %1").arg(group);
            // Colours cycle: name the first few that share this one.
            QString text = QStringLiteral("micro-batches %1").arg(group);
            for (int mb = group + groups; mb <= largest && mb < group + 3 * groups; mb += groups)
                text += QStringLiteral(", %1").arg(mb);
            if (group + 3 * groups <= largest) text += QStringLiteral(", \u2026");
            return text;
        }
        case ColorMode::Chunk: return QStringLiteral("chunk %1").arg(group);
        case ColorMode::Direction: {
            if (group < static_cast<int>(timeline.pipelineEnds.size())) {
                const auto [first, last] = timeline.pipelineEnds[static_cast<std::size_t>(group)];
                return QStringLiteral("pipeline %1: device %2 \u2192 %3").arg(group).arg(first).arg(last);
            }
            return QStringLiteral("pipeline %1").arg(group);
        }
        case ColorMode::Kind: break;
    }
    return {};
}

}  // namespace

std::vector<ColorMode> allColorModes() {
    return {ColorMode::Kind, ColorMode::Microbatch, ColorMode::Chunk, ColorMode::Direction};
}

QString labelOf(ColorMode mode) {
    switch (mode) {
        case ColorMode::Kind: return QStringLiteral("kind");
        case ColorMode::Microbatch: return QStringLiteral("micro-batch");
        case ColorMode::Chunk: return QStringLiteral("chunk");
        case ColorMode::Direction: return QStringLiteral("direction");
    }
    return {};
}

int colorGroupCount(ColorMode mode) {
    switch (mode) {
        case ColorMode::Kind: return 1;
        case ColorMode::Microbatch: return static_cast<int>(kMicrobatchPalette.size());
        case ColorMode::Chunk: return static_cast<int>(kChunkPalette.size());
        case ColorMode::Direction: return static_cast<int>(kDirectionPalette.size());
    }
    return 1;
}

int colorGroupOf(const TimelineBox& box, ColorMode mode) {
    if (ownColor(box.kind)) return 0;
    const int groups = colorGroupCount(mode);
    switch (mode) {
        case ColorMode::Kind: return 0;
        case ColorMode::Microbatch: return std::max(0, box.microbatch) % groups;
        case ColorMode::Chunk: return std::max<int>(0, box.chunk) % groups;
        case ColorMode::Direction: return std::max<int>(0, box.direction) % groups;
    }
    return 0;
}

BoxStyle boxStyle(BoxKind kind, int group, ColorMode mode) {
    if (mode == ColorMode::Kind) return {colorOf(kind), overlayOf(kind), textColorOn(kind)};
    if (kind == BoxKind::Wait) return {kWaitGrey, QBrush(Qt::NoBrush), readableTextOn(kWaitGrey)};
    if (ownColor(kind)) return {colorOf(kind), overlayOf(kind), textColorOn(kind)};
    return styleOnBase(kind, QColor::fromRgb(paletteColor(mode, group)));
}

BoxStyle dimmed(const BoxStyle& style) {
    // Most of the way to white: the boxes stay where they are, the path stands out.
    BoxStyle faint = style;
    faint.fill = mix(style.fill, Qt::white, 0.72);
    if (faint.overlay.style() != Qt::NoBrush) {
        QColor ink = faint.overlay.color();
        ink.setAlpha(ink.alpha() / 3);
        faint.overlay.setColor(ink);
    }
    faint.text = QColor(0x90, 0x90, 0x90);
    return faint;
}

std::vector<LegendEntry> legendEntries(ColorMode mode, const Timeline& timeline) {
    std::array<bool, static_cast<std::size_t>(BoxKind::Count)> kinds{};
    std::set<int> groups;
    int largest = 0;  // the largest micro-batch (or chunk, direction) number that occurs
    for (const auto& lane : timeline.lanes)
        for (const TimelineBox& box : lane) {
            kinds[static_cast<std::size_t>(box.kind)] = true;
            if (mode == ColorMode::Kind || ownColor(box.kind)) continue;
            groups.insert(colorGroupOf(box, mode));
            const int number = mode == ColorMode::Microbatch ? box.microbatch
                               : mode == ColorMode::Chunk    ? box.chunk
                                                             : box.direction;
            largest = std::max(largest, number);
        }
    std::vector<LegendEntry> entries;
    if (mode != ColorMode::Kind) {
        const int count = colorGroupCount(mode);
        for (int group : groups)
            entries.push_back({QColor::fromRgb(paletteColor(mode, group)), QBrush(Qt::NoBrush),
                               groupLabel(mode, group, count, largest, timeline)});
    }
    for (std::size_t k = 0; k < kinds.size(); ++k) {
        if (!kinds[k]) continue;
        const auto kind = static_cast<BoxKind>(k);
        if (mode == ColorMode::Kind || ownColor(kind)) {
            const BoxStyle style = boxStyle(kind, 0, mode);
            entries.push_back({style.fill, style.overlay, labelOf(kind)});
        } else {
            const BoxStyle style = styleOnBase(kind, kKeyGrey);
            entries.push_back({style.fill, style.overlay, keyLabel(kind)});
        }
    }
    return entries;
}

}  // namespace mario::views
