"""rewrite: the new config lists, and the source edits that write them.

It takes check's reports and gives, per kernel and variant, a ``Decision`` (``decision``; decided
by ``variants`` around v1's ``choice``: pure, from the compiled verdicts and any saved bench
timings, ``bench_results``/``recommend``/``measured``) and the file edits that carry it out where
the configs are written (``transform`` over ``configs``, ``inplace``, ``device_guard``,
``bucket``, ``config_text``), re-checked by compiling the rewritten kernel (``diff``, then
``recheck``: a ``RewriteRun``, ``rewrite_run``). Facts and failures are typed data (``facts``);
the words for them are output's."""
