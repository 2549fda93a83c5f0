"""Judging a step: the kind's checker (checks/), the experts' opinions (experts.py), the critics (critics.py), and the next try's parameters from what they found (reflection.py)."""
