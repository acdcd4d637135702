"""Charts for the HTML report and the archive site, as inline SVG.

Each function returns one `<svg>` element, ready to paste into a page: no
external fonts, images or scripts, element ids prefixed so that several charts
can share a page, every label XML-escaped. matplotlib (the `charts` extra) draws
them when it is installed; without it a small pure-SVG drawer makes a plainer
but readable chart of the same data, so `--format html` never needs the extra.
"""

from __future__ import annotations

import html
import importlib.util
import io
import logging
import os
import re
import stat
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

# Colour-blind safe palette (Okabe-Ito), used by both drawers.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
TOTAL_COLOUR = "#888888"


def matplotlib_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


# --------------------------------------------------------------------------- public API


def bar_chart(
    data: Sequence[tuple[str, int]], title: str, chart_id: str, *, xlabel: str = "", backend: str | None = None
) -> str:
    """Horizontal bars, largest first (PRs by module / theme)."""
    data = [(str(k), int(v)) for k, v in data]
    if _backend(backend) == "matplotlib":
        return _mpl_bar(data, title, chart_id, xlabel)
    return _svg_bar(data, title, chart_id)


def line_chart(
    x_labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[int | None]]],
    title: str,
    chart_id: str,
    *,
    total: tuple[str, Sequence[int]] | None = None,
    backend: str | None = None,
) -> str:
    """One line per series over the weeks; `total` is drawn as grey bars behind them.
    A value of None is a week the series has no count for: a gap in its line, not 0."""
    x_labels = [str(x) for x in x_labels]
    series = [(str(n), [None if v is None else int(v) for v in vals]) for n, vals in series]
    if total is not None:
        total = (str(total[0]), [int(v) for v in total[1]])
    if _backend(backend) == "matplotlib":
        return _mpl_line(x_labels, series, title, chart_id, total)
    return _svg_line(x_labels, series, title, chart_id, total)


def histogram(
    values: Sequence[float], title: str, chart_id: str, *, threshold: float | None = None,
    xlabel: str = "", ylabel: str = "", backend: str | None = None,
) -> str:
    """Counts of importance scores in the bins [0,1), [1,2), …, [9,10]; a marker at `threshold`."""
    counts = importance_bins(values)
    if _backend(backend) == "matplotlib":
        return _mpl_hist(counts, title, chart_id, threshold, xlabel, ylabel)
    return _svg_hist(counts, title, chart_id, threshold)


def importance_bins(values: Sequence[float]) -> list[int]:
    counts = [0] * 10
    for v in values:
        counts[min(9, max(0, int(float(v))))] += 1
    return counts


def uses_matplotlib(backend: str | None = None) -> bool:
    """Whether matplotlib draws the charts (`backend`, else whether it is installed)."""
    return _backend(backend) == "matplotlib"


def warm(backend: str | None = None) -> None:
    """Import what the charts need (matplotlib, when it draws them) before a process
    forks workers that draw charts: they share it instead of each importing it."""
    if uses_matplotlib(backend):
        _matplotlib()
        import matplotlib.backends.backend_svg  # noqa: F401 - what savefig(format="svg") loads
        import matplotlib.figure  # noqa: F401
        from matplotlib import font_manager

        font_manager.fontManager.findfont("DejaVu Sans")  # the font list, read from its cache file


def _backend(requested: str | None) -> str:
    if requested in ("matplotlib", "svg"):
        return requested
    return "matplotlib" if matplotlib_available() else "svg"


# --------------------------------------------------------------------------- matplotlib


def _matplotlib():
    """matplotlib, imported with a folder for its settings and font cache it can write.
    Its default (`~/.config/matplotlib`) is not writable for a service account or a
    read-only home: matplotlib then prints a two-line warning on every run and builds
    its font cache again in a new temporary folder. repobrief's cache folder takes
    it instead, else one of this user's own in the temporary directory; a
    MPLCONFIGDIR the user set is kept."""
    if "matplotlib" not in sys.modules and not os.environ.get("MPLCONFIGDIR"):
        config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "matplotlib"
        if not _own_writable(config):
            from platformdirs import user_cache_path

            uid = getattr(os, "getuid", lambda: 0)()
            for folder in (user_cache_path("repobrief", appauthor=False) / "matplotlib",
                           Path(tempfile.gettempdir()) / f"repobrief-{uid}-matplotlib"):
                if _own_writable(folder):
                    os.environ["MPLCONFIGDIR"] = str(folder)
                    break
    import matplotlib

    return matplotlib


