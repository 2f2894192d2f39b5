"""CSV and TSV files, with delimiter and encoding sniffing."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Iterator

from curate.curation.sources.errors import SourceError
from curate.curation.sources.readers import reader
from curate.curation.sources.text import read_text
from curate.curation.table import Provenance, Table

DELIMITERS = ",;\t|"


def sniff_delimiter(text: str, path: str) -> str:
    if path.lower().endswith((".tsv", ".tab")):
        return "\t"
    sample = "\n".join(text.splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        counts = {d: sample.count(d) for d in DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


@reader("csv", extensions=(".csv", ".tsv", ".tab"))
def read(path: str) -> Iterator[Table]:
    import pandas as pd

    from curate.curation.body import from_pandas, infer_column

    text, encoding = read_text(path)
    delimiter = sniff_delimiter(text, path)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False,
                            skip_blank_lines=True, engine="c")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as e:
        raise SourceError(path, f"not parseable as delimited text ({type(e).__name__}: {str(e).strip()[:200]})") from None
    if frame.shape[1] == 0:
        raise SourceError(path, "no columns")
    import pyarrow as pa

    body = from_pandas(frame)
    body = pa.table([infer_column(body.column(i).to_pylist()) for i in range(body.num_columns)],
                    names=body.column_names)
    yield Table(name=Path(path).stem, body=body,
                provenance=Provenance(source="csv", path=path, sheet=f"delimiter={delimiter!r} encoding={encoding}"))
