"""Charts drawn on the server as inline SVG: no script, nothing loaded."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from markupsafe import Markup, escape

BAR_WIDTH = 160  # px: a component of 1.0


def score_bar(name: str, value: float | None, weight: float | None = None) -> Markup:
    """One score component (0..1) as a bar; ``data-value`` holds the exact number and the
    bar's width is ``value`` x :data:`BAR_WIDTH`."""
    v = 0.0 if value is None else float(value)
    shown = max(0.0, min(1.0, v))
    width = round(shown * BAR_WIDTH, 2)
    w = "" if weight is None else f' data-weight="{weight:.4f}"'
    return Markup(
        f'<svg class="bar" role="img" width="{BAR_WIDTH}" height="12" '
        f'viewBox="0 0 {BAR_WIDTH} 12" data-name="{escape(name)}" data-value="{v:.6f}"{w}>'
        f'<title>{escape(name)} {v:.4f}</title>'
        f'<rect class="track" x="0" y="0" width="{BAR_WIDTH}" height="12"/>'
        f'<rect class="fill" x="0" y="0" width="{width}" height="12"/></svg>')


def growth_chart(points: Sequence[tuple[date, int, int]], width: int = 1180,
                 height: int = 180) -> Markup:
    """Memories created per day (bars) and the running total (a line), one point a day."""
    if not points:
        return Markup('<p class="muted">no memories yet</p>')
    pad_l, pad_b, pad_t = 40, 22, 10
    inner_w, inner_h = width - pad_l - 10, height - pad_b - pad_t
    top_total = max(p[2] for p in points) or 1
    top_day = max(p[1] for p in points) or 1
    step = inner_w / len(points)
    bars, line = [], []
    for i, (day, created, total) in enumerate(points):
        x = pad_l + i * step
        h = inner_h * created / top_day
        bars.append(f'<rect class="day" x="{x + step * 0.15:.1f}" y="{pad_t + inner_h - h:.1f}" '
                    f'width="{max(step * 0.7, 1):.1f}" height="{h:.1f}">'
                    f'<title>{escape(day.isoformat())}: {created} new, {total} in all</title>'
                    f'</rect>')
        line.append(f"{x + step / 2:.1f},{pad_t + inner_h - inner_h * total / top_total:.1f}")
    first, last = points[0][0].isoformat(), points[-1][0].isoformat()
    return Markup(
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="memories created per day">'
        f'<line class="axis" x1="{pad_l}" y1="{pad_t + inner_h}" x2="{width - 10}" '
        f'y2="{pad_t + inner_h}"/>'
        + "".join(bars)
        + f'<polyline class="total" points="{" ".join(line)}"/>'
        f'<text x="{pad_l}" y="{height - 6}">{escape(first)}</text>'
        f'<text x="{width - 10}" y="{height - 6}" text-anchor="end">{escape(last)}</text>'
        f'<text x="{pad_l - 4}" y="{pad_t + 8}" text-anchor="end">{top_total}</text>'
        f'<text x="{pad_l - 4}" y="{pad_t + inner_h}" text-anchor="end">0</text></svg>')
