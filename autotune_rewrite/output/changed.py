"""Words for ``--changed-since``: the line that says how many sites were judged, and why each was."""

from __future__ import annotations

from autotune_rewrite.changed import Selected, Selection, Why

_WHY = {
    Why.SETTINGS: "the settings table changed in {path}",
    Why.INPUT: "{path} changed",
    Why.CALLER: "{path} changed and names {detail}, a function that launches it",
    Why.NEW_FILE: "{path} is new and may provide a name it could not resolve",
    Why.UNKNOWN: "its inputs cannot be listed ({detail})",
}


def changed_line(selection: Selection) -> str:
    """``judged N of M sites changed since REF``: a gate that judged few sites says so."""
    n, m = len(selection.selected), selection.total
    return (f"judged {n} of {m} site{'s' if m != 1 else ''} changed since {selection.ref}"
            f" ({m - n} unchanged, not judged)")


def why(selected: Selected) -> str:
    return _WHY[selected.why].format(path=selected.path, detail=selected.detail)


def changed_json(selection: Selection | None) -> dict | None:
    if selection is None:
        return None
    return {
        "ref": selection.ref,
        "sites": selection.total,
        "judged": len(selection.selected),
        "line": changed_line(selection),
        "selected": [{"kernel": s.site.ident, "why": s.why.value, "path": s.path or None,
                      "detail": s.detail or None, "reason": why(s)} for s in selection.selected],
    }


__all__ = ["changed_json", "changed_line", "why"]
