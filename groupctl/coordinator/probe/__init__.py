"""The probe (`groupctl join`): a member on the driver (probe.py), what it needs around the
member (setup.py: the member, its protocols, the leader's assignment) and its view of the
group (view.py, which tells the story through observe/)."""
from .probe import Probe
from .setup import ProbeError, ProbeResult, ProbeSettings

__all__ = ["Probe", "ProbeError", "ProbeResult", "ProbeSettings"]
