"""Benchmarks for kgrag-neo4j: ``python -m bench NAME``.

They print tables and write JSON (``bench/results/``); they assert nothing about timings and
are not tests. Each one starts a fresh local Neo4j (``kgrag_neo4j.server.disposable_server``)
with an empty database, so runs do not depend on what a previous run left behind.

| name | what |
|---|---|
| ``latency`` | graph retrieval latency: one statement vs per-hop loop vs vector-only vs peers |
| ``ingest`` | chunks and edges per second vs a raw ``UNWIND ... CREATE`` and peers |
| ``quality`` | recall@2 / recall@5 / all-gold@5 on MuSiQue, HotpotQA, 2WikiMultihopQA |
| ``quick`` | the three above at small sizes (a few minutes) |
| ``all`` | the three above at full sizes, then ``report`` |
| ``report`` | docs/benchmarks.md and docs/img/*.png from bench/results/*.json |
"""
