"""Tests of the server harness, the settings and the health-check client."""
