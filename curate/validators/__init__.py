"""Validators: execution checks, voting, contracts, leakage checks (imports `curation` only)."""
