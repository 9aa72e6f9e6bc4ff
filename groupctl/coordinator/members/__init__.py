"""Sans-IO group members: the interface the driver needs (interface.py), the bookkeeping
every protocol shares (base.py), and one subpackage per protocol (classic/, consumer/)."""
