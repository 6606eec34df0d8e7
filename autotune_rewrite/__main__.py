from autotune_rewrite.cli import main

main()
