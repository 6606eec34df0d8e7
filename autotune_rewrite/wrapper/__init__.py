"""wrapper: what the Python function around a ``kernel[grid](...)`` launch says, read statically.

It takes a parsed file (``locate/parsed``) and the static evaluator, and gives per launch
argument an ``ArgFact`` (``launch_args``): a literal, a tensor's dtype and rank
(``tensor_ranks``, ``torch_names``), a context object's field (``context_fields``), the finite
values and bounds the wrapper asserts (``asserts``), read through the wrapper's own
parameters and local bindings (``bindings``). The locator records these facts on each launch;
spec inference reads them."""
