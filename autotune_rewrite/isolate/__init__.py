"""isolate: the kernel cut out of its module, so it compiles without running the user's code.

It takes a site (``locate``) and the checkout, and gives a ``KernelBundle`` (``evidence.py``):
the kernel's source with the ``@triton.jit`` functions and module constants it needs
(``kernel_loader``, ``loader_syntax``, ``star_imports``, ``bundle_constants``), what of the Triton
API it uses that this Triton lacks (``absent_api``, ``fork_imports``), kept on disk
(``bundle_cache``). ``kernel_ast``, ``kernel_facts`` and ``pipelined_loads`` read the isolated
source for what it says about shared memory (the spec sanity checks ask)."""
