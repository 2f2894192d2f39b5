"""curate: build, curate and evaluate table-reasoning benchmarks for LLMs.

Every part lives under this one package (`curate.curation`, `curate.generators`, `curate.validators`,
`curate.annotation`, `curate.exports`, `curate.evaluation`, `curate.importers`), so installing curate
claims no top-level name another distribution uses (PyPI's `validators`, for one)."""
