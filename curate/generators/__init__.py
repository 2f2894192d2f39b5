"""Sample generators: rule-based QA, reasoning chains, SQL synthesis (imports `curation` only)."""
