"""Commands that read or run on a real GPU's artefacts: capture, bench, inspect-cache."""
