"""Serializers, perturbations and versioned releases (imports `curation` only)."""
