"""The one static evaluator (``expressions``, ``statements``, ``comprehensions``), its values and
results (``values``), its answers for names outside the tree (``answers``), and the names an
expression's text reads (``expression_names``)."""

from autotune_rewrite.evaluate.answers import DEFAULT_ANSWERS, Answers
from autotune_rewrite.evaluate.expressions import Evaluator, evaluate, outcome
from autotune_rewrite.evaluate.expression_names import free_names
from autotune_rewrite.evaluate.values import (
    ConfigObj, Function, Known, Pending, Unknown, Unresolved, to_configs, to_names,
)

__all__ = ["Answers", "ConfigObj", "DEFAULT_ANSWERS", "Evaluator", "Function", "Known", "Pending", "Unknown",
           "Unresolved", "evaluate", "free_names", "outcome", "to_configs", "to_names"]
