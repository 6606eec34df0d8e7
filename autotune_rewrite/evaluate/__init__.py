"""The one static evaluator (``expressions``, ``statements``), its values and results
(``values``) and its answers for names outside the tree (``answers``)."""

from autotune_rewrite.evaluate.answers import DEFAULT_ANSWERS, Answers
from autotune_rewrite.evaluate.expressions import Evaluator, evaluate, free_names, outcome
from autotune_rewrite.evaluate.values import (
    ConfigObj, Function, Known, Pending, Unknown, Unresolved, to_configs, to_names,
)

__all__ = ["Answers", "ConfigObj", "DEFAULT_ANSWERS", "Evaluator", "Function", "Known", "Pending", "Unknown",
           "Unresolved", "evaluate", "free_names", "outcome", "to_configs", "to_names"]
