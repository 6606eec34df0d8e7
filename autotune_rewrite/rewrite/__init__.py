"""rewrite: decide each variant's configs (variants), edit the sources (transform and its edits),
and emit them as diffs (diff) or branches (apply)."""
