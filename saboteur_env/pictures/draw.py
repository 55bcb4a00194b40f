"""Drawing a scene (:mod:`saboteur_env.pictures.scene`): SVG at any scale, PNG rasterised with Pillow.

:func:`to_svg` is vector (for papers and the web page: with ``clickable`` every cell is a ``<g data-cell=i>``);
:func:`to_png` draws the same picture with Pillow at ``scale`` (1 = 48 px per cell), in DejaVu Sans when the system
has it and otherwise Pillow's own scalable default font, so labels stay readable at every scale.
"""

from __future__ import annotations

import functools
import html
from typing import Any

__all__ = ["ARM", "PALETTE", "UNIT", "check_scale", "seat_line", "svg_cell", "to_png", "to_svg"]

UNIT = 48  # cell size at scale 1 (SVG user units = pixels)
ARM = ((0, -1), (1, 0), (0, 1), (-1, 0))
PALETTE = {
    "background": "#1e1e24", "empty": "#3a3a42", "card": "#78543a", "tunnel": "#d6be8c", "connected": "#ffe25c",
    "cap": "#28180e", "start": "#3c9650", "facedown": "#283c78", "gold": "#e6b428", "stone": "#8c8c8c",
    "text": "#ebebeb", "blue": "#4682e6", "green": "#46be5a", "crystal": "#5adce6", "troll": "#e6463c",
    "broken": "#e6463c", "legal": "#ff5cf0", "grid": "#55555f",
}  # fmt: skip


