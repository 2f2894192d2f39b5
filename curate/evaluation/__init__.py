"""`curate evaluate`: backends, inference modes, metrics, reports (imports `curation`, `exports`)."""
