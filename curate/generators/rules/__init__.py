"""Rule-based QA: declarative templates (templates/*.toml) answered in bulk by execution."""
