"""Renders the report specs of test/truth/roundtrip-reportlab.ts with ReportLab's Platypus.

Test tooling only (Folio's product code is TypeScript): ReportLab is the PDF library behind a large
share of the reports and invoices business software generates, and its tables are drawn its own
way (every cell a text object of its own, a string's lines one under another, cells bottom-aligned
by default, column widths fitted to the longest text). Reads one JSON file:

    {"docs": [{"pdf": path, "pagesize": "A4" | "letter", "landscape": bool, "font": name,
               "fontSize": pt, "blocks": [block, ...]}]}

where a block is {"kind": "title" | "heading" | "para", "text": str} or a table:

    {"kind": "table", "id": k, "rows": [[str]], "headerRows": n, "spans": [[r0, c0, r1, c1]],
     "align": ["LEFT" | "RIGHT" | "CENTER"], "wrap": [bool], "style": "grid" | "box" | "lines" |
     "zebra" | "plain", "totalRows": [r], "valign": "BOTTOM" | "TOP" | "MIDDLE", "padding": pt}

A cell's "\\n" starts a new line of a plain cell; a wrapped column's cells are Paragraphs. Writes
each PDF and prints {pdf: {id: [page, ...]}}: the pages each table was drawn on.
"""

import json
import sys

from reportlab.lib import colors
from reportlab.lib.enums import TA_LEFT
from reportlab.lib.pagesizes import A4, landscape, letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

TTF = {
    "DejaVuSans": ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
    "LiberationSans": (
        "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
        "/usr/share/fonts/truetype/liberation2/LiberationSans-Bold.ttf",
    ),
    "LiberationSerif": (
        "/usr/share/fonts/truetype/liberation2/LiberationSerif-Regular.ttf",
        "/usr/share/fonts/truetype/liberation2/LiberationSerif-Bold.ttf",
    ),
}
STANDARD_BOLD = {"Helvetica": "Helvetica-Bold", "Times-Roman": "Times-Bold"}


def fonts(name):
    """The regular and bold font of a family, TrueType ones registered (and embedded) on first use."""
    if name in STANDARD_BOLD:
        return name, STANDARD_BOLD[name]
    regular, bold = TTF[name]
    if name not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont(name, regular))
        pdfmetrics.registerFont(TTFont(name + "-Bold", bold))
    return name, name + "-Bold"


