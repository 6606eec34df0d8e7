"""``capture``: learn launch specs from a live program (hooks in the child, folding and TOML here)."""
