#pragma once
// A small SVG line chart, written Qt-free so that `mario sweep --plot OUT.svg` works on a node
// without a display (PNG needs a rasteriser, which core does not have). Lines with gaps where a
// point is missing, an optional horizontal limit line and marked points; axes with round ticks.
#include <optional>
#include <string>
#include <vector>

namespace mario {

struct SvgSeries {
    std::string label;
    std::vector<std::optional<double>> y;  // one per x; nullopt: a gap (a refused point)
    std::vector<std::string> notes;        // per x: a tooltip (<title>), e.g. the refusal
    std::optional<int> marked;             // index of x to mark (the largest that fits)
    int colour = -1;  // index into the palette; -1: the series' own index
    int dash = 0;     // 0 solid, 1 dashed, 2 dotted: a second dimension (the pass set) beside colour
};

struct SvgLineChart {
    std::string title;
    std::string x_label, y_label;
    std::vector<double> x;
    bool log_x = false;  // powers-of-two ladders read better on a log axis
    std::vector<SvgSeries> series;
    std::optional<double> limit;  // a dashed horizontal line (the memory limit)
    std::optional<double> y_max;  // the top of the y axis (else the highest value); lines above are cut
    std::string limit_label;
};

// A stand-alone SVG document, `width` × `height` pixels.
std::string renderSvgLineChart(const SvgLineChart& chart, int width = 720, int height = 420);

}  // namespace mario
