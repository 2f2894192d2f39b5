"""Rule-question ops: the computations templates name (`op = "..."` in a template entry)."""
