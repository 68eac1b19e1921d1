"""Where qcheck meets its users' tools: the command line (cli, run as
python -m qcheck) and the pytest plugin (pytest_plugin, loaded as
qcheck.pytest_plugin). The top modules of the package give them their
outside names."""
