"""Figures from dpsim's JSON outputs (run results, sweep summaries, capacity results).

Entry point: analysis/plot.py. Modules:
  inputs    reading and checking the JSON files (no matplotlib)
  runs      figures from run results: JCT bars, utilisation over time, TTFT breakdown, latency vs APS
  sweep     the P/D sweep figure
  capacity  latency against APS and the TTFT breakdown per APS point
  common    shared matplotlib helpers
"""