def xml(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


STYLES = {
    "grid": lambda h, n: [("GRID", (0, 0), (-1, -1), 0.5, colors.grey)],
    "box": lambda h, n: [("BOX", (0, 0), (-1, -1), 1, colors.black), ("INNERGRID", (0, 0), (-1, -1), 0.25, colors.grey)],
    "lines": lambda h, n: [
        ("LINEABOVE", (0, 0), (-1, 0), 1, colors.black),
        ("LINEBELOW", (0, h - 1), (-1, h - 1), 0.5, colors.black),
        ("LINEBELOW", (0, -1), (-1, -1), 1, colors.black),
    ],
    "zebra": lambda h, n: [
        ("BACKGROUND", (0, 0), (-1, h - 1), colors.HexColor("#1f3a5f")),
        ("TEXTCOLOR", (0, 0), (-1, h - 1), colors.white),
        ("ROWBACKGROUNDS", (0, h), (-1, -1), [colors.white, colors.HexColor("#e8edf3")]),
    ],
    "plain": lambda h, n: [],
}


def table(block, regular, bold, size, avail, pages):
    rows, h = block["rows"], block["headerRows"]
    wrap, align = block["wrap"], block["align"]
    body = ParagraphStyle("cell", fontName=regular, fontSize=size, leading=size * 1.2)
    cells = [
        [Paragraph(xml(text), body) if wrap[c] and r >= h and text else text for c, text in enumerate(row)]
        for r, row in enumerate(rows)
    ]
    pad = block["padding"]
    # Plain columns fit their longest line; wrapped ones share what is left of the frame.
    widths = []
    for c in range(len(rows[0])):
        if wrap[c]:
            widths.append(None)
            continue
        font = lambda r: bold if r < h or r in block["totalRows"] else regular
        lines = [(line, font(r)) for r, row in enumerate(rows) if not any(s[0] <= r <= s[2] and s[1] <= c <= s[3] and s[1] != s[3] for s in block["spans"]) for line in row[c].split("\n")]
        widths.append(max(pdfmetrics.stringWidth(t, f, size) for t, f in lines) + 2 * pad + 1)
    free = avail - sum(w for w in widths if w)
    share = max(80, free / max(1, wrap.count(True)))
    widths = [w if w else min(share, 240) for w in widths]
    style = [
        ("FONTNAME", (0, 0), (-1, -1), regular),
        ("FONTSIZE", (0, 0), (-1, -1), size),
        ("LEADING", (0, 0), (-1, -1), size * 1.2),
        ("FONTNAME", (0, 0), (-1, h - 1), bold),
        ("LEFTPADDING", (0, 0), (-1, -1), pad),
        ("RIGHTPADDING", (0, 0), (-1, -1), pad),
        ("VALIGN", (0, 0), (-1, -1), block["valign"]),
        *STYLES[block["style"]](h, len(rows)),
    ]
    for c, a in enumerate(align):
        style.append(("ALIGN", (c, h), (c, -1), a))
        style.append(("ALIGN", (c, 0), (c, h - 1), "CENTER" if a == "CENTER" or block["spans"] else a))
    for r0, c0, r1, c1 in block["spans"]:
        style.append(("SPAN", (c0, r0), (c1, r1)))
        style.append(("ALIGN", (c0, r0), (c1, r1), "CENTER"))
    for r in block["totalRows"]:
        style.append(("FONTNAME", (0, r), (-1, r), bold))
        style.append(("LINEABOVE", (0, r), (-1, r), 0.75, colors.black))
    # One class per table so that the pieces ReportLab splits it into (self.__class__) report it.
    tag = block["id"]

    def draw(self):
        pages.setdefault(tag, set()).add(self.canv.getPageNumber())
        Table.draw(self)

    tracked = type(f"Table{tag}", (Table,), {"draw": draw})
    return tracked(cells, colWidths=widths, repeatRows=h if block.get("repeat") else 0, style=TableStyle(style), hAlign="LEFT")


def render(doc):
    size = landscape(A4 if doc["pagesize"] == "A4" else letter) if doc["landscape"] else (A4 if doc["pagesize"] == "A4" else letter)
    regular, bold = fonts(doc["font"])
    fs = doc["fontSize"]
    margin = 18 * mm
    footer = doc.get("footer")

    def page(canvas, _doc):
        if footer:
            canvas.setFont(regular, fs - 1)
            canvas.drawRightString(size[0] - margin, 10 * mm, f"{footer} {canvas.getPageNumber()}")

    pdf = SimpleDocTemplate(doc["pdf"], pagesize=size, leftMargin=margin, rightMargin=margin, topMargin=margin, bottomMargin=margin, title=doc["title"])
    styles = {
        "title": ParagraphStyle("title", fontName=bold, fontSize=fs + 6, leading=(fs + 6) * 1.25, spaceAfter=8),
        "heading": ParagraphStyle("heading", fontName=bold, fontSize=fs + 2, leading=(fs + 2) * 1.25, spaceBefore=10, spaceAfter=6),
        "para": ParagraphStyle("para", fontName=regular, fontSize=fs, leading=fs * 1.3, spaceAfter=6, alignment=TA_LEFT),
    }
    pages = {}
    story = []
    for block in doc["blocks"]:
        if block["kind"] == "table":
            story.append(table(block, regular, bold, block["fontSize"], size[0] - 2 * margin, pages))
            story.append(Spacer(1, 10))
        else:
            story.append(Paragraph(xml(block["text"]), styles[block["kind"]]))
    pdf.build(story, onFirstPage=page, onLaterPages=page)
    return {str(k): sorted(v) for k, v in pages.items()}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    print(json.dumps({doc["pdf"]: render(doc) for doc in spec["docs"]}))


if __name__ == "__main__":
    main()
