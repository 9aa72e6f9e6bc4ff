"""groupctl: see and steer Kafka consumer-group rebalances."""
__version__ = "0.1.0"
