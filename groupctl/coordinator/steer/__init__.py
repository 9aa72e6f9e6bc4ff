"""Commands that change a group's membership on purpose: `force-rebalance` (force_rebalance.py,
classic trigger force_classic.py, consumer groups force_consumer.py, the report
force_report.py; what both share: common.py) and `remove-member` (remove_members.py)."""
