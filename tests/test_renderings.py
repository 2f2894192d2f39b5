"""Sheet renderings that keep the structure (HTML, LaTeX, PNG), and Excel number formats.

The real-data test holds our renderings against RealHiTBench's own: every cell text of the
authors' HTML and LaTeX must be a cell text of ours. The authors' two renderings sometimes
disagree with each other (their LaTeX shows General numbers to 10 significant digits and their
HTML to 14; one shows dates year first, the other month first; their HTML prints 0 where the
accounting format shows "-"; their LaTeX lost some characters and split a cell at an unescaped
&). A text is excused only where the authors' other rendering does not have it either and ours
shows the same value, and the test counts those excuses.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from html.parser import HTMLParser

import pytest

from curate.curation.sources.numfmt import display
from curate.curation.sources.readers.xlsx import sheet_grids
from curate.exports.render import contact_sheet, layout, render_workbook, to_png
from tests.conftest import shared
from tests.files import hierarchical_xlsx


# ---------------------------------------------------------------------------- number formats

@pytest.mark.parametrize("value, fmt, shown", [
    (30990, "#,##0", "30,990"),
    (242.25, "#,##0.0", "242.3"),  # halves round away from zero, as Excel does
    (0.300687285223368, "0.0%", "30.1%"),
    (14.99, '"$"#,##0.00_);[Red]\\("$"#,##0.00\\)', "$14.99 "),
    (-14.99, '"$"#,##0.00_);[Red]\\("$"#,##0.00\\)', "($14.99)"),
    (1720, '_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)', " $1,720.00 "),
    (0, '_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)', " $- "),
    (350, "\\E\\ \\ \\ #,##0;\\E\\ \\ \\ \\-#,##0", "E   350"),
    (6, "00", "06"),
    (1500000, '#,##0,,"M"', "2M"),
    (1234567, "0.00E+00", "1.23E+06"),
    (22.8861633668916, "@", "22.88616337"),
    (0.9166666666666666, "General", "0.916666667"),  # General fills a cell of standard width
    (4.16333634234434e-17, "General", "4.16334E-17"),
    (dt.datetime(2014, 7, 16), "mm-dd-yy", "7/16/2014"),  # Excel's built-in short date, en-US
    (dt.datetime(2014, 8, 16), "[$-1009]d\\-mmm\\-yy;@", "16-Aug-14"),
    (dt.datetime(2014, 1, 1), "mmm-yy", "Jan-14"),
    (dt.datetime(2014, 12, 15), "yyyy/m/d", "2014/12/15"),
    (dt.time(14, 5), "h:mm AM/PM", "2:05 PM"),
    (41000.5, "m/d/yyyy h:mm", "4/1/2012 12:00"),  # a serial number under a date format
])
def test_a_cell_is_shown_as_its_number_format_makes_it(value, fmt, shown):
    assert display(value, fmt) == shown


def test_a_format_it_cannot_read_falls_back_to_general_instead_of_failing():
    assert display(0.5, "# ?/?") == "0.5"
    assert display(12, "[>=100]0;[Red]0") == "12"


# ---------------------------------------------------------------------------- renderings

def merged_sheet(path):
    """A title, a header whose 'Yield' spans two columns, a region merged over two rows, a bold
    total, a coloured cell with a comment, and formatted numbers."""
    import openpyxl
    from openpyxl.comments import Comment
    from openpyxl.styles import Font, PatternFill

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Crop yields & prices, 2024"])
    ws.append(["Region", "Crop", "Yield", None, "Price"])
    ws.append([None, None, "t/ha", "change", "$/t"])
    ws.append(["North", "Wheat", 7.25, 0.031, 1234.5])
    ws.append([None, "Barley", 6.1, -0.012, 980])
    ws.append(["Total", None, 13.35, None, 2214.5])
    for rng in ("C2:D2", "A2:A3", "B2:B3", "E2:E2", "A4:A5"):
        ws.merge_cells(rng)
    for cell in ("D4", "D5"):
        ws[cell].number_format = "0.0%"
    for cell in ("E4", "E5", "E6"):
        ws[cell].number_format = '"$"#,##0.00'
    ws["A6"].font = Font(bold=True)
    ws["C4"].fill = PatternFill("solid", fgColor="FFC7CE")
    ws["C4"].comment = Comment("Provisional estimate", "analyst")
    wb.save(path)
    return path


def test_html_keeps_merged_areas_formats_bold_fills_and_comments(tmp_path):
    [(sheet, text)] = render_workbook(str(merged_sheet(tmp_path / "crops.xlsx")), "html")
    assert sheet == "Sheet"
    assert '<td colspan="2" style="font-weight:bold">' not in text  # only A6 is bold
    assert '<td colspan="2">Yield</td>' in text and '<td rowspan="2">Region</td>' in text
    assert '<td rowspan="2">North</td>' in text
    assert "<td>Crop yields &amp; prices, 2024</td>" in text
    assert "3.1%" in text and "-1.2%" in text and "$1,234.50" in text
    assert '<td style="font-weight:bold">Total</td>' in text
    assert 'background:#FFC7CE' in text and '<div class="comment">Provisional estimate</div>7.25' in text
    # every row covers the sheet's five columns once: the spans add up
    [(_, grid)] = list(sheet_grids(str(tmp_path / "crops.xlsx")))
    rows, _, n_cols = layout(grid)
    covered = [[0] * n_cols for _ in rows]
    for row in rows:
        for cell in row:
            for r in range(cell.row, cell.row + cell.rowspan):
                for c in range(cell.col, cell.col + cell.colspan):
                    covered[r][c] += 1
    assert all(v == 1 for line in covered for v in line)


def test_latex_writes_multirow_and_multicolumn_and_keeps_every_row_the_same_width(tmp_path):
    [(_, text)] = render_workbook(str(merged_sheet(tmp_path / "crops.xlsx")), "latex")
    assert r"\multicolumn{2}{l}{Yield}" in text and r"\multirow{2}{*}{Region}" in text
    assert r"Crop yields \& prices, 2024" in text and r"\$1,234.50" in text and r"3.1\%" in text
    assert r"\textbf{Total}" in text and r"\cellcolor[HTML]{FFC7CE}" in text
    body = text[text.index(r"\hline") + len(r"\hline"):text.rindex(r"\hline")]
    widths = set()
    for line in body.strip().splitlines():
        cells = re.split(r"(?<!\\)&", line.removesuffix(r" \\"))
        widths.add(sum(int(m.group(1)) if (m := re.match(r"\\multicolumn\{(\d+)\}", c.strip())) else 1 for c in cells))
    assert widths == {5}


def test_png_draws_a_merged_area_as_one_box_and_marks_what_the_sheet_marks(tmp_path):
    from PIL import Image

    [(_, grid)] = list(sheet_grids(str(merged_sheet(tmp_path / "crops.xlsx"))))
    picture = to_png(grid, title="crops")
    image = Image.open(io.BytesIO(picture.png)).convert("RGB")
    assert image.size == picture.size and image.size[0] > 200 and image.size[1] > 100
    x0, y0, x1, y1 = picture.boxes[(1, 2)]  # "Yield" over columns C and D
    c_right = picture.boxes[(3, 2)][2]  # the line between C and D in the body
    assert x0 < c_right < x1
    mid_header, mid_body = (y0 + y1) // 2, (picture.boxes[(3, 2)][1] + picture.boxes[(3, 2)][3]) // 2
    assert image.getpixel((c_right, mid_header)) == (255, 255, 255)  # no line inside the merged box
    assert image.getpixel((c_right, mid_body)) != (255, 255, 255)  # a line between the body cells
    assert image.getpixel((picture.boxes[(3, 2)][0] + 2, mid_body)) == (0xFF, 0xC7, 0xCE)  # the fill
    assert picture.rows_shown == picture.rows_total == 6


def test_a_long_sheet_is_cut_with_a_line_saying_how_many_rows_were_left_out(tmp_path):
    grid = dict(sheet_grids(str(hierarchical_xlsx(tmp_path / "yields.xlsx"))))["Yields"]
    picture = to_png(grid, max_rows=4)
    assert picture.rows_shown == 4 and picture.rows_total == len(grid.values) > 4
    sheet = contact_sheet([picture, to_png(grid)], width=300)
    from PIL import Image

    assert Image.open(io.BytesIO(sheet)).size[0] == 300


def test_an_unknown_rendering_is_refused(tmp_path):
    with pytest.raises(ValueError, match="known: html, latex, png"):
        render_workbook(str(merged_sheet(tmp_path / "crops.xlsx")), "docx")


# ---------------------------------------------------------------------------- against RealHiTBench

class _HtmlCells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.text: list[str] | None = None

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        if tag in ("td", "th", "caption"):
            self.text = []

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag in ("td", "th", "caption") and self.text is not None:
            self.cells.append(re.sub(r"<[^>]+>", "", "".join(self.text)))  # markup the authors escaped as text
            self.text = None

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self.text is not None:
            self.text.append(data)


def html_cells(text: str) -> list[str]:
    parser = _HtmlCells()
    parser.feed(text)
    return parser.cells


_LATEX_MARKUP = [r"\\(cellcolor|rowcolor|color)\[HTML\]\{[0-9A-Fa-f]*\}", r"\\multicolumn\{\d+\}\{[^{}]*\}",
                 r"\\multirow\{[^{}]*\}\{[^{}]*\}", r"\\(textbf|textit|uline|ul)\b", r"\\hline", r"\\cline\{[^{}]*\}"]
_LATEX_ESCAPES = {r"\textbackslash{}": "\\", r"\textasciitilde{}": "~", r"\textasciicircum{}": "^",
                  r"\textgreater": ">", r"\textless": "<", r"\%": "%", r"\$": "$", r"\&": "&", r"\#": "#",
                  r"\_": "_", r"\{": "{", r"\}": "}"}


def latex_cells(text: str) -> list[str]:
    """Cell texts of every tabular in a LaTeX file (a few of the authors' files are tab-separated)."""
    if r"\begin{tabular}" not in text:
        return [c for line in text.splitlines() for c in line.split("\t")]
    # a cell of several lines is a nested tabular: its lines are one cell
    text = re.sub(r"\\begin\{tabular\}\[[a-z]\]\{@\{\}[lcr]@\{\}\}(.*?)\\end\{tabular\}",
                  lambda m: re.sub(r"\\\\", " ", m.group(1)), text, flags=re.S)
    out = []
    for chunk in text.split(r"\begin{tabular}")[1:]:
        depth = 0
        for start, ch in enumerate(chunk):  # past the column specification
            depth += (ch == "{") - (ch == "}")
            if depth == 0:
                break
        end = chunk.find(r"\end{tabular}")
        for row in re.split(r"(?<!\\)\\\\", chunk[start + 1:end if end >= 0 else len(chunk)]):
            for cell in re.split(r"(?<!\\)&", row):
                for pattern in _LATEX_MARKUP:
                    cell = re.sub(pattern, "", cell)
                for escape, ch in _LATEX_ESCAPES.items():
                    cell = cell.replace(escape, f"\0{ord(ch)}\0")
                cell = re.sub(r"(?<!\\)[{}]", "", cell)
                out.append(re.sub("\0(\\d+)\0", lambda m: chr(int(m.group(1))), cell))
    return out


def key(text: str) -> str:
    """A cell text without whitespace (padding, line breaks and fills differ between renderers)."""
    return "".join(text.replace("\xa0", " ").split())


def value(text: str):  # type: ignore[no-untyped-def]
    """(number, the unit of its last shown digit), a date, or None."""
    k = re.sub(r"^\((.*\d.*)\)$", r"-\1", text)  # (452,400): a negative as accounting formats show it
    if k in ("-", "$-"):
        return 0.0, 1.0
    if re.fullmatch(r"-?\$?-?[\d,]*\.?\d+(E[+-]\d+)?%?", k):
        number = float(k.replace("$", "").replace(",", "").rstrip("%"))
        digits = k.split("E")[0].rstrip("%")
        places = len(digits.split(".")[1]) if "." in digits else 0
        return number, 10.0 ** ((int(k.split("E")[1]) if "E" in k else 0) - places)
    for fmt in ("%m/%d/%Y", "%Y/%m/%d"):
        try:
            return dt.datetime.strptime(k, fmt).date()
        except ValueError:
            pass
    return None


def excused(text: str, other_rendering: set[str], ours: set[str], our_values: list) -> bool:  # type: ignore[type-arg]
    """The authors' renderings disagree on this text, and ours shows the same thing."""
    if text in other_rendering:
        return False
    v = value(text)
    if isinstance(v, tuple):
        return any(isinstance(o, tuple) and abs(o[0] - v[0]) <= max(v[1], o[1]) * 1.0001 for o in our_values)
    if v is not None:
        return v in our_values
    # characters their file lost: "?", or U+FFFD and the byte after it misread as a letter ("1979\ufffdC2016"
    # for an en dash), each standing for up to two characters of ours
    lost = re.compile(re.escape(re.sub("\ufffd.?", "\ufffd", text)).replace(r"\?", ".{0,2}").replace("\ufffd", ".{0,2}"))
    return any(lost.fullmatch(o) or (text in o and "&" in o) for o in ours)


def uncached_formulas(path: str) -> int:
    """Formula cells the workbook holds no computed value for (or an error, #NAME? where the app that
    saved it did not know the function): no renderer without a spreadsheet engine can show them."""
    import openpyxl

    formulas = openpyxl.load_workbook(path)
    values = openpyxl.load_workbook(path, data_only=True)
    return sum(1 for fs, vs in zip(formulas.worksheets, values.worksheets) for row in fs.iter_rows()
               for cell in row if isinstance(cell.value, str) and cell.value.startswith("=")
               and (vs[cell.coordinate].value is None or str(vs[cell.coordinate].value).startswith("#")))


def test_our_html_and_latex_contain_every_cell_text_of_the_authors_renderings():
    tables, html_dir, latex_dir = (shared("realhitbench", name) for name in ("tables", "html", "latex"))
    compared, excuses, failures = 0, 0, {}
    for path in sorted(tables.glob("*.xlsx")):
        theirs = {}
        for fmt, folder, suffix, cells in (("html", html_dir, ".html", html_cells),
                                           ("latex", latex_dir, ".txt", latex_cells)):
            file = folder / f"{path.stem}{suffix}"
            if file.exists():
                theirs[fmt] = [k for k in map(key, cells(file.read_text(encoding="utf-8-sig", errors="replace"))) if k]
        if not theirs:
            continue
        missing = []
        for fmt, texts in theirs.items():
            ours = {key(c) for _, text in render_workbook(str(path), fmt)
                    for c in (html_cells(text) if fmt == "html" else latex_cells(text))}
            our_values = [v for v in map(value, ours) if v is not None]
            other = set(next((t for f, t in theirs.items() if f != fmt), []))
            for text in texts:
                compared += 1
                if text in ours:
                    continue
                if excused(text, other, ours, our_values):
                    excuses += 1
                else:
                    missing.append((fmt, text))
        if max(sum(f == fmt for f, _ in missing) for fmt in theirs) > uncached_formulas(str(path)):
            failures[path.stem] = missing[:5]
    assert compared > 60_000
    assert not failures, failures
    print(f"{compared} cell texts of the authors' renderings; {excuses} where their HTML and LaTeX disagree")
    assert excuses < compared * 0.02, excuses


def test_curate_render_writes_one_file_per_sheet_and_reports_a_broken_workbook_without_stopping(tmp_path):
    from tests.test_cli import invoke

    good = merged_sheet(tmp_path / "crops.xlsx")
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a zip")
    result = invoke("render", str(broken), str(good), "--format", "png", "--out", str(tmp_path / "out"),
                    "--contact-sheet", str(tmp_path / "all.png"))
    assert result.exit_code == 1 and "broken.xlsx" in result.output and "not a readable .xlsx" in result.output
    assert (tmp_path / "out" / "crops.png").stat().st_size > 0 and (tmp_path / "all.png").exists()
    latex = invoke("render", str(good), "--format", "latex")
    assert latex.exit_code == 0 and r"\multicolumn{2}{l}{Yield}" in latex.output
    assert invoke("render", str(good), "--format", "png").exit_code == 2  # a PNG needs somewhere to go
