"""Run at a test subprocess's start (see tests/netguard.py)."""

import netguard

netguard.install()