def _own_writable(folder: Path) -> bool:
    """`folder` exists or could be made, is this user's (in a shared temporary directory
    another user could have made it first) and is writable."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.lstat()
    except OSError:
        return False
    mine = getattr(os, "getuid", None) is None or st.st_uid == os.getuid()
    return stat.S_ISDIR(st.st_mode) and mine and os.access(folder, os.W_OK)


def _figure(width: float, height: float):
    # The object API (no pyplot) keeps global state out and is safe in threads.
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def _mpl_rc(chart_id: str) -> dict:
    return {
        # Text stays text: the browser draws it with its own fonts, so CJK labels
        # work without embedding a font and the file stays small.
        "svg.fonttype": "none",
        # Stable ids make the output reproducible; a per-chart salt keeps the
        # clip-path ids of two charts on one page apart.
        "svg.hashsalt": f"repobrief-{chart_id}",
        # A theme name like "$x$" must not be parsed as TeX.
        "text.parse_math": False,
        "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Arial"],
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }


def _mpl_svg(fig, title: str, chart_id: str) -> str:
    buf = io.StringIO()
    # Missing CJK glyphs in the layout font only affect measuring, not the output.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        level = logging.getLogger("matplotlib.font_manager").level
        logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
        try:
            fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
        finally:
            logging.getLogger("matplotlib.font_manager").setLevel(level)
    return _inline(buf.getvalue(), title, chart_id)


def _mpl_bar(data, title, chart_id, xlabel):
    matplotlib = _matplotlib()

    with matplotlib.rc_context(_mpl_rc(chart_id)):
        n = max(1, len(data))
        fig = _figure(6.4, 0.9 + 0.28 * n)
        ax = fig.add_subplot()
        labels = [k for k, _ in data][::-1]
        values = [v for _, v in data][::-1]
        bars = ax.barh(range(len(values)), values, color=PALETTE[0])
        ax.set_yticks(range(len(values)), labels)
        ax.bar_label(bars, padding=2)
        ax.set_xlabel(xlabel)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_title(title, loc="left")
        return _mpl_svg(fig, title, chart_id)


def _mpl_line(x_labels, series, title, chart_id, total):
    matplotlib = _matplotlib()

    with matplotlib.rc_context(_mpl_rc(chart_id)):
        fig = _figure(7.2, 3.4)
        ax = fig.add_subplot()
        xs = range(len(x_labels))
        if total is not None:
            ax.bar(xs, total[1], color=TOTAL_COLOUR, alpha=0.3, label=total[0])
        for i, (name, vals) in enumerate(series):
            # NaN breaks the line: a week without a count is a gap.
            ys = [float("nan") if v is None else v for v in vals]
            ax.plot(xs, ys, marker="o", markersize=3, color=PALETTE[i % len(PALETTE)], label=name)
        ax.set_xticks(list(xs), [x.split("-")[-1] for x in x_labels])
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_title(title, loc="left")
        if series or total:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return _mpl_svg(fig, title, chart_id)


def _mpl_hist(counts, title, chart_id, threshold, xlabel, ylabel):
    matplotlib = _matplotlib()

    with matplotlib.rc_context(_mpl_rc(chart_id)):
        fig = _figure(6.4, 2.8)
        ax = fig.add_subplot()
        bars = ax.bar([i + 0.5 for i in range(10)], counts, width=0.9, color=PALETTE[2])
        ax.bar_label(bars, labels=[str(c) if c else "" for c in counts], padding=2)
        if threshold is not None:
            ax.axvline(threshold, color=PALETTE[3], linestyle="--", linewidth=1)
        ax.set_xlim(0, 10)
        ax.set_xticks(range(11))
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, loc="left")
        return _mpl_svg(fig, title, chart_id)


_ID_ATTR = re.compile(r'\bid="([^"]+)"')
_ID_REF = re.compile(r'(url\(#|xlink:href="#|href="#)([^)"]+)')


def _inline(svg: str, title: str, chart_id: str) -> str:
    """Make matplotlib's SVG document an element fit to inline in HTML."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    # Two charts on one page must not share ids (clip paths refer to them).
    svg = _ID_ATTR.sub(lambda m: f'id="{chart_id}-{m.group(1)}"', svg)
    svg = _ID_REF.sub(lambda m: f"{m.group(1)}{chart_id}-{m.group(2)}", svg)
    # Scale with the page, up to the drawn size: keep the viewBox, drop the fixed size in points.
    head_end = svg.index(">")
    head = svg[:head_end]
    width_pt = re.search(r'\swidth="([\d.]+)pt"', head)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    max_width = f' style="max-width: {float(width_pt.group(1)) * 4 / 3:.0f}px"' if width_pt else ""
    head += f' class="chart" role="img" aria-labelledby="{chart_id}-title" data-chart="{chart_id}"{max_width}'
    return head + f'><title id="{chart_id}-title">{_esc(title)}</title>' + svg[head_end + 1 :]


# --------------------------------------------------------------------------- pure SVG


def _text_width(text: str, size: float) -> float:
    # Wide (CJK) characters take about a full em, Latin ones a bit more than half.
    return sum(size if ord(c) > 0x2E80 else size * 0.6 for c in text)


def _svg_open(width: float, height: float, title: str, chart_id: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" class="chart" style="max-width: {width:.0f}px" '
        f'role="img" aria-labelledby="{chart_id}-title" data-chart="{chart_id}" font-family="sans-serif" font-size="12">',
        f'<title id="{chart_id}-title">{_esc(title)}</title>',
        f'<text x="4" y="16" font-size="14" font-weight="bold">{_esc(title)}</text>',
    ]


