"""Sinks of the events besides the CLI's writers (render/: live view, ndjson, the record
file): the Prometheus metrics (metrics*.py, lag_metrics.py) and the HTTP server that serves
them (metrics_server.py over http_server.py, web_config.py)."""
