"""The plain names an expression's text reads: the values a caller would have to supply.

Read from source text with ``ast``, not evaluated: spec inference and ``check`` ask it which
names a launch expression (``triton.next_power_of_2(Lk)``) depends on. Apart from the evaluator
(``expressions``) because it works on text, not on the parsed tree the evaluator walks; it shares
only the evaluator's table of builtins (``answers``).
"""

from __future__ import annotations

from autotune_rewrite.evaluate.answers import DEFAULT_ANSWERS

_MODULES = {"triton", "tl", "math", "torch", "True", "False", "None"}


def free_names(text: str) -> set[str]:
    """The plain names an expression text reads (not ``triton.``/``math.`` calls nor the bases
    of attributes such as ``q.shape``); none when it does not parse."""
    import ast

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return set()
    bases = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    # A builtin the evaluator answers (``max(triton.next_power_of_2(E), 8)``) is not a value to supply.
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and f"builtins.{n.func.id}" in DEFAULT_ANSWERS.calls}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in bases | called
            and n.id not in _MODULES}


__all__ = ["free_names"]
