"""check: which configs of which kernels can launch on which targets, proved by compiling.

It takes the scan (``locate``), each kernel's launch specs (``spec``) and bundle (``isolate``), and
gives a ``CheckResult``: per kernel and spec a ``KernelReport`` with each config's verdict per
target (``plans`` builds the compile jobs and reads the outcomes from ``compile``), occupancy
(``occupancy``), the fitted SMEM model and the largest tile that fits (``smem_model``,
``smem_probe``), the spec sanity checks (``spec_sanity``), and one outcome per kernel. ``check``
runs the stage (``assume``: the ``--assume`` table) and streams sites into reports through one
compile stream (``site_reports``); ``check_result`` is what it gives; ``report_cache`` keeps a
kernel's reports while nothing they read changed."""