def _svg_bar(data, title, chart_id):
    label_w = min(260.0, max([_text_width(k, 12) for k, _ in data] + [40.0]) + 10)
    width, row, top = 640.0, 22.0, 30.0
    height = top + row * max(1, len(data)) + 10
    biggest = max([v for _, v in data] + [1])
    plot_w = width - label_w - 50
    out = _svg_open(width, height, title, chart_id)
    for i, (name, value) in enumerate(data):
        y = top + i * row
        w = plot_w * value / biggest
        out.append(f'<text x="{label_w - 6:.1f}" y="{y + 15:.1f}" text-anchor="end">{_esc(name)}</text>')
        out.append(f'<rect x="{label_w:.1f}" y="{y + 3:.1f}" width="{w:.1f}" height="{row - 6:.1f}" fill="{PALETTE[0]}"/>')
        out.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 15:.1f}">{value}</text>')
    out.append("</svg>")
    return "".join(out)


def _svg_line(x_labels, series, title, chart_id, total):
    width, height = 720.0, 300.0
    left, right, top, bottom = 40.0, 190.0, 30.0, 40.0
    plot_w, plot_h = width - left - right, height - top - bottom
    every = [v for _, vals in series for v in vals if v is not None] + (list(total[1]) if total else [])
    biggest = max(every + [1])
    n = max(1, len(x_labels))
    step = plot_w / n

    def x(i: int) -> float:
        return left + step * (i + 0.5)

    def y(v: float) -> float:
        return top + plot_h - plot_h * v / biggest

    out = _svg_open(width, height, title, chart_id)
    out.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>')
    for tick in sorted({0, biggest // 2, biggest}):
        out.append(f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" text-anchor="end" font-size="10">{tick}</text>')
    for i, label in enumerate(x_labels):
        out.append(f'<text x="{x(i):.1f}" y="{top + plot_h + 16}" text-anchor="middle" font-size="10">{_esc(label.split("-")[-1])}</text>')
    legend: list[tuple[str, str, bool]] = []
    if total is not None:
        for i, v in enumerate(total[1]):
            out.append(f'<rect x="{x(i) - step * 0.4:.1f}" y="{y(v):.1f}" width="{step * 0.8:.1f}" height="{top + plot_h - y(v):.1f}" fill="{TOTAL_COLOUR}" fill-opacity="0.3"/>')
        legend.append((total[0], TOTAL_COLOUR, True))
    for s, (name, vals) in enumerate(series):
        colour = PALETTE[s % len(PALETTE)]
        for run in _runs(vals):  # a week without a count (None) is a gap in the line
            if len(run) > 1:
                points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in run)
                out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for i, v in enumerate(vals):
            if v is not None:
                out.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="{colour}"/>')
        legend.append((name, colour, False))
    for i, (name, colour, is_bar) in enumerate(legend):
        ly = top + 6 + i * 18
        lx = left + plot_w + 12
        if is_bar:
            out.append(f'<rect x="{lx}" y="{ly - 9}" width="14" height="10" fill="{colour}" fill-opacity="0.3"/>')
        else:
            out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 14}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{lx + 20}" y="{ly}" font-size="11">{_esc(name)}</text>')
    out.append("</svg>")
    return "".join(out)


def _runs(values: Sequence[int | None]) -> list[list[tuple[int, int]]]:
    """The stretches of consecutive values that are not None, as (index, value) pairs."""
    runs: list[list[tuple[int, int]]] = [[]]
    for i, v in enumerate(values):
        if v is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((i, v))
    return [r for r in runs if r]


def _svg_hist(counts, title, chart_id, threshold):
    width, height = 640.0, 240.0
    left, right, top, bottom = 36.0, 16.0, 30.0, 30.0
    plot_w, plot_h = width - left - right, height - top - bottom
    biggest = max(counts + [1])
    col = plot_w / 10
    out = _svg_open(width, height, title, chart_id)
    base = top + plot_h
    out.append(f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="#333"/>')
    for i, c in enumerate(counts):
        h = plot_h * c / biggest
        out.append(f'<rect x="{left + i * col + 2:.1f}" y="{base - h:.1f}" width="{col - 4:.1f}" height="{h:.1f}" fill="{PALETTE[2]}"/>')
        if c:
            out.append(f'<text x="{left + (i + 0.5) * col:.1f}" y="{base - h - 3:.1f}" text-anchor="middle" font-size="10">{c}</text>')
    for i in range(11):
        out.append(f'<text x="{left + i * col:.1f}" y="{base + 16}" text-anchor="middle" font-size="10">{i}</text>')
    if threshold is not None:
        tx = left + col * float(threshold)
        out.append(f'<line x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{base}" stroke="{PALETTE[3]}" stroke-dasharray="4 3"/>')
    out.append("</svg>")
    return "".join(out)
