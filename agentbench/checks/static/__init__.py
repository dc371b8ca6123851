"""Static checks: what the entry page loads, its scripts' syntax (node in a sandbox), source views, detectors.

Nothing here runs a browser; the checklist (``checks/_checklist.py``) reads ``Source`` and the detectors.
"""
