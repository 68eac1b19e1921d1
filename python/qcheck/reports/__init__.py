"""A fuzz run's result and how it is told: FuzzResult and its findings
(result), the summary's lines (summary), JUnit XML (junit) and one HTML
page (html_report). junit.py and html_report.py also run as scripts, for
the C++ campaign and the GPU gate, without the package."""
