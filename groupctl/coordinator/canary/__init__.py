"""`canary`: a group of its own on every coordinator, one full membership round per
protocol, timed step by step (plan.py: where; rounds.py: a round on the member driver;
runner.py: once or on an interval; metrics.py: Prometheus)."""
