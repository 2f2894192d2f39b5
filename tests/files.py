"""Small real files of every supported format, written by the tests themselves."""

from __future__ import annotations

import re
import sqlite3
import zipfile
from pathlib import Path


def hierarchical_xlsx(path: Path) -> Path:
    """A sheet with a title, a two-level merged column header, indented row headers and notes."""
    import openpyxl
    from openpyxl.styles import Alignment

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Yields"
    ws["A1"] = "Crop yields by region"
    ws.append([])
    ws.append(["Crop", "North", None, "South", None])
    ws.append([None, 2019, 2020, 2019, 2020])
    ws.merge_cells("B3:C3")
    ws.merge_cells("D3:E3")
    ws.merge_cells("A3:A4")
    rows = [("Cereals", 0), ("Wheat", 1), ("Barley", 1), ("Oilseeds", 0), ("Canola", 1)]
    values = [(10, 12, 7, 8), (6, 7, 4, 5), (4, 5, 3, 3), (5, 6, 2, 2), (5, 6, 2, 2)]
    for (label, indent), v in zip(rows, values):
        ws.append([label, *v])
        ws.cell(ws.max_row, 1).alignment = Alignment(indent=indent)
    ws.append([])
    ws.append(["Source: a survey. NA = not available"])
    notes = wb.create_sheet("About")
    notes["A1"] = "Only text here"
    wb.save(path)
    return path


def formula_xlsx(path: Path) -> Path:
    """A workbook whose formula cells carry cached values, as Excel saves them."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["item", "price", "double"])
    ws.append(["a", 2, "=B2*2"])
    ws.append(["b", 5, "=B3*2"])
    wb.save(path)
    # openpyxl writes no cached values; add them as Excel would (<v> after <f>)
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist()}
    sheet = files["xl/worksheets/sheet1.xml"].decode()
    sheet = re.sub(r"<f>B(\d)\*2</f><v\s*/>|<f>B(\d)\*2</f>(<v></v>)?",
                   lambda m: f"<f>B{m.group(1) or m.group(2)}*2</f><v>{2 * {'2': 2, '3': 5}[m.group(1) or m.group(2)]}</v>",
                   sheet)
    files["xl/worksheets/sheet1.xml"] = sheet.encode()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
    return path


def shop_sqlite(path: Path, names: dict[str, str] | None = None) -> Path:
    """A two-table database with declared keys; `names` renames identifiers (umlauts, spaces, quotes)."""
    n = {"kunde": "kunde", "bestellung": "bestellung", "kunden_id": "kunden_id", "größe": "größe"}
    n.update(names or {})
    q = lambda s: '"' + s.replace('"', '""') + '"'  # noqa: E731
    con = sqlite3.connect(path)
    con.executescript(f"""
        CREATE TABLE {q(n['kunde'])} ({q(n['kunden_id'])} INTEGER PRIMARY KEY, name TEXT, {q(n['größe'])} REAL);
        CREATE TABLE {q(n['bestellung'])} (id INTEGER PRIMARY KEY, {q(n['kunden_id'])} INTEGER,
            betrag REAL, FOREIGN KEY ({q(n['kunden_id'])}) REFERENCES {q(n['kunde'])} ({q(n['kunden_id'])}));
        INSERT INTO {q(n['kunde'])} VALUES (1, 'Ana', 1.6), (2, 'Bo', 1.8), (3, 'Cy', 1.7);
        INSERT INTO {q(n['bestellung'])} VALUES (10, 1, 9.5), (11, 1, 3.0), (12, 3, 7.25);
    """)
    con.commit()
    con.close()
    return path


def finished_dataset(stages: Path, stage: str, samples=(), tables=()):
    """A finished stage dataset (`<stage>-000...`) holding these samples and tables in one part."""
    from curate.curation.arrow_io import samples_to_arrow, tables_to_arrow
    from curate.curation.pipeline.store import Dataset, write_part

    dataset = Dataset(stages / f"{stage}-{'0' * 16}")
    dataset.path.mkdir(parents=True)
    write_part(dataset.path, 0, {"samples": samples_to_arrow(list(samples)), "tables": tables_to_arrow(list(tables))},
               {})
    (dataset.path / "_COMPLETE.json").write_text("{}")
    return dataset


def voting_inputs(stages: Path):
    """A finished `select` dataset holding two imported samples (no program: the vote answers them)
    and one executed sample (a rule computed it: the vote leaves it alone), with their table.
    Returns (dataset, imported samples, executed sample)."""
    import pyarrow as pa

    from curate.curation.sample import Program, Sample
    from curate.curation.table import Table

    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen"], "people": [700, 290]}))
    imported = [Sample(task="TBO/table_query", question=q, answer=a, answer_type="text", table_ids=(table.id,),
                       origin="import") for q, a in (("How many people live in Oslo?", 700),
                                                     ("Which town has 290 people?", "Bergen"))]
    executed = Sample(task="TCO/general_operations", question="Total people?", answer=990, answer_type="number",
                      table_ids=(table.id,), program=Program("sql", "SELECT sum(people) FROM t", "duckdb"),
                      origin="rule", quality="rule-based")
    return finished_dataset(stages, "select", [*imported, executed], [table]), imported, executed


def release_of(root: Path, samples, tables, name: str = "handmade", version: str = "1.0.0") -> Path:
    """A real release (written by the release writer) holding exactly these samples and tables."""
    from curate.exports.release import ReleaseInputs, write_release

    dataset = finished_dataset(root / "stages", "select", samples, tables)
    inputs = ReleaseInputs(sample_files=[str(p) for p in dataset.files("samples")],
                           table_files=[str(p) for p in dataset.files("tables")], build={"signature": name})
    return Path(write_release(inputs, root / "releases", {"name": name, "version": version})["path"])
