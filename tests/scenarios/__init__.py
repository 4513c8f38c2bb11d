"""Scenarios: each combines at least two features through a real channel."""
