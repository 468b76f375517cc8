"""Broker metrics in Prometheus's text format, under the names the JMX exporter gives Kafka's
MBeans (docs/engine/metrics.md has the mapping), so that Kafka dashboards work unchanged.

- `stats.py`: what the hot paths count (one call each: a produce, a fetch, a request, an ISR
  change, a log flush). Plain ints and a ring of recent timings, written on the event loop
  (flushes may come from a log thread); nothing is formatted until a scrape.
- `reservoir.py`: the ring of recent timings that percentiles are read from.
- `collector.py`: a prometheus_client collector that turns one broker's stats and state
  (partitions, ISR, the controller's image) into metric families at scrape time.
- `server.py`: `--metrics-port P` serves broker i's families on port P+i, one endpoint per
  broker as the JMX exporter runs one per broker JVM; the scrape runs on the event loop, so
  the collector reads the brokers' state without locks.
"""
