"""spec: the launch specs a kernel is compiled with: given, inferred or assumed.

It takes an autotune site and its launches (``locate``), the settings' kernel tables and
``assume`` values, and gives ``LaunchSpec``s (``evidence.py``): parameter types, constexpr and
int values, divisibility, and every assumption made, listed. ``spec_inference`` reads one
launch (what is stated, what the code says, what is assumed), ``spec_cases`` turns a spec into
several where the wrapper branches or states a finite set, ``pointer_params``/``pointer_dtypes``/
``param_uses`` read the kernel body, ``heuristics`` evaluates ``@triton.heuristics``, and
``launch_spec`` is the stage's front: it resolves a site's specs and says how Triton specializes
each one."""
