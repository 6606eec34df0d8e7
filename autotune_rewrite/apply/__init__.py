"""apply: the last stage before the command line. It runs the rewrite pipeline in a private
worktree and turns each kernel's change into a review-ready branch with its commit message and
PR body (``branches``), leaving the user's checkout, index and branches untouched; it takes the
rewrite's decisions and ``output/templating``'s text, and gives an ``ApplyResult``
(``rewrite/applied.py``) for ``output/rewrite.py`` to print."""
