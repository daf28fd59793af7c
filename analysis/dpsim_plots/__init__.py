"""Figures from dpsim's JSON outputs (run results, sweep summaries, capacity results, plans) and
per-turn records (outputs.requests: .csv, .jsonl).

Entry point: analysis/plot.py. Modules:
  inputs    reading and checking the JSON files (no matplotlib)
  records   reading the per-turn records as a stream, and their CDF data (no matplotlib)
  runs      figures from run results: JCT bars, utilisation over time, TTFT breakdown, latency vs APS
  sweep     the P/D sweep figure
  capacity  latency against APS and the TTFT breakdown per APS point
  plan      the Pareto figure of a dpsim plan (plan.json)
  cdf       the TTFT and TPOT CDFs from records files
  scaling   JCT against workload.append_scale / gen_scale (DualPath Fig. 9); its grouping needs no matplotlib
  systems   the systems the line figures compare (Basic, DualPath, Oracle, ...): names, order, markers
  tiers     storage-capacity.png and dram-tier.png: metrics against a KV tier's size; grouping needs no matplotlib
  common    shared matplotlib helpers
"""