def svg_cell(cell: dict[str, Any], x: float, y: float, u: float, index: int | None) -> list[str]:
    p = PALETTE
    attrs = f' data-cell="{index}"' if index is not None else ""
    out = [f'<g class="cell"{attrs}>']
    if cell.get("tip"):
        out.append(f"<title>{html.escape(cell['tip'])}</title>")
    out.append(f'<rect x="{x + 1:.1f}" y="{y + 1:.1f}" width="{u - 2:.1f}" height="{u - 2:.1f}" rx="{u / 12:.1f}" '
               f'fill="{p[cell["fill"]]}"/>')  # fmt: skip
    cx, cy, half, w = x + u / 2, y + u / 2, u / 2 - 1, u / 6
    for e, arm in enumerate(cell["arms"]):
        if arm is None:
            continue
        dx, dy = ARM[e]
        colour = p["connected"] if arm["conn"] else p["tunnel"]
        start = u / 6 if arm["stub"] else 0
        out.append(f'<line x1="{cx + dx * start:.1f}" y1="{cy + dy * start:.1f}" x2="{cx + dx * half:.1f}" '
                   f'y2="{cy + dy * half:.1f}" stroke="{colour}" stroke-width="{w:.1f}"/>')  # fmt: skip
        if arm["stub"]:
            out.append(f'<circle cx="{cx + dx * start:.1f}" cy="{cy + dy * start:.1f}" r="{w * 0.7:.1f}" '
                       f'fill="{p["cap"]}"/>')  # fmt: skip
        if arm["door"]:
            bx, by = cx + dx * half * 0.62, cy + dy * half * 0.62
            ww, hh = (w * 2.2, w * 0.9) if dx == 0 else (w * 0.9, w * 2.2)
            out.append(f'<rect x="{bx - ww / 2:.1f}" y="{by - hh / 2:.1f}" width="{ww:.1f}" height="{hh:.1f}" '
                       f'fill="{p[arm["door"]]}" stroke="#000" stroke-width="0.5"/>')  # fmt: skip
    if cell["hub"]:
        conn = any(a and a["conn"] and not a["stub"] for a in cell["arms"])  # a joined tunnel
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{w * 0.5:.1f}" '
                   f'fill="{p["connected"] if conn else p["tunnel"]}"/>')  # fmt: skip
    fs = u * 0.36
    if cell["glyph"]:
        out.append(f'<text x="{cx:.1f}" y="{cy + fs * 0.35:.1f}" font-size="{fs:.1f}" text-anchor="middle" '
                   f'font-weight="bold" fill="{p["text"]}" stroke="#000" stroke-width="{fs / 14:.2f}">'
                   f"{html.escape(cell['glyph'])}</text>")  # fmt: skip
    for i, (text, colour) in enumerate(cell["badges"]):
        bx = x + u * (0.18 + 0.62 * (i % 2))
        by = y + u * (0.24 + 0.66 * (i // 2))
        out.append(f'<text x="{bx:.1f}" y="{by:.1f}" font-size="{fs * 0.7:.1f}" text-anchor="middle" '
                   f'fill="{p[colour]}">{html.escape(text)}</text>')  # fmt: skip
    out.append("</g>")
    return out


def check_scale(scale: object) -> float:
    """``scale`` as a float, or a ValueError naming it and the valid range 0.1..20."""
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0.1 <= float(scale) <= 20:
        raise ValueError(f"scale={scale!r} must be a number in 0.1..20")
    return float(scale)


def _layout(scene: dict[str, Any], scale: float, legend: bool, seats: bool) -> dict[str, float]:
    u = UNIT * scale
    label = u * 0.6
    board_w, board_h = scene["cols"] * u, scene["rows"] * u
    line = u * 0.42
    width = label + board_w + u * 0.3
    top = line * (1.4 if scene["title"] else 0) + line * 1.3
    legend_rows = -(-len(scene["legend"]) // 2) if legend else 0
    seat_rows = len(scene["seats"]) if seats else 0
    height = top + label + board_h + line * 0.6 + (legend_rows + seat_rows) * line + line * 0.6
    fs = line * 0.8
    texts = [len(scene["status"]) * fs * 0.58, len(scene["title"]) * fs * 0.7]
    if seats:
        texts += [len(seat_line(r)) * fs * 0.9 * 0.58 for r in scene["seats"]]
    col = max((len(t) for _, t in scene["legend"]), default=0) * fs * 0.9 * 0.58 + fs * 2 if legend else 0
    width = max(width, label + u * 0.3 + max(texts), label + 2 * col)
    return {"u": u, "label": label, "line": line, "width": width, "height": height, "top": top, "col": col}


def to_svg(scene: dict[str, Any], scale: float = 1.0, legend: bool = True, seats: bool = True,
           clickable: bool = False) -> str:  # fmt: skip
    """The scene as a standalone SVG document (``clickable``: cells carry ``data-cell`` for the page)."""
    check_scale(scale)
    g = _layout(scene, scale, legend, seats)
    u, label, line, top = g["u"], g["label"], g["line"], g["top"]
    p = PALETTE
    fs = line * 0.8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{g["width"]:.0f}" height="{g["height"]:.0f}" '
           f'viewBox="0 0 {g["width"]:.1f} {g["height"]:.1f}" font-family="DejaVu Sans, Arial, sans-serif">',
           f'<rect width="100%" height="100%" fill="{p["background"]}"/>']  # fmt: skip
    y = line * 1.1
    if scene["title"]:
        out.append(f'<text x="{label:.1f}" y="{y:.1f}" font-size="{fs * 1.15:.1f}" font-weight="bold" '
                   f'fill="{p["text"]}">{html.escape(scene["title"])}</text>')  # fmt: skip
        y += line * 1.4
    out.append(f'<text x="{label:.1f}" y="{y:.1f}" font-size="{fs:.1f}" fill="{p["text"]}">'
               f"{html.escape(scene['status'])}</text>")  # fmt: skip
    bx, by = label, top + label
    for c, text in enumerate(scene["col_labels"]):
        out.append(f'<text x="{bx + c * u + u / 2:.1f}" y="{by - label * 0.3:.1f}" font-size="{fs:.1f}" '
                   f'text-anchor="middle" fill="{p["text"]}">{text}</text>')  # fmt: skip
    for r, text in enumerate(scene["row_labels"]):
        out.append(f'<text x="{label * 0.55:.1f}" y="{by + r * u + u / 2 + fs * 0.35:.1f}" font-size="{fs:.1f}" '
                   f'text-anchor="middle" fill="{p["text"]}">{text}</text>')  # fmt: skip
    cols = scene["cols"]
    for cell in scene["cells"]:
        index = cell["r"] * cols + cell["c"] if clickable else None
        out.extend(svg_cell(cell, bx + cell["c"] * u, by + cell["r"] * u, u, index))
    y = by + scene["rows"] * u + line * 1.2
    if legend:
        for i, (colour, text) in enumerate(scene["legend"]):
            lx = label + (i % 2) * g["col"]
            ly = y + (i // 2) * line
            out.append(f'<rect x="{lx:.1f}" y="{ly - fs * 0.8:.1f}" width="{fs:.1f}" height="{fs:.1f}" '
                       f'fill="{p[colour]}"/>')  # fmt: skip
            out.append(f'<text x="{lx + fs * 1.4:.1f}" y="{ly:.1f}" font-size="{fs * 0.9:.1f}" fill="{p["text"]}">'
                       f"{html.escape(text)}</text>")  # fmt: skip
        y += -(-len(scene["legend"]) // 2) * line
    if seats:
        for row in scene["seats"]:
            out.append(f'<text x="{label:.1f}" y="{y:.1f}" font-size="{fs * 0.9:.1f}" fill="{p["text"]}">'
                       f"{html.escape(seat_line(row))}</text>")  # fmt: skip
            y += line
    out.append("</svg>")
    return "\n".join(out)


def seat_line(row: dict[str, Any]) -> str:
    parts = [("▶ " if row["to_act"] else "  ") + row["name"], f"hand {row['hand']}", row["gold"],
             "broken: " + (", ".join(row["broken"]) or "none")]  # fmt: skip
    if row["role"]:
        parts.append(f"last round: {row['role']}")
    parts.extend(row["marks"])
    return " · ".join(parts)


def _font(size: float) -> Any:
    return _font_px(max(6, round(size)))


@functools.lru_cache(maxsize=64)
def _font_px(px: int) -> Any:  # a replay draws hundreds of frames: open each font size once
    from PIL import ImageFont

    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, px)
        except OSError:
            continue
    return ImageFont.load_default(size=px)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


def to_png(scene: dict[str, Any], scale: float = 2.0, legend: bool = True, seats: bool = True) -> Any:
    """The scene as a Pillow image, the same drawing as :func:`to_svg` rasterised at ``scale``."""
    from PIL import Image, ImageDraw

    check_scale(scale)
    g = _layout(scene, scale, legend, seats)
    u, label, line, top = g["u"], g["label"], g["line"], g["top"]
    p = {k: _rgb(v) for k, v in PALETTE.items()}
    img = Image.new("RGB", (round(g["width"]), round(g["height"])), p["background"])
    d = ImageDraw.Draw(img)
    fs = line * 0.8
    font, small, glyph_font = _font(fs), _font(fs * 0.9), _font(u * 0.36)
    y = line * 1.1
    if scene["title"]:
        d.text((label, y), scene["title"], fill=p["text"], font=_font(fs * 1.15), anchor="ls")
        y += line * 1.4
    d.text((label, y), scene["status"], fill=p["text"], font=font, anchor="ls")
    bx, by = label, top + label
    for c, text in enumerate(scene["col_labels"]):
        d.text((bx + c * u + u / 2, by - label * 0.3), str(text), fill=p["text"], font=font, anchor="ms")
    for r, text in enumerate(scene["row_labels"]):
        d.text((label * 0.55, by + r * u + u / 2), str(text), fill=p["text"], font=font, anchor="mm")
    w = max(2, round(u / 6))
    for cell in scene["cells"]:
        x0, y0 = bx + cell["c"] * u, by + cell["r"] * u
        d.rounded_rectangle((x0 + 1, y0 + 1, x0 + u - 2, y0 + u - 2), radius=u / 12, fill=p[cell["fill"]])
        cx, cy, half = x0 + u / 2, y0 + u / 2, u / 2 - 1
        for e, arm in enumerate(cell["arms"]):
            if arm is None:
                continue
            dx, dy = ARM[e]
            start = u / 6 if arm["stub"] else 0
            colour = p["connected"] if arm["conn"] else p["tunnel"]
            d.line((cx + dx * start, cy + dy * start, cx + dx * half, cy + dy * half), fill=colour, width=w)
            if arm["stub"]:
                rr = w * 0.7
                d.ellipse((cx + dx * start - rr, cy + dy * start - rr, cx + dx * start + rr, cy + dy * start + rr),
                          fill=p["cap"])  # fmt: skip
            if arm["door"]:
                ddx, ddy = cx + dx * half * 0.62, cy + dy * half * 0.62
                ww, hh = (w * 2.2, w * 0.9) if dx == 0 else (w * 0.9, w * 2.2)
                d.rectangle((ddx - ww / 2, ddy - hh / 2, ddx + ww / 2, ddy + hh / 2), fill=p[arm["door"]],
                            outline=(0, 0, 0))  # fmt: skip
        if cell["hub"]:
            conn = any(a and a["conn"] and not a["stub"] for a in cell["arms"])  # a joined tunnel
            rr = w * 0.5
            d.ellipse((cx - rr, cy - rr, cx + rr, cy + rr), fill=p["connected"] if conn else p["tunnel"])
        if cell["glyph"]:
            d.text((cx, cy), cell["glyph"], fill=p["text"], font=glyph_font, anchor="mm", stroke_width=1,
                   stroke_fill=(0, 0, 0))  # fmt: skip
        for i, (text, colour) in enumerate(cell["badges"]):
            d.text((x0 + u * (0.18 + 0.62 * (i % 2)), y0 + u * (0.24 + 0.66 * (i // 2))), text, fill=p[colour],
                   font=_font(fs * 0.7), anchor="ms")  # fmt: skip
    y = by + scene["rows"] * u + line * 1.2
    if legend:
        for i, (colour, text) in enumerate(scene["legend"]):
            lx = label + (i % 2) * g["col"]
            ly = y + (i // 2) * line
            d.rectangle((lx, ly - fs * 0.8, lx + fs, ly + fs * 0.2), fill=p[colour])
            d.text((lx + fs * 1.4, ly), text, fill=p["text"], font=small, anchor="ls")
        y += -(-len(scene["legend"]) // 2) * line
    if seats:
        for row in scene["seats"]:
            d.text((label, y), seat_line(row), fill=p["text"], font=small, anchor="ls")
            y += line
    return img
