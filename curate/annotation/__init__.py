"""Human review in Label Studio: projects, sync, review state (imports `curation` only)."""
