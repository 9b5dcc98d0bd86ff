#include "core/sweep/SvgLineChart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mario {
namespace {

// The Okabe–Ito palette: told apart by readers with any of the common colour blindnesses.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#F0E442", "#000000"};

std::string escaped(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string fmt(const char* format, double a) {
    char text[64];
    std::snprintf(text, sizeof text, format, a);
    return text;
}

// Round ticks (1, 2 or 5 × a power of ten) covering [low, high].
std::vector<double> niceTicks(double low, double high, int wanted = 5) {
    if (!(high > low)) return {low};
    const double raw = (high - low) / wanted;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    double step = power;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * power) {
            step = m * power;
            break;
        }
    std::vector<double> ticks;
    for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step) ticks.push_back(t);
    return ticks;
}

std::string tickLabel(double value) {
    const double magnitude = std::fabs(value);
    if (magnitude >= 1e9) return fmt("%.3gG", value / 1e9);
    if (magnitude >= 1e6) return fmt("%.3gM", value / 1e6);
    if (magnitude >= 1e4) return fmt("%.3gk", value / 1e3);
    return fmt("%.4g", value);
}

}  // namespace

std::string renderSvgLineChart(const SvgLineChart& chart, int width, int height) {
    const double left = 70, right = 190, top = 36, bottom = 50;
    const double plotW = width - left - right, plotH = height - top - bottom;
    // The ranges: every value shown, the limit included, y from zero so heights compare.
    double xLow = 0, xHigh = 1, yHigh = 0;
    if (!chart.x.empty()) {
        xLow = *std::min_element(chart.x.begin(), chart.x.end());
        xHigh = *std::max_element(chart.x.begin(), chart.x.end());
    }
    const bool logX = chart.log_x && xLow > 0;
    auto xPos = [&](double x) {
        const double a = logX ? std::log2(xLow) : xLow, b = logX ? std::log2(xHigh) : xHigh;
        const double v = logX ? std::log2(x) : x;
        return left + (b > a ? (v - a) / (b - a) : 0.5) * plotW;
    };
    for (const SvgSeries& series : chart.series)
        for (const auto& y : series.y)
            if (y) yHigh = std::max(yHigh, *y);
    if (chart.limit) yHigh = std::max(yHigh, *chart.limit);
    if (chart.y_max && *chart.y_max > 0) yHigh = std::min(yHigh, *chart.y_max);
    if (!(yHigh > 0)) yHigh = 1;
    const std::vector<double> yTicks = niceTicks(0, yHigh * 1.05);
    const double yTop = std::max(yHigh * 1.05, yTicks.back());
    auto yPos = [&](double y) { return top + plotH * (1 - y / yTop); };

    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
                      std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
                      std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    svg += "<text x=\"" + fmt("%.1f", left) + "\" y=\"22\" font-size=\"14\" font-weight=\"bold\">" +
           escaped(chart.title) + "</text>\n";
    // Axes, grid and ticks.
    for (double t : yTicks) {
        const std::string y = fmt("%.1f", yPos(t));
        svg += "<line x1=\"" + fmt("%.1f", left) + "\" y1=\"" + y + "\" x2=\"" + fmt("%.1f", left + plotW) +
               "\" y2=\"" + y + "\" stroke=\"#e0e0e0\"/>\n";
        svg += "<text x=\"" + fmt("%.1f", left - 6) + "\" y=\"" + y + "\" text-anchor=\"end\" dy=\"4\">" +
               tickLabel(t) + "</text>\n";
    }
    const std::vector<double> xTicks = logX || chart.x.size() <= 12 ? chart.x : niceTicks(xLow, xHigh, 8);
    for (double t : xTicks)
        svg += "<text x=\"" + fmt("%.1f", xPos(t)) + "\" y=\"" + fmt("%.1f", top + plotH + 18) +
               "\" text-anchor=\"middle\">" + tickLabel(t) + "</text>\n";
    svg += "<path d=\"M" + fmt("%.1f", left) + " " + fmt("%.1f", top) + " V" + fmt("%.1f", top + plotH) + " H" +
           fmt("%.1f", left + plotW) + "\" fill=\"none\" stroke=\"black\"/>\n";
    svg += "<text x=\"" + fmt("%.1f", left + plotW / 2) + "\" y=\"" + std::to_string(height - 10) +
           "\" text-anchor=\"middle\">" + escaped(chart.x_label) + "</text>\n";
    svg += "<text transform=\"translate(16 " + fmt("%.1f", top + plotH / 2) +
           ") rotate(-90)\" text-anchor=\"middle\">" + escaped(chart.y_label) + "</text>\n";
    if (chart.limit) {
        const std::string y = fmt("%.1f", yPos(*chart.limit));
        svg += "<line x1=\"" + fmt("%.1f", left) + "\" y1=\"" + y + "\" x2=\"" + fmt("%.1f", left + plotW) +
               "\" y2=\"" + y + "\" stroke=\"#b00000\" stroke-dasharray=\"6 4\"/>\n";
        svg += "<text x=\"" + fmt("%.1f", left + plotW - 4) + "\" y=\"" + y + "\" dy=\"-4\" text-anchor=\"end\" " +
               "fill=\"#b00000\">" + escaped(chart.limit_label) + "</text>\n";
    }
    // One polyline per run of present values: a refused point leaves a gap. Lines and marks are
    // clipped to the plot (y_max cuts them); the legend is drawn beside it.
    svg += "<clipPath id=\"plot\"><rect x=\"" + fmt("%.1f", left - 8) + "\" y=\"" + fmt("%.1f", top) + "\" width=\"" +
           fmt("%.1f", plotW + 16) + "\" height=\"" + fmt("%.1f", plotH + 8) + "\"/></clipPath>\n<g clip-path=\"url(#plot)\">\n";
    std::string legend;
    for (std::size_t s = 0; s < chart.series.size(); ++s) {
        const SvgSeries& series = chart.series[s];
        const std::string colour =
            kColours[(series.colour >= 0 ? static_cast<std::size_t>(series.colour) : s) % std::size(kColours)];
        const std::string dash = series.dash == 1 ? "\" stroke-dasharray=\"8 4"
                                 : series.dash >= 2 ? "\" stroke-dasharray=\"2 3"
                                                    : "";
        std::string path;
        bool pen = false;
        for (std::size_t i = 0; i < series.y.size() && i < chart.x.size(); ++i) {
            if (!series.y[i]) {
                pen = false;
                continue;
            }
            path += (pen ? " L" : " M") + fmt("%.1f", xPos(chart.x[i])) + " " + fmt("%.1f", yPos(*series.y[i]));
            pen = true;
        }
        svg += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + colour + dash + "\" stroke-width=\"2\"/>\n";
        for (std::size_t i = 0; i < series.y.size() && i < chart.x.size(); ++i) {
            const std::string note = i < series.notes.size() ? series.notes[i] : std::string{};
            const std::string cx = fmt("%.1f", xPos(chart.x[i]));
            if (!series.y[i]) {  // a refused point: a hollow mark on the axis, its reason on hover
                if (!note.empty())
                    svg += "<circle cx=\"" + cx + "\" cy=\"" + fmt("%.1f", top + plotH) + "\" r=\"3\" fill=\"white\" " +
                           "stroke=\"" + colour + "\"><title>" + escaped(note) + "</title></circle>\n";
                continue;
            }
            const bool marked = series.marked && *series.marked == static_cast<int>(i);
            svg += "<circle cx=\"" + cx + "\" cy=\"" + fmt("%.1f", yPos(*series.y[i])) + "\" r=\"" +
                   (marked ? "7\" fill=\"none\" stroke-width=\"2\" stroke=\"" : "3\" fill=\"") + colour + "\">" +
                   (note.empty() ? std::string{} : "<title>" + escaped(note) + "</title>") + "</circle>\n";
        }
        const double ly = top + 14 + 18 * static_cast<double>(s);
        legend += "<line x1=\"" + fmt("%.1f", left + plotW + 12) + "\" y1=\"" + fmt("%.1f", ly) + "\" x2=\"" +
               fmt("%.1f", left + plotW + 32) + "\" y2=\"" + fmt("%.1f", ly) + "\" stroke=\"" + colour + dash +
               "\" stroke-width=\"2\"/>\n";
        legend += "<text x=\"" + fmt("%.1f", left + plotW + 36) + "\" y=\"" + fmt("%.1f", ly + 4) + "\">" +
                  escaped(series.label) + "</text>\n";
    }
    return svg + "</g>\n" + legend + "</svg>\n";
}

}  // namespace mario
