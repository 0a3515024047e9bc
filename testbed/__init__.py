"""The local web and servers that the tests and the benchmarks run against: a loopback
HTTP server (and forward proxy) serving real pages, Redis and PostgreSQL servers on
temporary ports and folders, the corpus unpacked, generated sites. Nothing here is part
of SpiTag itself."""
