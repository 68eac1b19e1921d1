"""The fuzz loop of one process (loop: qcheck.fuzz), its compile-aware
schedule (compile) and the minimizer (minimize: qcheck.minimize). A run of
several workers leaves this process through qcheck.parallel."""
