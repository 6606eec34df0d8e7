"""The locator: LibCST analysis of one file (``facts``) and the cross-file step (``linking``).

Modules, one concept each:
- ``names``    Triton's qualified names and how a node's name is made absolute;
- ``parsed``   one parsed file, the trimmed module metadata runs on, and its positions;
- ``values``   what static evaluation yields (``ConfigObj``, helpers) and why it stops;
- ``configs``  static evaluation of ``configs=`` / ``key=`` expressions;
- ``helpers``  running a config-building helper function of the tree, statically;
- ``kernels``  the ``@triton.jit`` function: parameters, ``do_not_specialize``;
- ``sites``    uses of ``triton.autotune`` (decorator and call form);
- ``nesting``  the enclosing function/class names a batched visitor is in;
- ``launches`` ``kernel[grid](...)`` sites and what the subscripted object can be;
- ``facts``    everything one file says, as plain picklable data (a worker's answer);
- ``linking``  imports followed across files: launches to sites, imported config helpers;
"""
